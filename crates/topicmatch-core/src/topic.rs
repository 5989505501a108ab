//! Published topics: validated and split into words without allocating for short topics.

use smallvec::SmallVec;

use crate::dialect::{Dialect, Limits, NATS_WHITESPACE};
use crate::error::{Error, Limit, Result};

/// How many words a topic holds inline before its word list spills to the heap.
pub const INLINE_WORDS: usize = 16;

/// The words of a topic, inline up to [`INLINE_WORDS`].
pub type Words<'a> = SmallVec<[&'a str; INLINE_WORDS]>;

/// Splits `text` on the dialect's separator. The empty text has zero words (the AMQP empty
/// routing key); every other text has one more word than separators.
pub fn split_words(dialect: Dialect, text: &str) -> SplitWords<'_> {
    SplitWords {
        rest: (!text.is_empty()).then_some(text),
        sep: dialect.separator(),
    }
}

/// The iterator of [`split_words`]: a byte scan for the (ASCII) separator, so every cut falls
/// on a character boundary. Cheaper than `str::split` on the short words of a topic.
#[derive(Debug, Clone)]
pub struct SplitWords<'a> {
    /// What is left to split; `None` once the last word was returned.
    rest: Option<&'a str>,
    sep: u8,
}

impl<'a> Iterator for SplitWords<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        let rest = self.rest?;
        if let Some(at) = rest.bytes().position(|b| b == self.sep) {
            self.rest = Some(&rest[at + 1..]);
            Some(&rest[..at])
        } else {
            self.rest = None;
            Some(rest)
        }
    }
}

/// Checks the byte limit, which applies to topics and patterns alike.
pub(crate) fn check_size(limits: &Limits, text: &str) -> Result<()> {
    if text.len() > limits.max_topic_bytes {
        return Err(Error::limit(
            Limit::TopicBytes,
            limits.max_topic_bytes,
            text.len(),
        ));
    }
    Ok(())
}

/// Validates a published topic and returns its words.
pub fn parse_topic<'a>(dialect: Dialect, limits: &Limits, text: &'a str) -> Result<Words<'a>> {
    check_topic(dialect, limits, text)?;
    Ok(split_words(dialect, text).collect())
}

/// Validates a published topic without collecting its words: for algorithms that walk the
/// words themselves with [`split_words`].
pub fn check_topic(dialect: Dialect, limits: &Limits, text: &str) -> Result<()> {
    check_size(limits, text)?;
    let sep = dialect.separator();
    let levels = if text.is_empty() {
        0
    } else {
        text.bytes().filter(|&b| b == sep).count() + 1
    };
    if levels > limits.max_levels {
        return Err(Error::limit(Limit::Levels, limits.max_levels, levels));
    }
    validate_topic_words(dialect, text)
}

fn validate_topic_words(dialect: Dialect, text: &str) -> Result<()> {
    match dialect {
        Dialect::Amqp => Ok(()),
        Dialect::Mqtt => {
            if text.is_empty() {
                return Err(Error::topic(
                    dialect,
                    text,
                    0,
                    "a topic name must not be empty",
                ));
            }
            for (i, w) in split_words(dialect, text).enumerate() {
                if w.contains(['+', '#']) {
                    return Err(Error::topic(
                        dialect,
                        text,
                        i,
                        "a topic name must not contain the wildcards '+' or '#'",
                    ));
                }
                if w.contains('\0') {
                    return Err(Error::topic(
                        dialect,
                        text,
                        i,
                        "a topic name must not contain U+0000",
                    ));
                }
            }
            Ok(())
        }
        Dialect::Nats => {
            if text.is_empty() {
                return Err(Error::topic(
                    dialect,
                    text,
                    0,
                    "a subject must not be empty",
                ));
            }
            for (i, w) in split_words(dialect, text).enumerate() {
                let rule = if w.is_empty() {
                    "tokens must not be empty"
                } else if w == "*" || w == ">" {
                    "a published subject must not contain a wildcard token"
                } else if w.contains(NATS_WHITESPACE) {
                    "subjects must not contain whitespace"
                } else {
                    continue;
                };
                return Err(Error::topic(dialect, text, i, rule));
            }
            Ok(())
        }
    }
}

/// The NATS bytes of [`suspicious_values`]: a wildcard character, or whitespace.
const NATS_SUSPICIOUS: [u8; 2 + NATS_WHITESPACE.len()] = {
    let mut bytes = [b'*'; 2 + NATS_WHITESPACE.len()];
    bytes[1] = b'>';
    let mut i = 0;
    while i < NATS_WHITESPACE.len() {
        bytes[2 + i] = NATS_WHITESPACE[i] as u8;
        i += 1;
    }
    bytes
};

/// Bytes after which a topic word may be invalid in `dialect` (the rules of
/// `validate_topic_words`, byte by byte): a topic without any of them needs no further
/// validation beyond its size, depth and (NATS) non-empty words. The one list both the byte
/// table ([`suspicious_bytes`]) and the cstrie's register front end compare against.
pub(crate) const fn suspicious_values(dialect: Dialect) -> &'static [u8] {
    match dialect {
        Dialect::Amqp => &[],
        Dialect::Mqtt => b"+#\0",
        Dialect::Nats => &NATS_SUSPICIOUS,
    }
}

/// [`suspicious_values`] as a table indexed by byte.
const fn suspicious(dialect: Dialect) -> [bool; 256] {
    let mut table = [false; 256];
    let values = suspicious_values(dialect);
    let mut i = 0;
    while i < values.len() {
        table[values[i] as usize] = true;
        i += 1;
    }
    table
}

const AMQP: [bool; 256] = suspicious(Dialect::Amqp);
const MQTT: [bool; 256] = suspicious(Dialect::Mqtt);
const NATS: [bool; 256] = suspicious(Dialect::Nats);

/// `dialect`'s table of bytes that send a topic from the one-pass fast paths (here and in
/// `optimized_bitmap`) to [`check_topic`], which decides and reports the exact error.
#[inline]
pub(crate) fn suspicious_bytes(dialect: Dialect) -> &'static [bool; 256] {
    match dialect {
        Dialect::Amqp => &AMQP,
        Dialect::Mqtt => &MQTT,
        Dialect::Nats => &NATS,
    }
}

/// What a byte is to [`plain_words`]: an ordinary byte, the separator, or suspicious.
const fn classes(dialect: Dialect) -> [u8; 256] {
    let suspicious = suspicious(dialect);
    let mut table = [0; 256];
    let mut i = 0;
    while i < 256 {
        if suspicious[i] {
            table[i] = SUSPICIOUS;
        }
        i += 1;
    }
    table[dialect.separator() as usize] = SEPARATOR;
    table
}

const SEPARATOR: u8 = 1;
const SUSPICIOUS: u8 = 2;
const AMQP_CLASSES: [u8; 256] = classes(Dialect::Amqp);
const MQTT_CLASSES: [u8; 256] = classes(Dialect::Mqtt);
const NATS_CLASSES: [u8; 256] = classes(Dialect::Nats);

/// What receives the words [`plain_words`] cuts, in order.
pub(crate) trait WordSink<'t> {
    /// The next word.
    fn word(&mut self, word: &'t [u8]);
}

/// The one-pass validation of a plainly valid topic that also cuts its words: hands each word
/// to `words` in order, and returns the number of words if `text` is certainly valid (within
/// `limits`, no byte that could make a word invalid, no empty NATS token, non-empty unless
/// AMQP), else `None`, on anything unusual, possibly after handing over some words (the caller
/// discards them): the caller then decides with [`check_topic`], which reports the exact error.
/// An empty AMQP topic has no word. One table load and one test per ordinary byte.
#[inline(always)]
#[allow(clippy::inline_always)] // the lookup's front end: a short loop, cheaper than the call
pub(crate) fn plain_words<'t>(
    dialect: Dialect,
    limits: &Limits,
    text: &'t str,
    words: &mut impl WordSink<'t>,
) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.len() > limits.max_topic_bytes {
        return None;
    }
    if bytes.is_empty() {
        return (dialect == Dialect::Amqp).then_some(0);
    }
    let table = match dialect {
        Dialect::Amqp => &AMQP_CLASSES,
        Dialect::Mqtt => &MQTT_CLASSES,
        Dialect::Nats => &NATS_CLASSES,
    };
    let nats = dialect == Dialect::Nats;
    let mut start = 0;
    let mut levels = 1;
    for (i, &b) in bytes.iter().enumerate() {
        let class = table[usize::from(b)];
        if class != 0 {
            if class == SUSPICIOUS || (nats && i == start) {
                return None;
            }
            words.word(&bytes[start..i]);
            start = i + 1;
            levels += 1;
        }
    }
    if levels > limits.max_levels || (nats && start == bytes.len()) {
        return None;
    }
    words.word(&bytes[start..]);
    Some(levels)
}

#[cfg(test)]
mod tests {
    use super::split_words;
    use crate::dialect::Dialect;

    #[test]
    fn split_words_cuts_like_str_split_except_the_empty_text() {
        let texts = [
            "",
            ".",
            "..",
            "a",
            "a.b",
            ".a",
            "a.",
            "a..b",
            "é.ü/ß.€",
            "/a//b/",
            "日本.語",
            "a b.c",
        ];
        for dialect in [Dialect::Amqp, Dialect::Mqtt, Dialect::Nats] {
            let sep = char::from(dialect.separator());
            for text in texts {
                let expected: Vec<&str> = if text.is_empty() {
                    Vec::new()
                } else {
                    text.split(sep).collect()
                };
                let got: Vec<&str> = split_words(dialect, text).collect();
                assert_eq!(got, expected, "{dialect:?} {text:?}");
            }
        }
    }
}

#[cfg(test)]
mod plain_tests {
    use proptest::prelude::*;

    use super::{check_topic, plain_words, split_words, WordSink};
    use crate::dialect::{Dialect, Limits};

    impl<'t> WordSink<'t> for Vec<&'t [u8]> {
        fn word(&mut self, word: &'t [u8]) {
            self.push(word);
        }
    }

    /// The words `plain_words` cuts, and what it returns.
    fn plain(dialect: Dialect, limits: &Limits, text: &str) -> (Option<usize>, Vec<String>) {
        let mut words: Vec<&[u8]> = Vec::new();
        let n = plain_words(dialect, limits, text, &mut words);
        let words = words
            .iter()
            .map(|w| String::from_utf8(w.to_vec()).unwrap())
            .collect();
        (n, words)
    }

    proptest! {
        #[test]
        fn a_plain_topic_is_valid_and_split_like_split_words(
            text in "[a.b/*>+# \t\\x00é]{0,12}",
            max_levels in 1usize..6,
        ) {
            for dialect in [Dialect::Amqp, Dialect::Mqtt, Dialect::Nats] {
                let limits = Limits { max_levels, ..Limits::for_dialect(dialect) };
                if let (Some(n), words) = plain(dialect, &limits, &text) {
                    prop_assert!(check_topic(dialect, &limits, &text).is_ok(), "{:?} {:?}", dialect, text);
                    let expected: Vec<&str> = split_words(dialect, &text).collect();
                    prop_assert_eq!(n, expected.len());
                    prop_assert_eq!(words, expected);
                }
            }
        }
    }

    #[test]
    fn usual_topics_take_the_plain_path() {
        for (dialect, text) in [
            (Dialect::Amqp, "a.b.c"),
            (Dialect::Amqp, ""),
            (Dialect::Mqtt, "a/b"),
            (Dialect::Nats, "a.b"),
        ] {
            let limits = Limits::for_dialect(dialect);
            let (n, words) = plain(dialect, &limits, text);
            assert_eq!(
                n,
                Some(split_words(dialect, text).count()),
                "{dialect:?} {text:?}"
            );
            assert_eq!(words, split_words(dialect, text).collect::<Vec<_>>());
        }
        for (dialect, text) in [
            (Dialect::Mqtt, "a/+"),
            (Dialect::Mqtt, ""),
            (Dialect::Nats, "a..b"),
            (Dialect::Nats, "a."),
            (Dialect::Nats, "a.>"),
        ] {
            let limits = Limits::for_dialect(dialect);
            assert_eq!(
                plain(dialect, &limits, text).0,
                None,
                "{dialect:?} {text:?}"
            );
        }
    }
}
