//! The result cache ([`super::cache`]): hits, invalidation by every change, bounds.

use super::cache::{MAX_IDS, MAX_SLOTS};
use super::tests::lookup;
use super::CsTrieMatcher;
use crate::dialect::{Dialect, Limits};
use crate::matcher::{Config, Matcher};
use crate::pattern::Pattern;

fn cached(capacity: usize) -> CsTrieMatcher {
    CsTrieMatcher::new(Config {
        cache_capacity: Some(capacity),
        ..Config::new(Dialect::Amqp)
    })
}

/// An AMQP pattern ([`super::tests::pattern`]).
fn pattern(text: &str) -> Pattern {
    super::tests::pattern(Dialect::Amqp, text)
}

/// Entries of the current generation.
fn live(m: &CsTrieMatcher) -> usize {
    let pin = m.reclaim.pin();
    m.cache.as_ref().unwrap().live(&pin)
}

#[test]
fn a_topic_is_cached_on_its_second_sighting_and_then_served() {
    let m = cached(64);
    m.insert(&pattern("a.*"), 1);
    m.insert(&pattern("a.b"), 2);
    m.insert(&pattern("#"), 3);
    assert_eq!(lookup(&m, "a.b"), vec![1, 2, 3]);
    assert_eq!(live(&m), 0, "not on the first sighting");
    assert_eq!(lookup(&m, "a.b"), vec![1, 2, 3]);
    assert_eq!(live(&m), 1, "on the second");
    // Served from the entry: the same answer, and a caller's earlier ids are kept.
    let mut out = vec![99];
    m.lookup_into("a.b", &mut out).unwrap();
    out[1..].sort_unstable();
    assert_eq!(out, vec![99, 1, 2, 3]);
    assert!(m.matches_any("a.b").unwrap());
    assert!(m.matches_any("zzz").unwrap(), "`#` matches anything");
}

#[test]
fn every_change_is_seen_by_the_next_lookup() {
    let m = cached(64);
    m.insert(&pattern("a.b"), 1);
    for _ in 0..3 {
        assert_eq!(lookup(&m, "a.b"), vec![1]);
    }
    assert_eq!(live(&m), 1);
    m.insert(&pattern("a.*"), 2);
    assert_eq!(live(&m), 0, "an insert invalidates every entry");
    assert_eq!(lookup(&m, "a.b"), vec![1, 2]);
    assert_eq!(
        live(&m),
        0,
        "the first sighting in this generation fills nothing"
    );
    assert_eq!(lookup(&m, "a.b"), vec![1, 2]);
    assert_eq!(live(&m), 1, "the second does");
    assert!(m.remove(&pattern("a.b"), 1));
    assert_eq!(lookup(&m, "a.b"), vec![2]);
    assert!(m.remove(&pattern("a.*"), 2));
    assert_eq!(lookup(&m, "a.b"), Vec::<u64>::new());
    assert!(!m.matches_any("a.b").unwrap());
    // A remove that finds nothing changes nothing, and still answers right.
    assert!(!m.remove(&pattern("a.b"), 1));
    assert_eq!(lookup(&m, "a.b"), Vec::<u64>::new());
}

#[test]
fn topics_sharing_one_bucket_keep_their_own_results() {
    // One bucket of two slots for three topics (a capacity of 1 is rounded up to 2), and topics
    // of 16 bytes or more, whose keys are hashes.
    let m = cached(1);
    let long = "a-topic-of-more-than-sixteen-bytes";
    m.insert(&pattern("x"), 1);
    m.insert(&pattern("y"), 2);
    m.insert(&pattern(long), 3);
    for _ in 0..5 {
        assert_eq!(lookup(&m, "x"), vec![1]);
        assert_eq!(lookup(&m, "y"), vec![2]);
        assert_eq!(lookup(&m, "z"), Vec::<u64>::new());
        assert_eq!(lookup(&m, long), vec![3]);
        assert_eq!(lookup(&m, &format!("{long}!")), Vec::<u64>::new());
    }
    assert_eq!(live(&m), 2, "both slots in use");
}

#[test]
fn big_results_are_not_cached_and_invalid_topics_still_fail() {
    let m = cached(8);
    for id in 0..=MAX_IDS as u64 {
        m.insert(&pattern("big"), id);
    }
    for _ in 0..3 {
        assert_eq!(lookup(&m, "big").len(), MAX_IDS + 1);
    }
    assert_eq!(live(&m), 0);
    let mut out = Vec::new();
    let long = "w.".repeat(Limits::for_dialect(Dialect::Amqp).max_levels + 1);
    for _ in 0..3 {
        assert!(m.lookup_into(&long, &mut out).is_err());
    }
    assert!(out.is_empty());
}

#[test]
fn batches_use_the_cache_too() {
    let m = cached(16);
    m.insert(&pattern("a.*"), 1);
    m.insert(&pattern("b"), 2);
    let (mut out, mut ends) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        out.clear();
        ends.clear();
        m.lookup_batch_into(&["a.x", "b", "c"], &mut out, &mut ends)
            .unwrap();
        assert_eq!(
            (out.as_slice(), ends.as_slice()),
            (&[1, 2][..], &[1, 2, 2][..])
        );
    }
    assert_eq!(live(&m), 3);
}

/// Writers and readers at once: a reader's lookup always includes the subscriptions that were
/// never removed, and each writer sees its own change at once.
#[test]
fn readers_and_writers_at_once_never_see_a_stale_result() {
    let m = cached(8);
    m.insert(&pattern("s.*"), 0);
    std::thread::scope(|scope| {
        for r in 0..2u64 {
            let m = &m;
            scope.spawn(move || {
                for i in 0..20_000u64 {
                    let found = lookup(m, "s.t");
                    assert!(
                        found.contains(&0),
                        "reader {r} lost the stable subscription"
                    );
                    assert!(found.iter().all(|id| *id < 1_000), "phantom {found:?}");
                    let _ = i;
                }
            });
        }
        for w in 1..=2u64 {
            let m = &m;
            scope.spawn(move || {
                let own = pattern(&format!("s.{}", if w == 1 { "t" } else { "#" }));
                for _ in 0..2_000 {
                    m.insert(&own, w);
                    assert!(lookup(m, "s.t").contains(&w), "writer {w}: own insert");
                    assert!(m.remove(&own, w));
                    assert!(!lookup(m, "s.t").contains(&w), "writer {w}: own remove");
                }
            });
        }
    });
    assert_eq!(lookup(&m, "s.t"), vec![0]);
}

#[test]
fn a_huge_capacity_is_capped() {
    for (asked, slots) in [(1, 2), (3, 4), (1000, 1000), (usize::MAX, MAX_SLOTS)] {
        let m = cached(asked);
        assert_eq!(m.cache.as_ref().unwrap().slots(), slots, "{asked}");
        m.insert(&pattern("a"), 1);
        for _ in 0..3 {
            assert_eq!(lookup(&m, "a"), vec![1]);
        }
        assert_eq!(live(&m), 1);
    }
}

#[test]
fn under_churn_nothing_is_filled() {
    // A change between every two lookups of a topic: no topic is seen twice in a generation.
    let m = cached(64);
    m.insert(&pattern("a.*"), 0);
    for i in 1..200u64 {
        m.insert(&pattern(&format!("a.w{i}")), i);
        assert_eq!(lookup(&m, "a.x"), vec![0]);
        assert_eq!(live(&m), 0, "round {i}");
    }
}

#[test]
fn a_cache_holds_as_many_topics_as_half_its_capacity() {
    // 2,048 topics in 4,096 slots. With one bucket of two slots per topic, about a tenth of
    // them found their bucket full (three or more topics on it); with two buckets, almost none.
    let m = cached(4096);
    m.insert(&pattern("#"), 1);
    let topics: Vec<String> = (0..2048).map(|i| format!("t.{i}")).collect();
    for _ in 0..3 {
        for topic in &topics {
            assert_eq!(lookup(&m, topic), vec![1]);
        }
    }
    let held = live(&m);
    assert!(held >= 2048 * 99 / 100, "{held} of 2048 topics held");
}
