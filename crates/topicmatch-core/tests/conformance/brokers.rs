//! The cases taken from real broker and client test suites (`tests/cases/brokers.json`), run on
//! every algorithm. Each suite names its source; every failure message repeats it.

use std::collections::HashMap;

use serde_json::Value;
use topicmatch_core::{
    matches, Algorithm, Dialect, Engine, Error, GroupPolicy, Subscriber, SubscriptionId,
};

use crate::common::{dialect, engine, sorted};

/// The broker case table, also read by pytest.
pub fn suites() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/cases/brokers.json"
    );
    let text = std::fs::read_to_string(path).expect("broker case table exists");
    let table: Value = serde_json::from_str(&text).expect("broker case table is JSON");
    table["suites"].as_array().expect("suites").clone()
}

fn strings(suite: &Value, kind: &str) -> Vec<String> {
    suite[kind]
        .as_array()
        .map(|v| v.iter().map(|s| s.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

fn rows<'a>(suite: &'a Value, kind: &str) -> &'a [Value] {
    suite[kind].as_array().map_or(&[], Vec::as_slice)
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap()
}

/// What a suite may hold besides its `source` and `dialect`: a misspelt kind would run nothing.
const KINDS: [&str; 10] = [
    "matches",
    "rejected",
    "valid_patterns",
    "invalid_patterns",
    "valid_topics",
    "invalid_topics",
    "scenarios",
    "filter_counts",
    "equivalent",
    "equivalence_topics",
];

/// One suite on one algorithm: every kind of case it holds.
pub fn check_suite(algorithm: Algorithm, suite: &Value) {
    let d = dialect(&suite["dialect"]);
    let source = text(&suite["source"]);
    for key in suite.as_object().unwrap().keys() {
        assert!(
            key == "source" || key == "dialect" || KINDS.contains(&key.as_str()),
            "[{source}] unknown kind {key:?}"
        );
    }
    let at = format!("{algorithm} {d} [{source}]");
    check_matches(algorithm, d, suite, &at);
    check_rejected(algorithm, d, suite, &at);
    check_validity(algorithm, d, suite, &at);
    for scenario in rows(suite, "scenarios") {
        // A scenario may set `shared_subscriptions` (MQTT `$share/...` as groups or as plain
        // filters); the dialect's default otherwise.
        let m = match scenario["shared_subscriptions"].as_bool() {
            Some(shared) => engine(d, algorithm)
                .with_groups(GroupPolicy::default(), shared)
                .unwrap(),
            None => engine(d, algorithm),
        };
        run_scenario(&m, scenario["steps"].as_array().unwrap(), &at);
    }
    check_counts(algorithm, d, suite, &at);
    check_equivalent(algorithm, d, suite, &at);
}

fn check_matches(algorithm: Algorithm, d: Dialect, suite: &Value, at: &str) {
    for case in rows(suite, "matches") {
        let (p, t, want) = (text(&case[0]), text(&case[1]), case[2].as_bool().unwrap());
        assert_eq!(
            matches(d, p, t).unwrap(),
            want,
            "{at} reference {p:?} {t:?}"
        );
        let m = engine(d, algorithm);
        let s = Subscriber::from("s");
        m.subscribe(p, &s).unwrap();
        let expected = if want { vec![s] } else { vec![] };
        assert_eq!(m.lookup(t).unwrap(), expected, "{at} lookup {p:?} {t:?}");
        assert_eq!(
            m.matches_any(t).unwrap(),
            want,
            "{at} matches_any {p:?} {t:?}"
        );
    }
}

fn check_rejected(algorithm: Algorithm, d: Dialect, suite: &Value, at: &str) {
    for case in rows(suite, "rejected") {
        let (p, t, which) = (text(&case[0]), text(&case[1]), text(&case[2]));
        let err = matches(d, p, t).unwrap_err();
        let m = engine(d, algorithm);
        if which == "pattern" {
            assert!(
                matches!(err, Error::InvalidPattern { .. }),
                "{at} {p:?} {t:?}: {err:?}"
            );
            let err = m.subscribe(p, &Subscriber::Int(1)).unwrap_err();
            assert!(
                matches!(err, Error::InvalidPattern { .. }),
                "{at} {p:?}: {err:?}"
            );
            assert_eq!(m.len(), 0, "{at} {p:?}");
        } else {
            assert!(
                matches!(err, Error::InvalidTopic { .. }),
                "{at} {p:?} {t:?}: {err:?}"
            );
            m.subscribe(p, &Subscriber::Int(1)).unwrap();
            let err = m.lookup(t).unwrap_err();
            assert!(
                matches!(err, Error::InvalidTopic { .. }),
                "{at} {t:?}: {err:?}"
            );
        }
    }
}

fn check_validity(algorithm: Algorithm, d: Dialect, suite: &Value, at: &str) {
    for p in strings(suite, "invalid_patterns") {
        let m = engine(d, algorithm);
        let err = m.subscribe(&p, &Subscriber::Int(1)).unwrap_err();
        assert!(
            matches!(err, Error::InvalidPattern { dialect, .. } if dialect == d),
            "{at} {p:?}: {err:?}"
        );
        assert_eq!(m.len(), 0, "{at} {p:?}");
    }
    for p in strings(suite, "valid_patterns") {
        engine(d, algorithm)
            .subscribe(&p, &Subscriber::Int(1))
            .unwrap_or_else(|e| panic!("{at} {p:?} should be valid: {e}"));
    }
    for t in strings(suite, "invalid_topics") {
        let m = engine(d, algorithm);
        m.subscribe(d.multi_wildcard(), &Subscriber::Int(1))
            .unwrap();
        let err = m.lookup(&t).unwrap_err();
        assert!(
            matches!(err, Error::InvalidTopic { dialect, .. } if dialect == d),
            "{at} {t:?}: {err:?}"
        );
        assert!(
            matches!(m.matches_any(&t), Err(Error::InvalidTopic { .. })),
            "{at} {t:?}"
        );
    }
    for t in strings(suite, "valid_topics") {
        engine(d, algorithm)
            .lookup(&t)
            .unwrap_or_else(|e| panic!("{at} {t:?} should be valid: {e}"));
    }
}

/// Steps of binds, unbinds and expected routes, in order, on one matcher.
fn run_scenario(m: &Engine, steps: &[Value], at: &str) {
    let mut ids: HashMap<(String, String), SubscriptionId> = HashMap::new();
    for step in steps {
        for key in step.as_object().unwrap().keys() {
            assert!(
                ["bind", "unbind", "expect"].contains(&key.as_str()),
                "{at}: step {key:?}"
            );
        }
        for b in rows(step, "bind") {
            let key = (text(&b[0]).to_owned(), text(&b[1]).to_owned());
            let id = m
                .subscribe(&key.0, &Subscriber::from(key.1.as_str()))
                .unwrap();
            assert_eq!(
                *ids.entry(key).or_insert(id),
                id,
                "{at}: subscribe is idempotent"
            );
        }
        for b in rows(step, "unbind") {
            let key = (text(&b[0]).to_owned(), text(&b[1]).to_owned());
            let id = ids.remove(&key).expect("unbind a bound subscription");
            assert!(m.unsubscribe(id), "{at} unbind {key:?}");
        }
        if let Some(expect) = step["expect"].as_object() {
            for (topic, want) in expect {
                let want = want
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| Subscriber::from(text(s)));
                // `want` is distinct, so a duplicate delivery fails here too.
                let got = sorted(m.lookup(topic).unwrap());
                assert_eq!(got, sorted(want.collect()), "{at} {topic:?}");
            }
        }
    }
}

fn check_counts(algorithm: Algorithm, d: Dialect, suite: &Value, at: &str) {
    for table in rows(suite, "filter_counts") {
        let topics = strings(table, "topics");
        for row in rows(table, "counts") {
            let (p, want) = (text(&row[0]), row[1].as_u64().unwrap());
            let m = engine(d, algorithm);
            m.subscribe(p, &Subscriber::Int(1)).unwrap();
            let hits = topics.iter().filter(|t| m.matches_any(t).unwrap()).count();
            assert_eq!(hits as u64, want, "{at} {p:?}");
        }
    }
}

fn check_equivalent(algorithm: Algorithm, d: Dialect, suite: &Value, at: &str) {
    let topics = strings(suite, "equivalence_topics");
    for pair in rows(suite, "equivalent") {
        let (a, b) = (engine(d, algorithm), engine(d, algorithm));
        a.subscribe(text(&pair[0]), &Subscriber::Int(1)).unwrap();
        b.subscribe(text(&pair[1]), &Subscriber::Int(1)).unwrap();
        for t in &topics {
            assert_eq!(
                a.lookup(t).unwrap(),
                b.lookup(t).unwrap(),
                "{at} {pair} {t:?}"
            );
        }
    }
}
