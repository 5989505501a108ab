//! Property tests: the counting index (`FieldMatcher`) and `where=` topic subscriptions against
//! a straightforward evaluator of the same criteria, written here independently of the core.
//! Numbers stay small (and floats are halves), so comparing them as `f64` is exact.
#![allow(clippy::float_cmp, clippy::cast_precision_loss)] // Exact in this small domain.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::engine;
use proptest::prelude::*;
use topicmatch_core::fields::{Criterion, FieldMatcher, Filter, Message, Mode, Value};
use topicmatch_core::{Algorithm, Dialect, Subscriber, SubscriberId};

const FIELDS: &[&str] = &["a", "b", "c", "d"];

#[derive(Debug, Clone, PartialEq)]
enum V {
    S(&'static str),
    I(i64),
    F(f64),
    B(bool),
}

impl V {
    fn num(&self) -> Option<f64> {
        match self {
            V::I(i) => Some(*i as f64),
            V::F(f) => Some(*f),
            V::S(_) | V::B(_) => None,
        }
    }

    fn same(&self, other: &V) -> bool {
        match (self.num(), other.num()) {
            (Some(a), Some(b)) => a == b,
            (None, None) => self == other,
            _ => false,
        }
    }

    fn value(&self) -> Value {
        match self {
            V::S(s) => (*s).into(),
            V::I(i) => (*i).into(),
            V::F(f) => Value::float(*f).unwrap(),
            V::B(b) => (*b).into(),
        }
    }
}

#[derive(Debug, Clone)]
enum C {
    Present,
    Eq(V),
    In(Vec<V>),
    Cmp(u8, V),
}

impl C {
    fn met(&self, value: Option<&Option<V>>) -> bool {
        let Some(value) = value else { return false };
        match self {
            C::Present => true,
            C::Eq(v) => value.as_ref().is_some_and(|x| x.same(v)),
            C::In(vs) => value.as_ref().is_some_and(|x| vs.iter().any(|v| x.same(v))),
            C::Cmp(op, t) => {
                let (Some(x), Some(t)) = (value.as_ref().and_then(V::num), t.num()) else {
                    return false;
                };
                match op {
                    0 => x < t,
                    1 => x <= t,
                    2 => x > t,
                    _ => x >= t,
                }
            }
        }
    }

    fn criterion(&self) -> Criterion {
        match self {
            C::Present => Criterion::Present,
            C::Eq(v) => Criterion::Eq(v.value()),
            C::In(vs) => Criterion::In(vs.iter().map(V::value).collect()),
            C::Cmp(op, t) => {
                let t = t.value();
                match op {
                    0 => Criterion::Lt(t),
                    1 => Criterion::Le(t),
                    2 => Criterion::Gt(t),
                    _ => Criterion::Ge(t),
                }
            }
        }
    }
}

#[derive(Debug, Clone)]
struct Sub {
    criteria: Vec<(&'static str, C)>,
    /// 0 = all, `usize::MAX` = any, else at least k.
    mode: usize,
    subscriber: i64,
}

impl Sub {
    fn threshold(&self) -> usize {
        match self.mode {
            0 => self.criteria.len(),
            usize::MAX => 1,
            k => k,
        }
    }

    fn valid(&self) -> bool {
        !self.criteria.is_empty()
            && (1..=self.criteria.len()).contains(&self.threshold())
            && self
                .criteria
                .iter()
                .all(|(_, c)| !matches!(c, C::In(vs) if vs.is_empty()))
    }

    fn hits(&self, message: &BTreeMap<&str, Option<V>>) -> usize {
        self.criteria
            .iter()
            .filter(|(f, c)| c.met(message.get(f)))
            .count()
    }

    fn filter(&self) -> Result<Filter, topicmatch_core::Error> {
        let mode = match self.mode {
            0 => Mode::All,
            usize::MAX => Mode::Any,
            k => Mode::AtLeast(k),
        };
        let criteria = self
            .criteria
            .iter()
            .map(|(f, c)| ((*f).into(), c.criterion()))
            .collect();
        Filter::new(criteria, mode)
    }
}

fn value() -> impl Strategy<Value = V> {
    prop_oneof![
        prop::sample::select(vec!["x", "y", ""]).prop_map(V::S),
        (-2i64..3).prop_map(V::I),
        (-4i64..6).prop_map(|h| V::F(h as f64 / 2.0)),
        any::<bool>().prop_map(V::B),
    ]
}

fn number() -> impl Strategy<Value = V> {
    prop_oneof![
        (-2i64..3).prop_map(V::I),
        (-4i64..6).prop_map(|h| V::F(h as f64 / 2.0))
    ]
}

fn criterion() -> impl Strategy<Value = C> {
    prop_oneof![
        1 => Just(C::Present),
        3 => value().prop_map(C::Eq),
        2 => prop::collection::vec(value(), 0..6).prop_map(C::In),
        3 => (0u8..4, number()).prop_map(|(op, t)| C::Cmp(op, t)),
    ]
}

fn sub() -> impl Strategy<Value = Sub> {
    let criteria = prop::collection::btree_map(prop::sample::select(FIELDS), criterion(), 0..5)
        .prop_map(|m| m.into_iter().collect::<Vec<_>>());
    let mode = prop_oneof![Just(0usize), Just(usize::MAX), 1usize..6];
    (criteria, mode, 0i64..4).prop_map(|(criteria, mode, subscriber)| Sub {
        criteria,
        mode,
        subscriber,
    })
}

fn message() -> impl Strategy<Value = BTreeMap<&'static str, Option<V>>> {
    prop::collection::btree_map(
        prop::sample::select(FIELDS),
        prop::option::weighted(0.9, value()),
        0..5,
    )
}

fn to_message(m: &BTreeMap<&str, Option<V>>) -> Message {
    let mut out = Message::new();
    for (f, v) in m {
        out.set(f, v.as_ref().map(V::value));
    }
    out
}

#[derive(Debug, Clone)]
enum Op {
    Subscribe(Sub),
    Unsubscribe(usize),
    Lookup(BTreeMap<&'static str, Option<V>>),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        4 => sub().prop_map(Op::Subscribe),
        1 => (0..64usize).prop_map(Op::Unsubscribe),
        4 => message().prop_map(Op::Lookup),
    ];
    prop::collection::vec(op, 1..50)
}

fn check(ops: &[Op], padding: usize) -> Result<(), TestCaseError> {
    let fm = FieldMatcher::new();
    // Subscriptions no generated message can hit make the matcher large, so lookups take the
    // sparse counting path as well as the dense one.
    let pad = Filter::new(vec![("zz".into(), Criterion::Present)], Mode::All).unwrap();
    for i in (1000..).take(padding) {
        fm.subscribe(&pad, &Subscriber::Int(i)).unwrap();
    }
    let mut model: BTreeMap<u64, Sub> = BTreeMap::new();
    let mut ids = Vec::new();
    // The subscriber ids `subscribe_with` and `unsubscribe_with` reported as joined and not
    // yet left: they must be exactly the registry's held ids.
    let mut live: BTreeSet<SubscriberId> =
        fm.with_registry(|r| r.iter().map(|(id, _)| id).collect());
    for op in ops {
        match op {
            Op::Subscribe(sub) => match sub.filter() {
                Ok(filter) => {
                    prop_assert!(sub.valid(), "accepted {:?}", sub);
                    let mut joined = Vec::new();
                    let id = fm
                        .subscribe_with(&filter, &Subscriber::Int(sub.subscriber), &mut |s| {
                            joined.push(s);
                        })
                        .unwrap();
                    for s in joined {
                        prop_assert!(live.insert(s), "joined twice: {}", s);
                    }
                    model.entry(id).or_insert_with(|| sub.clone());
                    ids.push(id);
                }
                Err(_) => prop_assert!(!sub.valid(), "refused {:?}", sub),
            },
            Op::Unsubscribe(i) => {
                if let Some(&id) = ids.get(*i % ids.len().max(1)) {
                    let mut left = Vec::new();
                    let removed = fm.unsubscribe_with(id, &mut |s| left.push(s));
                    prop_assert_eq!(removed, model.remove(&id).is_some());
                    for s in left {
                        prop_assert!(live.remove(&s), "left but never joined: {}", s);
                    }
                }
            }
            Op::Lookup(m) => {
                let held: BTreeSet<SubscriberId> =
                    fm.with_registry(|r| r.iter().map(|(id, _)| id).collect());
                prop_assert_eq!(&held, &live, "the ids joined and not left");
                let message = to_message(m);
                // The batch call answers each message as `lookup_into` does, in order.
                let mut one = Vec::new();
                fm.lookup_into(&message, &mut one);
                let (mut batch, mut ends) = (Vec::new(), Vec::new());
                let twice = [
                    message.clone(),
                    to_message(&BTreeMap::new()),
                    message.clone(),
                ];
                fm.lookup_batch_into(&twice, &mut batch, &mut ends);
                let mut empty = Vec::new();
                fm.lookup_into(&twice[1], &mut empty);
                prop_assert_eq!(ends.len(), 3);
                prop_assert_eq!(&batch[..ends[0]], &one[..]);
                prop_assert_eq!(&batch[ends[0]..ends[1]], &empty[..]);
                prop_assert_eq!(&batch[ends[1]..ends[2]], &one[..]);
                let mut want = BTreeSet::new();
                let mut want_hits: BTreeMap<i64, usize> = BTreeMap::new();
                for sub in model.values() {
                    let hits = sub.hits(m);
                    if hits >= sub.threshold() {
                        want.insert(sub.subscriber);
                    }
                    if hits > 0 {
                        let best = want_hits.entry(sub.subscriber).or_default();
                        *best = (*best).max(hits);
                    }
                }
                let got: BTreeSet<i64> = fm.lookup(&message).iter().map(int).collect();
                prop_assert_eq!(&got, &want, "lookup {:?}", m);
                let got_hits: BTreeMap<i64, usize> = fm
                    .hits(&message)
                    .iter()
                    .map(|(s, n)| (int(s), *n))
                    .collect();
                prop_assert_eq!(&got_hits, &want_hits, "hits {:?}", m);
            }
        }
    }
    Ok(())
}

const TOPICS: &[&str] = &["a.b", "a.c", "b", "a"];
const PATTERNS: &[&str] = &["a.*", "#", "a.b", "b", "*"];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn index_agrees_with_direct_evaluation(ops in ops(), padding in prop_oneof![Just(0usize), Just(300)]) {
        check(&ops, padding)?;
    }

    #[test]
    fn where_agrees_with_pattern_and_criteria(
        subs in prop::collection::vec((prop::sample::select(PATTERNS), prop::option::of(sub())), 1..12),
        lookups in prop::collection::vec((prop::sample::select(TOPICS), message()), 1..8),
    ) {
        for &algorithm in Algorithm::ALL {
            let m = engine(Dialect::Amqp, algorithm);
            let mut held = Vec::new();
            for (pattern, sub) in &subs {
                match sub {
                    None => {
                        m.subscribe(pattern, &Subscriber::Int(9)).unwrap();
                        held.push((*pattern, None, 9));
                    }
                    Some(sub) => {
                        if let Ok(filter) = sub.filter() {
                            m.subscribe_where(pattern, &Subscriber::Int(sub.subscriber), &filter).unwrap();
                            held.push((*pattern, Some(sub.clone()), sub.subscriber));
                        }
                    }
                }
            }
            for (topic, fields) in &lookups {
                let want: BTreeSet<i64> = held
                    .iter()
                    .filter(|(p, sub, _)| {
                        topicmatch_core::matches(Dialect::Amqp, p, topic).unwrap()
                            && sub.as_ref().is_none_or(|s| s.hits(fields) >= s.threshold())
                    })
                    .map(|(_, _, s)| *s)
                    .collect();
                let mut out = Vec::new();
                m.lookup_fields_into(topic, &to_message(fields), &mut out).unwrap();
                let got: Vec<i64> = m
                    .resolve(&out)
                    .iter()
                    .map(int)
                    .collect();
                prop_assert_eq!(got.len(), want.len(), "{} duplicates in {:?}", algorithm, got);
                prop_assert_eq!(got.into_iter().collect::<BTreeSet<_>>(), want, "{} {} {:?}", algorithm, topic, fields);
            }
            // The batch with each topic's message gives each topic's row as one lookup does.
            let topics: Vec<&str> = lookups.iter().map(|(t, _)| *t).collect();
            let messages: Vec<_> = lookups.iter().map(|(_, f)| to_message(f)).collect();
            let (mut out, mut ends) = (Vec::new(), Vec::new());
            m.lookup_batch_fields_into(&topics, &messages, &mut out, &mut ends).unwrap();
            prop_assert_eq!(ends.len(), topics.len());
            let mut start = 0;
            for ((topic, message), &end) in topics.iter().zip(&messages).zip(&ends) {
                let mut one = Vec::new();
                m.lookup_fields_into(topic, message, &mut one).unwrap();
                let mut row = out[start..end].to_vec();
                row.sort_unstable();
                one.sort_unstable();
                prop_assert_eq!(row, one, "{} {}", algorithm, topic);
                start = end;
            }
        }
    }
}

/// Many filtered subscriptions on a few patterns, so that a pattern's bucket grows past the
/// size from which it is indexed and shrinks below the size at which it drops its index, then
/// empties: at each stage every lookup (one topic, and a batch) gives what evaluating every
/// held subscription directly gives, and the relation queries list exactly the held ones.
fn check_buckets(
    algorithm: Algorithm,
    subs: &[(&'static str, Sub)],
    removals: &[Vec<bool>],
    lookups: &[(&'static str, BTreeMap<&'static str, Option<V>>)],
) -> Result<(), TestCaseError> {
    let m = engine(Dialect::Amqp, algorithm);
    let mut held: BTreeMap<u64, (&str, Sub)> = BTreeMap::new();
    for (pattern, sub) in subs {
        if let Ok(filter) = sub.filter() {
            let id = m
                .subscribe_where(pattern, &Subscriber::Int(sub.subscriber), &filter)
                .unwrap();
            held.insert(id, (pattern, sub.clone()));
        }
    }
    // Each stage removes the subscriptions its mask marks, then the last stage all of them.
    let everything = vec![true; subs.len()];
    for remove in removals.iter().chain([&everything]) {
        let ids: Vec<u64> = held.keys().copied().collect();
        for (id, _) in ids.iter().zip(remove).filter(|(_, &r)| r) {
            prop_assert!(m.unsubscribe(*id));
            held.remove(id);
        }
        prop_assert_eq!(m.len(), held.len());
        let related: BTreeSet<u64> = m.intersecting("#").unwrap().iter().map(|s| s.id).collect();
        prop_assert_eq!(
            &related,
            &held.keys().copied().collect::<BTreeSet<_>>(),
            "{}",
            algorithm
        );
        let topics: Vec<&str> = lookups.iter().map(|(t, _)| *t).collect();
        let messages: Vec<Message> = lookups.iter().map(|(_, f)| to_message(f)).collect();
        let (mut batch, mut ends) = (Vec::new(), Vec::new());
        m.lookup_batch_fields_into(&topics, &messages, &mut batch, &mut ends)
            .unwrap();
        let mut start = 0;
        for (((topic, fields), message), &end) in lookups.iter().zip(&messages).zip(&ends) {
            let want: BTreeSet<i64> = held
                .values()
                .filter(|(p, sub)| {
                    topicmatch_core::matches(Dialect::Amqp, p, topic).unwrap()
                        && sub.hits(fields) >= sub.threshold()
                })
                .map(|(_, s)| s.subscriber)
                .collect();
            let mut one = Vec::new();
            m.lookup_fields_into(topic, message, &mut one).unwrap();
            let got: Vec<i64> = m.resolve(&one).iter().map(int).collect();
            prop_assert_eq!(
                got.len(),
                want.len(),
                "{} duplicates in {:?}",
                algorithm,
                got
            );
            prop_assert_eq!(
                got.into_iter().collect::<BTreeSet<_>>(),
                want,
                "{} {} {:?}",
                algorithm,
                topic,
                fields
            );
            let mut row = batch[start..end].to_vec();
            row.sort_unstable();
            one.sort_unstable();
            prop_assert_eq!(row, one, "{} batch {}", algorithm, topic);
            start = end;
        }
    }
    prop_assert_eq!(m.len(), 0);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn where_buckets_agree_with_direct_evaluation_as_they_grow_and_shrink(
        subs in prop::collection::vec(
            (prop::sample::select(&["a.*", "#", "a.b"][..]), sub().prop_map(|mut s| {
                s.subscriber *= 1 + i64::try_from(s.criteria.len()).unwrap();
                s
            })),
            40..140,
        ),
        removals in prop::collection::vec(prop::collection::vec(prop::bool::weighted(0.4), 140), 1..4),
        lookups in prop::collection::vec((prop::sample::select(TOPICS), message()), 1..6),
    ) {
        for &algorithm in Algorithm::ALL {
            check_buckets(algorithm, &subs, &removals, &lookups)?;
        }
    }
}

/// A subscriber of these tests, all of which are integers.
fn int(s: &Subscriber) -> i64 {
    match *s {
        Subscriber::Int(i) => i,
        Subscriber::Str(_) => unreachable!("these tests subscribe integers only"),
    }
}
