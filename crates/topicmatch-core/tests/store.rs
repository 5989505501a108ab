//! `TopicStore`: the map API, errors and limits, each dialect's rules, the order, the case
//! tables read in reverse (each (pattern, topic, match) row is a store query), and peer
//! vectors (NATS `stree`, mosquitto retained messages). Property tests against the scan are
//! in `store_props.rs`, threads in `store_threads.rs`.

mod common;

use serde_json::Value;
use topicmatch_core::topic::split_words;
use topicmatch_core::{matches, Dialect, Error, Limit, Pattern, StoreLimits, TopicStore};

/// The scan every answer must equal: each of the stored `topics` tested with `matches`, in
/// word order.
fn scan(dialect: Dialect, topics: &[String], filter: &str) -> Vec<String> {
    let mut out: Vec<String> = topics
        .iter()
        .filter(|t| matches(dialect, filter, t).unwrap())
        .cloned()
        .collect();
    out.sort_by(|a, b| words(dialect, a).cmp(&words(dialect, b)));
    out.dedup();
    out
}

fn words(dialect: Dialect, topic: &str) -> Vec<&str> {
    split_words(dialect, topic).collect()
}

fn topics<V>(found: &[(String, V)]) -> Vec<&str> {
    found.iter().map(|(t, _)| t.as_str()).collect()
}

fn store_of(dialect: Dialect, topics: &[&str]) -> TopicStore<usize> {
    let store = TopicStore::new(dialect);
    for (i, t) in topics.iter().enumerate() {
        store.insert(t, i).unwrap();
    }
    store
}

#[test]
fn the_map_api() {
    let store = TopicStore::new(Dialect::Mqtt);
    assert!(store.is_empty());
    assert_eq!(store.insert("a/b", "one").unwrap(), None);
    assert_eq!(store.insert("a/b", "two").unwrap(), Some("one"));
    assert_eq!(store.insert("a", "three").unwrap(), None);
    assert_eq!(store.len(), 2);
    assert_eq!(store.get("a/b").unwrap(), Some("two"));
    assert_eq!(store.get("a/c").unwrap(), None);
    assert!(store.contains("a").unwrap());
    assert!(!store.contains("a/b/c").unwrap());
    assert_eq!(store.get_with("a", |v| v.len()).unwrap(), Some(5));
    assert_eq!(store.remove("a/b").unwrap(), Some("two"));
    assert_eq!(store.remove("a/b").unwrap(), None);
    assert_eq!(store.len(), 1);
    store.clear();
    assert!(store.is_empty());
    assert_eq!(store.matches("#").unwrap(), vec![]);
    assert_eq!(store.stats().nodes, 1);
}

#[test]
fn invalid_input_is_refused_and_changes_nothing() {
    let store = store_of(Dialect::Mqtt, &["a/b"]);
    for topic in ["", "a/+", "a/#", "a\0b"] {
        assert!(
            matches!(store.insert(topic, 9), Err(Error::InvalidTopic { .. })),
            "{topic:?}"
        );
        assert!(matches!(store.get(topic), Err(Error::InvalidTopic { .. })));
        assert!(matches!(
            store.remove(topic),
            Err(Error::InvalidTopic { .. })
        ));
        assert!(matches!(
            store.contains(topic),
            Err(Error::InvalidTopic { .. })
        ));
    }
    for filter in ["", "a/#/b", "a+", "#a"] {
        assert!(
            matches!(store.matches(filter), Err(Error::InvalidPattern { .. })),
            "{filter:?}"
        );
        assert!(matches!(
            store.count(filter),
            Err(Error::InvalidPattern { .. })
        ));
        assert!(matches!(
            store.match_many(&["a/b", filter]),
            Err(Error::InvalidPattern { .. })
        ));
    }
    let nats = store_of(Dialect::Nats, &["a.b"]);
    for topic in ["", "a..b", "a.*", "a.>", "a b"] {
        assert!(matches!(
            nats.insert(topic, 9),
            Err(Error::InvalidTopic { .. })
        ));
    }
    for filter in ["", "a..b", "a.>.b", "a b"] {
        assert!(matches!(
            nats.matches(filter),
            Err(Error::InvalidPattern { .. })
        ));
    }
    assert_eq!(store.len(), 1);
    assert_eq!(store.matches("#").unwrap(), vec![("a/b".to_owned(), 0)]);
    assert_eq!(nats.len(), 1);
}

#[test]
fn limits_are_enforced_and_a_refused_insert_changes_nothing() {
    let limits = StoreLimits {
        max_topic_bytes: 8,
        max_levels: 3,
        max_topics: 2,
    };
    let store = TopicStore::with_limits(Dialect::Amqp, limits);
    assert_eq!(store.limits(), limits);
    store.insert("a", 1).unwrap();
    store.insert("b", 2).unwrap();
    assert_eq!(
        store.insert("c", 3),
        Err(Error::LimitExceeded {
            limit: Limit::Topics,
            max: 2,
            actual: 3,
            about: Some(r#"amqp topic "c""#.into()),
        })
    );
    // Replacing at the cap is no new topic.
    assert_eq!(store.insert("a", 4).unwrap(), Some(1));
    assert_eq!(
        store.insert("a.b.c.d", 5),
        Err(Error::LimitExceeded {
            limit: Limit::Levels,
            max: 3,
            actual: 4,
            about: Some(r#"amqp topic "a.b.c.d""#.into()),
        })
    );
    assert!(matches!(
        store.insert("abcdefghi", 5),
        Err(Error::LimitExceeded {
            limit: Limit::TopicBytes,
            ..
        })
    ));
    assert!(matches!(
        store.matches("a.*.*.*"),
        Err(Error::LimitExceeded {
            limit: Limit::Levels,
            ..
        })
    ));
    assert_eq!(store.len(), 2);
    assert_eq!(
        store.matches("#").unwrap(),
        vec![("a".into(), 4), ("b".into(), 2)]
    );
    store.remove("b").unwrap();
    store.insert("c", 3).unwrap();
    assert_eq!(store.len(), 2);
}

#[test]
fn mqtt_rules() {
    let store = store_of(
        Dialect::Mqtt,
        &[
            "a", "a/b", "a/b/c", "a/", "/", "/a", "$SYS/x", "$SYS", "b/$x", "a//b",
        ],
    );
    assert_eq!(
        topics(&store.matches("a/#").unwrap()),
        ["a", "a/", "a//b", "a/b", "a/b/c"]
    );
    assert_eq!(
        topics(&store.matches("+/+").unwrap()),
        ["/", "/a", "a/", "a/b", "b/$x"]
    );
    assert_eq!(topics(&store.matches("+").unwrap()), ["a"]);
    // `$` topics: not for a first-level wildcard, but for a literal `$SYS`.
    assert_eq!(
        topics(&store.matches("#").unwrap()),
        ["/", "/a", "a", "a/", "a//b", "a/b", "a/b/c", "b/$x"]
    );
    assert_eq!(
        topics(&store.matches("$SYS/#").unwrap()),
        ["$SYS", "$SYS/x"]
    );
    assert_eq!(topics(&store.matches("$SYS/+").unwrap()), ["$SYS/x"]);
    assert_eq!(topics(&store.matches("+/x").unwrap()), Vec::<&str>::new());
    assert_eq!(topics(&store.matches("b/+").unwrap()), ["b/$x"]);
    assert_eq!(topics(&store.matches("+/$x").unwrap()), ["b/$x"]);
    assert_eq!(topics(&store.matches("a/+/b").unwrap()), ["a//b"]);
    // A shared subscription queries as its filter.
    assert_eq!(
        topics(&store.matches("$share/g/a/+").unwrap()),
        ["a/", "a/b"]
    );
    assert_eq!(store.count("#").unwrap(), 8);
}

#[test]
fn amqp_rules() {
    let store = store_of(
        Dialect::Amqp,
        &[
            "", ".", "a", "a.", "a.b", "a..b", ".a", "a.b.c", "c", "x.a.b.b",
        ],
    );
    assert_eq!(store.count("#").unwrap(), 10);
    assert_eq!(topics(&store.matches("").unwrap()), [""]);
    assert_eq!(topics(&store.matches("*").unwrap()), ["a", "c"]);
    assert_eq!(
        topics(&store.matches("*.*").unwrap()),
        [".", ".a", "a.", "a.b"]
    );
    assert_eq!(
        topics(&store.matches("a.#").unwrap()),
        ["a", "a.", "a..b", "a.b", "a.b.c"]
    );
    assert_eq!(
        topics(&store.matches("#.b").unwrap()),
        ["a..b", "a.b", "x.a.b.b"]
    );
    assert_eq!(topics(&store.matches("a.#.b").unwrap()), ["a..b", "a.b"]);
    assert_eq!(
        topics(&store.matches("#.#.b.#").unwrap()),
        ["a..b", "a.b", "a.b.c", "x.a.b.b"]
    );
    assert_eq!(
        topics(&store.matches("*.#.*").unwrap()),
        [".", ".a", "a.", "a..b", "a.b", "a.b.c", "x.a.b.b"]
    );
    assert_eq!(topics(&store.matches("a.*.b").unwrap()), ["a..b"]);
    assert_eq!(topics(&store.matches(".").unwrap()), ["."]);
    assert_eq!(topics(&store.matches("#.*").unwrap()).len(), 9);
}

#[test]
fn nats_rules() {
    let store = store_of(
        Dialect::Nats,
        &["foo", "foo.bar", "foo.bar.baz", "foo*", ">x.y", "bar"],
    );
    assert_eq!(
        topics(&store.matches(">").unwrap()),
        [">x.y", "bar", "foo", "foo.bar", "foo.bar.baz", "foo*"]
    );
    assert_eq!(
        topics(&store.matches("foo.>").unwrap()),
        ["foo.bar", "foo.bar.baz"]
    );
    assert_eq!(topics(&store.matches("foo.*").unwrap()), ["foo.bar"]);
    assert_eq!(topics(&store.matches("*").unwrap()), ["bar", "foo", "foo*"]);
    assert_eq!(
        topics(&store.matches("*.>").unwrap()),
        [">x.y", "foo.bar", "foo.bar.baz"]
    );
    assert_eq!(topics(&store.matches("foo*").unwrap()), ["foo*"]);
    assert_eq!(topics(&store.matches(">x.*").unwrap()), [">x.y"]);
}

#[test]
fn results_come_in_word_order() {
    let list = [
        "a.us-east",
        "a.us.x",
        "a.us",
        "a",
        "a.b",
        "b",
        "a.b.c",
        "a.c",
        "",
    ];
    let store = store_of(Dialect::Amqp, &list);
    assert_eq!(
        topics(&store.matches("#").unwrap()),
        [
            "",
            "a",
            "a.b",
            "a.b.c",
            "a.c",
            "a.us",
            "a.us.x",
            "a.us-east",
            "b"
        ]
    );
    let mut sorted = list.to_vec();
    sorted.sort_by_key(|t| words(Dialect::Amqp, t));
    assert_eq!(topics(&store.matches("#").unwrap()), sorted);
}

#[test]
fn pages_resume_after_the_last_topic() {
    let list: Vec<String> = (0..300).map(|i| format!("t/{}/{}", i % 7, i)).collect();
    let refs: Vec<&str> = list.iter().map(String::as_str).collect();
    let store = store_of(Dialect::Mqtt, &refs);
    let filter = store.filter("t/+/#").unwrap();
    let whole = store.matches("t/+/#").unwrap();
    for size in [1, 2, 7, 64, 1000] {
        let mut got: Vec<(String, usize)> = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let mut page = Vec::new();
            let done = store
                .read()
                .page(Some(&filter), after.as_deref(), size, |t, v| {
                    page.push((t.to_owned(), *v));
                })
                .unwrap();
            assert!(page.len() <= size);
            after = page.last().map(|(t, _)| t.clone()).or(after);
            got.extend(page);
            if done {
                break;
            }
        }
        assert_eq!(got, whole, "pages of {size}");
    }
    // A page after a topic that is no longer stored resumes where it would have been.
    store.remove("t/3/150").unwrap();
    let mut page = Vec::new();
    store
        .read()
        .page(None, Some("t/3/150"), 2, |t, _| page.push(t.to_owned()))
        .unwrap();
    assert_eq!(page, ["t/3/157", "t/3/164"]);
    assert!(matches!(
        store.read().page(None, None, 0, |_, _| {}),
        Err(Error::InvalidArgument(_))
    ));
}

/// Every `matches` row of a case table, read in reverse: the row's pattern queries a store of
/// all the valid topics of its table and dialect, and finds the row's topic iff it matches.
fn reverse_rows(rows: &[(Dialect, String, String, bool)]) {
    for dialect in Dialect::ALL {
        let store: TopicStore<usize> = TopicStore::new(dialect);
        let mut stored = Vec::new();
        for (d, _, topic, _) in rows {
            if *d == dialect && store.contains(topic).is_ok() {
                store.insert(topic, 0).unwrap();
                stored.push(topic.clone());
            }
        }
        for (d, pattern, topic, expected) in rows {
            if *d != dialect || store.contains(topic).is_err() {
                continue;
            }
            let Ok(found) = store.matches(pattern) else {
                assert!(Pattern::parse(
                    dialect,
                    &topicmatch_core::Limits::for_dialect(dialect),
                    pattern
                )
                .is_err());
                continue;
            };
            assert_eq!(
                topics(&found),
                scan(dialect, &stored, pattern),
                "{dialect} {pattern:?}"
            );
            assert_eq!(
                found.iter().any(|(t, _)| t == topic),
                *expected,
                "{dialect} {pattern:?} over {topic:?}"
            );
            assert_eq!(store.count(pattern).unwrap(), found.len());
            // And alone: a store holding only the row's topic.
            let alone = TopicStore::new(dialect);
            alone.insert(topic, 1).unwrap();
            assert_eq!(
                alone.count(pattern).unwrap(),
                usize::from(*expected),
                "{dialect} {pattern:?} {topic:?}"
            );
        }
    }
}

fn rows_of(cases: &Value, default: Option<Dialect>) -> Vec<(Dialect, String, String, bool)> {
    cases["matches"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|row| {
            let row = row.as_array().unwrap();
            let (d, rest) = match default {
                Some(d) => (d, &row[..]),
                None => (common::dialect(&row[0]), &row[1..]),
            };
            (
                d,
                rest[0].as_str().unwrap().to_owned(),
                rest[1].as_str().unwrap().to_owned(),
                rest[2].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn conformance_table_in_reverse() {
    let rows = rows_of(&common::cases(), None);
    assert!(rows.len() > 200);
    reverse_rows(&rows);
}

#[test]
fn broker_suites_in_reverse() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/cases/brokers.json"
    );
    let cases: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut rows = Vec::new();
    for suite in cases["suites"].as_array().unwrap() {
        rows.extend(rows_of(suite, Some(common::dialect(&suite["dialect"]))));
    }
    assert!(rows.len() > 100);
    reverse_rows(&rows);
}

#[test]
fn memory_is_given_back_on_delete() {
    let store = TopicStore::new(Dialect::Nats);
    let empty = store.stats().heap_bytes;
    let list: Vec<String> = (0..20_000)
        .map(|i| format!("dev.{}.{i}.reading", i % 300))
        .collect();
    for (i, t) in list.iter().enumerate() {
        store.insert(t, i).unwrap();
    }
    let full = store.stats();
    assert!(full.heap_bytes > 1_000_000, "{full:?}");
    for t in &list[..19_900] {
        store.remove(t).unwrap().unwrap();
    }
    let after = store.stats();
    assert_eq!(after.topics, 100);
    assert!(
        after.heap_bytes < full.heap_bytes / 20,
        "{after:?} after {full:?}"
    );
    for t in &list[19_900..] {
        store.remove(t).unwrap().unwrap();
    }
    let none = store.stats();
    assert_eq!((none.topics, none.words), (0, 0));
    assert_eq!(none.heap_bytes, empty, "{none:?}");
}
