//! Pivoted "all" subscriptions: whichever criterion becomes the pivot, lookups agree with the
//! direct evaluation of every filter, through removals that free fields and values (and reuse
//! their ids) and the compaction of the verified criteria.

use topicmatch_core::fields::{Criterion, FieldMatcher, Filter, Message, Mode, Value};
use topicmatch_core::Subscriber;

fn filter(criteria: Vec<(&str, Criterion)>, mode: Mode) -> Filter {
    Filter::new(
        criteria.into_iter().map(|(f, c)| (f.into(), c)).collect(),
        mode,
    )
    .unwrap()
}

fn eq(v: impl Into<Value>) -> Criterion {
    Criterion::Eq(v.into())
}

/// Checks `fm.lookup` and `fm.hits` against each held filter's own evaluation.
fn agree(fm: &FieldMatcher, held: &[(Filter, i64)], message: &Message) {
    let mut want: Vec<Subscriber> = held
        .iter()
        .filter(|(f, _)| f.matches(message))
        .map(|(_, s)| Subscriber::Int(*s))
        .collect();
    want.sort();
    want.dedup();
    let mut got = fm.lookup(message);
    got.sort();
    assert_eq!(got, want, "matches of {message:?}");
    let mut want_hits: Vec<(Subscriber, usize)> = Vec::new();
    for (f, s) in held {
        let n = f.hits(message);
        if n > 0 {
            want_hits.push((Subscriber::Int(*s), n));
        }
    }
    want_hits.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    want_hits.dedup_by(|a, b| a.0 == b.0);
    let mut got_hits = fm.hits(message);
    got_hits.sort();
    assert_eq!(got_hits, want_hits, "hits of {message:?}");
}

#[test]
fn several_criteria_on_one_field_and_every_kind_are_verified() {
    let fm = FieldMatcher::new();
    let held = vec![
        // A range: two comparisons on one field, whichever is the pivot.
        (
            filter(
                vec![
                    ("price", Criterion::Gt(Value::from(10))),
                    ("price", Criterion::Lt(Value::from(20))),
                ],
                Mode::All,
            ),
            1,
        ),
        (
            filter(
                vec![
                    ("currency", Criterion::In(vec!["USD".into(), "GBP".into()])),
                    ("urgent", Criterion::Present),
                    ("qty", Criterion::Le(Value::from(5))),
                ],
                Mode::All,
            ),
            2,
        ),
        (
            filter(
                vec![("currency", eq("USD")), ("urgent", eq(true))],
                Mode::All,
            ),
            3,
        ),
        (filter(vec![("currency", eq("USD"))], Mode::All), 4),
    ];
    for (f, s) in &held {
        fm.subscribe(f, &Subscriber::Int(*s)).unwrap();
    }
    let messages = [
        Message::new().with("price", 15),
        Message::new().with("price", 25),
        Message::new().with("price", 10),
        Message::new()
            .with("currency", "GBP")
            .with_opaque("urgent")
            .with("qty", 5),
        Message::new()
            .with("currency", "USD")
            .with("urgent", true)
            .with("qty", 6),
        Message::new().with("currency", "USD").with("urgent", 1),
        Message::new().with("currency", "EUR").with("urgent", true),
        Message::new().with("qty", 1).with("urgent", true),
    ];
    for m in &messages {
        agree(&fm, &held, m);
    }
}

#[test]
fn churn_reuses_ids_and_compacts_checks() {
    let fm = FieldMatcher::new();
    let mut held: Vec<(Filter, i64, u64)> = Vec::new();
    // Rounds of subscriptions whose fields and values change each round, each round first
    // removing the previous one: fields and values come and go, their ids are reused, and
    // thousands of verified criteria die, so their array is compacted.
    for round in 0..4i64 {
        let field = |i: i64| format!("r{}f{}", round % 2, i % 7);
        let value = |i: i64| Value::from((i * 31 + round) % 11);
        for (_, _, id) in held.drain(..) {
            assert!(fm.unsubscribe(id));
        }
        for i in 0..1500i64 {
            let criteria = vec![
                (field(i), eq(value(i))),
                (field(i + 1), Criterion::Ge(value(i + 2))),
                (field(i + 3), Criterion::In(vec![value(i), value(i + 5)])),
            ];
            let f = Filter::new(
                criteria.into_iter().map(|(f, c)| (f.into(), c)).collect(),
                Mode::All,
            )
            .unwrap();
            let id = fm.subscribe(&f, &Subscriber::Int(i % 900)).unwrap();
            held.push((f, i % 900, id));
        }
        let current: Vec<(Filter, i64)> = held.iter().map(|(f, s, _)| (f.clone(), *s)).collect();
        for k in 0..20i64 {
            let mut m = Message::new();
            for i in 0..7 {
                m.set(&field(i), Some(value(k * 3 + i)));
            }
            agree(&fm, &current, &m);
        }
    }
}
