//! One conformance suite, run for every algorithm, from the shared case table.

mod common;

use common::{cases, dialect, engine, sorted};
use topicmatch_core::{matches, Algorithm, Error, Subscriber};

#[test]
fn reference_semantics_follow_the_table() {
    for case in cases()["matches"].as_array().unwrap() {
        let d = dialect(&case[0]);
        let (p, t) = (case[1].as_str().unwrap(), case[2].as_str().unwrap());
        let want = case[3].as_bool().unwrap();
        assert_eq!(matches(d, p, t).unwrap(), want, "{d} {p:?} against {t:?}");
    }
}

#[test]
fn every_algorithm_follows_the_table() {
    let table = cases();
    for &algorithm in Algorithm::ALL {
        for case in table["matches"].as_array().unwrap() {
            let d = dialect(&case[0]);
            let (p, t) = (case[1].as_str().unwrap(), case[2].as_str().unwrap());
            let want = case[3].as_bool().unwrap();
            let m = engine(d, algorithm);
            let s = Subscriber::from("s");
            m.subscribe(p, &s).unwrap();
            let got = m.lookup(t).unwrap();
            let expected = if want { vec![s] } else { vec![] };
            assert_eq!(got, expected, "{algorithm} {d} {p:?} against {t:?}");
            assert_eq!(
                m.matches_any(t).unwrap(),
                want,
                "{algorithm} {d} matches_any {p:?} {t:?}"
            );
        }
    }
}

#[test]
fn every_algorithm_routes_the_broker_scenarios() {
    let table = cases();
    for &algorithm in Algorithm::ALL {
        for scenario in table["scenarios"].as_array().unwrap() {
            let d = dialect(&scenario["dialect"]);
            let m = engine(d, algorithm);
            for b in scenario["bindings"].as_array().unwrap() {
                m.subscribe(
                    b[0].as_str().unwrap(),
                    &Subscriber::from(b[1].as_str().unwrap()),
                )
                .unwrap();
            }
            for (topic, want) in scenario["expect"].as_object().unwrap() {
                let want: Vec<Subscriber> = want
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| Subscriber::from(s.as_str().unwrap()))
                    .collect();
                assert_eq!(
                    sorted(m.lookup(topic).unwrap()),
                    sorted(want),
                    "{algorithm} {d} {topic:?}"
                );
            }
        }
    }
}

#[test]
fn invalid_patterns_are_rejected_and_change_nothing() {
    let table = cases();
    for &algorithm in Algorithm::ALL {
        for case in table["invalid_patterns"].as_array().unwrap() {
            let d = dialect(&case[0]);
            let p = case[1].as_str().unwrap();
            let m = engine(d, algorithm);
            let err = m.subscribe(p, &Subscriber::Int(1)).unwrap_err();
            assert!(
                matches!(err, Error::InvalidPattern { dialect, .. } if dialect == d),
                "{algorithm} {d} {p:?}: {err:?}"
            );
            assert!(err.to_string().contains(d.name()), "{err}");
            assert_eq!(m.len(), 0);
            assert!(matches(d, p, "x").is_err());
        }
        for case in table["valid_patterns"].as_array().unwrap() {
            let d = dialect(&case[0]);
            let p = case[1].as_str().unwrap();
            engine(d, algorithm)
                .subscribe(p, &Subscriber::Int(1))
                .unwrap_or_else(|e| panic!("{d} {p:?} should be valid: {e}"));
        }
    }
}

#[test]
fn invalid_topics_are_rejected() {
    let table = cases();
    for &algorithm in Algorithm::ALL {
        for case in table["invalid_topics"].as_array().unwrap() {
            let d = dialect(&case[0]);
            let t = case[1].as_str().unwrap();
            let m = engine(d, algorithm);
            m.subscribe(d.multi_wildcard(), &Subscriber::Int(1))
                .unwrap();
            let err = m.lookup(t).unwrap_err();
            assert!(
                matches!(err, Error::InvalidTopic { dialect, .. } if dialect == d),
                "{algorithm} {d} {t:?}: {err:?}"
            );
            assert!(matches!(m.matches_any(t), Err(Error::InvalidTopic { .. })));
        }
        for case in table["valid_topics"].as_array().unwrap() {
            let d = dialect(&case[0]);
            let t = case[1].as_str().unwrap();
            engine(d, algorithm)
                .lookup(t)
                .unwrap_or_else(|e| panic!("{d} {t:?} should be valid: {e}"));
        }
    }
}

#[path = "conformance/brokers.rs"]
mod brokers;

#[test]
fn every_algorithm_follows_the_broker_suites() {
    let suites = brokers::suites();
    assert!(suites.len() >= 20, "the broker table lost suites");
    for &algorithm in Algorithm::ALL {
        for suite in &suites {
            brokers::check_suite(algorithm, suite);
        }
    }
}
