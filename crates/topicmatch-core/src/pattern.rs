//! Subscription patterns: parsed and validated once, at subscribe time.

use smallvec::SmallVec;

use crate::dialect::{Dialect, Limits, NATS_WHITESPACE};
use crate::error::{Error, Limit, Result};
use crate::topic::{check_size, parse_topic, split_words};

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
        let mut words = Vec::new();
        scan(dialect, limits, text, |piece| words.push(piece.to_word()))?;
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
        simulate(self.dialect, &self.words, words)
    }

    /// Whether this pattern matches the already validated topic `words`: the answer of
    /// [`matches_words`](Self::matches_words), in one pass over the words and with no
    /// allocation where the pattern's only multi-word wildcard, if any, is its last word (every
    /// MQTT and NATS pattern, and AMQP patterns without a `#` before their last word).
    pub fn matches(&self, words: &[&str]) -> bool {
        matches(self.dialect, &self.words, words)
    }
}

/// A word of a pattern as [`scan`] reads it, borrowed from the pattern's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece<'t> {
    /// A literal word.
    Literal(&'t str),
    /// The one-word wildcard.
    One,
    /// The multi-word wildcard.
    Multi,
}

impl Piece<'_> {
    fn to_word(self) -> Word {
        match self {
            Piece::Literal(w) => Word::Literal(w.into()),
            Piece::One => Word::One,
            Piece::Multi => Word::Multi,
        }
    }
}

/// A pattern's word as the matching reads it: a [`Word`] of a parsed [`Pattern`], or a
/// [`Piece`] of a pattern read without one.
trait AsPiece {
    fn piece(&self) -> Piece<'_>;
}

impl AsPiece for Word {
    fn piece(&self) -> Piece<'_> {
        match self {
            Word::Literal(w) => Piece::Literal(w),
            Word::One => Piece::One,
            Word::Multi => Piece::Multi,
        }
    }
}

impl AsPiece for Piece<'_> {
    fn piece(&self) -> Piece<'_> {
        *self
    }
}

/// Validates `text` as a pattern under `dialect`'s rules and `limits` (the rules of
/// [`Pattern::parse`]), giving `push` each word that is matched, in order; words may have been
/// pushed when it fails.
fn scan<'t>(
    dialect: Dialect,
    limits: &Limits,
    text: &'t str,
    push: impl FnMut(Piece<'t>),
) -> Result<()> {
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
        return scan_words(dialect, limits, text, filter, 2, push);
    }
    if text.is_empty() && dialect != Dialect::Amqp {
        return Err(Error::pattern(dialect, text, 0, empty_rule(dialect)));
    }
    scan_words(dialect, limits, text, text, 0, push)
}

/// Validates the words of `body`, the part of `text` that is matched, whose first word is
/// word `first` of `text` (for error messages), giving them to `push`.
fn scan_words<'t>(
    dialect: Dialect,
    limits: &Limits,
    text: &str,
    body: &'t str,
    first: usize,
    mut push: impl FnMut(Piece<'t>),
) -> Result<()> {
    let one = dialect.one_wildcard();
    let multi = dialect.multi_wildcard();
    let (mut after_multi, mut multis) = (false, 0usize);
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
        if after_multi && dialect != Dialect::Amqp {
            return Err(Error::pattern(
                dialect,
                text,
                index - 1,
                multi_not_last(dialect),
            ));
        }
        let piece = if word == one {
            Piece::One
        } else if word == multi {
            Piece::Multi
        } else {
            check_literal(dialect, text, index, word)?;
            Piece::Literal(word)
        };
        after_multi = piece == Piece::Multi;
        multis += usize::from(after_multi);
        push(piece);
    }
    if multis > limits.max_multi_wildcards {
        return Err(Error::limit_of(
            Limit::MultiWildcards,
            limits.max_multi_wildcards,
            multis,
            (dialect, "pattern", text),
        ));
    }
    Ok(())
}

/// Whether the pattern `text` matches `topic` under `dialect` and `limits`, or the error of
/// the first of them that is invalid: [`Pattern::parse`] and [`parse_topic`], then
/// [`Pattern::matches`], with the pattern's words borrowed from its text.
pub(crate) fn matches_text(
    dialect: Dialect,
    limits: &Limits,
    text: &str,
    topic: &str,
) -> Result<bool> {
    let mut pat: SmallVec<[Piece<'_>; 16]> = SmallVec::new();
    scan(dialect, limits, text, |piece| pat.push(piece))?;
    let words = parse_topic(dialect, limits, topic)?;
    Ok(matches(dialect, &pat, &words))
}

/// [`Pattern::matches`] of the pattern words `pat` under `dialect`.
fn matches<P: AsPiece>(dialect: Dialect, pat: &[P], words: &[&str]) -> bool {
    let (fixed, open) = match pat.split_last() {
        Some((last, fixed)) if last.piece() == Piece::Multi => (fixed, true),
        _ => (pat, false),
    };
    if fixed.iter().any(|p| p.piece() == Piece::Multi) {
        return simulate(dialect, pat, words);
    }
    if dialect == Dialect::Mqtt && hides_dollar(pat, words) {
        return false;
    }
    let long_enough = match (open, dialect) {
        (false, _) => words.len() == fixed.len(),
        // NATS `>` takes at least one word; `#` may take none.
        (true, Dialect::Nats) => words.len() > fixed.len(),
        (true, _) => words.len() >= fixed.len(),
    };
    long_enough
        && fixed.iter().zip(words).all(|(p, w)| match p.piece() {
            Piece::Literal(l) => l == *w,
            Piece::One | Piece::Multi => true,
        })
}

/// [`Pattern::matches_words`] of the pattern words `pat` under `dialect`: the reference
/// simulation.
fn simulate<P: AsPiece>(dialect: Dialect, pat: &[P], words: &[&str]) -> bool {
    if dialect == Dialect::Mqtt && hides_dollar(pat, words) {
        return false;
    }
    // states[i]: the first i pattern words can consume the topic words read so far.
    let mut states = vec![false; pat.len() + 1];
    let mut next = vec![false; pat.len() + 1];
    states[0] = true;
    close(dialect, pat, &mut states);
    for word in words {
        next.fill(false);
        let mut any = false;
        for (i, p) in pat.iter().enumerate() {
            if !states[i] {
                continue;
            }
            let advance = match p.piece() {
                Piece::Literal(l) => l == *word,
                Piece::One => true,
                Piece::Multi => {
                    // `#`/`>` may swallow this word and stay.
                    next[i] = true;
                    // NATS `>` must take at least one word: after it, it may also stop.
                    dialect == Dialect::Nats
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
        close(dialect, pat, &mut states);
    }
    states[pat.len()]
}

/// Epsilon closure: an AMQP or MQTT `#` may match zero words.
fn close<P: AsPiece>(dialect: Dialect, pat: &[P], states: &mut [bool]) {
    if dialect == Dialect::Nats {
        return;
    }
    for (i, p) in pat.iter().enumerate() {
        if states[i] && p.piece() == Piece::Multi {
            states[i + 1] = true;
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
fn hides_dollar<P: AsPiece>(pattern: &[P], topic: &[&str]) -> bool {
    topic.first().is_some_and(|w| w.starts_with('$'))
        && pattern
            .first()
            .is_some_and(|p| !matches!(p.piece(), Piece::Literal(_)))
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

    /// Words of every dialect's wildcards, empty words, `$` words, MQTT's shared subscription
    /// prefix and a word no MQTT filter may hold.
    const WORDS: &[&str] = &["a", "b", "", "$s", "*", "#", "+", ">", "$share", "a#"];

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
        /// pattern and topic of every dialect, and the crate's `matches`, which reads the
        /// pattern without parsing it into a `Pattern`, gives the answer or the error of
        /// parsing both and simulating.
        #[test]
        fn matches_is_the_reference((pattern, topic) in pair()) {
            for dialect in Dialect::ALL {
                let sep = char::from(dialect.separator()).to_string();
                let limits = Limits::for_dialect(dialect);
                let (pattern, topic) = (pattern.join(&sep), topic.join(&sep));
                let parsed = Pattern::parse(dialect, &limits, &pattern);
                let reference = parsed.clone().and_then(|p| {
                    parse_topic(dialect, &limits, &topic).map(|words| p.matches_words(&words))
                });
                prop_assert_eq!(
                    super::matches_text(dialect, &limits, &pattern, &topic),
                    reference,
                    "{:?} {:?} against {:?}",
                    dialect,
                    pattern,
                    topic
                );
                let (Ok(p), Ok(words)) = (parsed, parse_topic(dialect, &limits, &topic)) else {
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
