//! The brute-force oracle of `covers` and `intersects`: the definitions, checked on every topic
//! up to a length that provably suffices, over an alphabet that provably suffices.
//!
//! **Alphabet.** The literal words of both patterns, one fresh word `f…` (no literal of either,
//! not empty, no leading `$`), and for MQTT also a fresh `$f…` word and the empty word. Any
//! other word is matched exactly like the fresh word by both patterns (a pattern tells words
//! apart only by its literals, MQTT by a leading `$` in the first word, and the empty word is
//! special only in validity), so a topic over other words has a twin over this alphabet with
//! the same answers.
//!
//! **Length.** Each topic is joined to its text and parsed back (so a word list that is no
//! topic, like a lone empty word, is skipped or read as the topic it spells).
//! - `intersects(a, b)`: in a shortest common topic every word is taken by a literal or a
//!   one-word wildcard of `a` or of `b` (a word both take with `#`/`>` can be dropped, unless
//!   that leaves the empty or the lone-empty topic, so the topic had at most two words):
//!   length <= max(n(a) + n(b), 2), n counting the words that are not `#` (NATS `>`: one).
//! - `covers(g, s)`: if some topic of `s` escapes `g`, so does the one with every word a
//!   wildcard of `s` took replaced by the fresh word; and a run of k + 1 or more fresh words
//!   (k: `g`'s one-word wildcards, NATS `>` counting one) leaves `g` in the same set of
//!   positions whatever its length (every path through more than k fresh words loops in a
//!   `#`), so each `#` run of `s` needs at most k + 1 words: length <= n(s) + runs(s) · (k + 1).

use std::collections::BTreeSet;

use topicmatch_core::{parse_topic, Dialect, Limits, Pattern, Word};

/// Words of `p` that are not a multi-word wildcard (NATS `>` counts one: it takes a word).
fn fixed(p: &Pattern) -> usize {
    p.words()
        .iter()
        .filter(|w| **w != Word::Multi || p.dialect() == Dialect::Nats)
        .count()
}

/// Runs of multi-word wildcards in `p` (AMQP `#.#` is one run).
fn runs(p: &Pattern) -> usize {
    let w = p.words();
    (0..w.len())
        .filter(|&i| w[i] == Word::Multi && (i == 0 || w[i - 1] != Word::Multi))
        .count()
}

/// One-word wildcards of `p` (NATS `>` counts one).
fn ones(p: &Pattern) -> usize {
    p.words()
        .iter()
        .filter(|w| **w == Word::One || (**w == Word::Multi && p.dialect() == Dialect::Nats))
        .count()
}

/// The alphabet of the module docs.
pub fn alphabet(a: &Pattern, b: &Pattern) -> Vec<String> {
    let mut words: BTreeSet<String> = a
        .words()
        .iter()
        .chain(b.words())
        .filter_map(|w| w.literal().map(str::to_owned))
        .collect();
    let mut fresh = "f".to_owned();
    while words.contains(&fresh) || words.contains(&format!("${fresh}")) {
        fresh.push('f');
    }
    if a.dialect() == Dialect::Mqtt {
        words.insert(format!("${fresh}"));
        words.insert(String::new());
    }
    words.insert(fresh);
    words.into_iter().collect()
}

/// The length bound for `covers(general, specific)`.
pub fn covers_bound(general: &Pattern, specific: &Pattern) -> usize {
    fixed(specific) + runs(specific) * (ones(general) + 1)
}

/// The length bound for `intersects(a, b)`.
pub fn intersects_bound(a: &Pattern, b: &Pattern) -> usize {
    (fixed(a) + fixed(b)).max(2)
}

/// How many word lists the enumeration up to `len` words over `size` words visits.
pub fn topics_up_to(size: usize, len: usize) -> usize {
    (0..=len).map(|k| size.saturating_pow(k as u32)).sum()
}

/// Calls `f` on the words of every valid topic of up to `len` words over `alphabet` (parsed
/// back from its text); stops early when `f` returns false. Returns whether it ran through.
pub fn each_topic(
    dialect: Dialect,
    alphabet: &[String],
    len: usize,
    mut f: impl FnMut(&[&str]) -> bool,
) -> bool {
    let limits = Limits::for_dialect(dialect);
    let sep = char::from(dialect.separator()).to_string();
    let size = alphabet.len();
    let mut words: Vec<&str> = Vec::with_capacity(len);
    for k in 0..=len {
        for mut n in 0..size.pow(k as u32) {
            words.clear();
            for _ in 0..k {
                words.push(&alphabet[n % size]);
                n /= size;
            }
            if let Ok(topic) = parse_topic(dialect, &limits, &words.join(&sep)) {
                if !f(&topic) {
                    return false;
                }
            }
        }
    }
    true
}

/// The definition of `covers`, on every topic up to the bound.
pub fn covers(general: &Pattern, specific: &Pattern) -> bool {
    let alphabet = alphabet(general, specific);
    let len = covers_bound(general, specific);
    each_topic(general.dialect(), &alphabet, len, |t| {
        !specific.matches_words(t) || general.matches_words(t)
    })
}

/// The definition of `intersects`, on every topic up to the bound.
pub fn intersects(a: &Pattern, b: &Pattern) -> bool {
    let alphabet = alphabet(a, b);
    let len = intersects_bound(a, b);
    !each_topic(a.dialect(), &alphabet, len, |t| {
        !(a.matches_words(t) && b.matches_words(t))
    })
}
