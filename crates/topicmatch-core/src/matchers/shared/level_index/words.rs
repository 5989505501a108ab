//! Splitting a topic in one pass over its bytes when it is plainly valid, so the hot path
//! neither walks it twice nor moves a word list around; anything unusual goes to
//! [`parse_topic`](crate::topic::parse_topic), which decides validity and reports the exact
//! error.

use std::ops::Range;

use super::keys::{keys_of, Keys, WordKey, PACKED_BYTES};
use crate::dialect::Dialect;
use crate::error::Result;
use crate::matcher::Config;
use crate::topic::{parse_topic, suspicious_bytes, INLINE_WORDS};

/// One pass over a topic's bytes for the fast paths: calls `word(range, packed)` for each word
/// in order, the last included (`packed`: its first [`PACKED_BYTES`] bytes as a key). Returns
/// false as soon as a byte of `dialect`'s table turns up or `word` returns false; true after the
/// last word. Always inlined: the small walk's accumulator must stay in registers (measured).
#[allow(clippy::inline_always)]
#[inline(always)]
pub(crate) fn scan_words(
    dialect: Dialect,
    bytes: &[u8],
    mut word: impl FnMut(Range<usize>, u64) -> bool,
) -> bool {
    let mut scan = Scan::new(dialect, bytes);
    loop {
        match scan.next_word() {
            Step::Word(range, packed) => {
                if !word(range, packed) {
                    return false;
                }
            }
            Step::End => return true,
            Step::Invalid => return false,
        }
    }
}

/// What [`Scan::next_word`] found.
pub(crate) enum Step {
    /// The next word: its byte range and its first [`PACKED_BYTES`] bytes packed.
    Word(Range<usize>, u64),
    /// The last word was returned.
    End,
    /// A byte of the dialect's table: `parse_topic` decides.
    Invalid,
}

/// [`scan_words`] as a cursor, for a caller whose per-word work must be inlined into its own
/// loop: a closure called from several inlined copies of one walk stays out of line, and the
/// small walk's accumulator then went through memory (a store-forwarding stall, measured).
pub(crate) struct Scan<'a> {
    bytes: &'a [u8],
    sep: u8,
    table: &'static [bool; 256],
    at: usize,
    done: bool,
}

impl<'a> Scan<'a> {
    /// A cursor at the first word of `bytes` (a topic of `dialect`).
    #[inline]
    pub(crate) fn new(dialect: Dialect, bytes: &'a [u8]) -> Self {
        Scan {
            bytes,
            sep: dialect.separator(),
            table: suspicious_bytes(dialect),
            at: 0,
            done: false,
        }
    }

    /// The next word, or the end, or an invalid byte.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn next_word(&mut self) -> Step {
        if self.done {
            return Step::End;
        }
        let start = self.at;
        let mut packed = 0u64;
        while let Some(&b) = self.bytes.get(self.at) {
            if b == self.sep {
                let range = start..self.at;
                self.at += 1;
                return Step::Word(range, packed);
            }
            if self.table[b as usize] {
                return Step::Invalid;
            }
            if self.at - start < PACKED_BYTES {
                packed |= u64::from(b) << (8 * (self.at - start));
            }
            self.at += 1;
        }
        self.done = true;
        Step::Word(start..self.at, packed)
    }
}

/// A plainly valid topic of at most [`INLINE_WORDS`] words, split and keyed in one pass over
/// its bytes into fixed arrays (no growable vectors on the lookup path).
pub(crate) struct Split<'a> {
    len: usize,
    words: [&'a str; INLINE_WORDS],
    keys: [WordKey; INLINE_WORDS],
}

impl<'a> Split<'a> {
    /// No words.
    #[inline]
    pub(crate) fn new() -> Self {
        Split {
            len: 0,
            words: [""; INLINE_WORDS],
            keys: [WordKey { packed: 0, hash: 0 }; INLINE_WORDS],
        }
    }

    /// `topic` split, if it is certainly valid and short enough.
    #[cfg(test)]
    pub(crate) fn plain(config: &Config, topic: &'a str) -> Option<Self> {
        let mut split = Split::new();
        split.fill(config, topic).then_some(split)
    }

    /// Splits `topic` into `self` (in place: the arrays are not moved) and returns true if it
    /// is certainly valid and short enough; else `parse_topic` decides.
    #[inline]
    pub(crate) fn fill(&mut self, config: &Config, topic: &'a str) -> bool {
        let bytes = topic.as_bytes();
        if bytes.len() > config.limits.max_topic_bytes {
            return false;
        }
        self.len = 0;
        if bytes.is_empty() {
            return config.dialect == Dialect::Amqp;
        }
        if !scan_words(config.dialect, bytes, |range, packed| {
            self.push(&topic[range], packed)
        }) || self.len > config.limits.max_levels
        {
            return false;
        }
        !(config.dialect == Dialect::Nats && self.words().iter().any(|w| w.is_empty()))
    }

    /// Appends `word`, whose first bytes are packed in `packed`; false when full.
    #[inline]
    fn push(&mut self, word: &'a str, packed: u64) -> bool {
        if self.len == INLINE_WORDS {
            return false;
        }
        self.words[self.len] = word;
        self.keys[self.len] = if word.len() <= PACKED_BYTES {
            WordKey::packed(packed, word.len())
        } else {
            WordKey::long(word)
        };
        self.len += 1;
        true
    }

    pub(crate) fn words(&self) -> &[&'a str] {
        &self.words[..self.len]
    }

    pub(crate) fn keys(&self) -> &[WordKey] {
        &self.keys[..self.len]
    }
}

/// Validates `topic` and calls `f` with its words and their keys: split in one pass into fixed
/// arrays when the topic is plainly valid, else by [`parse_topic`] (which reports the error).
#[inline]
pub(crate) fn with_keys<R>(
    config: &Config,
    topic: &str,
    f: impl FnOnce(&[&str], &[WordKey]) -> R,
) -> Result<R> {
    let mut fast = Split::new();
    if fast.fill(config, topic) {
        return Ok(f(fast.words(), fast.keys()));
    }
    let words = parse_topic(config.dialect, &config.limits, topic)?;
    let mut keys = Keys::new();
    keys_of(&words, &mut keys);
    Ok(f(&words, &keys))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::topic::parse_topic;

    proptest! {
        #[test]
        fn split_agrees_with_parse_topic(
            topic in "[a.b/ *>+#\\x00\\t$é]{0,12}",
            levels in 1..6usize,
            bytes in 0..14usize,
        ) {
            for dialect in Dialect::ALL {
                let mut config = Config::new(dialect);
                config.limits.max_levels = levels;
                config.limits.max_topic_bytes = bytes;
                let slow = parse_topic(dialect, &config.limits, &topic).map(|w| w.to_vec());
                if let Some(split) = Split::plain(&config, &topic) {
                    prop_assert_eq!(Ok(split.words().to_vec()), slow);
                    let keys: Vec<WordKey> = split.words().iter().map(|w| WordKey::of(w)).collect();
                    prop_assert_eq!(split.keys(), keys.as_slice());
                }
            }
        }
    }

    #[test]
    fn split_leaves_long_topics_to_the_slow_path() {
        let config = Config::new(Dialect::Amqp);
        let at_most = vec!["w"; INLINE_WORDS].join(".");
        assert_eq!(
            Split::plain(&config, &at_most).map(|s| s.words().len()),
            Some(INLINE_WORDS)
        );
        let more = vec!["w"; INLINE_WORDS + 1].join(".");
        assert!(Split::plain(&config, &more).is_none());
        let words = parse_topic(config.dialect, &config.limits, &more).unwrap();
        assert_eq!(words.len(), INLINE_WORDS + 1);
    }
}
