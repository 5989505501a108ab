//! Hostile input: every short text built from separators, wildcards, NUL, whitespace, `$` and
//! non-ASCII, in every position, given to every algorithm of every dialect as a pattern and as
//! a topic. Each call gives a result or a typed error, consistent with the parsers and with
//! `naive`, and a rejected call leaves the engine exactly as it was.

mod common;

use std::sync::Arc;

use common::{config, engine, sorted};
use topicmatch_core::fields::{Criterion, Filter, Mode};
use topicmatch_core::{
    error::SHOWN_CHARS, parse_topic, Algorithm, Dialect, Engine, Error, Limit, Limits, Pattern,
    Subscriber, Subscription, Word,
};

/// Fragments that, concatenated, put every separator and wildcard in every position.
const FRAGMENTS: &[&str] = &[
    ".",
    "/",
    "*",
    "+",
    "#",
    ">",
    "\0",
    " ",
    "$",
    "a",
    "é",
    "\u{10FFFF}",
];

/// Every concatenation of at most `max` fragments, the empty text included.
fn texts(max: usize) -> Vec<String> {
    let mut all = vec![String::new()];
    let mut layer = vec![String::new()];
    for _ in 0..max {
        layer = layer
            .iter()
            .flat_map(|t| FRAGMENTS.iter().map(move |f| format!("{t}{f}")))
            .collect();
        all.extend(layer.iter().cloned());
    }
    all
}

/// Everything observable about an engine's state.
fn state(e: &Engine) -> (usize, Vec<Subscription>, u64) {
    (e.len(), e.subscriptions(), e.next_id())
}

#[test]
fn every_short_text_as_a_pattern_is_accepted_or_rejected_cleanly() {
    let all = texts(3);
    for dialect in Dialect::ALL {
        let limits = Limits::for_dialect(dialect);
        for &algorithm in Algorithm::ALL {
            let e = engine(dialect, algorithm);
            e.subscribe("a", &Subscriber::Int(0)).unwrap();
            for text in &all {
                let before = state(&e);
                let parsed = Pattern::parse(dialect, &limits, text);
                match e.subscribe(text, &Subscriber::Int(1)) {
                    Ok(id) => {
                        assert!(parsed.is_ok(), "{algorithm} {dialect} accepted {text:?}");
                        assert!(e.unsubscribe(id));
                        assert_eq!(e.len(), before.0, "{algorithm} {dialect} {text:?}");
                    }
                    Err(err) => {
                        assert_eq!(Err(err.clone()), parsed.map(|_| ()), "{dialect} {text:?}");
                        assert!(
                            matches!(err, Error::InvalidPattern { .. }),
                            "{dialect} {text:?}: {err}"
                        );
                        assert_eq!(state(&e), before, "{algorithm} {dialect} {text:?}");
                    }
                }
            }
            assert_eq!(e.lookup("a").unwrap(), vec![Subscriber::Int(0)]);
        }
    }
}

#[test]
fn every_short_text_meets_the_multi_wildcard_cap_as_its_parsed_words_count() {
    let all = texts(3);
    for dialect in Dialect::ALL {
        let unlimited = Limits::for_dialect(dialect);
        for cap in [0, 1] {
            let limits = Limits {
                max_multi_wildcards: cap,
                ..unlimited
            };
            for &algorithm in Algorithm::ALL {
                let e = Engine::new(dialect, algorithm, limits).unwrap();
                for text in &all {
                    let before = state(&e);
                    let got = e.subscribe(text, &Subscriber::Int(1));
                    match Pattern::parse(dialect, &unlimited, text) {
                        Err(err) => assert_eq!(got, Err(err), "{dialect} {text:?}"),
                        Ok(pattern) => {
                            let multis = pattern
                                .words()
                                .iter()
                                .filter(|w| **w == Word::Multi)
                                .count();
                            if multis <= cap {
                                assert!(e.unsubscribe(got.unwrap()), "{dialect} {text:?}");
                                continue;
                            }
                            let err = got.unwrap_err();
                            assert!(
                                matches!(
                                    err,
                                    Error::LimitExceeded { limit: Limit::MultiWildcards, max, actual, .. }
                                        if max == cap && actual == multis
                                ),
                                "{algorithm} {dialect} {text:?}: {err}"
                            );
                        }
                    }
                    assert_eq!(state(&e), before, "{algorithm} {dialect} {text:?}");
                }
            }
        }
    }
}

#[test]
fn every_short_text_as_a_topic_agrees_with_naive_and_the_parser() {
    let patterns = texts(2);
    let topics = texts(3);
    for dialect in Dialect::ALL {
        let limits = Limits::for_dialect(dialect);
        let engines: Vec<Engine> = Algorithm::ALL.iter().map(|&a| engine(dialect, a)).collect();
        for (i, p) in patterns.iter().enumerate() {
            for e in &engines {
                let _ = e.subscribe(p, &int(i));
            }
        }
        for e in &engines {
            assert_eq!(e.len(), engines[0].len());
        }
        for topic in &topics {
            let parsed = parse_topic(dialect, &limits, topic).map(|_| ());
            let expected = engines[0].lookup(topic).map(sorted);
            for (e, &algorithm) in engines.iter().zip(Algorithm::ALL) {
                let got = e.lookup(topic).map(sorted);
                assert_eq!(got, expected, "{algorithm} {dialect} lookup {topic:?}");
                let any = e.matches_any(topic);
                assert_eq!(
                    any,
                    expected
                        .as_ref()
                        .map(|s| !s.is_empty())
                        .map_err(Clone::clone),
                    "{algorithm} {dialect} matches_any {topic:?}"
                );
                if let Err(err) = &got {
                    assert_eq!(Err(err.clone()), parsed, "{dialect} {topic:?}");
                    assert!(matches!(err, Error::InvalidTopic { .. }), "{err}");
                }
            }
            assert_eq!(parsed.is_ok(), expected.is_ok(), "{dialect} {topic:?}");
        }
    }
}

/// Asserts that subscribe, lookup and `matches_any` of `text` all fail on the limit `name`
/// of `value`, leaving `e` unchanged.
fn assert_limit(e: &Engine, text: &str, name: &str, value: usize) {
    let before = state(e);
    for err in [
        e.subscribe(text, &Subscriber::Int(2)).unwrap_err(),
        e.lookup(text).unwrap_err(),
        e.matches_any(text).unwrap_err(),
    ] {
        assert!(matches!(err, Error::LimitExceeded { .. }), "{err}");
        assert!(
            err.to_string().contains(&format!("{name} is {value}")),
            "{} {}: {err}",
            e.algorithm(),
            e.dialect()
        );
    }
    assert_eq!(state(e), before);
}

#[test]
fn huge_and_deep_texts_hit_the_named_limit() {
    for dialect in Dialect::ALL {
        let limits = Limits::for_dialect(dialect);
        let sep = char::from(dialect.separator()).to_string();
        let max = limits.max_topic_bytes;
        let levels = Limits::DEFAULT_MAX_LEVELS;
        for &algorithm in Algorithm::ALL {
            let e = engine(dialect, algorithm);
            e.subscribe(&"a".repeat(max), &Subscriber::Int(1)).unwrap();
            assert_eq!(
                e.lookup(&"a".repeat(max)).unwrap(),
                vec![Subscriber::Int(1)],
                "a text of exactly max_topic_bytes is whole, not truncated"
            );
            assert_limit(&e, &"a".repeat(max + 1), "max_topic_bytes", max);
            assert_limit(&e, &"a".repeat(10 << 20), "max_topic_bytes", max);

            let unbounded = Limits {
                max_topic_bytes: usize::MAX,
                ..limits
            };
            let e = Engine::new(dialect, algorithm, unbounded).unwrap();
            e.subscribe(&vec!["a"; levels].join(&sep), &Subscriber::Int(1))
                .unwrap();
            assert!(e.lookup("a").unwrap().is_empty());
            assert_limit(&e, &vec!["a"; levels + 1].join(&sep), "max_levels", levels);
            assert_limit(&e, &vec!["a"; 100_000].join(&sep), "max_levels", levels);

            let shallow = Limits {
                max_levels: 64,
                ..limits
            };
            let e = Engine::new(dialect, algorithm, shallow).unwrap();
            let deepest = vec!["a"; 64].join(&sep);
            e.subscribe(&deepest, &Subscriber::Int(1)).unwrap();
            assert_eq!(e.lookup(&deepest).unwrap(), vec![Subscriber::Int(1)]);
            assert_limit(&e, &vec!["a"; 65].join(&sep), "max_levels", 64);
        }
    }
}

#[test]
fn max_subscriptions_refuses_new_pairs_only() {
    for dialect in Dialect::ALL {
        for &algorithm in Algorithm::ALL {
            let limits = Limits {
                max_subscriptions: 2,
                ..Limits::for_dialect(dialect)
            };
            let e = Engine::new(dialect, algorithm, limits).unwrap();
            let a = e.subscribe("a", &Subscriber::Int(1)).unwrap();
            let b = e.subscribe("b", &Subscriber::Int(1)).unwrap();
            assert_eq!(
                e.subscribe("a", &Subscriber::Int(1)),
                Ok(a),
                "idempotent at the cap"
            );
            let before = state(&e);
            let err = e.subscribe("c", &Subscriber::Int(1)).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!(
                    r#"limit exceeded by {dialect} pattern "c": max_subscriptions is 2, got 3"#
                )
            );
            let err = e.subscribe("a", &Subscriber::Int(2)).unwrap_err();
            assert!(matches!(err, Error::LimitExceeded { .. }));
            assert_eq!(state(&e), before, "{algorithm} {dialect}");
            assert!(e.lookup("c").unwrap().is_empty());
            assert!(e.unsubscribe(b));
            assert!(e.subscribe("c", &Subscriber::Int(1)).is_ok());
        }
    }
}

#[test]
fn max_multi_wildcards_caps_whole_word_multi_wildcards_only() {
    // RabbitMQ's validation of topic bindings (`unit_topic_binding_validation_SUITE`): up to
    // two `#` words, whatever else the key holds; `#` inside a word is literal.
    let capped = Limits {
        max_multi_wildcards: 2,
        ..Limits::for_dialect(Dialect::Amqp)
    };
    let hashes_128 = vec!["#"; 128].join(".");
    assert_eq!(hashes_128.len(), 255);
    for &algorithm in Algorithm::ALL {
        let e = Engine::new(Dialect::Amqp, algorithm, capped).unwrap();
        for ok in [
            "", "a.b.c", "*.*.*", "#", "a.#", "#.#", "#.a.#", "a#b", "##.##.##",
        ] {
            e.subscribe(ok, &Subscriber::Int(1))
                .unwrap_or_else(|err| panic!("{algorithm} {ok:?}: {err}"));
        }
        let before = state(&e);
        for (refused, count) in [
            ("#.#.#", 3),
            ("#.*.#.*.#", 3),
            ("a.#.b.#.c.#", 3),
            ("#.#.#.#", 4),
            (hashes_128.as_str(), 128),
        ] {
            let err = e.subscribe(refused, &Subscriber::Int(2)).unwrap_err();
            let Error::LimitExceeded {
                limit: Limit::MultiWildcards,
                max: 2,
                actual,
                about: Some(about),
            } = err
            else {
                panic!("{algorithm} {refused:?}: {err}");
            };
            assert_eq!(actual, count, "{algorithm} {refused:?}");
            // The text, shortened if long.
            let shown: String = refused.chars().take(SHOWN_CHARS).collect();
            assert!(
                about.starts_with(&format!("amqp pattern \"{shown}")),
                "{about}"
            );
            assert_eq!(state(&e), before, "{algorithm} {refused:?}");
        }
        assert_eq!(
            e.subscribe("#.#.#", &Subscriber::Int(2))
                .unwrap_err()
                .to_string(),
            r##"limit exceeded by amqp pattern "#.#.#": max_multi_wildcards is 2, got 3"##
        );
        // Unlimited by default: the 255-byte key of 128 `#` is a valid binding.
        let e = engine(Dialect::Amqp, algorithm);
        e.subscribe(&hashes_128, &Subscriber::Int(1)).unwrap();
        assert_eq!(e.lookup("a.b").unwrap(), vec![Subscriber::Int(1)]);
    }
}

#[test]
fn max_multi_wildcards_of_zero_refuses_every_multi_wildcard() {
    for (dialect, refused, kept) in [
        (Dialect::Amqp, "a.#", "a.*"),
        (Dialect::Mqtt, "a/#", "a/+"),
        (Dialect::Mqtt, "$share/g/#", "$share/g/+"),
        (Dialect::Nats, "a.>", "a.*"),
    ] {
        let limits = Limits {
            max_multi_wildcards: 0,
            ..Limits::for_dialect(dialect)
        };
        for &algorithm in Algorithm::ALL {
            let e = Engine::new(dialect, algorithm, limits).unwrap();
            e.subscribe(kept, &Subscriber::Int(1)).unwrap();
            let before = state(&e);
            let err = e.subscribe(refused, &Subscriber::Int(1)).unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::LimitExceeded {
                        limit: Limit::MultiWildcards,
                        max: 0,
                        actual: 1,
                        ..
                    }
                ),
                "{dialect} {algorithm} {refused:?}: {err}"
            );
            assert_eq!(state(&e), before);
            // A snapshot holding a pattern over the cap loads nothing.
            let held = [Subscription {
                id: 1,
                pattern: refused.into(),
                subscriber: Subscriber::Int(1),
            }];
            let err = Engine::restore_config(algorithm, config(dialect, limits), &held, &[], 2)
                .err()
                .expect("over the cap");
            assert!(matches!(err, Error::LimitExceeded { .. }), "{err}");
        }
    }
}

#[test]
fn limits_must_be_positive() {
    for dialect in Dialect::ALL {
        let d = Limits::for_dialect(dialect);
        for limits in [
            Limits {
                max_topic_bytes: 0,
                ..d
            },
            Limits { max_levels: 0, ..d },
        ] {
            let err = Engine::new(dialect, Algorithm::Naive, limits)
                .err()
                .expect("rejected");
            assert!(matches!(err, Error::InvalidArgument(_)));
        }
    }
}

#[test]
fn a_snapshot_at_the_end_of_the_id_space_refuses_instead_of_wrapping() {
    let amqp = config(Dialect::Amqp, Limits::for_dialect(Dialect::Amqp));
    for &algorithm in Algorithm::ALL {
        let held = [Subscription {
            id: 7,
            pattern: "a".into(),
            subscriber: Subscriber::Int(1),
        }];
        let e = Engine::restore_config(algorithm, amqp, &held, &[], u64::MAX).unwrap();
        let before = state(&e);
        let err = e.subscribe("b", &Subscriber::Int(2)).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
        assert_eq!(state(&e), before);
        let last = [Subscription {
            id: u64::MAX,
            ..held[0].clone()
        }];
        assert!(Engine::restore_config(algorithm, amqp, &last, &[], 1).is_err());
    }
}

#[test]
fn a_bad_snapshot_never_loads_partly() {
    let limits = Limits::for_dialect(Dialect::Mqtt);
    let sub = |id, pattern: &str, s: i64| Subscription {
        id,
        pattern: pattern.into(),
        subscriber: Subscriber::Int(s),
    };
    let bad: [&[Subscription]; 4] = [
        &[sub(1, "a/b", 1), sub(2, "a/#/b", 1)],
        &[sub(1, "a/b", 1), sub(1, "a/c", 1)],
        &[sub(1, "a/b", 1), sub(2, "a/b", 1)],
        &[sub(1, "a/b", 1), sub(2, "\0", 1)],
    ];
    for &algorithm in Algorithm::ALL {
        for subs in bad {
            let err =
                Engine::restore_config(algorithm, config(Dialect::Mqtt, limits), subs, &[], 3)
                    .err()
                    .expect("rejected");
            assert!(
                matches!(
                    err,
                    Error::InvalidPattern { .. } | Error::InvalidArgument(_)
                ),
                "{err}"
            );
        }
        let capped = Limits {
            max_subscriptions: 1,
            ..limits
        };
        let two = [sub(1, "a/b", 1), sub(2, "a/c", 1)];
        let err = Engine::restore_config(algorithm, config(Dialect::Mqtt, capped), &two, &[], 3)
            .err()
            .expect("over the cap");
        assert!(matches!(err, Error::LimitExceeded { .. }));
        // One subscription given two where= filters.
        let filter = |v: i64| {
            Arc::new(Filter::new(vec![("x".into(), Criterion::Eq(v.into()))], Mode::All).unwrap())
        };
        let err = Engine::restore_config(
            algorithm,
            config(Dialect::Mqtt, limits),
            &two,
            &[(1, filter(1)), (1, filter(2))],
            3,
        )
        .err()
        .expect("two filters for one id");
        assert!(err.to_string().contains("two filters"), "{err}");
    }
}

fn int(n: usize) -> Subscriber {
    Subscriber::Int(i64::try_from(n).expect("small"))
}
