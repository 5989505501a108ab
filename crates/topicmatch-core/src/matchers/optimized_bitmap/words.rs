//! Splitting a topic in one pass over its bytes when it is plainly valid, so the hot path
//! neither walks it twice nor moves a word list around; anything unusual goes to
//! [`parse_topic`], which decides validity and reports the exact error.

use super::keys::{WordKey, PACKED_BYTES};
use crate::dialect::Dialect;
use crate::error::Result;
use crate::matcher::Config;
use crate::topic::{parse_topic, Words, INLINE_WORDS};

/// Bytes after which a word may be invalid in `dialect` (the slow path then decides).
const fn suspicious(dialect: Dialect) -> [bool; 256] {
    let mut table = [false; 256];
    match dialect {
        Dialect::Amqp => {}
        Dialect::Mqtt => {
            table[b'+' as usize] = true;
            table[b'#' as usize] = true;
            table[0] = true;
        }
        Dialect::Nats => {
            let mut i = 0;
            let bytes = b"*> \t\n\r\x0c";
            while i < bytes.len() {
                table[bytes[i] as usize] = true;
                i += 1;
            }
        }
    }
    table
}

const AMQP: [bool; 256] = suspicious(Dialect::Amqp);
const MQTT: [bool; 256] = suspicious(Dialect::Mqtt);
const NATS: [bool; 256] = suspicious(Dialect::Nats);

/// Validates `topic` exactly as [`parse_topic`] does and leaves its words in `words`.
#[inline]
pub(crate) fn split<'a>(config: &Config, topic: &'a str, words: &mut Words<'a>) -> Result<()> {
    if split_plain(config, topic, words) {
        return Ok(());
    }
    *words = parse_topic(config.dialect, &config.limits, topic)?;
    Ok(())
}

/// The fast path: whether `topic` is certainly valid, with its words split into `words`.
#[inline]
fn split_plain<'a>(config: &Config, topic: &'a str, words: &mut Words<'a>) -> bool {
    let bytes = topic.as_bytes();
    if bytes.len() > config.limits.max_topic_bytes {
        return false;
    }
    words.clear();
    if bytes.is_empty() {
        return config.dialect == Dialect::Amqp;
    }
    let (sep, table) = match config.dialect {
        Dialect::Amqp => (b'.', &AMQP),
        Dialect::Mqtt => (b'/', &MQTT),
        Dialect::Nats => (b'.', &NATS),
    };
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == sep {
            words.push(&topic[start..i]);
            start = i + 1;
        } else if table[b as usize] {
            return false;
        }
    }
    words.push(&topic[start..]);
    words.len() <= config.limits.max_levels
        && !(config.dialect == Dialect::Nats && words.iter().any(|w| w.is_empty()))
}

/// A plainly valid topic of at most [`INLINE_WORDS`] words, split and keyed in one pass over
/// its bytes into fixed arrays (no growable vectors on the lookup path).
pub(crate) struct Split<'a> {
    len: usize,
    words: [&'a str; INLINE_WORDS],
    keys: [WordKey; INLINE_WORDS],
}

impl<'a> Split<'a> {
    /// `topic` split, if it is certainly valid and short enough (else [`split`] decides).
    #[inline]
    pub(crate) fn plain(config: &Config, topic: &'a str) -> Option<Self> {
        let bytes = topic.as_bytes();
        if bytes.len() > config.limits.max_topic_bytes {
            return None;
        }
        let mut split = Split {
            len: 0,
            words: [""; INLINE_WORDS],
            keys: [WordKey { packed: 0, hash: 0 }; INLINE_WORDS],
        };
        if bytes.is_empty() {
            return (config.dialect == Dialect::Amqp).then_some(split);
        }
        let (sep, table) = match config.dialect {
            Dialect::Amqp => (b'.', &AMQP),
            Dialect::Mqtt => (b'/', &MQTT),
            Dialect::Nats => (b'.', &NATS),
        };
        let mut start = 0;
        let mut packed = 0u64;
        for (i, &b) in bytes.iter().enumerate() {
            if b == sep {
                if !split.push(&topic[start..i], packed) {
                    return None;
                }
                start = i + 1;
                packed = 0;
            } else if table[b as usize] {
                return None;
            } else if i - start < PACKED_BYTES {
                packed |= u64::from(b) << (8 * (i - start));
            }
        }
        if !split.push(&topic[start..], packed) || split.len > config.limits.max_levels {
            return None;
        }
        let empty_word = split.words().iter().any(|w| w.is_empty());
        (!(config.dialect == Dialect::Nats && empty_word)).then_some(split)
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

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
                let mut words = Words::new();
                let fast = split(&config, &topic, &mut words).map(|()| words.to_vec());
                let slow = parse_topic(dialect, &config.limits, &topic).map(|w| w.to_vec());
                prop_assert_eq!(&fast, &slow);
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
        assert_eq!(Split::plain(&config, &at_most).map(|s| s.words().len()), Some(INLINE_WORDS));
        let more = vec!["w"; INLINE_WORDS + 1].join(".");
        assert!(Split::plain(&config, &more).is_none());
        let mut words = Words::new();
        split(&config, &more, &mut words).unwrap();
        assert_eq!(words.len(), INLINE_WORDS + 1);
    }
}
