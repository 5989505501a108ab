//! Content matching: the worked example of "Fast topic matching", every criterion and mode,
//! errors, ids, slot reuse, snapshots and `where=` on topic subscriptions.

mod common;

use std::sync::Arc;

use common::{config, engine, sorted};
use topicmatch_core::fields::{
    Criterion, FieldMatcher, FieldSubscription, Filter, Message, Mode, Value, MAX_CRITERIA,
};
use topicmatch_core::{Algorithm, Dialect, Engine, Error, Limits, Subscriber};

fn filter(criteria: &[(&str, Criterion)], mode: Mode) -> Filter {
    Filter::new(
        criteria
            .iter()
            .map(|(f, c)| ((*f).into(), c.clone()))
            .collect(),
        mode,
    )
    .unwrap()
}

fn eq(v: impl Into<Value>) -> Criterion {
    Criterion::Eq(v.into())
}

fn num(v: f64) -> Value {
    Value::float(v).unwrap()
}

fn s(name: &str) -> Subscriber {
    Subscriber::from(name)
}

/// The "Field Matching Example" of "Fast topic matching" (and "High-speed message matching"):
/// subscriptions 0..3 in `mode`.
fn seed_matcher(mode: Mode) -> FieldMatcher {
    let fm = FieldMatcher::new();
    let subs: [&[(&str, Criterion)]; 4] = [
        &[("currency", eq("USD")), ("urgent", Criterion::Present)],
        &[("currency", eq("EUR"))],
        &[("market", eq("forex")), ("currency", eq("EUR"))],
        &[("urgent", Criterion::Present)],
    ];
    for (i, criteria) in subs.iter().enumerate() {
        fm.subscribe(&filter(criteria, mode), &s(&i.to_string()))
            .unwrap();
    }
    fm
}

fn seed_messages() -> [Message; 3] {
    [
        Message::new()
            .with("currency", "JPY")
            .with("market", "forex")
            .with_opaque("slow"),
        Message::new().with("currency", "JPY").with_opaque("urgent"),
        Message::new()
            .with("market", "forex")
            .with("currency", "EUR"),
    ]
}

fn names(subs: Vec<Subscriber>) -> Vec<Subscriber> {
    sorted(subs)
}

#[test]
fn seed_worked_example_hits_and_results() {
    let and = seed_matcher(Mode::All);
    let or = seed_matcher(Mode::Any);
    let [a, b, c] = seed_messages();
    // The example's "Hits" rows, zeros left out.
    assert_eq!(and.hits(&a), vec![(s("2"), 1)]);
    assert_eq!(and.hits(&b), vec![(s("0"), 1), (s("3"), 1)]);
    assert_eq!(and.hits(&c), vec![(s("1"), 1), (s("2"), 2)]);
    assert_eq!(or.hits(&c), and.hits(&c));
    // Hit count equal to the criteria count: AND.
    assert!(and.lookup(&a).is_empty());
    assert_eq!(names(and.lookup(&b)), vec![s("3")]);
    assert_eq!(names(and.lookup(&c)), vec![s("1"), s("2")]);
    // Hit count of at least one: OR.
    assert_eq!(names(or.lookup(&a)), vec![s("2")]);
    assert_eq!(names(or.lookup(&b)), vec![s("0"), s("3")]);
    assert_eq!(names(or.lookup(&c)), vec![s("1"), s("2")]);
}

#[test]
fn every_criterion_kind() {
    let fm = FieldMatcher::new();
    let cases: Vec<(&str, Criterion)> = vec![
        ("eq", eq("USD")),
        ("in", Criterion::In(vec!["USD".into(), "GBP".into()])),
        ("present", Criterion::Present),
        ("lt", Criterion::Lt(100.into())),
        ("le", Criterion::Le(100.into())),
        ("gt", Criterion::Gt(num(99.5))),
        ("ge", Criterion::Ge(100.into())),
    ];
    for (name, c) in &cases {
        fm.subscribe(&filter(&[("x", c.clone())], Mode::All), &s(name))
            .unwrap();
    }
    let check = |value: Option<Value>, want: &[&str]| {
        let mut m = Message::new();
        m.set("x", value.clone());
        let got = names(fm.lookup(&m));
        let want = names(want.iter().map(|n| s(n)).collect());
        assert_eq!(got, want, "x = {value:?}");
    };
    check(Some("USD".into()), &["eq", "in", "present"]);
    check(Some("GBP".into()), &["in", "present"]);
    check(Some(100.into()), &["present", "le", "gt", "ge"]);
    check(Some(num(100.0)), &["present", "le", "gt", "ge"]);
    check(Some(num(99.75)), &["present", "lt", "le", "gt"]);
    check(Some(99.into()), &["present", "lt", "le"]);
    check(Some(101.into()), &["present", "gt", "ge"]);
    check(Some(true.into()), &["present"]);
    check(None, &["present"]);
    assert!(fm.lookup(&Message::new().with("y", 100)).is_empty());
}

#[test]
fn numbers_are_exact_and_bools_are_not_numbers() {
    let fm = FieldMatcher::new();
    fm.subscribe(&filter(&[("n", eq(1))], Mode::All), &s("one"))
        .unwrap();
    fm.subscribe(&filter(&[("n", eq(true))], Mode::All), &s("true"))
        .unwrap();
    fm.subscribe(&filter(&[("n", eq("1"))], Mode::All), &s("str"))
        .unwrap();
    let two53 = 1_i64 << 53;
    fm.subscribe(
        &filter(
            &[("big", Criterion::Gt(num(9.007_199_254_740_992e15)))],
            Mode::All,
        ),
        &s("big"),
    )
    .unwrap();
    assert_eq!(
        fm.lookup(&Message::new().with("n", num(1.0))),
        vec![s("one")]
    );
    assert_eq!(fm.lookup(&Message::new().with("n", 1)), vec![s("one")]);
    assert_eq!(fm.lookup(&Message::new().with("n", true)), vec![s("true")]);
    assert_eq!(fm.lookup(&Message::new().with("n", "1")), vec![s("str")]);
    assert!(fm.lookup(&Message::new().with("n", false)).is_empty());
    assert_eq!(
        fm.lookup(&Message::new().with("big", two53 + 1)),
        vec![s("big")]
    );
    assert!(fm.lookup(&Message::new().with("big", two53)).is_empty());
    assert!(fm.lookup(&Message::new().with("big", true)).is_empty());
}

#[test]
fn at_least_k_and_mode_normalisation() {
    let fm = FieldMatcher::new();
    let abc = [("a", eq(1)), ("b", eq(2)), ("c", eq(3))];
    let id = fm
        .subscribe(&filter(&abc, Mode::AtLeast(2)), &s("dave"))
        .unwrap();
    let m1 = Message::new().with("a", 1).with("b", 0).with("c", 3);
    assert_eq!(fm.lookup(&m1), vec![s("dave")]);
    assert!(fm.lookup(&Message::new().with("a", 1)).is_empty());
    assert_eq!(fm.hits(&Message::new().with("a", 1)), vec![(s("dave"), 1)]);
    // Same threshold, same subscription.
    assert_eq!(filter(&abc, Mode::AtLeast(3)), filter(&abc, Mode::All));
    assert_eq!(filter(&abc, Mode::AtLeast(1)), filter(&abc, Mode::Any));
    assert_eq!(filter(&abc[..1], Mode::Any).mode(), Mode::All);
    let reordered = [abc[2].clone(), abc[0].clone(), abc[1].clone()];
    assert_eq!(
        fm.subscribe(&filter(&reordered, Mode::AtLeast(2)), &s("dave"))
            .unwrap(),
        id
    );
    assert_eq!(fm.len(), 1);
}

#[test]
fn criteria_errors_are_clear() {
    let bad = |criteria: Vec<(Box<str>, Criterion)>, mode: Mode, needle: &str| {
        let err = Filter::new(criteria, mode).unwrap_err();
        assert!(matches!(err, Error::InvalidCriteria(_)), "{err:?}");
        let text = err.to_string();
        assert!(text.contains(needle), "{text:?} lacks {needle:?}");
    };
    let one = || vec![("a".into(), eq(1)), ("b".into(), eq(2))];
    bad(one(), Mode::AtLeast(3), "between 1 and 2");
    bad(one(), Mode::AtLeast(0), "between 1 and 2");
    bad(vec![], Mode::All, "at least one field");
    bad(
        vec![("p".into(), Criterion::Gt("x".into()))],
        Mode::All,
        "needs a number",
    );
    bad(
        vec![("p".into(), Criterion::Le(true.into()))],
        Mode::All,
        "needs a number",
    );
    bad(
        vec![("p".into(), Criterion::In(vec![]))],
        Mode::All,
        "at least one value",
    );
    let many = (0..=MAX_CRITERIA)
        .map(|_| ("p".into(), Criterion::Present))
        .collect();
    bad(many, Mode::Any, "at most 65534");
    assert!(Value::float(f64::NAN)
        .unwrap_err()
        .to_string()
        .contains("NaN"));
    assert!(Mode::parse("some")
        .unwrap_err()
        .to_string()
        .contains("unknown mode"));
    assert_eq!(Mode::parse("any").unwrap(), Mode::Any);
}

#[test]
fn ids_unsubscribe_and_slot_reuse() {
    let fm = FieldMatcher::new();
    let f1 = filter(&[("a", eq(1))], Mode::All);
    let f2 = filter(
        &[("a", Criterion::Ge(0.into())), ("b", Criterion::Present)],
        Mode::Any,
    );
    let x = fm.subscribe(&f1, &s("x")).unwrap();
    assert_eq!(fm.subscribe(&f1, &s("x")).unwrap(), x);
    let y = fm.subscribe(&f1, &s("y")).unwrap();
    let z = fm.subscribe(&f2, &s("x")).unwrap();
    assert_eq!(fm.len(), 3);
    let m = Message::new().with("a", 1);
    assert_eq!(names(fm.lookup(&m)), vec![s("x"), s("y")]);
    assert_eq!(fm.hits(&m), vec![(s("x"), 1), (s("y"), 1)]);
    assert!(fm.unsubscribe(x));
    assert!(!fm.unsubscribe(x));
    assert_eq!(names(fm.lookup(&m)), vec![s("x"), s("y")]);
    assert!(fm.unsubscribe(z));
    assert_eq!(fm.lookup(&m), vec![s("y")]);
    // Freed slots are reused, ids are not.
    let w = fm
        .subscribe(
            &filter(&[("c", Criterion::Lt(5.into()))], Mode::All),
            &s("w"),
        )
        .unwrap();
    assert!(w > z);
    assert_eq!(fm.lookup(&Message::new().with("c", 4)), vec![s("w")]);
    assert!(fm.lookup(&Message::new().with("b", 4)).is_empty());
    assert!(fm.unsubscribe(y) && fm.unsubscribe(w));
    assert!(fm.is_empty());
    assert!(fm.lookup(&m).is_empty());
}

#[test]
fn snapshot_restores_ids_filters_and_subscribers() {
    let fm = seed_matcher(Mode::Any);
    fm.unsubscribe(2);
    let snap = fm.subscriptions();
    let back = FieldMatcher::restore(&snap, fm.next_id()).unwrap();
    assert_eq!(back.subscriptions(), snap);
    for m in seed_messages() {
        assert_eq!(back.hits(&m), fm.hits(&m));
    }
    assert!(
        back.subscribe(&filter(&[("q", eq(1))], Mode::All), &s("q"))
            .unwrap()
            >= fm.next_id()
    );
    let mut clash = snap.clone();
    clash.push(FieldSubscription {
        id: 99,
        ..snap[0].clone()
    });
    assert!(FieldMatcher::restore(&clash, 0).is_err());
}

#[test]
fn ids_at_the_end_of_the_space_are_refused_not_wrapped() {
    let held = FieldSubscription {
        id: 1,
        filter: Arc::new(filter(&[("a", eq(1))], Mode::All)),
        subscriber: s("held"),
    };
    let fm = FieldMatcher::restore(std::slice::from_ref(&held), u64::MAX - 1).unwrap();
    let last = fm
        .subscribe(&filter(&[("b", eq(1))], Mode::All), &s("t"))
        .unwrap();
    assert_eq!(last, u64::MAX - 1);
    let refused = fm.subscribe(&filter(&[("c", eq(1))], Mode::All), &s("t"));
    assert!(matches!(refused, Err(Error::InvalidArgument(ref why)) if why.contains("exhausted")));
    // A pair already held still answers with its id; nothing else changed.
    assert_eq!(
        fm.subscribe(&filter(&[("b", eq(1))], Mode::All), &s("t"))
            .unwrap(),
        last
    );
    assert_eq!(fm.len(), 2);
    let ids: Vec<u64> = fm.subscriptions().iter().map(|s| s.id).collect();
    assert_eq!(ids, vec![1, u64::MAX - 1]);
    // No snapshot holds the last id, whose successor does not exist.
    let at_end = FieldSubscription {
        id: u64::MAX,
        ..held
    };
    assert!(FieldMatcher::restore(&[at_end], 0).is_err());
}

#[test]
fn concurrent_lookups_see_consistent_results() {
    let fm = Arc::new(seed_matcher(Mode::Any));
    let [_, _, c] = seed_messages();
    std::thread::scope(|scope| {
        for t in 0..4 {
            let fm = &fm;
            let c = &c;
            scope.spawn(move || {
                for i in 0..500 {
                    if t == 0 {
                        let id = fm
                            .subscribe(&filter(&[("k", eq(i))], Mode::All), &s("tmp"))
                            .unwrap();
                        assert!(fm.unsubscribe(id));
                    } else {
                        assert_eq!(names(fm.lookup(c)), vec![s("1"), s("2")]);
                    }
                }
            });
        }
    });
}

#[test]
fn a_message_built_from_distinct_names_reads_as_one_set_field_by_field() {
    let mut built = Message::with_capacity(3);
    built.push_new("currency", Some("EUR".into()));
    built.push_new("urgent", None);
    built.push_new("amount", Some(Value::from(5)));
    let set = Message::new()
        .with("currency", "EUR")
        .with_opaque("urgent")
        .with("amount", 5);
    assert_eq!(built, set);
    let fm = seed_matcher(Mode::Any);
    assert_eq!(names(fm.lookup(&built)), names(fm.lookup(&set)));
}

#[test]
fn a_long_batch_equals_one_by_one() {
    // More messages than one read of the lock covers, some matching nobody.
    let fm = FieldMatcher::new();
    for i in 0..40 {
        fm.subscribe(
            &filter(&[("k", Criterion::Gt(i.into()))], Mode::All),
            &Subscriber::Int(i),
        )
        .unwrap();
        fm.subscribe(&filter(&[("k", eq(i))], Mode::All), &Subscriber::Int(i % 7))
            .unwrap();
    }
    let messages: Vec<Message> = (0..300)
        .map(|i| Message::new().with("k", i % 50).with("x", i))
        .chain([Message::new(), Message::new().with("y", 1)])
        .collect();
    let (mut out, mut ends) = (Vec::new(), Vec::new());
    fm.lookup_batch_into(&messages, &mut out, &mut ends);
    assert_eq!(ends.len(), messages.len());
    let mut start = 0;
    for (message, &end) in messages.iter().zip(&ends) {
        let mut one = Vec::new();
        fm.lookup_into(message, &mut one);
        assert_eq!(&out[start..end], &one[..], "{message:?}");
        start = end;
    }
    assert!(
        out.len() > 1000,
        "the batch found {} subscribers",
        out.len()
    );
}

#[test]
fn subscribe_and_unsubscribe_report_subscribers_joining_and_leaving() {
    let fm = FieldMatcher::new();
    let (a, b) = (
        filter(&[("k", eq(1))], Mode::All),
        filter(&[("k", eq(2))], Mode::All),
    );
    let mut joined = Vec::new();
    let first = fm
        .subscribe_with(&a, &s("x"), &mut |id| joined.push(id))
        .unwrap();
    assert_eq!(joined.len(), 1, "a new subscriber joins");
    let x = joined[0];
    // The same pair again, and a second subscription of the same subscriber: no new id.
    assert_eq!(
        fm.subscribe_with(&a, &s("x"), &mut |id| joined.push(id))
            .unwrap(),
        first
    );
    let second = fm
        .subscribe_with(&b, &s("x"), &mut |id| joined.push(id))
        .unwrap();
    assert_eq!(joined, vec![x]);
    fm.subscribe_with(&a, &s("y"), &mut |id| joined.push(id))
        .unwrap();
    assert_eq!(joined.len(), 2);
    assert_ne!(joined[1], x);
    let mut left = Vec::new();
    assert!(fm.unsubscribe_with(first, &mut |id| left.push(id)));
    assert!(left.is_empty(), "x still holds a subscription");
    assert!(!fm.unsubscribe_with(first, &mut |id| left.push(id)));
    assert!(fm.unsubscribe_with(second, &mut |id| left.push(id)));
    assert_eq!(left, vec![x], "its last subscription gone, x leaves");
}

#[test]
fn dense_counting_agrees_with_sparse() {
    // Many subscriptions hit by one message switch the lookup to the dense pass.
    let fm = FieldMatcher::new();
    for i in 0..64 {
        let criteria = [("a", eq(1)), ("b", Criterion::Gt(i.into()))];
        fm.subscribe(&filter(&criteria, Mode::All), &Subscriber::Int(i))
            .unwrap();
    }
    let got = fm.lookup(&Message::new().with("a", 1).with("b", 10));
    assert_eq!(
        sorted(got),
        (0..10).map(Subscriber::Int).collect::<Vec<_>>()
    );
    let hits = fm.hits(&Message::new().with("a", 1).with("b", 10));
    assert_eq!(hits.len(), 64);
    assert!(hits
        .iter()
        .all(|(sub, n)| *n == if *sub < Subscriber::Int(10) { 2 } else { 1 }));
}

#[test]
fn where_filters_topic_subscriptions_in_every_algorithm() {
    for &algorithm in Algorithm::ALL {
        let m = engine(Dialect::Amqp, algorithm);
        let eur = filter(&[("currency", eq("EUR"))], Mode::All);
        let id = m.subscribe_where("forex.*", &s("eur-desk"), &eur).unwrap();
        assert_eq!(
            m.subscribe_where("forex.*", &s("eur-desk"), &eur).unwrap(),
            id
        );
        let plain = m.subscribe("forex.*", &s("eur-desk")).unwrap();
        assert_ne!(plain, id);
        m.subscribe_where(
            "#",
            &s("big"),
            &filter(&[("qty", Criterion::Gt(100.into()))], Mode::All),
        )
        .unwrap();
        assert_eq!(m.len(), 3);
        let eur_msg = Message::new().with("currency", "EUR").with("qty", 500);
        let mut out = Vec::new();
        m.lookup_fields_into("forex.spot", &eur_msg, &mut out)
            .unwrap();
        assert_eq!(out.len(), 2, "{algorithm}: eur-desk once, big once");
        assert!(m.unsubscribe(plain));
        let lookup = |topic: &str, fields: &Message| {
            let mut out = Vec::new();
            m.lookup_fields_into(topic, fields, &mut out).unwrap();
            names(m.resolve(&out))
        };
        assert_eq!(
            lookup("forex.spot", &eur_msg),
            vec![s("big"), s("eur-desk")]
        );
        assert_eq!(
            lookup("forex.spot", &Message::new().with("currency", "USD")),
            vec![]
        );
        assert_eq!(lookup("bond.x", &eur_msg), vec![s("big")]);
        assert!(
            m.lookup("forex.spot").unwrap().is_empty(),
            "no fields: no filter passes"
        );
        assert!(!m.matches_any("forex.spot").unwrap());
        assert!(m.matches_any_fields("forex.spot", &eur_msg).unwrap());
        assert!(m.lookup_fields_into("a..b", &eur_msg, &mut out).is_ok());
        // Snapshots keep filters and ids; the subscriber shows as itself.
        let subs = m.subscriptions();
        let shown: Vec<_> = subs.iter().map(|sub| sub.subscriber.clone()).collect();
        assert_eq!(shown, vec![s("eur-desk"), s("big")]);
        let same = config(m.dialect(), m.limits());
        let back =
            Engine::restore_config(algorithm, same, &subs, &m.filters(), m.next_id()).unwrap();
        assert_eq!(back.subscriptions(), subs);
        assert_eq!(back.filters(), m.filters());
        assert!(back.lookup("forex.spot").unwrap().is_empty());
        assert!(m.unsubscribe(id));
        assert_eq!(lookup("forex.spot", &eur_msg), vec![s("big")]);
        let orphan = vec![(12345, Arc::new(eur.clone()))];
        let amqp = config(Dialect::Amqp, Limits::for_dialect(Dialect::Amqp));
        assert!(Engine::restore_config(algorithm, amqp, &[], &orphan, 1).is_err());
    }
}

#[test]
fn where_respects_limits_and_pattern_errors() {
    let limits = Limits {
        max_subscriptions: 1,
        ..Limits::for_dialect(Dialect::Mqtt)
    };
    let m = Engine::new(Dialect::Mqtt, Algorithm::Trie, limits).unwrap();
    let f = filter(&[("a", Criterion::Present)], Mode::All);
    assert!(matches!(
        m.subscribe_where("a/#/b", &s("x"), &f),
        Err(Error::InvalidPattern { .. })
    ));
    m.subscribe_where("a/#", &s("x"), &f).unwrap();
    assert!(matches!(
        m.subscribe_where("b/#", &s("x"), &f),
        Err(Error::LimitExceeded { .. })
    ));
    assert_eq!(m.len(), 1);
}

#[test]
fn where_subscriptions_refuse_an_exhausted_id_space() {
    let limits = Limits::for_dialect(Dialect::Amqp);
    for &algorithm in Algorithm::ALL {
        let m =
            Engine::restore_config(algorithm, config(Dialect::Amqp, limits), &[], &[], u64::MAX)
                .unwrap();
        let eur = filter(&[("currency", eq("EUR"))], Mode::All);
        let err = m
            .subscribe_where("forex.*", &s("eur-desk"), &eur)
            .unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
        assert_eq!(m.len(), 0);
    }
}

/// The batch lookup resolves `where` subscriptions like the per-topic one (messages without
/// fields: criteria needing a field fail, the plain subscription still counts).
#[test]
fn batch_lookup_resolves_where_subscriptions() {
    for &algorithm in Algorithm::ALL {
        let m = engine(Dialect::Amqp, algorithm);
        let eur = filter(&[("currency", eq("EUR"))], Mode::All);
        m.subscribe_where("forex.*", &s("eur-desk"), &eur).unwrap();
        m.subscribe("forex.#", &s("all")).unwrap();
        let (mut out, mut ends) = (Vec::new(), Vec::new());
        m.lookup_batch_into(&["forex.spot", "bonds"], &mut out, &mut ends)
            .unwrap();
        assert_eq!(ends, vec![1, 1], "{algorithm:?}");
        assert_eq!(m.resolve(&out), vec![s("all")]);
        // With each topic's message: the filtered subscription where its criteria are met.
        let (mut out, mut ends) = (Vec::new(), Vec::new());
        let messages = [
            Message::new().with("currency", "EUR"),
            Message::new().with("currency", "USD"),
            Message::new().with("currency", "EUR"),
        ];
        m.lookup_batch_fields_into(
            &["forex.spot", "forex.spot", "bonds"],
            &messages,
            &mut out,
            &mut ends,
        )
        .unwrap();
        assert_eq!(ends, vec![2, 3, 3], "{algorithm:?}");
        assert_eq!(names(m.resolve(&out[..2])), vec![s("all"), s("eur-desk")]);
        assert_eq!(m.resolve(&out[2..]), vec![s("all")]);
        // A topic over the limit: the rows before it, and its error.
        let (mut out, mut ends) = (Vec::new(), Vec::new());
        let long = "x".repeat(Limits::for_dialect(Dialect::Amqp).max_topic_bytes + 1);
        let err = m
            .lookup_batch_fields_into(&["forex.spot", &long], &messages[..2], &mut out, &mut ends)
            .unwrap_err();
        assert!(matches!(err, Error::LimitExceeded { .. }), "{err:?}");
        assert_eq!(ends, vec![2], "{algorithm:?}");
        // As many messages as topics, or nothing.
        let err = m
            .lookup_batch_fields_into(&["bonds"], &messages, &mut out, &mut ends)
            .unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err:?}");
        assert_eq!(ends, vec![2], "nothing pushed");
    }
}

/// A topic whose matches hold many filtered subscriptions (more than are resolved together),
/// with plain subscriptions between them, subscribers holding several, and some removed: each
/// topic's lookup, one at a time and in a batch, is what evaluating every held subscription
/// directly gives.
#[test]
fn many_where_candidates_resolve_as_each_filter_says() {
    let patterns = ["a/+/c", "a/#", "+/b/#", "x/#", "a/b/c"];
    let topics = ["a/b/c", "a/q/c", "z/b/c", "x/y", "a"];
    for &algorithm in Algorithm::ALL {
        let m = engine(Dialect::Mqtt, algorithm);
        let mut held = Vec::new();
        for i in 0..300usize {
            let pattern = patterns[i % patterns.len()];
            let sub = s(&format!("s{}", i % 90));
            let criteria = match i % 5 {
                0 => None,
                1 => Some(filter(
                    &[("n", Criterion::Lt(i64::try_from(i % 7).unwrap().into()))],
                    Mode::All,
                )),
                2 => Some(filter(
                    &[("k", eq(format!("v{}", i % 4).as_str()))],
                    Mode::All,
                )),
                3 => Some(filter(
                    &[("n", Criterion::Ge(3.into())), ("k", eq("v1"))],
                    Mode::Any,
                )),
                _ => Some(filter(&[("flag", Criterion::Present)], Mode::All)),
            };
            let id = match &criteria {
                None => m.subscribe(pattern, &sub).unwrap(),
                Some(f) => m.subscribe_where(pattern, &sub, f).unwrap(),
            };
            held.push((id, pattern, sub, criteria));
        }
        // Every seventh removed, filtered or not (an identical subscription made again has
        // the same id, and goes with it).
        let removed: Vec<_> = held
            .iter()
            .map(|(id, ..)| *id)
            .filter(|id| id % 7 == 3 && m.unsubscribe(*id))
            .collect();
        assert!(removed.len() > 10);
        held.retain(|(id, ..)| !removed.contains(id));
        let messages = [
            Message::new().with("n", 2).with("k", "v1"),
            Message::new()
                .with("n", 5)
                .with("k", "v3")
                .with_opaque("flag"),
            Message::new().with("k", "v0"),
            Message::new(),
        ];
        for topic in topics {
            for message in &messages {
                let mut want: Vec<_> = held
                    .iter()
                    .filter(|(_, pattern, _, criteria)| {
                        topicmatch_core::matches(Dialect::Mqtt, pattern, topic).unwrap()
                            && criteria.as_ref().is_none_or(|f| f.matches(message))
                    })
                    .map(|(_, _, sub, _)| sub.clone())
                    .collect();
                want.sort();
                want.dedup();
                let mut out = Vec::new();
                m.lookup_fields_into(topic, message, &mut out).unwrap();
                assert_eq!(out.len(), want.len(), "{algorithm}: {topic}: distinct");
                assert_eq!(names(m.resolve(&out)), want, "{algorithm}: {topic}");
                let (mut batch, mut ends) = (Vec::new(), Vec::new());
                let many = [topic, topic];
                let fields = [message.clone(), message.clone()];
                m.lookup_batch_fields_into(&many, &fields, &mut batch, &mut ends)
                    .unwrap();
                assert_eq!(
                    ends,
                    vec![want.len(), 2 * want.len()],
                    "{algorithm}: {topic}"
                );
                assert_eq!(
                    names(m.resolve(&batch[..ends[0]])),
                    want,
                    "{algorithm}: {topic}"
                );
            }
        }
    }
}
