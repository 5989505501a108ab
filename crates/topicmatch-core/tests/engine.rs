//! The engine's bookkeeping: ids, idempotency, limits, snapshots, errors.

mod common;

use std::time::{Duration, Instant};

use common::{config, engine, sorted};
use topicmatch_core::{Algorithm, Dialect, Engine, Error, Limit, Limits, Subscriber};

#[test]
fn subscribe_is_idempotent_and_unsubscribe_reports_once() {
    for &algorithm in Algorithm::ALL {
        let m = engine(Dialect::Amqp, algorithm);
        let alice = Subscriber::from("alice");
        let a = m.subscribe("stock.*.ibm", &alice).unwrap();
        assert_eq!(m.subscribe("stock.*.ibm", &alice).unwrap(), a);
        let b = m.subscribe("stock.#", &alice).unwrap();
        assert_ne!(a, b);
        assert_eq!(m.len(), 2);
        assert_eq!(m.lookup("stock.nyse.ibm").unwrap(), vec![alice.clone()]);
        assert!(m.unsubscribe(a));
        assert!(!m.unsubscribe(a));
        assert_eq!(m.lookup("stock.nyse.ibm").unwrap(), vec![alice.clone()]);
        assert!(m.unsubscribe(b));
        assert!(m.lookup("stock.nyse.ibm").unwrap().is_empty());
        assert!(m.is_empty());
        // A fresh subscription never reuses an id.
        assert!(m.subscribe("stock.*.ibm", &alice).unwrap() > b);
    }
}

#[test]
fn int_and_str_subscribers_are_distinct() {
    let m = engine(Dialect::Mqtt, Algorithm::Trie);
    m.subscribe("a/+", &Subscriber::Int(1)).unwrap();
    m.subscribe("a/+", &Subscriber::from("1")).unwrap();
    assert_eq!(
        sorted(m.lookup("a/b").unwrap()),
        vec![Subscriber::Int(1), Subscriber::from("1")]
    );
}

#[test]
fn limits_raise_and_change_nothing() {
    for &algorithm in Algorithm::ALL {
        let limits = Limits {
            max_topic_bytes: 8,
            max_levels: 3,
            max_subscriptions: 2,
            max_multi_wildcards: 1,
        };
        let m = Engine::new(Dialect::Mqtt, algorithm, limits).unwrap();
        let s = Subscriber::Int(7);
        let too_long = m.subscribe("aaaa/bbbb", &s).unwrap_err();
        assert_eq!(
            too_long,
            Error::LimitExceeded {
                limit: Limit::TopicBytes,
                max: 8,
                actual: 9,
                about: Some(r#"mqtt pattern "aaaa/bbbb""#.into()),
            }
        );
        assert_eq!(
            too_long.to_string(),
            r#"limit exceeded by mqtt pattern "aaaa/bbbb": max_topic_bytes is 8, got 9"#
        );
        let too_deep = m.subscribe("a/b/c/d", &s).unwrap_err();
        assert_eq!(
            too_deep,
            Error::LimitExceeded {
                limit: Limit::Levels,
                max: 3,
                actual: 4,
                about: Some(r#"mqtt pattern "a/b/c/d""#.into()),
            }
        );
        m.subscribe("a/#", &s).unwrap();
        m.subscribe("+/b", &s).unwrap();
        assert_eq!(
            m.subscribe("a/+", &s).unwrap_err(),
            Error::LimitExceeded {
                limit: Limit::Subscriptions,
                max: 2,
                actual: 3,
                about: Some(r#"mqtt pattern "a/+""#.into()),
            }
        );
        // An existing pair is not a new subscription: still fine at the cap.
        m.subscribe("a/#", &s).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(
            m.lookup("a/b/c/d").unwrap_err().to_string(),
            r#"limit exceeded by mqtt topic "a/b/c/d": max_levels is 3, got 4"#
        );
        assert!(matches!(
            m.lookup("aaaaaaaaa"),
            Err(Error::LimitExceeded {
                limit: Limit::TopicBytes,
                ..
            })
        ));
        assert_eq!(m.lookup("a/b").unwrap(), vec![s.clone()]);
    }
}

#[test]
fn amqp_default_limit_is_a_short_string() {
    let m = engine(Dialect::Amqp, Algorithm::Trie);
    let key = "a".repeat(255);
    m.subscribe(&key, &Subscriber::Int(1)).unwrap();
    assert!(matches!(
        m.subscribe(&"a".repeat(256), &Subscriber::Int(1)),
        Err(Error::LimitExceeded {
            limit: Limit::TopicBytes,
            max: 255,
            actual: 256,
            ..
        })
    ));
}

/// Positions count from 1, as a person counts: `a/b#/c` breaks the rule in its second level.
#[test]
fn errors_name_dialect_text_position_and_rule() {
    let m = engine(Dialect::Mqtt, Algorithm::Trie);
    let err = m.subscribe("a/b#/c", &Subscriber::Int(1)).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("mqtt") && text.contains("a/b#/c") && text.contains("level 2:"),
        "{text}"
    );
    assert!(text.contains("whole level"), "{text}");
    let long = "x".repeat(500) + "/#/y";
    let text = m
        .subscribe(&long, &Subscriber::Int(1))
        .unwrap_err()
        .to_string();
    assert!(text.len() < 200 && text.contains("bytes"), "{text}");
    let err = engine(Dialect::Nats, Algorithm::Naive)
        .lookup("a.*")
        .unwrap_err();
    assert!(
        err.to_string().contains("nats") && err.to_string().contains("token 2:"),
        "{err}"
    );
}

#[test]
fn unknown_names_list_the_valid_ones() {
    let err = "mqtt5".parse::<Dialect>().unwrap_err().to_string();
    assert!(err.contains("amqp") && err.contains("nats"), "{err}");
    let err = "fast".parse::<Algorithm>().unwrap_err().to_string();
    assert!(err.contains("naive") && err.contains("trie"), "{err}");
}

#[test]
fn snapshot_restores_ids_and_subscribers() {
    for &algorithm in Algorithm::ALL {
        let m = engine(Dialect::Amqp, algorithm);
        let ids: Vec<u64> = (0..10)
            .map(|i| {
                m.subscribe(&format!("a.{i}.#"), &Subscriber::Int(i))
                    .unwrap()
            })
            .collect();
        m.unsubscribe(ids[3]);
        let snap = m.subscriptions();
        let same = config(m.dialect(), m.limits());
        let back = Engine::restore_config(algorithm, same, &snap, &[], m.next_id()).unwrap();
        assert_eq!(back.subscriptions(), snap);
        assert_eq!(back.lookup("a.4.x").unwrap(), vec![Subscriber::Int(4)]);
        assert!(back.subscribe("new", &Subscriber::Int(0)).unwrap() > ids[9]);
        let mut clash = snap.clone();
        clash.push(snap[0].clone());
        assert!(Engine::restore_config(algorithm, same, &clash, &[], 0).is_err());
    }
}

#[test]
fn many_hashes_stay_polynomial() {
    for &algorithm in Algorithm::ALL {
        let m = engine(Dialect::Amqp, algorithm);
        let pattern = vec!["#"; 127].join(".");
        let near_miss = format!("{}.x", vec!["#"; 120].join("."));
        m.subscribe(&pattern, &Subscriber::Int(1)).unwrap();
        m.subscribe(&near_miss, &Subscriber::Int(2)).unwrap();
        let key = vec!["a"; 127].join(".");
        let started = Instant::now();
        assert_eq!(m.lookup(&key).unwrap(), vec![Subscriber::Int(1)]);
        // A batch too (the `cstrie` walks one in groups of topics); `b` matches the first.
        let (mut out, mut ends) = (Vec::new(), Vec::new());
        m.lookup_batch_into(&[&key, "b", &key], &mut out, &mut ends)
            .unwrap();
        assert_eq!(
            m.resolve(&out),
            vec![Subscriber::Int(1); 3],
            "{algorithm:?}"
        );
        // Exponential backtracking would take years; polynomial takes microseconds.
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}

/// A batch of hundreds of topics (more than one read of a lock, in the algorithms that read
/// their index through one) gives each topic what `lookup_into` gives it, and an invalid topic
/// (a topic too long) far into it stops it there, keeping every earlier row.
#[test]
fn a_long_batch_equals_one_by_one() {
    let names: Vec<String> = (0..300)
        .map(|i| match i % 5 {
            0 => format!("a.{i}"),
            1 => format!("a.b.{i}"),
            2 => "b.c".to_owned(),
            3 => format!("x.{}.c", i % 7),
            _ => format!("q{i}"),
        })
        .collect();
    let topics: Vec<&str> = names.iter().map(String::as_str).collect();
    for &algorithm in Algorithm::ALL {
        let m = engine(Dialect::Amqp, algorithm);
        for (i, p) in (0_i64..).zip(["a.*", "a.#", "b.c", "*.c", "x.3.c", "q17"]) {
            m.subscribe(p, &Subscriber::Int(i)).unwrap();
        }
        let (mut out, mut ends) = (Vec::new(), Vec::new());
        m.lookup_batch_into(&topics, &mut out, &mut ends).unwrap();
        assert_eq!(ends.len(), topics.len(), "{algorithm:?}");
        let mut start = 0;
        for (topic, &end) in topics.iter().zip(&ends) {
            let mut one = Vec::new();
            m.lookup_into(topic, &mut one).unwrap();
            let mut got = out[start..end].to_vec();
            got.sort_unstable();
            one.sort_unstable();
            assert_eq!(got, one, "{algorithm:?} {topic}");
            start = end;
        }

        // Past AMQP's 255-byte routing key.
        let long = "a.".repeat(200);
        let mut broken = topics.clone();
        broken[200] = &long;
        let (mut out_broken, mut ends_broken) = (Vec::new(), Vec::new());
        let err = m
            .lookup_batch_into(&broken, &mut out_broken, &mut ends_broken)
            .unwrap_err();
        assert!(matches!(err, Error::LimitExceeded { .. }), "{err:?}");
        assert_eq!(ends_broken, ends[..200], "{algorithm:?}");
        assert_eq!(out_broken.len(), ends[199], "{algorithm:?}");
    }
}

/// `lookup_batch_into` gives each topic what `lookup_into` gives it, in order, in every
/// algorithm; an invalid topic stops the batch with its error, keeping earlier topics (with
/// groups too).
#[test]
fn batch_lookup_equals_one_by_one() {
    let patterns = ["a.*", "a.#", "#", "b.c", "*.c", "a.b.c"];
    let topics = ["a.b", "b.c", "a", "x.y.z", "a.b.c", ""];
    for &algorithm in Algorithm::ALL {
        let m = engine(Dialect::Amqp, algorithm);
        for (i, p) in (0_i64..).zip(patterns) {
            m.subscribe(p, &Subscriber::Int(i)).unwrap();
        }
        let (mut out, mut ends) = (vec![7], vec![1]);
        m.lookup_batch_into(&topics, &mut out, &mut ends).unwrap();
        assert_eq!(ends.len(), topics.len() + 1);
        for (i, topic) in topics.iter().enumerate() {
            let mut one = Vec::new();
            m.lookup_into(topic, &mut one).unwrap();
            let mut got = out[ends[i]..ends[i + 1]].to_vec();
            got.sort_unstable();
            one.sort_unstable();
            assert_eq!(got, one, "{algorithm:?} {topic}");
        }

        let m = engine(Dialect::Mqtt, algorithm);
        m.subscribe("a/#", &Subscriber::Int(1)).unwrap();
        // The ids and ends a batch stopped by its invalid second topic leaves.
        let stopped = |m: &Engine| {
            let (mut out, mut ends) = (Vec::new(), Vec::new());
            let err = m
                .lookup_batch_into(&["a/b", "a/+", "a"], &mut out, &mut ends)
                .unwrap_err();
            assert!(matches!(err, Error::InvalidTopic { .. }), "{err:?}");
            (out.len(), ends)
        };
        assert_eq!(stopped(&m), (1, vec![1]), "{algorithm:?}");
        // With a group the earlier rows stay too, its pick in them.
        m.subscribe("$share/g/a/#", &Subscriber::Int(2)).unwrap();
        assert_eq!(stopped(&m), (2, vec![2]), "{algorithm:?}");
    }
}
