//! Targeted tests of the bitmap family: CLOCK eviction, incremental rows, slot reuse, the SIMD
//! AND, filtering with subsumption and `auto`'s migrations.

use std::sync::Arc;

use proptest::prelude::*;
use topicmatch_core::matchers::auto::{AutoMatcher, DOWN, UP};
use topicmatch_core::matchers::inverted_bitmap::InvertedBitmapMatcher;
use topicmatch_core::matchers::naive::NaiveMatcher;
use topicmatch_core::matchers::optimized_bitmap::{simd, OptimizedBitmapMatcher};
use topicmatch_core::{Config, Dialect, Limits, Matcher, Pattern, SubscriberId};

fn pattern(dialect: Dialect, text: &str) -> Pattern {
    Pattern::parse(dialect, &Limits::for_dialect(dialect), text).unwrap()
}

fn lookup(m: &dyn Matcher, topic: &str) -> Vec<SubscriberId> {
    let mut out = Vec::new();
    m.lookup_into(topic, &mut out).unwrap();
    out.sort_unstable();
    out
}

/// Both matchers hold the same subscriptions.
fn both(dialect: Dialect, subs: &[(&str, u64)], m: &dyn Matcher, oracle: &dyn Matcher) {
    for &(text, s) in subs {
        let p = pattern(dialect, text);
        m.insert(&p, s);
        oracle.insert(&p, s);
    }
}

#[test]
fn unique_topics_evict_and_stay_correct() {
    let config = Config::new(Dialect::Amqp);
    let m = InvertedBitmapMatcher::with_capacity(config, 64);
    let oracle = NaiveMatcher::new(config);
    both(
        Dialect::Amqp,
        &[("a.*", 1), ("a.#", 2), ("*.b", 3), ("a.b", 4), ("#.z", 5)],
        &m,
        &oracle,
    );
    for i in 0..5_000 {
        let topic = match i % 4 {
            0 => format!("a.t{i}"),
            1 => format!("t{i}.b"),
            2 => format!("a.t{i}.z"),
            _ => format!("x{i}"),
        };
        assert_eq!(lookup(&m, &topic), lookup(&oracle, &topic), "{topic}");
        assert!(m.cached_rows() <= 64);
        // A hot topic, looked up between the unique ones, stays correct too.
        assert_eq!(lookup(&m, "a.b"), vec![1, 2, 3, 4]);
    }
    assert_eq!(m.capacity(), 64);
    // Repeated topics are admitted and fill the table, still bounded.
    for round in 0..3 {
        for i in 0..200 {
            let topic = format!("a.r{i}");
            assert_eq!(
                lookup(&m, &topic),
                lookup(&oracle, &topic),
                "{topic} {round}"
            );
        }
    }
    assert_eq!(m.cached_rows(), 64);
}

#[test]
fn cached_rows_follow_subscribe_and_unsubscribe() {
    let config = Config::new(Dialect::Mqtt);
    let m = InvertedBitmapMatcher::new(config);
    let topics = ["a/b", "a", "$s/b", "a/b/c", "x/b"];
    // Twice: a topic is cached on its first sighting while the table has room (else on its
    // second), so both rules leave every topic cached here.
    for t in topics.iter().chain(&topics) {
        assert!(lookup(&m, t).is_empty());
    }
    assert_eq!(m.cached_rows(), topics.len());
    let p = pattern(Dialect::Mqtt, "a/#");
    m.insert(&p, 7);
    assert_eq!(lookup(&m, "a"), vec![7]);
    assert_eq!(lookup(&m, "a/b/c"), vec![7]);
    m.insert(&p, 8);
    m.insert(&pattern(Dialect::Mqtt, "+/b"), 7);
    m.insert(&pattern(Dialect::Mqtt, "a/b"), 9);
    assert_eq!(lookup(&m, "a/b"), vec![7, 8, 9]);
    assert!(lookup(&m, "$s/b").is_empty());
    assert!(m.remove(&p, 7));
    // 7 still matches a/b through +/b, not a/b/c.
    assert_eq!(lookup(&m, "a/b"), vec![7, 8, 9]);
    assert_eq!(lookup(&m, "a/b/c"), vec![8]);
    assert!(m.remove(&pattern(Dialect::Mqtt, "a/b"), 9));
    assert!(!m.remove(&pattern(Dialect::Mqtt, "a/b"), 9));
    assert_eq!(lookup(&m, "a/b"), vec![7, 8]);
    assert_eq!(lookup(&m, "x/b"), vec![7]);
}

/// `s{i}.*` or `s{i}.>`, alternating.
fn churn_pattern(i: u64) -> Pattern {
    let multi = if i % 2 == 0 { "*" } else { ">" };
    pattern(Dialect::Nats, &format!("s{i}.{multi}"))
}

#[test]
fn slot_reuse_keeps_bitmap_width_bounded_under_churn() {
    let m = OptimizedBitmapMatcher::new(Config::new(Dialect::Nats));
    let live = 100;
    for i in 0..live {
        m.insert(&churn_pattern(i), i);
    }
    let width = m.bitmap_width();
    for i in live..20_000 {
        assert!(m.remove(&churn_pattern(i - live), i - live));
        m.insert(&churn_pattern(i), i);
    }
    assert_eq!(m.wildcard_patterns(), live as usize);
    assert_eq!(m.bitmap_width(), width);
    assert!(width <= 128);
    assert_eq!(lookup(&m, "s19999.x.y"), vec![19_999]);
    assert_eq!(lookup(&m, "s19998.x"), vec![19_998]);
    assert!(lookup(&m, "s0.x").is_empty());
}

/// Per-device filters (`dev/+/{id}/cmd`: a wildcard, then a word of their own) by the tens of
/// thousands: each word's row keeps its own slots, not a bit for every slot, so memory grows
/// with the filters (a row of 25,000 bits per word would be 78 MB here), and lookups, also
/// through the cached rows, stay the oracle's while filters come and go.
#[test]
fn many_filters_of_distinct_words_take_linear_memory() {
    let dialect = Dialect::Mqtt;
    let inverted = InvertedBitmapMatcher::new(Config::new(dialect));
    let optimized = OptimizedBitmapMatcher::new(Config::new(dialect));
    let oracle = NaiveMatcher::new(Config::new(dialect));
    let filter = |i: u64| match i % 4 {
        0 => format!("dev/+/{i}/cmd"),
        1 => format!("dev/+/{i}/#"),
        2 => format!("+/site{}/{i}/+", i % 7),
        _ => format!("dev/site{}/d{i}/+", i % 7),
    };
    let n = 25_000u64;
    for i in 0..n {
        let p = pattern(dialect, &filter(i));
        inverted.insert(&p, i);
        optimized.insert(&p, i);
        oracle.insert(&p, i);
    }
    let topics: Vec<String> = (0..n)
        .step_by(997)
        .flat_map(|i| {
            [
                format!("dev/site{}/{i}/cmd", i % 7),
                format!("dev/x/{i}/cmd/more"),
                format!("dev/site{}/d{i}/v", i % 7),
                format!("q/site{}/{i}/v", i % 7),
            ]
        })
        .collect();
    let check = |phase: &str| {
        for topic in &topics {
            let want = lookup(&oracle, topic);
            // Twice: the inverted matcher answers the second from its cached row.
            for _ in 0..2 {
                assert_eq!(lookup(&inverted, topic), want, "{phase}: {topic}");
            }
            assert_eq!(lookup(&optimized, topic), want, "{phase}: {topic}");
            assert_eq!(
                optimized.matches_any(topic).unwrap(),
                !want.is_empty(),
                "{phase}: {topic}"
            );
        }
    };
    check("subscribed");
    let bytes = inverted.heap_bytes();
    assert!(bytes < 16_000_000, "{bytes} bytes for {n} filters");
    for i in (0..n).filter(|i| i % 3 == 0) {
        let p = pattern(dialect, &filter(i));
        assert!(inverted.remove(&p, i));
        assert!(optimized.remove(&p, i));
        assert!(oracle.remove(&p, i));
    }
    check("a third removed");
}

#[test]
fn filtering_skips_subsumed_patterns() {
    let config = Config::new(Dialect::Amqp);
    let m = OptimizedBitmapMatcher::new(config);
    for (i, p) in [
        "forex.eur",
        "forex.*",
        "forex.*.x",
        "forex.#",
        "*.usd",
        "a.*.c",
    ]
    .into_iter()
    .enumerate()
    {
        m.insert(&pattern(Dialect::Amqp, p), i as u64);
    }
    // forex.# covers forex.*, forex.eur and forex.*.x.
    assert_eq!(m.filter_patterns(), 3);
    assert!(m.matches_any("forex").unwrap());
    assert!(m.matches_any("forex.eur.x.y").unwrap());
    assert!(m.matches_any("jpy.usd").unwrap());
    assert!(m.matches_any("a.b.c").unwrap());
    assert!(!m.matches_any("a.b").unwrap());
    m.remove(&pattern(Dialect::Amqp, "forex.#"), 3);
    // forex.* now covers forex.eur only.
    assert_eq!(m.filter_patterns(), 4);
    assert!(!m.matches_any("forex").unwrap());
    assert!(m.matches_any("forex.gbp").unwrap());
}

#[test]
fn mqtt_dollar_topics_skip_wildcard_first_filters_when_filtering() {
    let config = Config::new(Dialect::Mqtt);
    let m = OptimizedBitmapMatcher::new(config);
    m.insert(&pattern(Dialect::Mqtt, "#"), 1);
    m.insert(&pattern(Dialect::Mqtt, "$SYS/+"), 2);
    // `#` does not cover `$SYS/+`.
    assert_eq!(m.filter_patterns(), 2);
    assert!(m.matches_any("$SYS/x").unwrap());
    assert!(!m.matches_any("$SYS/x/y").unwrap());
    assert_eq!(lookup(&m, "$SYS/x"), vec![2]);
}

#[test]
fn auto_migrates_both_ways_and_keeps_answers() {
    let config = Config::new(Dialect::Amqp);
    let m = AutoMatcher::new(config);
    let fixed = pattern(Dialect::Amqp, "fixed.*");
    m.insert(&fixed, 1);
    m.insert(&pattern(Dialect::Amqp, "fixed.a"), 2);
    assert_eq!(m.current(), "optimized_bitmap");
    let extra: Vec<Pattern> = (0..UP)
        .map(|i| pattern(Dialect::Amqp, &format!("p{}.q{}.#", i % 100, i / 100)))
        .collect();
    for (i, p) in extra.iter().enumerate() {
        m.insert(p, 10 + i as u64);
    }
    assert_eq!(m.current(), "trie");
    assert_eq!(lookup(&m, "fixed.a"), vec![1, 2]);
    assert_eq!(lookup(&m, "p77.q0.r"), vec![87]);
    // 1 + UP wildcard patterns: the bitmap returns once fewer than DOWN are left.
    let to_leave = UP + 2 - DOWN;
    for (i, p) in extra.iter().enumerate().take(to_leave) {
        assert!(m.remove(p, 10 + i as u64));
        if i + 1 < to_leave {
            assert_eq!(m.current(), "trie", "hysteresis holds at {i}");
        }
    }
    assert_eq!(m.current(), "optimized_bitmap");
    assert_eq!(lookup(&m, "fixed.a"), vec![1, 2]);
    assert!(lookup(&m, "p77.q0.r").is_empty());
    let last = UP - 1;
    let topic = format!("p{}.q{}", last % 100, last / 100);
    assert_eq!(lookup(&m, &topic), vec![10 + last as u64]);
}

#[test]
fn auto_lookups_stay_right_while_migrating() {
    let config = Config::new(Dialect::Nats);
    let m = Arc::new(AutoMatcher::new(config));
    m.insert(&pattern(Dialect::Nats, "stable.>"), 1);
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let m = Arc::clone(&m);
            std::thread::spawn(move || {
                for _ in 0..2_000 {
                    assert_eq!(lookup(&*m, "stable.x"), vec![1]);
                }
            })
        })
        .collect();
    for i in 0..=UP {
        let text = format!("w{}.v{}.*", i % 100, i / 100);
        m.insert(&pattern(Dialect::Nats, &text), 100);
    }
    for r in readers {
        r.join().unwrap();
    }
    assert_eq!(m.current(), "trie");
    assert_eq!(lookup(&*m, "stable.x"), vec![1]);
}

#[test]
fn inverted_rows_survive_concurrent_churn() {
    let config = Config::new(Dialect::Amqp);
    let m = Arc::new(InvertedBitmapMatcher::with_capacity(config, 16));
    let oracle = NaiveMatcher::new(config);
    both(Dialect::Amqp, &[("keep.#", 1)], &*m, &oracle);
    let readers: Vec<_> = (0..2)
        .map(|t| {
            let m = Arc::clone(&m);
            std::thread::spawn(move || {
                for i in 0..3_000 {
                    let topic = format!("keep.{}", (i * (t + 1)) % 40);
                    assert!(lookup(&*m, &topic).contains(&1), "{topic}");
                }
            })
        })
        .collect();
    for i in 0..500u64 {
        let p = pattern(Dialect::Amqp, &format!("keep.{}", i % 40));
        m.insert(&p, 2 + i);
        if i % 3 != 0 {
            m.remove(&p, 2 + i);
        } else {
            oracle.insert(&p, 2 + i);
        }
    }
    for r in readers {
        r.join().unwrap();
    }
    for i in 0..40 {
        let topic = format!("keep.{i}");
        assert_eq!(lookup(&*m, &topic), lookup(&oracle, &topic), "{topic}");
    }
}

const WORDS: &[&str] = &["a", "b", "", "$s", "*", "#"];

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 0..4).prop_map(|w| w.join("."))
}

#[derive(Debug, Clone)]
enum Op {
    Insert(String, u64),
    Remove(usize),
    Lookup(String),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        3 => (text(), 0..3u64).prop_map(|(p, s)| Op::Insert(p, s)),
        2 => (0..32usize).prop_map(Op::Remove),
        4 => text().prop_map(Op::Lookup),
    ];
    prop::collection::vec(op, 1..80)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn simd_and_scalar_agree(
        a in prop::collection::vec(any::<u64>(), 0..70),
        b in prop::collection::vec(any::<u64>(), 0..70),
        sparse in any::<bool>(),
    ) {
        let b: Vec<u64> = if sparse { b.iter().map(|w| w & (w >> 7) & (w >> 13)).collect() } else { b };
        let mut x = a.clone();
        let mut y = a.clone();
        let any_x = simd::and_scalar(&mut x, &b);
        let any_y = simd::and_simd(&mut y, &b);
        prop_assert_eq!(&x, &y);
        prop_assert_eq!(any_x, any_y);
        let n = a.len().min(b.len());
        prop_assert_eq!(any_x, x[..n].iter().any(|w| *w != 0));
        let mut z = a.clone();
        prop_assert_eq!(simd::and_into(&mut z, &b), any_x);
        prop_assert_eq!(z, x);
    }

    /// Cached rows updated in place agree with the oracle after any interleaving, with a
    /// table small enough that rows are also evicted and recompiled.
    #[test]
    fn incremental_rows_agree_with_naive(ops in ops(), capacity in 1..6usize) {
        let config = Config::new(Dialect::Amqp);
        let m = InvertedBitmapMatcher::with_capacity(config, capacity);
        let oracle = NaiveMatcher::new(config);
        let mut live: Vec<(Pattern, u64)> = Vec::new();
        for op in ops {
            match op {
                Op::Insert(text, s) => {
                    let p = pattern(Dialect::Amqp, &text);
                    if !live.contains(&(p.clone(), s)) {
                        m.insert(&p, s);
                        oracle.insert(&p, s);
                        live.push((p, s));
                    }
                }
                Op::Remove(i) => {
                    if !live.is_empty() {
                        let (p, s) = live.swap_remove(i % live.len());
                        prop_assert!(m.remove(&p, s));
                        prop_assert!(oracle.remove(&p, s));
                    }
                }
                Op::Lookup(t) => {
                    prop_assert_eq!(lookup(&m, &t), lookup(&oracle, &t), "{}", t);
                    prop_assert_eq!(m.matches_any(&t).unwrap(), oracle.matches_any(&t).unwrap());
                }
            }
            prop_assert!(m.cached_rows() <= capacity);
        }
    }
}

/// `Config::cache_capacity` reaches `inverted_bitmap` through `Engine`, survives a restore,
/// and is refused for the algorithms that cache nothing per topic (all but it and `cstrie`).
#[test]
fn cache_capacity_is_carried_and_refused_elsewhere() {
    use topicmatch_core::{Algorithm, Engine, Subscriber};
    let mut config = Config::new(Dialect::Amqp);
    config.cache_capacity = Some(2);
    let engine = Engine::with_config(Algorithm::InvertedBitmap, config).unwrap();
    let star = Subscriber::from("star");
    engine.subscribe("a.*", &star).unwrap();
    for round in 0..3 {
        for i in 0..10 {
            let mut out = Vec::new();
            engine.lookup_into(&format!("a.t{i}"), &mut out).unwrap();
            assert_eq!(out.len(), 1, "round {round}, topic {i}");
        }
    }
    assert_eq!(engine.cache_capacity(), Some(2));
    let restored = Engine::restore_config(
        Algorithm::InvertedBitmap,
        config,
        &engine.subscriptions(),
        &[],
        engine.next_id(),
    )
    .unwrap();
    assert_eq!(restored.cache_capacity(), Some(2));
    assert_eq!(restored.lookup("a.x").unwrap(), vec![star]);

    for &algorithm in Algorithm::ALL {
        let made = Engine::with_config(algorithm, config);
        assert_eq!(
            made.is_ok(),
            matches!(algorithm, Algorithm::InvertedBitmap | Algorithm::Cstrie),
            "{algorithm:?}"
        );
    }
    config.cache_capacity = Some(0);
    assert!(Engine::with_config(Algorithm::InvertedBitmap, config).is_err());
}

/// The lock-free hit path under churn: a reader of a cached topic sees only whole results
/// (never a torn mix of two writes) and every change completed before its lookup started.
#[test]
fn inverted_hits_see_whole_results_and_completed_changes() {
    use std::sync::atomic::{AtomicU64, Ordering};

    let config = Config::new(Dialect::Amqp);
    let m = Arc::new(InvertedBitmapMatcher::new(config));
    for s in 1..=3 {
        m.insert(&pattern(Dialect::Amqp, "t.x"), s);
    }
    // Cached (and so served by the hit path) from the first sighting on while there is room,
    // the second once the table is full.
    assert_eq!(lookup(&*m, "t.x"), vec![1, 2, 3]);
    assert_eq!(lookup(&*m, "t.x"), vec![1, 2, 3]);
    // Counts completed changes: after 2n + 1, subscriber 100 + n was added; after 2n + 2,
    // removed.
    let state = Arc::new(AtomicU64::new(0));
    let reader = {
        let (m, state) = (Arc::clone(&m), Arc::clone(&state));
        std::thread::spawn(move || {
            while state.load(Ordering::Acquire) < 2_000 {
                let before = state.load(Ordering::Acquire);
                let got = lookup(&*m, "t.x");
                let after = state.load(Ordering::Acquire);
                assert_eq!(&got[..3], &[1, 2, 3], "{got:?}");
                // Subscribers removed before the lookup started are gone; none subscribed
                // after it ended appears.
                let extra = &got[3..];
                assert!(extra.len() <= 1, "{got:?}");
                if let Some(&id) = extra.first() {
                    assert!(
                        (100 + before / 2..=100 + after / 2).contains(&id),
                        "{before}..{after}: {got:?}"
                    );
                }
                assert_eq!(m.matches_any("t.x"), Ok(true));
            }
        })
    };
    let p = pattern(Dialect::Amqp, "t.*");
    for n in 0..1_000u64 {
        m.insert(&p, 100 + n);
        state.fetch_add(1, Ordering::Release);
        assert!(m.remove(&p, 100 + n));
        state.fetch_add(1, Ordering::Release);
    }
    reader.join().unwrap();
    assert_eq!(lookup(&*m, "t.x"), vec![1, 2, 3]);
}

/// Any capacity is accepted (Python allows up to `usize::MAX`) without allocating for it up
/// front.
#[test]
fn huge_capacity_allocates_little_and_works() {
    let config = Config::new(Dialect::Amqp);
    let m = InvertedBitmapMatcher::with_capacity(config, usize::MAX);
    m.insert(&pattern(Dialect::Amqp, "a.*"), 1);
    for _ in 0..3 {
        assert_eq!(lookup(&m, "a.b"), vec![1]);
    }
    assert_eq!(m.cached_rows(), 1);
    assert!(m.heap_bytes() < 64 << 20, "{}", m.heap_bytes());
}
