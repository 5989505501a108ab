//! The engine's bookkeeping under threads: subscribes and unsubscribes of different pairs run in
//! parallel (the table is sharded), so idempotency, the subscription limit, unique ids and the
//! agreement between the table and the algorithm must hold when they race.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;

use common::{engine, sorted};
use topicmatch_core::fields::{Criterion, Filter, Message, Mode, Value};
use topicmatch_core::{Algorithm, Dialect, Engine, Error, Limit, Limits, Subscriber};

const THREADS: usize = 8;

/// Runs `f(thread)` on [`THREADS`] threads released together; their results in thread order.
fn race<R: Send>(f: impl Fn(usize) -> R + Sync) -> Vec<R> {
    let barrier = Barrier::new(THREADS);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (f, barrier) = (&f, &barrier);
                s.spawn(move || {
                    barrier.wait();
                    f(t)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// The rows of a batch lookup: topic `i`'s subscribers are `ids[ends[i - 1]..ends[i]]`.
fn batch_rows<'a, T>(ids: &'a [T], ends: &'a [usize]) -> impl Iterator<Item = &'a [T]> + 'a {
    ends.iter().scan(0, move |from, &end| {
        let row = &ids[*from..end];
        *from = end;
        Some(row)
    })
}

/// The table and the algorithm agree: every held subscription is found by its pattern's own
/// topic, and nothing else is.
fn assert_consistent(m: &Engine, algorithm: Algorithm) {
    let held = m.subscriptions();
    assert_eq!(m.len(), held.len(), "{algorithm:?}");
    let mut by_topic: BTreeMap<&str, Vec<Subscriber>> = BTreeMap::new();
    for s in &held {
        by_topic
            .entry(&s.pattern)
            .or_default()
            .push(s.subscriber.clone());
    }
    for (topic, subs) in by_topic {
        let mut want = sorted(subs);
        want.dedup();
        assert_eq!(
            sorted(m.lookup(topic).unwrap()),
            want,
            "{algorithm:?} {topic}"
        );
    }
}

#[test]
fn racing_subscribes_of_one_pair_get_one_id() {
    for &algorithm in Algorithm::ALL {
        let m = engine(Dialect::Amqp, algorithm);
        for round in 0..20 {
            let pattern = format!("a.{round}.#");
            let ids = race(|_| m.subscribe(&pattern, &Subscriber::from("alice")).unwrap());
            assert!(
                ids.windows(2).all(|w| w[0] == w[1]),
                "{algorithm:?} {ids:?}"
            );
        }
        assert_eq!(m.len(), 20, "{algorithm:?}");
        assert_eq!(m.lookup("a.7.x").unwrap(), vec![Subscriber::from("alice")]);
        assert_consistent(&m, algorithm);
    }
}

#[test]
fn racing_unsubscribes_of_one_id_report_it_once() {
    for &algorithm in Algorithm::ALL {
        let m = engine(Dialect::Mqtt, algorithm);
        for round in 0..20 {
            let id = m
                .subscribe(&format!("s/{round}/+"), &Subscriber::Int(7))
                .unwrap();
            let removed = race(|_| m.unsubscribe(id));
            assert_eq!(removed.iter().filter(|&&r| r).count(), 1, "{algorithm:?}");
        }
        assert!(m.is_empty(), "{algorithm:?}");
        assert!(m.lookup("s/3/x").unwrap().is_empty(), "{algorithm:?}");
    }
}

#[test]
fn the_subscription_limit_holds_when_subscribes_race() {
    const MAX: usize = 50;
    for &algorithm in Algorithm::ALL {
        let limits = Limits {
            max_subscriptions: MAX,
            ..Limits::for_dialect(Dialect::Nats)
        };
        let m = Engine::new(Dialect::Nats, algorithm, limits).unwrap();
        let outcomes = race(|t| {
            (0..20)
                .map(|k| {
                    m.subscribe(
                        &format!("t{t}.k{k}"),
                        &Subscriber::Int(i64::try_from(t).unwrap()),
                    )
                })
                .collect::<Vec<_>>()
        });
        let all: Vec<_> = outcomes.into_iter().flatten().collect();
        let ids: BTreeSet<u64> = all
            .iter()
            .filter_map(|r| r.as_ref().ok().copied())
            .collect();
        assert_eq!(
            ids.len(),
            MAX,
            "{algorithm:?}: ids are unique and exactly MAX were taken"
        );
        for err in all.iter().filter_map(|r| r.as_ref().err()) {
            assert!(
                matches!(
                    err,
                    Error::LimitExceeded {
                        limit: Limit::Subscriptions,
                        ..
                    }
                ),
                "{algorithm:?}: {err}"
            );
        }
        assert_eq!(m.len(), MAX, "{algorithm:?}");
        assert_consistent(&m, algorithm);
    }
}

/// Threads churn their own pairs and a few shared ones (same pattern and subscriber on every
/// thread); the end state equals what a replay of the surviving pairs gives.
#[test]
fn churn_from_many_threads_leaves_the_table_and_algorithm_in_agreement() {
    for &algorithm in Algorithm::ALL {
        let m = engine(Dialect::Amqp, algorithm);
        let kept = race(|t| {
            let mut kept = Vec::new();
            for k in 0..150 {
                let own = format!("own.{t}.{}.*", k % 40);
                let id = m
                    .subscribe(&own, &Subscriber::Int(i64::try_from(t).unwrap()))
                    .unwrap();
                let shared = format!("shared.{}.#", k % 5);
                let sid = m.subscribe(&shared, &Subscriber::from("everyone")).unwrap();
                if k % 3 == 0 {
                    // Another thread may have removed the shared pair first.
                    m.unsubscribe(sid);
                }
                if k % 2 == 0 {
                    assert!(
                        m.unsubscribe(id),
                        "{algorithm:?}: only this thread holds {own}"
                    );
                } else {
                    kept.push((own, t));
                }
            }
            kept
        });
        let own: BTreeSet<(String, usize)> = kept.into_iter().flatten().collect();
        let held: BTreeSet<(String, String)> = m
            .subscriptions()
            .iter()
            .map(|s| (s.pattern.to_string(), format!("{:?}", s.subscriber)))
            .collect();
        let held_own: BTreeSet<(String, usize)> = held
            .iter()
            .filter(|(p, _)| p.starts_with("own."))
            .map(|(p, _)| (p.clone(), p.split('.').nth(1).unwrap().parse().unwrap()))
            .collect();
        assert_eq!(held_own, own, "{algorithm:?}");
        assert_consistent(&m, algorithm);
        for s in m.subscriptions() {
            assert!(m.unsubscribe(s.id));
        }
        assert!(m.is_empty(), "{algorithm:?}");
        assert!(m.lookup("shared.1.x").unwrap().is_empty(), "{algorithm:?}");
        assert!(m.lookup("own.1.2.x").unwrap().is_empty(), "{algorithm:?}");
    }
}

/// Lookups skip de-duplication while every subscriber holds one pattern: while other threads
/// give subscribers a second matching pattern and take it away again, every batch row and
/// every one-topic lookup still holds each subscriber exactly once.
#[test]
fn rows_stay_distinct_while_subscribers_gain_and_lose_a_second_pattern() {
    const SUBSCRIBERS: i64 = 40;
    const ROUNDS: usize = 300;
    for &algorithm in Algorithm::ALL {
        let m = engine(Dialect::Mqtt, algorithm);
        for s in 0..SUBSCRIBERS {
            m.subscribe(&format!("t/{s}/#"), &Subscriber::Int(s))
                .unwrap();
            m.subscribe("t/#", &Subscriber::Int(1000 + s)).unwrap();
        }
        let topics: Vec<String> = (0..SUBSCRIBERS).map(|s| format!("t/{s}/x")).collect();
        let topics: Vec<&str> = topics.iter().map(String::as_str).collect();
        race(|t| {
            if t % 2 == 0 {
                // A writer: subscriber s also takes `t/+/x` (matching its own topic), then
                // lets it go.
                for round in 0..ROUNDS {
                    let turn = i64::try_from(t * ROUNDS + round).expect("a small count");
                    let s = Subscriber::Int(turn % SUBSCRIBERS);
                    let id = m.subscribe("t/+/x", &s).unwrap();
                    m.unsubscribe(id);
                }
            } else {
                let (mut ids, mut ends) = (Vec::new(), Vec::new());
                for _ in 0..ROUNDS {
                    ids.clear();
                    ends.clear();
                    m.lookup_batch_into(&topics, &mut ids, &mut ends).unwrap();
                    for (topic, row) in topics.iter().zip(batch_rows(&ids, &ends)) {
                        let distinct: BTreeSet<_> = row.iter().collect();
                        assert_eq!(distinct.len(), row.len(), "{algorithm:?} {topic}: {row:?}");
                        // Its own subscriber, every `t/#` one, and at most the writers' extras
                        // (which are subscribers already there).
                        assert!(row.len() > SUBSCRIBERS as usize, "{algorithm:?}: {row:?}");
                    }
                    // The one-topic path skips de-duplication under the same rule.
                    for topic in &topics {
                        ids.clear();
                        m.lookup_into(topic, &mut ids).unwrap();
                        let distinct: BTreeSet<_> = ids.iter().collect();
                        assert_eq!(distinct.len(), ids.len(), "{algorithm:?} {topic}: {ids:?}");
                    }
                }
            }
        });
        assert_eq!(m.len(), 2 * SUBSCRIBERS as usize, "{algorithm:?}");
    }
}

/// One thread subscribes and unsubscribes (subscriber, pattern) pairs at random, so each
/// subscriber leaves altogether and comes back again and again, while readers look up batches
/// and resolve them under their pin: a lookup that found a subscriber under a pattern it held
/// before it left and one it took after it came back finds one id (it came back under the id
/// it left), so every row holds each subscriber value once.
#[test]
fn rows_stay_distinct_while_subscribers_leave_and_come_back() {
    const CHANGES: usize = 60_000;
    const READERS: usize = 3;
    for &algorithm in Algorithm::ALL {
        let m = engine(Dialect::Amqp, algorithm);
        for k in 0..4 {
            let keep = Subscriber::from(format!("keep{k}").as_str());
            m.subscribe(&format!("k.{k}.#"), &keep).unwrap();
        }
        let comers = [
            Subscriber::from("a"),
            Subscriber::from("b"),
            Subscriber::Int(1 << 40),
            Subscriber::Int((1 << 40) + 1),
        ];
        let patterns = ["k.*.x", "k.#", "#.x", "k.1.x"];
        let probes = ["k.0.x", "k.1.x", "k.2.y", "k.3"];
        let done = AtomicBool::new(false);
        std::thread::scope(|s| {
            for _ in 0..READERS {
                s.spawn(|| {
                    let (mut ids, mut ends) = (Vec::new(), Vec::new());
                    while !done.load(Ordering::Relaxed) {
                        // Pinned from the lookup to the resolution, as the binding is.
                        let _pinned = crossbeam_epoch::pin();
                        ids.clear();
                        ends.clear();
                        m.lookup_batch_into(&probes, &mut ids, &mut ends).unwrap();
                        for (topic, ids) in probes.iter().zip(batch_rows(&ids, &ends)) {
                            let row = m.resolve(ids);
                            let distinct: BTreeSet<_> = row.iter().collect();
                            assert_eq!(distinct.len(), row.len(), "{algorithm:?} {topic}: {row:?}");
                        }
                    }
                });
            }
            let mut held: BTreeMap<(usize, usize), u64> = BTreeMap::new();
            let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
            for _ in 0..CHANGES {
                // xorshift64: a pair at random.
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let pair = ((x % 4) as usize, ((x >> 8) % 4) as usize);
                if let Some(id) = held.remove(&pair) {
                    assert!(m.unsubscribe(id));
                } else {
                    let id = m.subscribe(patterns[pair.1], &comers[pair.0]).unwrap();
                    held.insert(pair, id);
                }
            }
            done.store(true, Ordering::Relaxed);
        });
    }
}

/// Threads subscribing and unsubscribing filtered subscriptions on three shared patterns:
/// each pattern's bucket is made, grows past the size from which it is indexed, shrinks and
/// empties while the others look up. A thread's own subscription is found by its next lookup,
/// no row holds a subscriber twice, and once all are removed the algorithm holds nothing.
#[test]
fn filtered_subscriptions_churned_on_shared_patterns_stay_found() {
    for &algorithm in Algorithm::ALL {
        let m = engine(Dialect::Amqp, algorithm);
        let kept = race(|t| {
            let t = i64::try_from(t).unwrap();
            let mut kept = Vec::new();
            for k in 0..200i64 {
                let pattern = format!("f.{}.#", k % 3);
                let subscriber = Subscriber::Int(t * 1000 + k % 50);
                let n = k % 7;
                let filter =
                    Filter::new(vec![("n".into(), Criterion::Eq(Value::from(n)))], Mode::All)
                        .unwrap();
                let id = m.subscribe_where(&pattern, &subscriber, &filter).unwrap();
                let topic = format!("f.{}.x", k % 3);
                let mut found = Vec::new();
                m.lookup_fields_into(&topic, &Message::new().with("n", n), &mut found)
                    .unwrap();
                let found = m.resolve(&found);
                assert!(found.contains(&subscriber), "{algorithm:?}: own {pattern}");
                let mut distinct = found.clone();
                distinct.sort();
                distinct.dedup();
                assert_eq!(distinct.len(), found.len(), "{algorithm:?}: {found:?}");
                if k % 3 == 1 {
                    kept.push((id, topic, n, subscriber));
                } else {
                    assert!(
                        m.unsubscribe(id),
                        "{algorithm:?}: only this thread holds {id}"
                    );
                }
            }
            kept
        });
        let kept: Vec<_> = kept.into_iter().flatten().collect();
        assert_eq!(m.len(), kept.len(), "{algorithm:?}");
        for (_, topic, n, subscriber) in &kept {
            let mut found = Vec::new();
            m.lookup_fields_into(topic, &Message::new().with("n", *n), &mut found)
                .unwrap();
            assert!(m.resolve(&found).contains(subscriber), "{algorithm:?}");
        }
        for (id, ..) in &kept {
            assert!(m.unsubscribe(*id));
        }
        assert!(m.is_empty(), "{algorithm:?}");
        for k in 0..3 {
            assert!(m.intersecting("#").unwrap().is_empty(), "{algorithm:?}");
            let mut found = Vec::new();
            m.lookup_fields_into(
                &format!("f.{k}.x"),
                &Message::new().with("n", 1),
                &mut found,
            )
            .unwrap();
            assert!(found.is_empty(), "{algorithm:?}: {found:?}");
        }
    }
}
