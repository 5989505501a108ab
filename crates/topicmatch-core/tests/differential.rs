//! Property tests: every algorithm against the `naive` oracle, on random operation sequences
//! over a tiny alphabet that includes empty words, `$` words and every wildcard of every
//! dialect (so invalid texts are exercised too).

mod common;

use common::{engine, sorted};
use proptest::prelude::*;
use topicmatch_core::{Algorithm, Config, Dialect, Engine, Subscriber};

const WORDS: &[&str] = &["a", "b", "", "$s", "*", "#", "+", ">", "a#", "*b"];

fn text(dialect: Dialect) -> impl Strategy<Value = String> {
    let sep = char::from(dialect.separator()).to_string();
    prop::collection::vec(prop::sample::select(WORDS), 0..6).prop_map(move |w| w.join(&sep))
}

#[derive(Debug, Clone)]
enum Op {
    Subscribe(String, i64),
    Unsubscribe(usize),
    Lookup(String),
}

fn ops(dialect: Dialect) -> impl Strategy<Value = Vec<Op>> {
    ops_over(dialect, 4)
}

/// Operations whose subscribers are drawn from `subscribers` values: a few, so that most
/// subscribers hold several patterns, or many, so that most hold one (the batch lookups'
/// path without de-duplication).
fn ops_over(dialect: Dialect, subscribers: i64) -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        4 => (text(dialect), 0..subscribers).prop_map(|(p, s)| Op::Subscribe(p, s)),
        1 => (0..64usize).prop_map(Op::Unsubscribe),
        4 => text(dialect).prop_map(Op::Lookup),
    ];
    prop::collection::vec(op, 1..40)
}

/// Every algorithm but the oracle, and the `cstrie` with a result cache of six entries (three
/// buckets of two: each topic may take two of them, and topics still evict each other): each
/// lookup is asked twice, so the cache answers the second.
fn variants(dialect: Dialect) -> Vec<(String, Engine)> {
    let mut all: Vec<(String, Engine)> = Algorithm::ALL
        .iter()
        .filter(|&&a| a != Algorithm::Naive)
        .map(|&a| (a.to_string(), engine(dialect, a)))
        .collect();
    let config = Config {
        cache_capacity: Some(6),
        ..Config::new(dialect)
    };
    let cached = Engine::with_config(Algorithm::Cstrie, config).expect("cstrie takes a cache");
    all.push(("cstrie (cached)".into(), cached));
    all
}

fn check(dialect: Dialect, ops: &[Op]) -> Result<(), TestCaseError> {
    for (algorithm, m) in variants(dialect) {
        let oracle = engine(dialect, Algorithm::Naive);
        let mut ids = Vec::new();
        // Every topic looked up so far: asked again as one batch after each lookup, so that
        // batches cross the `cstrie`'s groups of topics, with invalid topics among them.
        let mut seen: Vec<&str> = Vec::new();
        for op in ops {
            match op {
                Op::Subscribe(p, s) => {
                    let a = oracle.subscribe(p, &Subscriber::Int(*s));
                    let b = m.subscribe(p, &Subscriber::Int(*s));
                    prop_assert_eq!(&a, &b, "{} subscribe {:?}", algorithm, p);
                    if let Ok(id) = a {
                        ids.push(id);
                    }
                }
                Op::Unsubscribe(i) => {
                    if let Some(&id) = ids.get(*i % ids.len().max(1)) {
                        prop_assert_eq!(oracle.unsubscribe(id), m.unsubscribe(id));
                    }
                }
                Op::Lookup(t) => {
                    let a = oracle.lookup(t).map(sorted);
                    for _ in 0..2 {
                        let b = m.lookup(t).map(sorted);
                        prop_assert_eq!(&a, &b, "{} lookup {:?}", algorithm, t);
                    }
                    let (mut found, mut ends) = (Vec::new(), Vec::new());
                    let batch = m.lookup_batch_into(&[t, t], &mut found, &mut ends);
                    match &a {
                        Ok(a) => {
                            prop_assert!(batch.is_ok(), "{} batch {:?}", algorithm, t);
                            prop_assert_eq!(ends.len(), 2);
                            for row in [&found[..ends[0]], &found[ends[0]..ends[1]]] {
                                let b = sorted(m.resolve(row));
                                prop_assert_eq!(a, &b, "{} batch row {:?}", algorithm, t);
                            }
                        }
                        Err(_) => prop_assert!(batch.is_err(), "{} batch {:?}", algorithm, t),
                    }
                    prop_assert_eq!(oracle.matches_any(t), m.matches_any(t));
                    seen.push(t);
                    let (mut found, mut ends) = (Vec::new(), Vec::new());
                    let batch = m.lookup_batch_into(&seen, &mut found, &mut ends);
                    // The batch stops at its first invalid topic, keeping the rows before it.
                    let invalid = seen.iter().position(|t| oracle.lookup(t).is_err());
                    prop_assert_eq!(
                        batch.is_err(),
                        invalid.is_some(),
                        "{} {:?}",
                        algorithm,
                        seen
                    );
                    prop_assert_eq!(ends.len(), invalid.unwrap_or(seen.len()));
                    let mut start = 0;
                    for (topic, &end) in seen.iter().zip(&ends) {
                        let want = oracle.lookup(topic).map(sorted).expect("valid");
                        let got = sorted(m.resolve(&found[start..end]));
                        prop_assert_eq!(
                            want,
                            got,
                            "{} batch {:?} row {:?}",
                            algorithm,
                            seen,
                            topic
                        );
                        start = end;
                    }
                }
            }
        }
        prop_assert_eq!(oracle.len(), m.len());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn amqp_algorithms_agree_with_naive(ops in ops(Dialect::Amqp)) {
        check(Dialect::Amqp, &ops)?;
    }

    #[test]
    fn mqtt_algorithms_agree_with_naive(ops in ops(Dialect::Mqtt)) {
        check(Dialect::Mqtt, &ops)?;
    }

    #[test]
    fn nats_algorithms_agree_with_naive(ops in ops(Dialect::Nats)) {
        check(Dialect::Nats, &ops)?;
    }

    #[test]
    fn amqp_algorithms_agree_with_naive_one_pattern_per_subscriber(
        ops in ops_over(Dialect::Amqp, 1 << 20),
    ) {
        check(Dialect::Amqp, &ops)?;
    }

    #[test]
    fn mqtt_algorithms_agree_with_naive_one_pattern_per_subscriber(
        ops in ops_over(Dialect::Mqtt, 1 << 20),
    ) {
        check(Dialect::Mqtt, &ops)?;
    }

    #[test]
    fn nats_algorithms_agree_with_naive_one_pattern_per_subscriber(
        ops in ops_over(Dialect::Nats, 1 << 20),
    ) {
        check(Dialect::Nats, &ops)?;
    }
}
