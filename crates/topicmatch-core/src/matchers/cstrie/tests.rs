//! Structural tests the generic suites cannot see: shrinking, wide nodes, deep patterns.

use super::CsTrieMatcher;
use crate::dialect::{Dialect, Limits};
use crate::matcher::{Config, Matcher};
use crate::pattern::Pattern;

fn matcher(dialect: Dialect) -> CsTrieMatcher {
    CsTrieMatcher::new(Config::new(dialect))
}

pub(super) fn pattern(dialect: Dialect, text: &str) -> Pattern {
    Pattern::parse(dialect, &Limits::for_dialect(dialect), text).unwrap()
}

pub(super) fn lookup(m: &CsTrieMatcher, topic: &str) -> Vec<u64> {
    let mut out = Vec::new();
    m.lookup_into(topic, &mut out).unwrap();
    out.sort_unstable();
    out
}

fn root_is_empty(m: &CsTrieMatcher) -> bool {
    m.is_empty()
}

#[test]
fn unsubscribing_everything_shrinks_the_trie_back_to_an_empty_root() {
    let d = Dialect::Amqp;
    let m = matcher(d);
    let texts = ["a.b.c", "a.b", "a.*.c", "a.#.c", "#", "a.b.c.d.e", "x", ""];
    for (i, text) in texts.iter().enumerate() {
        m.insert(&pattern(d, text), i as u64);
        m.insert(&pattern(d, text), 100 + i as u64);
    }
    assert_eq!(lookup(&m, "a.b.c"), vec![0, 2, 3, 4, 100, 102, 103, 104]);
    for (i, text) in texts.iter().enumerate().rev() {
        assert!(m.remove(&pattern(d, text), i as u64));
        assert!(!m.remove(&pattern(d, text), i as u64));
        assert!(
            !root_is_empty(&m),
            "{text} still holds subscriber {}",
            100 + i
        );
        assert!(m.remove(&pattern(d, text), 100 + i as u64));
    }
    assert!(root_is_empty(&m));
    assert_eq!(lookup(&m, "a.b.c"), Vec::<u64>::new());
}

#[test]
fn a_node_with_many_children_stays_correct_through_load_and_unload() {
    // The cost side (no copy of the whole child map per insert) is measured by the
    // `bulk_load` benchmark with 100k children; here the wide HAMT paths are checked, with
    // long words (their text owned by the entries, freed when removed: valgrind and ASan check
    // that) among the short ones.
    let d = Dialect::Nats;
    let m = matcher(d);
    let n = 10_000u64;
    let word = |i: u64| {
        if i % 3 == 0 {
            format!("a-word-longer-than-fifteen-bytes-{i}")
        } else {
            format!("w{i}")
        }
    };
    for i in 0..n {
        m.insert(&pattern(d, &format!("wide.{}", word(i))), i);
    }
    for i in (0..n).step_by(997).chain([0, 3, n - 1]) {
        assert_eq!(lookup(&m, &format!("wide.{}", word(i))), vec![i]);
    }
    assert!(lookup(&m, "wide.nope").is_empty());
    assert!(lookup(&m, "wide.a-word-longer-than-fifteen-bytes-1").is_empty());
    // Half removed, so the level shrinks through the HAMT and back to a narrow array.
    for i in (0..n).filter(|i| i % 2 == 0) {
        assert!(m.remove(&pattern(d, &format!("wide.{}", word(i))), i));
    }
    for i in (0..n).step_by(997).chain([0, 3, n - 1]) {
        let expected = if i % 2 == 1 { vec![i] } else { vec![] };
        assert_eq!(lookup(&m, &format!("wide.{}", word(i))), expected);
    }
    for i in (0..n).filter(|i| i % 2 == 1) {
        assert!(m.remove(&pattern(d, &format!("wide.{}", word(i))), i));
    }
    assert!(root_is_empty(&m));
    // Dropped holding long words at a narrow level too.
    for i in 0..6 {
        m.insert(&pattern(d, &format!("wide.{}", word(i))), i);
    }
}

#[test]
fn one_pattern_with_many_subscribers() {
    let d = Dialect::Mqtt;
    let m = matcher(d);
    let p = pattern(d, "sensors/+/temp");
    let n = 10_000u64;
    for i in 0..n {
        m.insert(&p, i);
    }
    assert_eq!(lookup(&m, "sensors/k/temp"), (0..n).collect::<Vec<_>>());
    for i in (0..n).filter(|i| i % 2 == 0) {
        assert!(m.remove(&p, i));
    }
    assert_eq!(
        lookup(&m, "sensors/k/temp"),
        (0..n).filter(|i| i % 2 == 1).collect::<Vec<_>>()
    );
}

#[test]
fn deep_patterns_are_built_and_dropped_without_recursion() {
    let d = Dialect::Amqp;
    let limits = Limits::for_dialect(d);
    let depth = limits.max_levels;
    let text = vec!["w"; depth].join(".");
    let limits = Limits {
        max_topic_bytes: text.len(),
        ..limits
    };
    let p = Pattern::parse(d, &limits, &text).unwrap();
    // A small stack: a recursive drop of 4096 levels would overflow it.
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            let m = CsTrieMatcher::new(Config {
                dialect: d,
                limits,
                cache_capacity: None,
            });
            m.insert(&p, 7);
            let mut out = Vec::new();
            m.lookup_into(&text, &mut out).unwrap();
            assert_eq!(out, vec![7]);
            m.insert(&p, 8);
            assert!(m.remove(&p, 7));
            drop(m);
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn mqtt_dollar_topics_skip_root_wildcards() {
    let d = Dialect::Mqtt;
    let m = matcher(d);
    m.insert(&pattern(d, "#"), 1);
    m.insert(&pattern(d, "+/x"), 2);
    m.insert(&pattern(d, "$SYS/#"), 3);
    assert_eq!(lookup(&m, "$SYS/x"), vec![3]);
    assert_eq!(lookup(&m, "a/x"), vec![1, 2]);
    assert!(m.matches_any("a/x").unwrap());
}

#[test]
fn a_narrow_level_rejects_words_that_only_share_a_tag() {
    // Sixteen children at one level (still narrow), probed with a thousand other words: with
    // one-byte tags some ~60 probes share a tag with a child, and must still find nothing.
    for d in [Dialect::Amqp, Dialect::Mqtt, Dialect::Nats] {
        let m = matcher(d);
        let sep = if d == Dialect::Mqtt { "/" } else { "." };
        let long = "a-word-longer-than-fifteen-bytes";
        for i in 0..16u64 {
            let word = if i % 4 == 0 {
                format!("{long}{i}")
            } else {
                format!("w{i}")
            };
            m.insert(&pattern(d, &format!("{word}{sep}end")), i);
            m.insert(&pattern(d, &word), 100 + i);
        }
        for i in 0..16u64 {
            let word = if i % 4 == 0 {
                format!("{long}{i}")
            } else {
                format!("w{i}")
            };
            assert_eq!(lookup(&m, &word), vec![100 + i], "{d:?} {word}");
            assert_eq!(
                lookup(&m, &format!("{word}{sep}end")),
                vec![i],
                "{d:?} {word}"
            );
        }
        for probe in 0..1000 {
            for word in [format!("x{probe}"), format!("{long}x{probe}")] {
                assert!(lookup(&m, &word).is_empty(), "{d:?} {word}");
                assert!(
                    lookup(&m, &format!("{word}{sep}end")).is_empty(),
                    "{d:?} {word}"
                );
            }
        }
    }
}

#[test]
fn a_pattern_with_many_subscribers_crosses_array_and_hamt_both_ways() {
    // A level's subscribers move from inline ids to a shared array to a HAMT and back as the
    // set grows past and shrinks below its thresholds; every lookup on the way sees them all.
    let d = Dialect::Mqtt;
    let m = matcher(d);
    let p = pattern(d, "a/#");
    let other = pattern(d, "a/+");
    m.insert(&other, 1_000_000);
    let n = 2_000u64;
    for i in 0..n {
        m.insert(&p, i);
        if i % 97 == 0 || i == n - 1 {
            let mut want: Vec<u64> = (0..=i).collect();
            want.push(1_000_000);
            assert_eq!(lookup(&m, "a/b"), want, "after {} subscribers", i + 1);
        }
    }
    for i in (0..n).step_by(2) {
        assert!(m.remove(&p, i));
    }
    let mut want: Vec<u64> = (1..n).step_by(2).collect();
    want.push(1_000_000);
    assert_eq!(lookup(&m, "a/b"), want);
    for i in (1..n).step_by(2) {
        assert!(m.remove(&p, i));
        assert!(!m.remove(&p, i));
    }
    assert_eq!(lookup(&m, "a/b"), vec![1_000_000]);
    assert!(m.remove(&other, 1_000_000));
    assert!(root_is_empty(&m));
}

/// A batch is walked in groups: across groups, with `$` topics, a subscriber under several
/// matching patterns, sets past the inline two, AMQP `#`s with children and a topic the
/// tokenizer refuses, each row is what a lookup of its topic alone gives.
#[test]
fn a_batch_in_groups_finds_what_each_topic_finds_alone() {
    for (d, multi, one, sep) in [
        (Dialect::Mqtt, "#", "+", "/"),
        (Dialect::Nats, ">", "*", "."),
        (Dialect::Amqp, "#", "*", "."),
    ] {
        let m = matcher(d);
        let mut texts = vec![
            format!("a{sep}{multi}"),
            format!("a{sep}b{sep}{multi}"),
            format!("{one}{sep}b{sep}{multi}"),
            format!("a{sep}{one}{sep}c"),
            format!("a{sep}b{sep}c"),
            multi.to_string(),
            format!("$s{sep}{multi}"),
        ];
        if d == Dialect::Amqp {
            // A `#` with children swallows words, reaching `c` from several of them.
            texts.extend(["a.#.c", "#.b.#", "#.#"].map(String::from));
        }
        for (i, text) in texts.iter().enumerate() {
            // Every pattern held by 5 subscribers, and subscriber 1000 under every pattern.
            for k in 0..5 {
                m.insert(&pattern(d, text), 10 * i as u64 + k);
            }
            m.insert(&pattern(d, text), 1000);
        }
        let topics: Vec<String> = [
            "a.b.c", "a.b", "x.b.y", "a", "$s.b", "a.x.c", "q", "a.b.c.d", "$s", "x.b", "a.b.c",
        ]
        .iter()
        .map(|t| t.replace('.', sep))
        .collect();
        let topics: Vec<&str> = topics.iter().map(String::as_str).collect();
        let (mut out, mut ends) = (vec![7], vec![1]);
        m.walk_batch_in_groups(&topics, &mut out, &mut ends)
            .unwrap();
        assert_eq!(ends.len(), topics.len() + 1);
        for (i, topic) in topics.iter().enumerate() {
            let mut row = out[ends[i]..ends[i + 1]].to_vec();
            let found = row.len();
            row.sort_unstable();
            row.dedup();
            assert_eq!(row.len(), found, "{d:?} {topic}: duplicates");
            assert_eq!(row, lookup(&m, topic), "{d:?} {topic}");
        }
        // An invalid topic stops the batch; the rows of the topics before it stay.
        let mut bad = topics.clone();
        let invalid = if d == Dialect::Amqp {
            "a.".repeat(200) // longer than a routing key's 255 bytes
        } else {
            format!("a{sep}{multi}")
        };
        bad.insert(6, &invalid);
        let (mut out, mut ends) = (Vec::new(), Vec::new());
        assert!(m.walk_batch_in_groups(&bad, &mut out, &mut ends).is_err());
        assert_eq!(ends.len(), 6, "{d:?}");
        assert_eq!(out[ends[4]..ends[5]].len(), lookup(&m, topics[5]).len());
    }
}

/// Random patterns and batches over a tiny alphabet (empty words, `$` words and every
/// wildcard, so invalid texts too): every batch walked in groups gives each valid topic what
/// its lookup alone gives, and stops at the first invalid one as a lookup would.
mod batches {
    use proptest::prelude::*;

    use super::{lookup, matcher};
    use crate::dialect::{Dialect, Limits};
    use crate::matcher::Matcher;
    use crate::pattern::Pattern;

    const WORDS: &[&str] = &["a", "b", "", "$s", "*", "#", "+", ">"];

    fn text(sep: &'static str) -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(WORDS), 0..5).prop_map(move |w| w.join(sep))
    }

    fn check(
        d: Dialect,
        patterns: &[(String, u64)],
        topics: &[String],
    ) -> Result<(), TestCaseError> {
        let m = matcher(d);
        let limits = Limits::for_dialect(d);
        for (text, id) in patterns {
            if let Ok(pattern) = Pattern::parse(d, &limits, text) {
                m.insert(&pattern, *id);
            }
        }
        let topics: Vec<&str> = topics.iter().map(String::as_str).collect();
        let (mut out, mut ends) = (Vec::new(), Vec::new());
        let batch = m.walk_batch_in_groups(&topics, &mut out, &mut ends);
        let invalid = topics
            .iter()
            .position(|t| m.lookup_into(t, &mut Vec::new()).is_err());
        prop_assert_eq!(batch.is_err(), invalid.is_some());
        prop_assert_eq!(ends.len(), invalid.unwrap_or(topics.len()));
        let mut start = 0;
        for (topic, &end) in topics.iter().zip(&ends) {
            let mut row = out[start..end].to_vec();
            let found = row.len();
            row.sort_unstable();
            row.dedup();
            prop_assert_eq!(row.len(), found, "{:?} {:?}: duplicates", d, topic);
            prop_assert_eq!(row, lookup(&m, topic), "{:?} {:?}", d, topic);
            start = end;
        }
        Ok(())
    }

    fn cases(sep: &'static str) -> impl Strategy<Value = (Vec<(String, u64)>, Vec<String>)> {
        (
            prop::collection::vec((text(sep), 0..6u64), 0..24),
            prop::collection::vec(text(sep), 0..14),
        )
    }

    proptest! {
        #[test]
        fn amqp_groups_find_what_lookups_find((patterns, topics) in cases(".")) {
            check(Dialect::Amqp, &patterns, &topics)?;
        }

        #[test]
        fn mqtt_groups_find_what_lookups_find((patterns, topics) in cases("/")) {
            check(Dialect::Mqtt, &patterns, &topics)?;
        }

        #[test]
        fn nats_groups_find_what_lookups_find((patterns, topics) in cases(".")) {
            check(Dialect::Nats, &patterns, &topics)?;
        }
    }
}
