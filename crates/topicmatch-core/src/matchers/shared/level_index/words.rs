//! A topic's words and their keys, from the topic tokenizer's one pass: kept in fixed arrays
//! for topics of up to [`INLINE_WORDS`] words (no growable vectors on the lookup path).

use super::keys::{keys_of, Keys, WordKey, PACKED_BYTES};
use crate::error::Result;
use crate::matcher::Config;
use crate::topic::tokens::{self, Cursor, Step, Token};
use crate::topic::{refused, INLINE_WORDS};

/// The key of `token`'s word: its bytes packed when it has at most [`PACKED_BYTES`], its hash
/// otherwise.
#[allow(clippy::inline_always)] // once per word, in the lookup's front end
#[inline(always)]
pub(crate) fn key_of(token: &Token<'_>) -> WordKey {
    if token.len() <= PACKED_BYTES {
        packed_key(token)
    } else {
        WordKey::long(token.text())
    }
}

/// The key of `token`'s word, of at most [`PACKED_BYTES`] bytes: its bytes packed.
#[allow(clippy::inline_always)] // once per word, in the lookup's front end
#[inline(always)]
pub(crate) fn packed_key(token: &Token<'_>) -> WordKey {
    /// The mask of the first `len` bytes, for each `len` up to [`PACKED_BYTES`].
    const MASKS: [u64; PACKED_BYTES + 1] = {
        let mut masks = [0; PACKED_BYTES + 1];
        let mut len = 0;
        while len <= PACKED_BYTES {
            masks[len] = (1 << (8 * len)) - 1;
            len += 1;
        }
        masks
    };
    let len = token.len();
    debug_assert!(len <= PACKED_BYTES);
    // The word's bytes, the bytes after it in the topic masked off (a load, no shifts).
    let bytes = token.head() as u64 & MASKS[len & PACKED_BYTES];
    WordKey::packed(bytes, len)
}

/// A topic of at most [`INLINE_WORDS`] words, split and keyed into fixed arrays.
struct Split<'a> {
    len: usize,
    words: [&'a str; INLINE_WORDS],
    keys: [WordKey; INLINE_WORDS],
}

impl<'a> Split<'a> {
    /// No words.
    #[inline]
    fn new() -> Self {
        Split {
            len: 0,
            words: [""; INLINE_WORDS],
            keys: [WordKey { packed: 0, hash: 0 }; INLINE_WORDS],
        }
    }

    /// Appends `token`'s word and key; false when full.
    #[inline]
    fn push(&mut self, token: &Token<'a>) -> bool {
        if self.len == INLINE_WORDS {
            return false;
        }
        self.words[self.len] = token.text();
        self.keys[self.len] = key_of(token);
        self.len += 1;
        true
    }

    fn words(&self) -> &[&'a str] {
        &self.words[..self.len]
    }

    fn keys(&self) -> &[WordKey] {
        &self.keys[..self.len]
    }
}

/// Validates `topic` and calls `f` with its words and their keys, cut and keyed in one pass;
/// an invalid topic's error is reported by the rules.
#[inline]
pub(crate) fn with_keys<R>(
    config: &Config,
    topic: &str,
    f: impl FnOnce(&[&str], &[WordKey]) -> R,
) -> Result<R> {
    let mut split = Split::new();
    let mut cursor = tokens::tokens(config.dialect, &config.limits, topic);
    loop {
        match cursor.step() {
            Step::Word(token) => {
                if !split.push(&token) {
                    return spill(&split, &token, cursor, config, topic, f);
                }
            }
            Step::End => return Ok(f(split.words(), split.keys())),
            Step::Invalid => break,
        }
    }
    let words = refused(config.dialect, &config.limits, topic)?;
    let mut keys = Keys::new();
    keys_of(&words, &mut keys);
    Ok(f(&words, &keys))
}

/// [`with_keys`] of a topic of more than [`INLINE_WORDS`] words: the words of `split` and
/// `token` and the rest of `cursor`'s, in vectors.
#[cold]
#[inline(never)]
fn spill<'t, R>(
    split: &Split<'t>,
    token: &Token<'t>,
    mut cursor: impl Cursor<'t>,
    config: &Config,
    topic: &'t str,
    f: impl FnOnce(&[&str], &[WordKey]) -> R,
) -> Result<R> {
    let mut words: Vec<&str> = split.words().to_vec();
    let mut keys: Vec<WordKey> = split.keys().to_vec();
    words.push(token.text());
    keys.push(key_of(token));
    loop {
        match cursor.step() {
            Step::Word(token) => {
                words.push(token.text());
                keys.push(key_of(&token));
            }
            Step::End => return Ok(f(&words, &keys)),
            Step::Invalid => {
                let words = refused(config.dialect, &config.limits, topic)?;
                let mut keys = Keys::new();
                keys_of(&words, &mut keys);
                return Ok(f(&words, &keys));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::dialect::Dialect;
    use crate::topic::parse_topic;

    proptest! {
        #[test]
        fn with_keys_agrees_with_parse_topic(
            topic in "[a.b/ *>+#\\x00\\t$é]{0,12}",
            levels in 1..6usize,
            bytes in 0..14usize,
        ) {
            for dialect in Dialect::ALL {
                let mut config = Config::new(dialect);
                config.limits.max_levels = levels;
                config.limits.max_topic_bytes = bytes;
                let slow = parse_topic(dialect, &config.limits, &topic).map(|w| w.to_vec());
                let fast = with_keys(&config, &topic, |w, k| {
                    (w.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>(), k.to_vec())
                });
                let slow = slow.map(|w| w.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>());
                prop_assert_eq!(fast.clone().map(|(w, _)| w), slow);
                if let Ok((words, keys)) = fast {
                    let expected: Vec<WordKey> = words.iter().map(|w| WordKey::of(w)).collect();
                    prop_assert_eq!(keys, expected);
                }
            }
        }
    }

    #[test]
    fn with_keys_takes_topics_past_the_fixed_arrays() {
        let config = Config::new(Dialect::Mqtt);
        for n in [INLINE_WORDS, INLINE_WORDS + 1, 3 * INLINE_WORDS] {
            let words: Vec<String> = (0..n)
                .map(|i| format!("w{i}-{}", "x".repeat(i % 9)))
                .collect();
            let topic = words.join("/");
            let (got, keys) = with_keys(&config, &topic, |w, k| {
                (
                    w.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>(),
                    k.to_vec(),
                )
            })
            .unwrap();
            assert_eq!(got, words);
            let expected: Vec<WordKey> = words.iter().map(|w| WordKey::of(w)).collect();
            assert_eq!(keys, expected);
        }
        let mut limits = config;
        limits.limits.max_levels = INLINE_WORDS + 1;
        let too_deep = vec!["w"; INLINE_WORDS + 2].join("/");
        assert!(with_keys(&limits, &too_deep, |_, _| ()).is_err());
    }
}
