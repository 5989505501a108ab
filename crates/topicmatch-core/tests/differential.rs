//! Property tests: every algorithm against the `naive` oracle, on random operation sequences
//! over a tiny alphabet that includes empty words, `$` words and every wildcard of every
//! dialect (so invalid texts are exercised too).

mod common;

use common::{engine, sorted};
use proptest::prelude::*;
use topicmatch_core::{Algorithm, Dialect, Subscriber};

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
    let op = prop_oneof![
        4 => (text(dialect), 0..4i64).prop_map(|(p, s)| Op::Subscribe(p, s)),
        1 => (0..64usize).prop_map(Op::Unsubscribe),
        4 => text(dialect).prop_map(Op::Lookup),
    ];
    prop::collection::vec(op, 1..40)
}

fn check(dialect: Dialect, ops: &[Op]) -> Result<(), TestCaseError> {
    for &algorithm in Algorithm::ALL {
        if algorithm == Algorithm::Naive {
            continue;
        }
        let oracle = engine(dialect, Algorithm::Naive);
        let m = engine(dialect, algorithm);
        let mut ids = Vec::new();
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
                    let b = m.lookup(t).map(sorted);
                    prop_assert_eq!(&a, &b, "{} lookup {:?}", algorithm, t);
                    prop_assert_eq!(oracle.matches_any(t), m.matches_any(t));
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
}
