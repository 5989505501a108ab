//! Subscription patterns: parsed and validated once, at subscribe time.

use crate::dialect::{Dialect, Limits, NATS_WHITESPACE};
use crate::error::{Error, Limit, Result};
use crate::topic::{check_size, split_words};

/// One word (level, token) of a pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Word {
    /// Matches exactly this word, byte for byte.
    Literal(Box<str>),
    /// The one-word wildcard: `*` (AMQP, NATS) or `+` (MQTT).
    One,
    /// The multi-word wildcard: `#` (AMQP: zero or more words, anywhere; MQTT: zero or more,
    /// last) or `>` (NATS: one or more, last).
    Multi,
}

impl Word {
    /// The literal text, if this word is not a wildcard.
    pub fn literal(&self) -> Option<&str> {
        match self {
            Word::Literal(w) => Some(w),
            Word::One | Word::Multi => None,
        }
    }

    /// Whether this word is a wildcard.
    pub fn is_wildcard(&self) -> bool {
        !matches!(self, Word::Literal(_))
    }
}

/// A validated subscription pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pattern {
    dialect: Dialect,
    words: Vec<Word>,
}

impl Pattern {
    /// Parses and validates `text` under `dialect`'s rules and `limits`.
    ///
    /// An MQTT shared subscription `$share/{ShareName}/{filter}` (MQTT 5.0, 4.8.2) is the
    /// pattern of its `{filter}`: the share name must be at least one character without `+`,
    /// `#` or U+0000 (no part of an MQTT UTF-8 string may hold it, MQTT 5.0 1.5.4), and the
    /// filter a valid, non-empty filter. The byte limit applies to the whole
    /// text, the level limit to the filter (the levels that are matched).
    pub fn parse(dialect: Dialect, limits: &Limits, text: &str) -> Result<Self> {
        check_size(dialect, "pattern", limits, text)?;
        if let Some((name, filter)) = split_share(dialect, text) {
            if name.is_empty() || name.contains(['+', '#', '\0']) {
                return Err(Error::pattern(
                    dialect,
                    text,
                    1,
                    "a shared subscription's share name must be at least one character, \
                     without '+', '#' or U+0000",
                ));
            }
            if filter.is_empty() {
                // `$share/{name}` without a `/` after the name has no filter level: the fault
                // is then at the name's level.
                let level = if text.ends_with('/') { 2 } else { 1 };
                return Err(Error::pattern(
                    dialect,
                    text,
                    level,
                    "a shared subscription '$share/{name}/{filter}' needs a non-empty filter",
                ));
            }
            return Pattern::parse_words(dialect, limits, text, filter, 2);
        }
        if text.is_empty() && dialect != Dialect::Amqp {
            return Err(Error::pattern(dialect, text, 0, empty_rule(dialect)));
        }
        Pattern::parse_words(dialect, limits, text, text, 0)
    }

    /// Parses the words of `body`, the part of `text` that is matched, whose first word is
    /// word `first` of `text` (for error messages).
    fn parse_words(
        dialect: Dialect,
        limits: &Limits,
        text: &str,
        body: &str,
        first: usize,
    ) -> Result<Self> {
        let one = dialect.one_wildcard();
        let multi = dialect.multi_wildcard();
        let mut words = Vec::new();
        let mut count = 0usize;
        for (index, word) in split_words(dialect, body).enumerate() {
            let index = first + index;
            count += 1;
            if count > limits.max_levels {
                let total = split_words(dialect, body).count();
                return Err(Error::limit_of(
                    Limit::Levels,
                    limits.max_levels,
                    total,
                    (dialect, "pattern", text),
                ));
            }
            if words.last() == Some(&Word::Multi) && dialect != Dialect::Amqp {
                return Err(Error::pattern(
                    dialect,
                    text,
                    index - 1,
                    multi_not_last(dialect),
                ));
            }
            let parsed = if word == one {
                Word::One
            } else if word == multi {
                Word::Multi
            } else {
                check_literal(dialect, text, index, word)?;
                Word::Literal(word.into())
            };
            words.push(parsed);
        }
        let multis = words.iter().filter(|w| **w == Word::Multi).count();
        if multis > limits.max_multi_wildcards {
            return Err(Error::limit_of(
                Limit::MultiWildcards,
                limits.max_multi_wildcards,
                multis,
                (dialect, "pattern", text),
            ));
        }
        Ok(Pattern { dialect, words })
    }

    /// The dialect the pattern was parsed under.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The words, in order. The AMQP empty pattern has none.
    pub fn words(&self) -> &[Word] {
        &self.words
    }

    /// Whether any word is a wildcard.
    pub fn has_wildcards(&self) -> bool {
        self.words.iter().any(Word::is_wildcard)
    }

    /// Whether this pattern matches the already validated topic `words`.
    ///
    /// The reference semantics: a set-of-states simulation, O(words × pattern words), so any
    /// number of AMQP `#` stays polynomial.
    pub fn matches_words(&self, words: &[&str]) -> bool {
        if self.dialect == Dialect::Mqtt && hides_dollar(&self.words, words) {
            return false;
        }
        let pat = &self.words;
        // states[i]: the first i pattern words can consume the topic words read so far.
        let mut states = vec![false; pat.len() + 1];
        let mut next = vec![false; pat.len() + 1];
        states[0] = true;
        self.close(&mut states);
        for word in words {
            next.fill(false);
            let mut any = false;
            for (i, p) in pat.iter().enumerate() {
                if !states[i] {
                    continue;
                }
                let advance = match p {
                    Word::Literal(l) => **l == **word,
                    Word::One => true,
                    Word::Multi => {
                        // `#`/`>` may swallow this word and stay.
                        next[i] = true;
                        // NATS `>` must take at least one word: after it, it may also stop.
                        self.dialect == Dialect::Nats
                    }
                };
                if advance {
                    next[i + 1] = true;
                }
                any = true;
            }
            if !any {
                return false;
            }
            std::mem::swap(&mut states, &mut next);
            self.close(&mut states);
        }
        states[pat.len()]
    }

    /// Whether this pattern matches the already validated topic `words`: the answer of
    /// [`matches_words`](Self::matches_words), in one pass over the words and with no
    /// allocation where the pattern's only multi-word wildcard, if any, is its last word (every
    /// MQTT and NATS pattern, and AMQP patterns without a `#` before their last word).
    pub fn matches(&self, words: &[&str]) -> bool {
        let (fixed, open) = match self.words.split_last() {
            Some((Word::Multi, fixed)) => (fixed, true),
            _ => (&self.words[..], false),
        };
        if fixed.contains(&Word::Multi) {
            return self.matches_words(words);
        }
        if self.dialect == Dialect::Mqtt && hides_dollar(&self.words, words) {
            return false;
        }
        let long_enough = match (open, self.dialect) {
            (false, _) => words.len() == fixed.len(),
            // NATS `>` takes at least one word; `#` may take none.
            (true, Dialect::Nats) => words.len() > fixed.len(),
            (true, _) => words.len() >= fixed.len(),
        };
        long_enough
            && fixed.iter().zip(words).all(|(p, w)| match p {
                Word::Literal(l) => **l == **w,
                Word::One | Word::Multi => true,
            })
    }

    /// Epsilon closure: an AMQP or MQTT `#` may match zero words.
    fn close(&self, states: &mut [bool]) {
        if self.dialect == Dialect::Nats {
            return;
        }
        for (i, p) in self.words.iter().enumerate() {
            if states[i] && *p == Word::Multi {
                states[i + 1] = true;
            }
        }
    }
}

/// The prefix of an MQTT shared subscription (MQTT 5.0, 4.8.2).
pub const SHARE_PREFIX: &str = "$share/";

/// The share name and filter of an MQTT shared subscription `$share/{name}/{filter}` (the
/// filter empty when no `/` follows the name), unvalidated; `None` for any other text or
/// dialect.
fn split_share(dialect: Dialect, text: &str) -> Option<(&str, &str)> {
    if dialect != Dialect::Mqtt {
        return None;
    }
    let rest = text.strip_prefix(SHARE_PREFIX)?;
    Some(rest.split_once('/').unwrap_or((rest, "")))
}

/// The share name of an MQTT shared subscription `$share/{name}/{filter}` (valid: parsed by
/// [`Pattern::parse`]), else `None`.
pub fn share_name(dialect: Dialect, text: &str) -> Option<&str> {
    split_share(dialect, text).map(|(name, _)| name)
}

/// The part of a valid pattern `text` that is matched: the filter of an MQTT shared
/// subscription `$share/{name}/{filter}`, else the whole text. Two subscriptions of one
/// subscriber with the same matched text are one pattern to an algorithm.
pub fn matched_text(dialect: Dialect, text: &str) -> &str {
    split_share(dialect, text).map_or(text, |(_, filter)| filter)
}

/// MQTT: a topic whose first level starts with `$` is not matched by a filter starting with a
/// wildcard.
pub(crate) fn hides_dollar(pattern: &[Word], topic: &[&str]) -> bool {
    topic.first().is_some_and(|w| w.starts_with('$'))
        && pattern.first().is_some_and(Word::is_wildcard)
}

fn check_literal(dialect: Dialect, text: &str, index: usize, word: &str) -> Result<()> {
    match dialect {
        Dialect::Amqp => Ok(()),
        Dialect::Mqtt => {
            if word.contains(['+', '#']) {
                Err(Error::pattern(
                    dialect,
                    text,
                    index,
                    "a wildcard '+' or '#' must occupy a whole level",
                ))
            } else if word.contains('\0') {
                Err(Error::pattern(
                    dialect,
                    text,
                    index,
                    "a topic filter must not contain U+0000",
                ))
            } else {
                Ok(())
            }
        }
        Dialect::Nats => {
            if word.is_empty() {
                Err(Error::pattern(
                    dialect,
                    text,
                    index,
                    "tokens must not be empty",
                ))
            } else if word.contains(NATS_WHITESPACE) {
                Err(Error::pattern(
                    dialect,
                    text,
                    index,
                    "subjects must not contain whitespace",
                ))
            } else if word.contains('\0') {
                Err(Error::pattern(
                    dialect,
                    text,
                    index,
                    "subjects must not contain U+0000",
                ))
            } else {
                Ok(())
            }
        }
    }
}

fn multi_not_last(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Mqtt => "the multi-level wildcard '#' must be the last level",
        _ => "the full wildcard '>' must be the last token",
    }
}

fn empty_rule(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Mqtt => "a topic filter must not be empty",
        _ => "a subject must not be empty",
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::Pattern;
    use crate::dialect::{Dialect, Limits};
    use crate::topic::parse_topic;

    /// Words of every dialect's wildcards, empty words and `$` words.
    const WORDS: &[&str] = &["a", "b", "", "$s", "*", "#", "+", ">"];

    fn text() -> impl Strategy<Value = Vec<&'static str>> {
        prop::collection::vec(prop::sample::select(WORDS), 0..7)
    }

    /// A pattern and a topic: half the time the topic is the pattern's first `cut` words, its
    /// wildcards read as `a`, then `more` words, so that the topic is near a match (one word
    /// short, one over) as often as not.
    fn pair() -> impl Strategy<Value = (Vec<&'static str>, Vec<&'static str>)> {
        (text(), text(), 0..7usize, any::<bool>()).prop_map(|(pattern, more, cut, near)| {
            let topic = if near {
                let wild = |w: &&'static str| {
                    if ["*", "#", "+", ">"].contains(w) {
                        "a"
                    } else {
                        *w
                    }
                };
                pattern
                    .iter()
                    .map(wild)
                    .take(cut)
                    .chain(more.into_iter().take(2))
                    .collect()
            } else {
                more
            };
            (pattern, topic)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]
        /// The one-pass `matches` gives the reference simulation's answer on every valid
        /// pattern and topic of every dialect.
        #[test]
        fn matches_is_the_reference((pattern, topic) in pair()) {
            for dialect in Dialect::ALL {
                let sep = char::from(dialect.separator()).to_string();
                let limits = Limits::for_dialect(dialect);
                let (pattern, topic) = (pattern.join(&sep), topic.join(&sep));
                let (Ok(p), Ok(words)) = (
                    Pattern::parse(dialect, &limits, &pattern),
                    parse_topic(dialect, &limits, &topic),
                ) else {
                    continue;
                };
                prop_assert_eq!(
                    p.matches(&words),
                    p.matches_words(&words),
                    "{:?} {:?} against {:?}",
                    dialect,
                    pattern,
                    topic
                );
            }
        }
    }
}
