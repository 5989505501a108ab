//! Splitting a topic in one pass over its bytes when it is plainly valid, so the hot path
//! neither walks it twice nor moves a word list around; anything unusual goes to
//! [`parse_topic`], which decides validity and reports the exact error.

use crate::dialect::Dialect;
use crate::error::Result;
use crate::matcher::Config;
use crate::topic::{parse_topic, Words};

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
                prop_assert_eq!(fast, slow);
            }
        }
    }
}
