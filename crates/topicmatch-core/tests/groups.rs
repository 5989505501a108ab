//! Shared subscriptions and queue groups, on every algorithm: one member per matching group,
//! chosen by the policy; plain subscribers as before; groups come and go with their members.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use common::{engine, sorted};
use proptest::prelude::*;
use topicmatch_core::fields::{Criterion, Filter, Message, Mode, Value};
use topicmatch_core::{
    Algorithm, Dialect, Engine, Error, GroupMatch, GroupPolicy, Subscriber, SubscriberId,
    Subscription,
};

fn s(name: &str) -> Subscriber {
    Subscriber::from(name)
}

fn grouped(dialect: Dialect, algorithm: Algorithm, policy: GroupPolicy) -> Engine {
    engine(dialect, algorithm)
        .with_groups(policy, dialect == Dialect::Mqtt)
        .unwrap()
}

/// Each matching group's members by (name, pattern).
type Groups = BTreeMap<(String, String), Vec<Subscriber>>;

/// What `lookup_groups_into` gives for `topic` into empty buffers: plain ids, groups, members.
fn lookup_groups(
    m: &Engine,
    topic: &str,
) -> (Vec<SubscriberId>, Vec<GroupMatch>, Vec<SubscriberId>) {
    let (mut plain, mut groups, mut members) = (Vec::new(), Vec::new(), Vec::new());
    m.lookup_groups_into(
        topic,
        &Message::new(),
        &mut plain,
        &mut groups,
        &mut members,
    )
    .unwrap();
    (plain, groups, members)
}

/// The `(name, pattern)` of a group a lookup found, which is still held.
fn key(m: &Engine, g: &GroupMatch) -> (String, String) {
    let (name, pattern) = m.group_key(g.id).expect("the group is held");
    (name.to_string(), pattern.to_string())
}

/// `lookup_groups_into`, resolved: the plain subscribers (sorted) and each group's members.
fn split(m: &Engine, topic: &str) -> (Vec<Subscriber>, Groups) {
    let (plain, groups, members) = lookup_groups(m, topic);
    let plain = sorted(m.resolve(&plain));
    let groups = groups
        .into_iter()
        .map(|g: GroupMatch| (key(m, &g), sorted(m.resolve(&members[g.members.clone()]))))
        .collect();
    (plain, groups)
}

/// Checks one lookup against the split: every plain subscriber, one member of each group,
/// nothing else, each once.
fn check_lookup(m: &Engine, topic: &str) -> Vec<Subscriber> {
    check_answer(m, topic, m.lookup(topic).unwrap())
}

/// Checks every row of one batch lookup of `topics` as [`check_lookup`] does.
fn check_batch(m: &Engine, topics: &[&str]) {
    let (mut ids, mut ends) = (Vec::new(), Vec::new());
    m.lookup_batch_into(topics, &mut ids, &mut ends).unwrap();
    assert_eq!(ends.len(), topics.len());
    let mut from = 0;
    for (topic, &end) in topics.iter().zip(&ends) {
        let got = m.resolve(&ids[from..end]);
        assert_eq!(
            got.len(),
            end - from,
            "{topic}: an id that resolves to nothing"
        );
        check_answer(m, topic, got);
        from = end;
    }
}

/// The split's groups as the lookup serves them: each group apart, except that in NATS the
/// groups of one name are one queue, its members all of theirs.
fn served(m: &Engine, groups: Groups) -> Groups {
    if m.dialect() != Dialect::Nats {
        return groups;
    }
    let mut queues = Groups::new();
    for ((name, _), members) in groups {
        let queue = queues.entry((name, String::new())).or_default();
        queue.extend(members);
        queue.sort();
        queue.dedup();
    }
    queues
}

/// Checks `got`, an answer for `topic`, against the split.
fn check_answer(m: &Engine, topic: &str, got: Vec<Subscriber>) -> Vec<Subscriber> {
    let (plain, groups) = split(m, topic);
    let groups = served(m, groups);
    let unique: BTreeSet<_> = got.iter().cloned().collect();
    assert_eq!(
        unique.len(),
        got.len(),
        "{topic}: a subscriber twice in {got:?}"
    );
    for p in &plain {
        assert!(
            unique.contains(p),
            "{topic}: plain {p:?} missing from {got:?}"
        );
    }
    for (key, members) in &groups {
        assert!(
            members.iter().any(|x| unique.contains(x)),
            "{topic}: no member of {key:?} in {got:?}"
        );
    }
    for x in &got {
        assert!(
            plain.contains(x) || groups.values().any(|m| m.contains(x)),
            "{topic}: {x:?} is neither plain nor a member"
        );
    }
    // At most one member per group beyond the plain subscribers: count the non-plain ones.
    let extra = got.iter().filter(|x| !plain.contains(x)).count();
    assert!(
        extra <= groups.len(),
        "{topic}: {got:?} has more members than groups"
    );
    got
}

#[test]
fn one_member_of_each_matching_group_in_every_dialect_and_algorithm() {
    for &algorithm in Algorithm::ALL {
        for (dialect, pattern, other, topic) in [
            (Dialect::Amqp, "orders.*", "orders.#", "orders.new"),
            (Dialect::Mqtt, "orders/+", "orders/#", "orders/new"),
            (Dialect::Nats, "orders.*", "orders.>", "orders.new"),
        ] {
            let m = grouped(dialect, algorithm, GroupPolicy::RoundRobin);
            for w in ["w1", "w2", "w3"] {
                m.subscribe_group(pattern, &s(w), "workers").unwrap();
            }
            m.subscribe_group(other, &s("a1"), "audit").unwrap();
            m.subscribe_group(other, &s("a2"), "audit").unwrap();
            m.subscribe(pattern, &s("plain")).unwrap();
            let mut seen = HashMap::new();
            for _ in 0..60 {
                let got = check_lookup(&m, topic);
                assert_eq!(got.len(), 3, "{algorithm} {dialect}: {got:?}");
                for x in got {
                    *seen.entry(x).or_insert(0) += 1;
                }
            }
            // Round robin: each worker 20 times, each auditor 30 times.
            for w in ["w1", "w2", "w3"] {
                assert_eq!(seen[&s(w)], 20, "{algorithm} {dialect} {w}");
            }
            assert_eq!((seen[&s("a1")], seen[&s("a2")]), (30, 30));
            assert_eq!(seen[&s("plain")], 60);
            let (plain, groups) = split(&m, topic);
            assert_eq!(plain, vec![s("plain")]);
            assert_eq!(
                groups.keys().cloned().collect::<Vec<_>>(),
                vec![
                    ("audit".to_owned(), other.to_owned()),
                    ("workers".to_owned(), pattern.to_owned())
                ]
            );
        }
    }
}

/// nats-server gathers the queue subscriptions a message matches by queue name, whatever their
/// subjects, and delivers to one of them (`sublist.go`, `addNodeToResults`); MQTT's
/// `$share/{name}/{filter}` are one group per name and filter (MQTT 5.0 4.8.2), as groups of
/// other dialects are.
#[test]
fn nats_groups_of_one_name_are_one_queue_whatever_their_subjects() {
    for &algorithm in Algorithm::ALL {
        for policy in [
            GroupPolicy::RoundRobin,
            GroupPolicy::Random,
            GroupPolicy::Hash,
        ] {
            let m = grouped(Dialect::Nats, algorithm, policy);
            m.subscribe_group("foo.*", &s("a"), "workers").unwrap();
            m.subscribe_group("foo.bar", &s("b"), "workers").unwrap();
            m.subscribe_group("foo.>", &s("b"), "workers").unwrap();
            m.subscribe_group("foo.bar", &s("c"), "audit").unwrap();
            m.subscribe("foo.bar", &s("plain")).unwrap();
            let mut seen = HashMap::new();
            for _ in 0..200 {
                let got = check_lookup(&m, "foo.bar");
                assert_eq!(got.len(), 3, "{algorithm} {policy:?}: {got:?}");
                assert!(
                    got.contains(&s("plain")) && got.contains(&s("c")),
                    "{got:?}"
                );
                for x in got {
                    *seen.entry(x).or_insert(0) += 1;
                }
            }
            let (a, b) = (seen.get(&s("a")), seen.get(&s("b")));
            match policy {
                // One turn for the queue, over its two members (b subscribed twice counts
                // once).
                GroupPolicy::RoundRobin => assert_eq!((a, b), (Some(&100), Some(&100))),
                GroupPolicy::Random => assert!(a.is_some() && b.is_some(), "{seen:?}"),
                GroupPolicy::Hash => assert_eq!(a.or(b), Some(&200), "{seen:?}"),
            }
            check_batch(&m, &["foo.bar", "foo.x", "foo.x.y", "bar"]);
            // One subject of the queue matching: its own members only.
            assert_eq!(check_lookup(&m, "foo.x.y"), vec![s("b")]);
        }
    }
    // The hash pick does not depend on the order the algorithm's walk found the groups in.
    let picks: Vec<Vec<Subscriber>> = Algorithm::ALL
        .iter()
        .map(|&algorithm| {
            let m = grouped(Dialect::Nats, algorithm, GroupPolicy::Hash);
            for (i, p) in (0i64..).zip(["t.*", "t.a", "t.>", ">"]) {
                for k in 0..3 {
                    m.subscribe_group(p, &Subscriber::Int(k * 10 + i), "q")
                        .unwrap();
                }
            }
            (0..50)
                .flat_map(|t| m.lookup(&format!("t.{t}")).unwrap())
                .collect()
        })
        .collect();
    assert!(picks.iter().all(|p| p == &picks[0]), "{picks:?}");
    for (dialect, narrow, wide, topic) in [
        (Dialect::Amqp, "foo.bar", "foo.*", "foo.bar"),
        (Dialect::Mqtt, "foo/bar", "foo/+", "foo/bar"),
    ] {
        let m = grouped(dialect, Algorithm::Cstrie, GroupPolicy::RoundRobin);
        m.subscribe_group(wide, &s("a"), "workers").unwrap();
        m.subscribe_group(narrow, &s("b"), "workers").unwrap();
        assert_eq!(
            sorted(check_lookup(&m, topic)),
            vec![s("a"), s("b")],
            "{dialect}"
        );
    }
}

#[test]
fn mqtt_share_texts_are_groups_unless_shared_subscriptions_are_off() {
    for &algorithm in Algorithm::ALL {
        let on = grouped(Dialect::Mqtt, algorithm, GroupPolicy::Hash);
        let off = engine(Dialect::Mqtt, algorithm)
            .with_groups(GroupPolicy::Hash, false)
            .unwrap();
        for m in [&on, &off] {
            m.subscribe("$share/g/a/+", &s("x")).unwrap();
            m.subscribe("$share/g/a/+", &s("y")).unwrap();
            m.subscribe("$share/h/a/#", &s("y")).unwrap();
        }
        let got = check_lookup(&on, "a/b");
        assert!(got.contains(&s("y")) && got.len() <= 2, "{got:?}");
        assert_eq!(sorted(off.lookup("a/b").unwrap()), vec![s("x"), s("y")]);
        assert!(on.shared_subscriptions() && !off.shared_subscriptions());
        // A `$` topic: a share's filter follows the `$` rule like any filter.
        assert!(on.lookup("$SYS/x").unwrap().is_empty());
    }
    let refused = engine(Dialect::Amqp, Algorithm::Trie).with_groups(GroupPolicy::RoundRobin, true);
    assert!(matches!(refused, Err(Error::InvalidArgument(_))));
}

#[test]
fn hash_keeps_a_topic_on_one_member_and_spreads_topics() {
    for &algorithm in Algorithm::ALL {
        let m = grouped(Dialect::Mqtt, algorithm, GroupPolicy::Hash);
        for i in 0..4 {
            m.subscribe("$share/g/t/#", &Subscriber::Int(i)).unwrap();
        }
        let mut members = BTreeSet::new();
        for t in 0..64 {
            let topic = format!("t/{t}");
            let first = m.lookup(&topic).unwrap();
            assert_eq!(first.len(), 1);
            for _ in 0..5 {
                assert_eq!(m.lookup(&topic).unwrap(), first, "{topic} moved");
            }
            members.insert(first[0].clone());
        }
        assert_eq!(members.len(), 4, "{algorithm}: 64 topics over 4 members");
        // A second engine with the same members in the same order chooses the same.
        let twin = grouped(Dialect::Mqtt, algorithm, GroupPolicy::Hash);
        for i in 0..4 {
            twin.subscribe("$share/g/t/#", &Subscriber::Int(i)).unwrap();
        }
        for t in 0..64 {
            let topic = format!("t/{t}");
            assert_eq!(m.lookup(&topic).unwrap(), twin.lookup(&topic).unwrap());
        }
    }
}

#[test]
fn random_picks_members_only_and_all_of_them() {
    let m = grouped(Dialect::Nats, Algorithm::Cstrie, GroupPolicy::Random);
    for i in 0..5 {
        m.subscribe_group("jobs.>", &Subscriber::Int(i), "q")
            .unwrap();
    }
    let mut seen = BTreeSet::new();
    for _ in 0..500 {
        let got = m.lookup("jobs.a.b").unwrap();
        assert_eq!(got.len(), 1);
        seen.insert(got[0].clone());
    }
    assert_eq!(seen.len(), 5);
}

#[test]
fn round_robin_serves_members_in_turn_as_they_join_and_leave() {
    // Each step: a member leaving (`-`) or joining (`+`), then the members served next.
    let steps: [(&str, &[&str]); 5] = [
        ("", &["m0", "m1", "m2", "m3", "m0", "m1"]),
        // m2 is due: one before it leaves, and m2 stays due.
        ("-m0", &["m2", "m3", "m1", "m2"]),
        // The member due leaves while it is the last: the turn goes round to the first.
        ("-m3", &["m1", "m2", "m1"]),
        // A newcomer joins the end of the rotation; the member due stays due.
        ("+m4", &["m2", "m4", "m1", "m2"]),
        ("-m4", &["m1", "m2", "m1"]),
    ];
    for &algorithm in Algorithm::ALL {
        for (dialect, topic) in [(Dialect::Mqtt, "a/b"), (Dialect::Amqp, "a.b")] {
            let m = grouped(dialect, algorithm, GroupPolicy::RoundRobin);
            let mut ids = HashMap::new();
            for name in ["m0", "m1", "m2", "m3"] {
                ids.insert(name, m.subscribe_group(topic, &s(name), "g").unwrap());
            }
            for (change, served) in steps {
                match change.split_at(change.len().min(1)) {
                    ("-", name) => assert!(m.unsubscribe(ids[name])),
                    ("+", name) => {
                        ids.insert(name, m.subscribe_group(topic, &s(name), "g").unwrap());
                    }
                    _ => {}
                }
                let got: Vec<Subscriber> = served
                    .iter()
                    .map(|_| {
                        let got = m.lookup(topic).unwrap();
                        assert_eq!(got.len(), 1);
                        got[0].clone()
                    })
                    .collect();
                let want: Vec<Subscriber> = served.iter().map(|n| s(n)).collect();
                assert_eq!(got, want, "{algorithm} {dialect}, after {change:?}");
            }
        }
    }
}

#[test]
fn subscribe_is_idempotent_and_the_last_member_removes_the_group() {
    for &algorithm in Algorithm::ALL {
        let m = grouped(Dialect::Mqtt, algorithm, GroupPolicy::RoundRobin);
        let a = m.subscribe_group("a/b", &s("x"), "g").unwrap();
        assert_eq!(m.subscribe_group("a/b", &s("x"), "g").unwrap(), a);
        // The `$share` text names the same group: a second subscription, one membership.
        let b = m.subscribe("$share/g/a/b", &s("x")).unwrap();
        assert_ne!(a, b);
        let c = m.subscribe_group("a/b", &s("y"), "g").unwrap();
        // Another group of the same pattern, and the plain pattern, are other subscriptions.
        let d = m.subscribe_group("a/b", &s("x"), "h").unwrap();
        let e = m.subscribe("a/b", &s("x")).unwrap();
        assert_eq!(
            BTreeSet::from([a, b, c, d, e]).len(),
            5,
            "{algorithm}: five subscriptions"
        );
        assert_eq!(m.len(), 5);
        let groups: Vec<(u64, String)> = m
            .groups()
            .iter()
            .map(|(id, g)| (*id, g.to_string()))
            .collect();
        assert_eq!(
            groups,
            vec![
                (a, "g".into()),
                (b, "g".into()),
                (c, "g".into()),
                (d, "h".into())
            ]
        );
        assert!(m.unsubscribe(a));
        assert!(!m.unsubscribe(a));
        assert_eq!(
            split(&m, "a/b").1.len(),
            2,
            "x is still in g through its $share text"
        );
        assert!(m.unsubscribe(b) && m.unsubscribe(c) && m.unsubscribe(d));
        assert_eq!(split(&m, "a/b"), (vec![s("x")], BTreeMap::new()));
        assert!(m.unsubscribe(e));
        assert!(m.is_empty());
        assert!(m.lookup("a/b").unwrap().is_empty());
        assert!(!m.matches_any("a/b").unwrap());
    }
}

#[test]
fn bad_groups_are_refused_and_change_nothing() {
    let mqtt = grouped(Dialect::Mqtt, Algorithm::Trie, GroupPolicy::RoundRobin);
    let nats = grouped(Dialect::Nats, Algorithm::Trie, GroupPolicy::RoundRobin);
    let amqp = grouped(Dialect::Amqp, Algorithm::Trie, GroupPolicy::RoundRobin);
    let filter = topicmatch_core::fields::Filter::new(
        vec![("k".into(), topicmatch_core::fields::Criterion::Present)],
        topicmatch_core::fields::Mode::All,
    )
    .unwrap();
    for (m, pattern, group) in [
        (&mqtt, "a/b", ""),
        (&mqtt, "a/b", "g/h"),
        (&mqtt, "a/b", "g+"),
        (&mqtt, "a/b", "g\0"),
        (&mqtt, "$share/g/a/b", "other"),
        (&nats, "a.b", "with space"),
        (&nats, "a.b", "nul\0"),
        (&amqp, "a.b", ""),
    ] {
        let err = m.subscribe_group(pattern, &s("x"), group).unwrap_err();
        assert!(matches!(err, Error::InvalidGroup(_)), "{group:?}: {err}");
        assert!(m.is_empty());
    }
    let err = mqtt
        .subscribe_with("$share/g/a", &s("x"), Some(&filter), None, &mut |_| {})
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    assert!(mqtt.subscribe_group("a/+/#", &s("x"), "g").is_ok());
    assert!(matches!(
        mqtt.subscribe_group("a/#/b", &s("x"), "g"),
        Err(Error::InvalidPattern { .. })
    ));
    assert_eq!(mqtt.len(), 1);
}

#[test]
fn a_restore_keeps_groups_and_covering_finds_their_subscriptions() {
    for &algorithm in Algorithm::ALL {
        let m = grouped(Dialect::Mqtt, algorithm, GroupPolicy::Hash);
        m.subscribe_group("a/+", &s("x"), "g").unwrap();
        m.subscribe("$share/g/a/+", &s("y")).unwrap();
        m.subscribe("a/#", &s("z")).unwrap();
        let copy = grouped(Dialect::Mqtt, algorithm, GroupPolicy::Hash)
            .restored(&m.subscriptions(), &m.filters(), &m.groups(), m.next_id())
            .unwrap();
        assert_eq!(copy.subscriptions(), m.subscriptions());
        assert_eq!(copy.groups(), m.groups());
        for t in ["a/b", "a/c", "a"] {
            assert_eq!(
                copy.lookup(t).unwrap(),
                m.lookup(t).unwrap(),
                "{algorithm} {t}"
            );
            assert_eq!(split(&copy, t), split(&m, t));
        }
        let covering: Vec<Subscription> = m.covering("a/b").unwrap();
        let ids: Vec<u64> = covering.iter().map(|c| c.id).collect();
        assert_eq!(
            ids,
            vec![1, 2, 3],
            "{algorithm}: every subscription covers a/b"
        );
        let pats: Vec<Arc<str>> = covering.into_iter().map(|c| c.pattern).collect();
        assert_eq!(&*pats[1], "$share/g/a/+");
    }
}

/// One step of the differential test.
#[derive(Debug, Clone)]
enum Op {
    Plain(usize, usize),
    Group(usize, usize, usize),
    Drop(usize),
}

/// A subscriber of the differential test.
fn int(x: usize) -> Subscriber {
    Subscriber::Int(i64::try_from(x).unwrap())
}

const PATTERNS: [&str; 6] = ["a/+", "a/#", "+/b", "#", "a/b", "$share/s/a/+"];
const TOPICS: [&str; 5] = ["a/b", "a", "x/b", "a/c/d", "$SYS/a"];

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            (0..PATTERNS.len(), 0..4usize).prop_map(|(p, s)| Op::Plain(p, s)),
            (0..PATTERNS.len(), 0..4usize, 0..2usize).prop_map(|(p, s, g)| Op::Group(p, s, g)),
            (0..16usize).prop_map(Op::Drop),
        ],
        0..24,
    )
}

/// The NATS counterparts of [`PATTERNS`] and [`TOPICS`]: groups of one name on several of
/// these subjects are one queue.
const NATS_PATTERNS: [&str; 6] = ["a.*", "a.>", "*.b", ">", "a.b", "a.b.*"];
const NATS_TOPICS: [&str; 5] = ["a.b", "a", "x.b", "a.c.d", "a.b.c"];

/// Runs `ops` on every algorithm: each splits every topic into the same plain subscribers and
/// groups as `naive`, and every lookup is one of the answers that split allows.
fn agrees_with_naive(
    dialect: Dialect,
    patterns: &[&str],
    topics: &[&str],
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let engines: Vec<Engine> = Algorithm::ALL
        .iter()
        .map(|&a| grouped(dialect, a, GroupPolicy::RoundRobin))
        .collect();
    for m in &engines {
        let mut ids = Vec::new();
        for op in ops {
            match *op {
                Op::Plain(p, x) => {
                    ids.push(m.subscribe(patterns[p], &int(x)));
                }
                Op::Group(p, x, g) => {
                    let group = ["g", "h"][g];
                    let pattern = patterns[p];
                    let r = if pattern.starts_with("$share/") {
                        m.subscribe(pattern, &int(x))
                    } else {
                        m.subscribe_group(pattern, &int(x), group)
                    };
                    ids.push(r);
                }
                Op::Drop(i) => {
                    if let Some(Ok(id)) = ids.get(i) {
                        m.unsubscribe(*id);
                    }
                }
            }
        }
    }
    let oracle = &engines[0];
    prop_assert_eq!(oracle.algorithm(), Algorithm::Naive);
    for m in &engines {
        prop_assert_eq!(m.subscriptions(), oracle.subscriptions());
        for t in topics {
            prop_assert_eq!(split(m, t), split(oracle, t), "{} {}", m.algorithm(), t);
            check_lookup(m, t);
        }
        check_batch(m, topics);
    }
    Ok(())
}

proptest! {
    #[test]
    fn every_algorithm_agrees_with_naive_on_groups(ops in ops()) {
        agrees_with_naive(Dialect::Mqtt, &PATTERNS, &TOPICS, &ops)?;
    }

    #[test]
    fn every_algorithm_agrees_with_naive_on_nats_queues(ops in ops()) {
        agrees_with_naive(Dialect::Nats, &NATS_PATTERNS, &NATS_TOPICS, &ops)?;
    }
}

/// `lookup_groups_into` appends this topic's groups after what `groups` holds, each once,
/// however many match.
#[test]
fn lookup_groups_appends_each_matching_group_once() {
    for &algorithm in Algorithm::ALL {
        let m = grouped(Dialect::Mqtt, algorithm, GroupPolicy::RoundRobin);
        for (i, filter) in (0..300).zip(["a/#", "a/+/c", "+/b/#"].into_iter().cycle()) {
            m.subscribe_group(filter, &Subscriber::Int(i), &format!("g{i}"))
                .unwrap();
        }
        m.subscribe_group("a/b/c", &s("x"), "g0").unwrap();
        m.subscribe_group("a/b/c", &s("y"), "g0").unwrap();
        m.subscribe("a/b/c", &s("plain")).unwrap();
        let (mut plain, mut groups, mut members) = (Vec::new(), Vec::new(), Vec::new());
        for call in 1..=2 {
            m.lookup_groups_into(
                "a/b/c",
                &Message::new(),
                &mut plain,
                &mut groups,
                &mut members,
            )
            .unwrap();
            assert_eq!(plain.len(), call, "{algorithm}");
            assert_eq!(groups.len(), 301 * call, "{algorithm}");
        }
        let (first, second) = groups.split_at(301);
        let keyed = |half: &[GroupMatch]| {
            half.iter()
                .map(|g| (key(&m, g), m.resolve(&members[g.members.clone()])))
                .collect::<BTreeMap<_, _>>()
        };
        let (first, second) = (keyed(first), keyed(second));
        assert_eq!(first.len(), 301, "{algorithm}: no group twice in one call");
        assert_eq!(first, second);
        assert_eq!(
            first[&("g7".to_owned(), "a/+/c".to_owned())],
            [Subscriber::Int(7)]
        );
        assert_eq!(
            first[&("g0".to_owned(), "a/b/c".to_owned())],
            [s("x"), s("y")]
        );
        assert_eq!(
            first[&("g0".to_owned(), "a/#".to_owned())],
            [Subscriber::Int(0)]
        );
    }
}

/// A matching group's `slot` and `id` as `lookup_groups_into` reports them, for `topic`.
fn slot_and_id(m: &Engine, topic: &str) -> (usize, u64) {
    let (_, groups, _) = lookup_groups(m, topic);
    assert_eq!(groups.len(), 1, "{topic}");
    (groups[0].slot, groups[0].id)
}

/// A group keeps its slot and id while its members change; two groups held at once have two
/// slots; a group formed after one left may take its slot, never its id.
#[test]
fn a_groups_slot_and_id_name_it_alone_while_it_is_held() {
    for &algorithm in Algorithm::ALL {
        let m = grouped(Dialect::Mqtt, algorithm, GroupPolicy::RoundRobin);
        let first = m.subscribe_group("a/#", &s("x"), "g").unwrap();
        let (slot, id) = slot_and_id(&m, "a/1");
        let other = m.subscribe_group("b/#", &s("x"), "g").unwrap();
        let (other_slot, other_id) = slot_and_id(&m, "b/1");
        assert_ne!(other_slot, slot, "{algorithm}");
        assert_ne!(other_id, id, "{algorithm}");
        let joined = m.subscribe_group("a/#", &s("y"), "g").unwrap();
        assert!(m.unsubscribe(first));
        assert_eq!(
            slot_and_id(&m, "a/1"),
            (slot, id),
            "{algorithm}: members changed"
        );
        assert!(m.unsubscribe(joined));
        m.subscribe_group("c/#", &s("z"), "h").unwrap();
        let (new_slot, new_id) = slot_and_id(&m, "c/1");
        assert_eq!(new_slot, slot, "{algorithm}: the slot given back is taken");
        assert_ne!(new_id, id, "{algorithm}");
        assert_eq!(
            m.group_key(id),
            None,
            "{algorithm}: the gone group has no key"
        );
        assert_eq!(
            m.group_key(new_id),
            Some(("h".into(), "c/#".into())),
            "{algorithm}"
        );
        assert_eq!(m.group_key(other_id), Some(("g".into(), "b/#".into())));
        assert_eq!(slot_and_id(&m, "b/1"), (other_slot, other_id));
        assert!(m.unsubscribe(other));
    }
}

/// Groups of new names come and go on two subjects while a thread looks one up: a group that
/// left gives its index to the next, and no lookup of the first subject ever gets a member of
/// a group of the second.
#[test]
fn a_lookup_never_sees_the_group_that_took_a_gone_groups_place() {
    use std::sync::atomic::{AtomicBool, Ordering};
    for algorithm in [
        Algorithm::Cstrie,
        Algorithm::Trie,
        Algorithm::InvertedBitmap,
    ] {
        let m = Arc::new(grouped(Dialect::Nats, algorithm, GroupPolicy::RoundRobin));
        m.subscribe("jobs.a", &Subscriber::Int(0)).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let churn = {
            let (m, stop) = (m.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut k = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    for (subject, member) in [("jobs.a", 1), ("jobs.b", 2)] {
                        let id = m
                            .subscribe_group(subject, &Subscriber::Int(member), &format!("q{k}"))
                            .unwrap();
                        m.unsubscribe(id);
                    }
                    k += 1;
                }
            })
        };
        let (mut plain, mut groups, mut members) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..20_000 {
            for x in m.lookup("jobs.a").unwrap() {
                assert!(matches!(x, Subscriber::Int(0 | 1)), "{algorithm}: {x:?}");
            }
            plain.clear();
            groups.clear();
            members.clear();
            m.lookup_groups_into(
                "jobs.a",
                &Message::new(),
                &mut plain,
                &mut groups,
                &mut members,
            )
            .unwrap();
            assert_eq!(m.resolve(&plain), [Subscriber::Int(0)], "{algorithm}");
            for g in &groups {
                // Gone since the lookup (its place perhaps taken by a group on "jobs.b"): no
                // key, not the other group's.
                if let Some((_, pattern)) = m.group_key(g.id) {
                    assert_eq!(&*pattern, "jobs.a", "{algorithm}");
                }
                assert_eq!(
                    m.resolve(&members[g.members.clone()]),
                    [Subscriber::Int(1)],
                    "{algorithm}"
                );
            }
        }
        stop.store(true, Ordering::Relaxed);
        churn.join().unwrap();
        assert_eq!(m.lookup("jobs.a").unwrap(), [Subscriber::Int(0)]);
    }
}

#[test]
fn threads_joining_and_leaving_never_see_a_stranger() {
    use std::sync::atomic::{AtomicBool, Ordering};
    for algorithm in [
        Algorithm::Cstrie,
        Algorithm::Trie,
        Algorithm::InvertedBitmap,
    ] {
        let m = Arc::new(grouped(Dialect::Amqp, algorithm, GroupPolicy::RoundRobin));
        m.subscribe_group("jobs.*", &Subscriber::Int(0), "q")
            .unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let churn = {
            let (m, stop) = (m.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut k = 1;
                while !stop.load(Ordering::Relaxed) {
                    let id = m
                        .subscribe_group("jobs.*", &Subscriber::Int(k), "q")
                        .unwrap();
                    m.unsubscribe(id);
                    k = k % 50 + 1;
                }
            })
        };
        for _ in 0..20_000 {
            let got = m.lookup("jobs.x").unwrap();
            assert_eq!(got.len(), 1, "{algorithm}: one member of the one group");
            assert!(matches!(got[0], Subscriber::Int(i) if (0..=50).contains(&i)));
        }
        stop.store(true, Ordering::Relaxed);
        churn.join().unwrap();
        assert_eq!(m.lookup("jobs.x").unwrap(), vec![Subscriber::Int(0)]);
    }
}

#[test]
fn answers_by_topic_until_a_group_or_a_filter_is_ever_held() {
    let m = grouped(Dialect::Mqtt, Algorithm::Cstrie, GroupPolicy::RoundRobin);
    assert!(m.answers_by_topic());
    m.subscribe("jobs/#", &s("audit")).unwrap();
    assert!(m.answers_by_topic(), "a plain subscription picks nothing");
    let member = m.subscribe_group("jobs/#", &s("w1"), "workers").unwrap();
    assert!(
        !m.answers_by_topic(),
        "a group's member is picked per message"
    );
    assert!(m.unsubscribe(member));
    assert!(
        !m.answers_by_topic(),
        "never cleared: a lookup racing the group may have seen it"
    );

    let m = engine(Dialect::Mqtt, Algorithm::Trie);
    let filter = Filter::new(
        [("k".into(), Criterion::Eq(Value::from(1_i64)))].into(),
        Mode::All,
    )
    .unwrap();
    m.subscribe_where("jobs/#", &s("k"), &filter).unwrap();
    assert!(!m.answers_by_topic());
}
