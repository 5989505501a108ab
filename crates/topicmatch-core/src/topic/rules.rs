//! The rules a published topic keeps, checked one by one: the specification the tokenizer
//! ([`tokens`](super::tokens)) is tested against, and what names the rule a refused topic
//! broke.

use crate::dialect::{Dialect, Limits, NATS_WHITESPACE};
use crate::error::{Error, Limit, Result};

/// Checks the byte limit, which applies to topics and patterns alike: `text` is a `kind`
/// ("topic", "pattern") of `dialect`, as the error names it.
pub(crate) fn check_size(dialect: Dialect, kind: &str, limits: &Limits, text: &str) -> Result<()> {
    if text.len() > limits.max_topic_bytes {
        return Err(Error::limit_of(
            Limit::TopicBytes,
            limits.max_topic_bytes,
            text.len(),
            (dialect, kind, text),
        ));
    }
    Ok(())
}

/// Checks `text` against every rule of a published topic of `dialect` and against `limits`,
/// and reports the first it breaks.
pub(crate) fn check_rules(dialect: Dialect, limits: &Limits, text: &str) -> Result<()> {
    check_size(dialect, "topic", limits, text)?;
    let sep = dialect.separator();
    let levels = if text.is_empty() {
        0
    } else {
        text.bytes().filter(|&b| b == sep).count() + 1
    };
    if levels > limits.max_levels {
        return Err(Error::limit_of(
            Limit::Levels,
            limits.max_levels,
            levels,
            (dialect, "topic", text),
        ));
    }
    check_words(dialect, text)
}

/// The rules on a topic's words.
fn check_words(dialect: Dialect, text: &str) -> Result<()> {
    let words = text.split(char::from(dialect.separator()));
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
            for (i, w) in words.enumerate() {
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
            for (i, w) in words.enumerate() {
                let rule = if w.is_empty() {
                    "tokens must not be empty"
                } else if w == "*" || w == ">" {
                    "a published subject must not contain a wildcard token"
                } else if w.contains(NATS_WHITESPACE) {
                    "subjects must not contain whitespace"
                } else if w.contains('\0') {
                    "subjects must not contain U+0000"
                } else {
                    continue;
                };
                return Err(Error::topic(dialect, text, i, rule));
            }
            Ok(())
        }
    }
}
