//! The word of the edge that leads to a node of the trie, as the node holds it: a [`Label`];
//! and the forms of a word that searches and filters compare with labels ([`Probe`], [`Lit`]).
//!
//! A label keeps its word's first [`INLINE`] bytes beside the word's id, as a big-endian
//! number: ordering two labels compares numbers (and lengths), and reads the interner only for
//! two words longer than [`INLINE`] bytes that share those bytes; a word no longer than that
//! (most words of real topics: `temp`, `us-east`, a short device id) is spelled from the label
//! itself, so a walk that builds topic texts reads the node it is on and nothing else for it.

use std::cmp::Ordering;

use super::words::{WordId, Words};

/// Bytes of a word held in its label.
pub(crate) const INLINE: usize = 8;

/// The word of an inline label: none, the label spells it.
pub(crate) const NO_WORD: WordId = WordId::MAX;

/// A word as an edge holds it: its first [`INLINE`] bytes, its length and its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Label {
    /// The first [`INLINE`] bytes, zero-padded, as a big-endian number.
    head: u64,
    /// The length in bytes.
    len: u32,
    /// The interned word if it is longer than [`INLINE`] bytes, else [`NO_WORD`]: a short
    /// word is spelled by the label alone.
    pub(crate) word: WordId,
}

/// The first [`INLINE`] bytes of `text`, zero-padded, as a big-endian number: two texts'
/// heads order as the texts do wherever they differ.
#[inline]
fn head_of(text: &str) -> u64 {
    let bytes = text.as_bytes();
    let mut head = [0u8; INLINE];
    let n = bytes.len().min(INLINE);
    head[..n].copy_from_slice(&bytes[..n]);
    u64::from_be_bytes(head)
}

fn len_of(text: &str) -> u32 {
    u32::try_from(text.len()).expect("a word is shorter than 4 GiB")
}

impl Label {
    /// The label of `text`, interned if it is too long to be inline (one hash probe).
    pub(crate) fn new(words: &mut Words, text: &str) -> Self {
        let word = if text.len() <= INLINE {
            NO_WORD
        } else {
            words.acquire(text)
        };
        Label {
            head: head_of(text),
            len: len_of(text),
            word,
        }
    }

    /// The label of the interned word `id`, taking over one reference to it (given back at
    /// once if the word is short enough to be inline).
    pub(crate) fn from_word(words: &mut Words, id: WordId) -> Self {
        let text = words.text(id);
        let (head, len) = (head_of(text), len_of(text));
        let word = if text.len() <= INLINE {
            words.release(id);
            NO_WORD
        } else {
            id
        };
        Label { head, len, word }
    }

    /// The word as an interned id, to become a word of a run: a long word's reference moves
    /// over, an inline word is interned.
    pub(crate) fn into_word(self, words: &mut Words) -> WordId {
        if self.is_inline() {
            let bytes = self.head.to_be_bytes();
            let text = std::str::from_utf8(&bytes[..self.len as usize])
                .expect("an inline label holds a whole word");
            words.acquire(text)
        } else {
            self.word
        }
    }

    /// Gives back the label's reference to its word, if it holds one.
    pub(crate) fn release(self, words: &mut Words) {
        if !self.is_inline() {
            words.release(self.word);
        }
    }

    /// Whether the label's word is the literal `lit`.
    #[inline]
    pub(crate) fn is(self, lit: &Lit) -> bool {
        self.head == lit.head
            && self.len == lit.len
            && (self.is_inline() || lit.word == Some(self.word))
    }

    /// The word's text (tests).
    #[cfg(test)]
    pub(crate) fn spell(self, words: &Words) -> String {
        let mut out = Vec::new();
        self.push_to(words, &mut out);
        String::from_utf8(out).expect("whole words")
    }

    /// The root's label: no word.
    pub(crate) const ROOT: Label = Label {
        head: 0,
        len: 0,
        word: NO_WORD,
    };

    /// The word's first [`INLINE`] bytes, zero-padded, as a big-endian number.
    #[inline]
    pub(crate) fn head(self) -> u64 {
        self.head
    }

    /// Whether the word is spelled out in the label.
    #[inline]
    pub(crate) fn is_inline(self) -> bool {
        self.len as usize <= INLINE
    }

    /// Whether the word starts with `byte`.
    #[inline]
    pub(crate) fn starts_with(self, byte: u8) -> bool {
        self.len > 0 && (self.head >> 56) as u8 == byte
    }

    /// Appends the word's UTF-8 bytes to `out`.
    #[inline]
    pub(crate) fn push_to(self, words: &Words, out: &mut Vec<u8>) {
        if self.is_inline() {
            out.extend_from_slice(&self.head.to_be_bytes()[..self.len as usize]);
        } else {
            out.extend_from_slice(words.bytes(self.word));
        }
    }

    /// Orders the word against `probe`'s.
    #[inline]
    pub(crate) fn cmp(self, words: &Words, probe: &Probe<'_>) -> Ordering {
        self.head.cmp(&probe.head).then_with(|| {
            if self.is_inline() || probe.text.len() <= INLINE {
                // Same first bytes, one word at most that long: the shorter is a prefix.
                self.len.cmp(&probe.len)
            } else {
                words.bytes(self.word)[INLINE..].cmp(&probe.text.as_bytes()[INLINE..])
            }
        })
    }
}

/// A word to find or place: its text, head and length.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Probe<'a> {
    pub(crate) text: &'a str,
    head: u64,
    len: u32,
}

impl<'a> Probe<'a> {
    #[inline]
    pub(crate) fn new(text: &'a str) -> Self {
        Probe {
            text,
            head: head_of(text),
            len: len_of(text),
        }
    }

    /// The word's first [`INLINE`] bytes, as [`Label::head`].
    #[inline]
    pub(crate) fn head(&self) -> u64 {
        self.head
    }
}

/// A literal word of a filter, to match against labels and runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Lit {
    head: u64,
    len: u32,
    /// The interned id of the word, if some run or long label uses it.
    pub(crate) word: Option<WordId>,
}

impl Lit {
    pub(crate) fn new(words: &Words, text: &str) -> Self {
        Lit {
            head: head_of(text),
            len: len_of(text),
            word: words.lookup(text),
        }
    }

    /// Whether no stored topic has this word: not interned, and too long to be inline.
    pub(crate) fn is_absent(&self) -> bool {
        self.word.is_none() && self.len as usize > INLINE
    }
}

#[cfg(test)]
mod tests {
    use super::{Label, Lit, Probe, Words, INLINE};

    #[test]
    fn labels_order_as_their_words() {
        let texts = [
            "",
            "\0",
            "a",
            "a\0",
            "a\0b",
            "ab",
            "abcdefg",
            "abcdefg\0",
            "abcdefgh",
            "abcdefgh\0",
            "abcdefghi",
            "abcdefghij",
            "abcdefgi",
            "abcdefh",
            "b",
            "é",
            "日本",
            "日本語のトピック",
        ];
        let mut words = Words::default();
        let labels: Vec<Label> = texts.iter().map(|t| Label::new(&mut words, t)).collect();
        for (a, label) in texts.iter().zip(&labels) {
            assert_eq!(label.spell(&words), *a);
            assert_eq!(label.is_inline(), a.len() <= INLINE);
            for b in texts {
                assert_eq!(label.cmp(&words, &Probe::new(b)), a.cmp(&b), "{a:?} {b:?}");
                assert_eq!(label.is(&Lit::new(&words, b)), *a == b, "{a:?} {b:?}");
            }
        }
        // Only long words are interned; a label made from a run's word keeps or frees it.
        assert_eq!(words.len(), 4);
        let id = words.acquire("temp");
        let label = Label::from_word(&mut words, id);
        assert!(label.is_inline());
        assert_eq!(words.lookup("temp"), None);
        let id = label.into_word(&mut words);
        assert_eq!(words.text(id), "temp");
        assert!(Label::new(&mut words, "$SYS").starts_with(b'$'));
        assert!(!Label::new(&mut words, "").starts_with(0));
    }
}
