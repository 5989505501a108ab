//! The one pass that validates a published topic and cuts it into words, which every algorithm's
//! lookup runs: a [`Cursor`] hands out the words in order, each with its first bytes in a
//! register, and says [`Step::Invalid`] exactly when the topic breaks a rule of its dialect or a
//! limit (the caller then asks [`check_rules`](super::rules::check_rules) which rule, for the
//! error).
//!
//! Cursors by length class, chosen once per topic by [`tokens`]:
//! - [`Short`], a topic of 1 to 15 bytes: the topic is loaded into a register (a `u64` up to 8
//!   bytes, a `u128` beyond; two loads, no byte loop); one sixteen-byte compare per value finds
//!   the separators and the bytes that make a topic invalid, and the whole topic is validated
//!   before the first word is handed out; each word is then cut by a trailing-zero count, its
//!   bytes are the register shifted to it.
//! - [`Long`], any other topic: one table load and one test per byte, validating as it cuts.
//!
//! A caller whose per-word work must stay in registers runs its loop once per cursor type (a
//! function generic over [`Cursor`], matched on [`Tokens`] outside the loop); others step
//! [`Tokens`] itself.

use crate::bytes::positions_in;
use crate::bytes::{pack, pack_u64};
use crate::dialect::{Dialect, Limits, NATS_WHITESPACE};

/// [`Short`] takes topics shorter than this, in bytes.
pub(crate) const SHORT: usize = 16;

/// One word of a topic.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Token<'t> {
    bytes: &'t [u8],
    head: u128,
}

impl<'t> Token<'t> {
    /// The word's bytes.
    #[inline]
    pub(crate) fn bytes(&self) -> &'t [u8] {
        self.bytes
    }

    /// The word's length in bytes.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }

    /// The word's first bytes as a little-endian integer: for a word of fewer than [`SHORT`]
    /// bytes, its bytes in the low `len` bytes; the bytes above them are whatever follows the
    /// word in the topic (a caller masks them off).
    #[inline]
    pub(crate) fn head(&self) -> u128 {
        self.head
    }

    /// The word's text.
    #[inline]
    pub(crate) fn text(&self) -> &'t str {
        // SAFETY: `bytes` is a slice of a `str` cut at its ends or next to an ASCII separator
        // byte, all of them character boundaries, so it is UTF-8 on its own.
        unsafe { std::str::from_utf8_unchecked(self.bytes) }
    }
}

/// What a [`Cursor`] found next.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step<'t> {
    /// The next word.
    Word(Token<'t>),
    /// The last word was handed out: the topic is valid.
    End,
    /// The topic is invalid (the words handed out before are to be discarded).
    Invalid,
}

/// Hands out a topic's words in order; see the module docs.
pub(crate) trait Cursor<'t> {
    /// Whether every word it hands out is shorter than [`SHORT`] bytes.
    const SHORT_WORDS: bool;

    /// The next word, the end, or the news that the topic is invalid.
    fn step(&mut self) -> Step<'t>;
}

/// The cursor over a topic, by its length class.
#[derive(Debug, Clone)]
pub(crate) enum Tokens<'t> {
    /// A valid topic of 1 to 8 bytes.
    Tiny(Short<'t, u64>),
    /// A valid topic of 9 to 15 bytes.
    Short(Short<'t, u128>),
    /// Any other topic, valid or not.
    Long(Long<'t>),
}

/// The cursor over `text`, a published topic of `dialect` within `limits`.
#[inline(always)]
#[allow(clippy::inline_always)] // every lookup's front end; the caller matches on the result
pub(crate) fn tokens<'t>(dialect: Dialect, limits: &Limits, text: &'t str) -> Tokens<'t> {
    let len = text.len();
    if len <= limits.max_topic_bytes {
        if (1..=8).contains(&len) {
            if let Some(tiny) = Short::new(dialect, limits, text) {
                return Tokens::Tiny(tiny);
            }
        } else if (9..SHORT).contains(&len) {
            if let Some(short) = Short::new(dialect, limits, text) {
                return Tokens::Short(short);
            }
        }
    }
    Tokens::Long(Long::new(dialect, limits, text))
}

impl<'t> Cursor<'t> for Tokens<'t> {
    const SHORT_WORDS: bool = false;

    #[inline]
    fn step(&mut self) -> Step<'t> {
        match self {
            Tokens::Tiny(tiny) => tiny.step(),
            Tokens::Short(short) => short.step(),
            Tokens::Long(long) => long.step(),
        }
    }
}

/// The bytes that make a topic of `dialect` invalid wherever they are (besides the rules on
/// whole words, which the cursors check word by word).
const fn invalid_bytes(dialect: Dialect) -> &'static [u8] {
    match dialect {
        Dialect::Amqp => b"",
        Dialect::Mqtt => b"+#\0",
        Dialect::Nats => &NATS_INVALID,
    }
}

/// The NATS bytes of [`invalid_bytes`]: whitespace, and U+0000 (nats-server's byte checks).
const NATS_INVALID: [u8; NATS_WHITESPACE.len() + 1] = {
    // The last byte stays 0: U+0000.
    let mut bytes = [0; NATS_WHITESPACE.len() + 1];
    let mut i = 0;
    while i < NATS_WHITESPACE.len() {
        bytes[i] = NATS_WHITESPACE[i] as u8;
        i += 1;
    }
    bytes
};

/// A register holding a whole short topic: `u64` up to 8 bytes (one-instruction shifts),
/// `u128` up to 15.
pub(crate) trait Lanes: Copy {
    /// `bytes` (at most the register's width), little-endian, zero above them.
    fn pack(bytes: &[u8]) -> Self;

    /// Bit `i` set where byte `i` is `byte` (past the topic's bytes, the zero padding).
    fn positions(self, byte: u8) -> u32;

    /// The bytes from byte `start` on, in the low bytes; `start` is at most the topic's length
    /// (at the length, the result is unspecified: it heads the empty word after a final
    /// separator).
    fn head_at(self, start: usize) -> u128;
}

impl Lanes for u64 {
    #[inline(always)]
    #[allow(clippy::inline_always)] // once per lookup
    fn pack(bytes: &[u8]) -> Self {
        pack_u64(bytes)
    }

    #[inline(always)]
    #[allow(clippy::inline_always)] // a few times per lookup
    fn positions(self, byte: u8) -> u32 {
        positions(<u128 as From<u64>>::from(self), byte)
    }

    #[inline(always)]
    #[allow(clippy::inline_always)] // once per word
    fn head_at(self, start: usize) -> u128 {
        // A shift by 64 (an empty last word of 8 bytes' topic) wraps: unspecified, as allowed.
        <u128 as From<u64>>::from(self.wrapping_shr(8 * start as u32))
    }
}

impl Lanes for u128 {
    #[inline(always)]
    #[allow(clippy::inline_always)] // once per lookup
    fn pack(bytes: &[u8]) -> Self {
        pack(bytes)
    }

    #[inline(always)]
    #[allow(clippy::inline_always)] // a few times per lookup
    fn positions(self, byte: u8) -> u32 {
        positions(self, byte)
    }

    #[inline(always)]
    #[allow(clippy::inline_always)] // once per word
    fn head_at(self, start: usize) -> u128 {
        self >> (8 * start)
    }
}

/// Bit `i` set where byte `i` of `bytes` is `byte`.
#[inline(always)]
#[allow(clippy::inline_always)] // a few instructions, a few times per lookup
fn positions(bytes: u128, byte: u8) -> u32 {
    #[cfg(target_arch = "x86_64")]
    return positions_in(bytes, byte);
    #[cfg(not(target_arch = "x86_64"))]
    return crate::bytes::swar_positions(&bytes.to_le_bytes(), byte);
}

/// A valid topic of 1 to 15 bytes, in a register `L`; see the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Short<'t, L> {
    bytes: &'t [u8],
    packed: L,
    /// Bit `i` set where a word not handed out yet ends: at a separator, or at the end.
    ends: u32,
    /// Where the next word starts.
    start: usize,
}

impl<'t, L: Lanes> Short<'t, L> {
    /// The cursor over `text`, of 1 to 15 bytes and at most `L`'s width, if it is a valid
    /// topic; else `None` (for [`Long`] to find invalid).
    #[inline(always)]
    #[allow(clippy::inline_always)] // every short lookup's front end
    fn new(dialect: Dialect, limits: &Limits, text: &'t str) -> Option<Self> {
        let bytes = text.as_bytes();
        let len = bytes.len();
        debug_assert!((1..SHORT).contains(&len) && len <= std::mem::size_of::<L>());
        let packed = L::pack(bytes);
        // The separator is never U+0000, the padding past `len`.
        let separators = packed.positions(dialect.separator());
        if dialect != Dialect::Amqp {
            // Past `len` the packed topic is zero, so only U+0000 could show up there.
            let within = (1u32 << len) - 1;
            for &value in invalid_bytes(dialect) {
                if packed.positions(value) & within != 0 {
                    return None;
                }
            }
            if dialect == Dialect::Nats {
                // An empty token: a separator first, last, or next to another.
                let edges = 1 | 1 << (len - 1);
                if separators & (edges | separators >> 1) != 0 {
                    return None;
                }
                // A wildcard token: a `*` or `>` that starts and ends a token.
                let wild = (packed.positions(b'*') | packed.positions(b'>')) & within;
                let starts = separators << 1 | 1;
                let ends = separators >> 1 | 1 << (len - 1);
                if wild & starts & ends != 0 {
                    return None;
                }
            }
        }
        // At most 16 words: only a smaller limit needs the count (no `popcnt` in the x86_64
        // baseline).
        if limits.max_levels < SHORT && separators.count_ones() as usize >= limits.max_levels {
            return None;
        }
        Some(Short {
            bytes,
            packed,
            ends: separators | 1 << len,
            start: 0,
        })
    }
}

impl<'t, L: Lanes> Cursor<'t> for Short<'t, L> {
    const SHORT_WORDS: bool = true;

    #[inline(always)]
    #[allow(clippy::inline_always)] // once per word, in the lookup's front end
    fn step(&mut self) -> Step<'t> {
        if self.ends == 0 {
            return Step::End;
        }
        let end = self.ends.trailing_zeros() as usize;
        self.ends &= self.ends - 1;
        let start = self.start;
        self.start = end + 1;
        debug_assert!(start <= end && end <= self.bytes.len());
        // SAFETY: `end` is a separator's position or the length (the bits of `ends` are those
        // of the separators before the length, and the length's), and `start` is 0 or one past
        // the previous, smaller, `end`: `start <= end <= len`.
        let bytes = unsafe { self.bytes.get_unchecked(start..end) };
        Step::Word(Token {
            bytes,
            head: self.packed.head_at(start),
        })
    }
}

/// What a byte is to [`Long`]: an ordinary byte, the separator, or invalid.
const fn classes(dialect: Dialect) -> [u8; 256] {
    let mut table = [ORDINARY; 256];
    let invalid = invalid_bytes(dialect);
    let mut i = 0;
    while i < invalid.len() {
        table[invalid[i] as usize] = INVALID;
        i += 1;
    }
    table[dialect.separator() as usize] = SEPARATOR;
    table
}

const ORDINARY: u8 = 0;
const SEPARATOR: u8 = 1;
const INVALID: u8 = 2;
const AMQP_CLASSES: [u8; 256] = classes(Dialect::Amqp);
const MQTT_CLASSES: [u8; 256] = classes(Dialect::Mqtt);
const NATS_CLASSES: [u8; 256] = classes(Dialect::Nats);

/// Where a [`Long`] cursor is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Words are left.
    Open,
    /// The last word was handed out.
    Done,
    /// The topic is invalid.
    Failed,
}

/// Any topic, validated as it is cut; see the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Long<'t> {
    bytes: &'t [u8],
    table: &'static [u8; 256],
    nats: bool,
    max_levels: usize,
    /// Where the next word starts.
    at: usize,
    levels: usize,
    state: State,
}

impl<'t> Long<'t> {
    /// The cursor over `text`, a topic of `dialect` within `limits`.
    #[inline]
    pub(crate) fn new(dialect: Dialect, limits: &Limits, text: &'t str) -> Self {
        let bytes = text.as_bytes();
        let state = if bytes.len() > limits.max_topic_bytes {
            State::Failed
        } else if bytes.is_empty() {
            // The empty AMQP routing key has no word; MQTT and NATS refuse it.
            if dialect == Dialect::Amqp {
                State::Done
            } else {
                State::Failed
            }
        } else {
            State::Open
        };
        Long {
            bytes,
            table: match dialect {
                Dialect::Amqp => &AMQP_CLASSES,
                Dialect::Mqtt => &MQTT_CLASSES,
                Dialect::Nats => &NATS_CLASSES,
            },
            nats: dialect == Dialect::Nats,
            max_levels: limits.max_levels,
            at: 0,
            levels: 0,
            state,
        }
    }

    /// Where the word starting at `start` ends (at a separator or at the end), or `None` at an
    /// invalid byte.
    #[inline]
    fn word_end(&self, start: usize) -> Option<usize> {
        for (i, &b) in self.bytes[start..].iter().enumerate() {
            match self.table[usize::from(b)] {
                ORDINARY => {}
                SEPARATOR => return Some(start + i),
                _ => return None,
            }
        }
        Some(self.bytes.len())
    }
}

impl<'t> Cursor<'t> for Long<'t> {
    const SHORT_WORDS: bool = false;

    #[inline]
    fn step(&mut self) -> Step<'t> {
        match self.state {
            State::Open => {}
            State::Done => return Step::End,
            State::Failed => return Step::Invalid,
        }
        let start = self.at;
        let Some(end) = self.word_end(start) else {
            self.state = State::Failed;
            return Step::Invalid;
        };
        self.levels += 1;
        let word = &self.bytes[start..end];
        let wildcard = self.nats && (word.is_empty() || word == b"*" || word == b">");
        if self.levels > self.max_levels || wildcard {
            self.state = State::Failed;
            return Step::Invalid;
        }
        if end == self.bytes.len() {
            self.state = State::Done;
        }
        self.at = end + 1;
        let rest = &self.bytes[start..];
        let head = match rest.get(..SHORT) {
            Some(first) => u128::from_le_bytes(first.try_into().expect("SHORT bytes")),
            None => pack(rest),
        };
        Step::Word(Token { bytes: word, head })
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::rules::check_rules;
    use super::{tokens, Cursor, Long, Step, Tokens, SHORT};
    use crate::dialect::{Dialect, Limits};

    /// The words `cursor` hands out, or `None` if it finds the topic invalid; every word's head
    /// checked against its bytes.
    fn words<'t>(mut cursor: impl Cursor<'t>) -> Option<Vec<&'t str>> {
        let mut out = Vec::new();
        loop {
            match cursor.step() {
                Step::Word(token) => {
                    let n = token.len().min(SHORT);
                    assert_eq!(token.head().to_le_bytes()[..n], token.bytes()[..n]);
                    assert_eq!(token.text().as_bytes(), token.bytes());
                    out.push(token.text());
                }
                Step::End => return Some(out),
                Step::Invalid => return None,
            }
        }
    }

    /// What the rules say of `text`: its words if valid.
    fn expected<'t>(dialect: Dialect, limits: &Limits, text: &'t str) -> Option<Vec<&'t str>> {
        let sep = char::from(dialect.separator());
        check_rules(dialect, limits, text).ok().map(|()| {
            if text.is_empty() {
                Vec::new()
            } else {
                text.split(sep).collect()
            }
        })
    }

    proptest! {
        #[test]
        fn both_cursors_cut_exactly_the_valid_topics(
            text in "[a.b/*>+# \t\\x00\\x0cé]{0,20}",
            max_levels in 1usize..20,
            max_topic_bytes in 1usize..24,
        ) {
            for dialect in Dialect::ALL {
                let limits = Limits { max_topic_bytes, max_levels, ..Limits::for_dialect(dialect) };
                let want = expected(dialect, &limits, &text);
                prop_assert_eq!(words(tokens(dialect, &limits, &text)), want.clone());
                prop_assert_eq!(words(Long::new(dialect, &limits, &text)), want.clone());
                let short = !matches!(tokens(dialect, &limits, &text), Tokens::Long(_));
                let expect_short = want.is_some() && (1..SHORT).contains(&text.len());
                prop_assert_eq!(short, expect_short);
            }
        }

        #[test]
        fn words_of_every_length_at_every_offset(
            parts in proptest::collection::vec("[a-z0-9é*>]{0,18}", 1..6),
        ) {
            for dialect in Dialect::ALL {
                let text = parts.join(&char::from(dialect.separator()).to_string());
                let limits = Limits::for_dialect(dialect);
                prop_assert_eq!(words(tokens(dialect, &limits, &text)), expected(dialect, &limits, &text));
            }
        }
    }

    #[test]
    fn usual_topics_take_a_short_cursor() {
        for (dialect, text) in [
            (Dialect::Amqp, "0.1.7"),
            (Dialect::Amqp, "a..b"),
            (Dialect::Amqp, "."),
            (Dialect::Amqp, "fifteen-bytes-x"),
            (Dialect::Mqtt, "sensors/b1/temp"),
            (Dialect::Mqtt, "/"),
            (Dialect::Nats, "foo.bar"),
            (Dialect::Nats, "x"),
            (Dialect::Nats, "a*.>b.**"),
        ] {
            let limits = Limits::for_dialect(dialect);
            let short = if text.len() <= 8 {
                matches!(tokens(dialect, &limits, text), Tokens::Tiny(_))
            } else {
                matches!(tokens(dialect, &limits, text), Tokens::Short(_))
            };
            assert!(short, "{dialect:?} {text:?}");
        }
        for (dialect, text) in [
            (Dialect::Amqp, ""),
            (Dialect::Amqp, "sixteen-bytes-xy"),
            (Dialect::Mqtt, "a/+"),
            (Dialect::Mqtt, "a/b\0"),
            (Dialect::Nats, "a..b"),
            (Dialect::Nats, "a.>"),
            (Dialect::Nats, "*"),
            (Dialect::Nats, "a b"),
            (Dialect::Nats, "a\0b"),
        ] {
            let limits = Limits::for_dialect(dialect);
            assert!(
                matches!(tokens(dialect, &limits, text), Tokens::Long(_)),
                "{dialect:?} {text:?}"
            );
        }
    }

    #[test]
    fn limits_make_a_topic_invalid() {
        let limits = Limits {
            max_levels: 2,
            ..Limits::for_dialect(Dialect::Amqp)
        };
        assert_eq!(words(tokens(Dialect::Amqp, &limits, "a.b.c")), None);
        assert_eq!(
            words(tokens(Dialect::Amqp, &limits, "a.b")),
            Some(vec!["a", "b"])
        );
        let long = "a-long-word-of-more-than-sixteen-bytes.b.c";
        assert_eq!(words(tokens(Dialect::Amqp, &limits, long)), None);
        let limits = Limits {
            max_topic_bytes: 4,
            ..Limits::for_dialect(Dialect::Amqp)
        };
        assert_eq!(words(tokens(Dialect::Amqp, &limits, "a.b.c")), None);
        assert_eq!(
            words(tokens(Dialect::Amqp, &limits, "a.bc")),
            Some(vec!["a", "bc"])
        );
    }
}
