//! The fuzz harness: decodes raw bytes into inputs and checks every property. It depends on
//! topicmatch-core only, so `crates/topicmatch-core/tests/fuzz_regressions.rs` includes this
//! very file to replay the committed regression inputs under plain `cargo test`.
//!
//! Three targets: [`parse`] (the pattern and topic parsers of every dialect never panic, fail
//! only with their typed errors, and agree with `matches`; `covers` and `intersects` keep their
//! laws and agree with `matches` on a topic), [`differential`] (an arbitrary sequence of
//! subscribe (plain or into a group), unsubscribe, lookup (with each group's member chosen by
//! the topic's hash, and the groups apart), `matches_any`, `covering` and `intersecting` gives
//! identical results on every algorithm and on `naive`, whose relations agree with a scan) and
//! [`filtered`] (plain and `where=` subscriptions, many on one pattern at once, unsubscribes,
//! and lookups with messages, singly and in batches, give identical results on every algorithm
//! and on `naive`, whose answers agree with a scan evaluating each filter in the harness).

use topicmatch_core::fields::{Criterion, Filter, Message, Mode, Value};
use topicmatch_core::pattern::matched_text;
use topicmatch_core::{
    covers, intersects, matches, parse_topic, relation, Algorithm, Dialect, Engine, Error,
    GroupPolicy, Limits, Pattern, Subscriber, Subscription, Word,
};

/// Words the decoder builds texts from: every separator, wildcard and rule-breaking character
/// of every dialect, so short inputs reach every validation branch.
const WORDS: &[&str] = &[
    "a", "b", "", "$s", "*", "#", "+", ">", "a#", "*b", "\0", " ", "é", ".", "/", "a.b",
];

/// A cursor over the fuzzer's bytes; running out ends the input.
struct Input<'a> {
    data: &'a [u8],
}

impl Input<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.data.split_first()?;
        self.data = rest;
        Some(b)
    }

    fn dialect(&mut self) -> Option<Dialect> {
        Some(Dialect::ALL[usize::from(self.byte()?) % Dialect::ALL.len()])
    }

    /// A text: a few vocabulary words joined by the separator, or raw (lossy UTF-8) bytes.
    fn text(&mut self, dialect: Dialect) -> Option<String> {
        let head = self.byte()?;
        let len = usize::from(head >> 1) % 12;
        if head & 1 == 0 {
            let sep = char::from(dialect.separator()).to_string();
            let words = (0..len)
                .map(|_| self.byte().map(|b| WORDS[usize::from(b) % WORDS.len()]))
                .collect::<Option<Vec<_>>>()?;
            Some(words.join(&sep))
        } else {
            let take = (len * 3).min(self.data.len());
            let (raw, rest) = self.data.split_at(take);
            self.data = rest;
            Some(String::from_utf8_lossy(raw).into_owned())
        }
    }
}

/// Small limits, so inputs also reach the limit errors.
fn tight() -> Limits {
    Limits {
        max_topic_bytes: 24,
        max_levels: 4,
        max_subscriptions: 12,
        max_multi_wildcards: 2,
    }
}

/// The text of pattern words, joined back.
fn rejoin(dialect: Dialect, words: &[Word]) -> String {
    let sep = char::from(dialect.separator()).to_string();
    let texts: Vec<&str> = words
        .iter()
        .map(|w| match w {
            Word::Literal(l) => l,
            Word::One => dialect.one_wildcard(),
            Word::Multi => dialect.multi_wildcard(),
        })
        .collect();
    texts.join(&sep)
}

fn check_parsers(dialect: Dialect, limits: &Limits, pattern: &str, topic: &str) {
    let sep = char::from(dialect.separator()).to_string();
    let p = Pattern::parse(dialect, limits, pattern);
    match &p {
        // An MQTT shared subscription `$share/{name}/{filter}` is the pattern of its filter.
        Ok(parsed) => assert_eq!(
            rejoin(dialect, parsed.words()),
            matched_text(dialect, pattern),
            "{dialect}"
        ),
        Err(e) => assert!(
            matches!(
                e,
                Error::InvalidPattern { .. } | Error::LimitExceeded { .. }
            ),
            "{dialect} pattern {pattern:?}: {e:?}"
        ),
    }
    let t = parse_topic(dialect, limits, topic);
    match &t {
        Ok(words) => assert_eq!(words.join(&sep), topic, "{dialect}"),
        Err(e) => assert!(
            matches!(e, Error::InvalidTopic { .. } | Error::LimitExceeded { .. }),
            "{dialect} topic {topic:?}: {e:?}"
        ),
    }
    if let (Ok(p), Ok(words)) = (&p, &t) {
        let hit = p.matches_words(words);
        if !p.has_wildcards() {
            assert_eq!(
                hit,
                **words
                    == *p
                        .words()
                        .iter()
                        .map(|w| w.literal().unwrap())
                        .collect::<Vec<_>>()
            );
        }
        let catch_all = Pattern::parse(dialect, limits, dialect.multi_wildcard()).unwrap();
        let hidden = dialect == Dialect::Mqtt && topic.starts_with('$');
        assert_eq!(
            catch_all.matches_words(words),
            !hidden,
            "{dialect} {topic:?}"
        );
    }
}

/// The parse target: a dialect byte, then a pattern and a topic.
pub fn parse(data: &[u8]) {
    let mut input = Input { data };
    let Some(dialect) = input.dialect() else {
        return;
    };
    let (Some(pattern), Some(topic)) = (input.text(dialect), input.text(dialect)) else {
        return;
    };
    let defaults = Limits::for_dialect(dialect);
    check_parsers(dialect, &defaults, &pattern, &topic);
    check_parsers(dialect, &tight(), &pattern, &topic);
    let got = matches(dialect, &pattern, &topic);
    let expected = Pattern::parse(dialect, &defaults, &pattern)
        .and_then(|p| parse_topic(dialect, &defaults, &topic).map(|words| p.matches_words(&words)));
    assert_eq!(got, expected, "{dialect} matches({pattern:?}, {topic:?})");
    check_relations(dialect, &defaults, &pattern, &topic);
}

/// `covers` and `intersects` of two texts: typed errors only, the laws of a preorder inside a
/// symmetric relation, and on a topic that is also a wildcard-free pattern (matched whole)
/// both are `matches`.
fn check_relations(dialect: Dialect, limits: &Limits, a: &str, b: &str) {
    let (pa, pb) = match (
        Pattern::parse(dialect, limits, a),
        Pattern::parse(dialect, limits, b),
    ) {
        (Ok(pa), Ok(pb)) => (pa, pb),
        (Err(e), _) | (_, Err(e)) => {
            for got in [covers(dialect, a, b), intersects(dialect, a, b)] {
                assert!(
                    matches!(
                        got,
                        Err(Error::InvalidPattern { .. } | Error::LimitExceeded { .. })
                    ),
                    "{dialect} ({a:?}, {b:?}): {got:?} beside {e:?}"
                );
            }
            return;
        }
    };
    let meet = relation::intersects(&pa, &pb).expect("one dialect");
    assert_eq!(
        meet,
        relation::intersects(&pb, &pa).expect("one dialect"),
        "{dialect} {a:?} {b:?}"
    );
    assert_eq!(relation::covers(&pa, &pa), Ok(true), "{dialect} {a:?}");
    match relation::covers(&pa, &pb) {
        // Every valid pattern matches some valid topic.
        Ok(true) => assert!(meet, "{dialect} covers({a:?}, {b:?}) but no intersection"),
        Ok(false) => {}
        Err(e) => assert!(
            matches!(e, Error::LimitExceeded { .. }),
            "{dialect} covers({a:?}, {b:?}): {e:?}"
        ),
    }
    let whole = matched_text(dialect, b) == b && !pb.has_wildcards();
    if let (true, Ok(words)) = (whole, parse_topic(dialect, limits, b)) {
        let hit = pa.matches_words(&words);
        assert_eq!(
            relation::covers(&pa, &pb),
            Ok(hit),
            "{dialect} covers({a:?}, {b:?})"
        );
        assert_eq!(meet, hit, "{dialect} intersects({a:?}, {b:?})");
    }
}

/// One engine per algorithm, `naive` first; groups choose by the topic's hash (the same
/// member on every engine), MQTT `$share` texts are groups if `shared`.
fn engines(dialect: Dialect, limits: Limits, shared: bool) -> Vec<Engine> {
    let mut algorithms = vec![Algorithm::Naive];
    algorithms.extend(Algorithm::ALL.iter().filter(|&&a| a != Algorithm::Naive));
    algorithms
        .into_iter()
        .map(|a| {
            Engine::new(dialect, a, limits)
                .and_then(|e| e.with_groups(GroupPolicy::Hash, shared && dialect == Dialect::Mqtt))
                .expect("valid limits")
        })
        .collect()
}

/// A subscriber from one byte.
fn subscriber(s: u8) -> Subscriber {
    if s & 1 == 0 {
        Subscriber::Int(i64::from(s >> 1))
    } else {
        Subscriber::Str(format!("s{}", s >> 1).into())
    }
}

/// `lookup_groups_into` resolved: the plain subscribers, sorted, and each group's members.
fn split(e: &Engine, topic: &str) -> topicmatch_core::Result<(Vec<Subscriber>, Vec<String>)> {
    let (mut plain, mut groups, mut members) = (Vec::new(), Vec::new(), Vec::new());
    e.lookup_groups_into(
        topic,
        &Message::new(),
        &mut plain,
        &mut groups,
        &mut members,
    )?;
    let mut described: Vec<String> = groups
        .iter()
        .map(|g| {
            // Sequential: every group found is still held.
            let (name, pattern) = e.group_key(g.id).expect("a group found is held");
            format!(
                "{name}|{pattern}|{:?}",
                sorted(e.resolve(&members[g.members.clone()]))
            )
        })
        .collect();
    described.sort();
    Ok((sorted(e.resolve(&plain)), described))
}

/// The differential target: a dialect byte, a limits byte, then operations, each applied to
/// every algorithm and compared with `naive`.
pub fn differential(data: &[u8]) {
    let mut input = Input { data };
    let (Some(dialect), Some(flags)) = (input.dialect(), input.byte()) else {
        return;
    };
    let limits = if flags & 1 == 0 {
        Limits::for_dialect(dialect)
    } else {
        tight()
    };
    let all = engines(dialect, limits, flags & 2 == 0);
    let (oracle, others) = all.split_first().expect("naive is there");
    let mut ids: Vec<u64> = Vec::new();
    for _ in 0..256 {
        let Some(op) = input.byte() else {
            break;
        };
        match op % 6 {
            5 => {
                let (Some(pattern), Some(s), Some(group)) =
                    (input.text(dialect), input.byte(), input.text(dialect))
                else {
                    break;
                };
                subscribe_all(
                    oracle,
                    others,
                    &pattern,
                    &subscriber(s),
                    Some(&group),
                    &mut ids,
                );
            }
            0 | 1 => {
                let (Some(pattern), Some(s)) = (input.text(dialect), input.byte()) else {
                    break;
                };
                subscribe_all(oracle, others, &pattern, &subscriber(s), None, &mut ids);
            }
            2 => {
                let Some(i) = input.byte() else {
                    break;
                };
                // Mostly held ids, sometimes one never issued.
                let id = ids
                    .get(usize::from(i) % (ids.len() + 1))
                    .copied()
                    .unwrap_or(u64::from(i));
                let expected = oracle.unsubscribe(id);
                for e in others {
                    assert_eq!(
                        e.unsubscribe(id),
                        expected,
                        "{} unsubscribe {id}",
                        e.algorithm()
                    );
                }
            }
            3 => {
                let Some(topic) = input.text(dialect) else {
                    break;
                };
                let expected = oracle.lookup(&topic).map(sorted);
                let expected_split = split(oracle, &topic);
                for e in others {
                    let got = e.lookup(&topic).map(sorted);
                    assert_eq!(got, expected, "{} lookup {topic:?}", e.algorithm());
                    assert_eq!(
                        split(e, &topic),
                        expected_split,
                        "{} groups {topic:?}",
                        e.algorithm()
                    );
                }
                // The same text as a pattern: the subscriptions it relates to.
                check_related(oracle, others, &topic);
            }
            _ => {
                let Some(topic) = input.text(dialect) else {
                    break;
                };
                let expected = oracle.matches_any(&topic);
                for e in others {
                    let got = e.matches_any(&topic);
                    assert_eq!(got, expected, "{} matches_any {topic:?}", e.algorithm());
                }
            }
        }
    }
    for e in others {
        assert_eq!(
            e.subscriptions(),
            oracle.subscriptions(),
            "{}",
            e.algorithm()
        );
        assert_eq!(e.groups(), oracle.groups(), "{}", e.algorithm());
        assert_eq!(e.next_id(), oracle.next_id());
    }
}

/// Subscribes on every engine (into `group` if given), which must all answer as `naive`;
/// keeps the id.
fn subscribe_all(
    oracle: &Engine,
    others: &[Engine],
    pattern: &str,
    subscriber: &Subscriber,
    group: Option<&str>,
    ids: &mut Vec<u64>,
) {
    let subscribe = |e: &Engine| match group {
        Some(group) => e.subscribe_group(pattern, subscriber, group),
        None => e.subscribe(pattern, subscriber),
    };
    let expected = subscribe(oracle);
    for e in others {
        let got = subscribe(e);
        assert_eq!(
            got,
            expected,
            "{} subscribe {pattern:?} in {group:?}",
            e.algorithm()
        );
    }
    if let Ok(id) = expected {
        ids.push(id);
    }
}

/// `covering` and `intersecting` of `query` on every engine as on `naive`, whose answer is the
/// scan of its subscriptions by `covers` / `intersects`.
fn check_related(oracle: &Engine, others: &[Engine], query: &str) {
    type Relate = fn(&Engine, &str) -> topicmatch_core::Result<Vec<Subscription>>;
    type Decide = fn(Dialect, &str, &str) -> topicmatch_core::Result<bool>;
    let dialect = oracle.dialect();
    let kinds: [(&str, Relate, Decide); 2] = [
        ("covering", Engine::covering, covers),
        ("intersecting", Engine::intersecting, intersects),
    ];
    for (name, relate, decide) in kinds {
        let expected = relate(oracle, query);
        for e in others {
            assert_eq!(
                relate(e, query),
                expected,
                "{} {name} {query:?}",
                e.algorithm()
            );
        }
        if let Ok(found) = expected {
            let scan: Vec<Subscription> = oracle
                .subscriptions()
                .into_iter()
                .filter(|s| decide(dialect, &s.pattern, query) == Ok(true))
                .collect();
            assert_eq!(found, scan, "naive {name} {query:?}");
        }
    }
}

fn sorted(mut subs: Vec<Subscriber>) -> Vec<Subscriber> {
    subs.sort();
    subs
}

/// A criterion of the filtered target, on a field of small integer values, as the harness
/// evaluates it itself.
#[derive(Clone, Copy, Debug)]
enum Want {
    Present,
    Eq(i64),
    /// Either of two values.
    In(i64, i64),
    Gt(i64),
}

impl Want {
    fn decode(b: u8) -> Want {
        let v = i64::from(b >> 2) % 4;
        match b & 3 {
            0 => Want::Present,
            1 => Want::Eq(v),
            2 => Want::In(v, (v + 1) % 4),
            _ => Want::Gt(v),
        }
    }

    fn criterion(self) -> Criterion {
        match self {
            Want::Present => Criterion::Present,
            Want::Eq(v) => Criterion::Eq(Value::from(v)),
            Want::In(a, b) => Criterion::In(vec![Value::from(a), Value::from(b)]),
            Want::Gt(v) => Criterion::Gt(Value::from(v)),
        }
    }

    /// Whether a message's `field` meets it.
    fn met(self, field: Field) -> bool {
        match (self, field) {
            (Want::Present, Field::Opaque | Field::Int(_)) => true,
            (Want::Eq(v), Field::Int(x)) => x == v,
            (Want::In(a, b), Field::Int(x)) => x == a || x == b,
            (Want::Gt(v), Field::Int(x)) => x > v,
            (_, Field::Absent | Field::Opaque) => false,
        }
    }
}

/// A message's field in the filtered target.
#[derive(Clone, Copy, Debug)]
enum Field {
    Absent,
    /// Present, with a value no criterion can name.
    Opaque,
    Int(i64),
}

/// The fields the filtered target's criteria name.
const FIELDS: [&str; 2] = ["k", "j"];

/// A filter of the filtered target: criteria on [`FIELDS`] and how many must be met.
#[derive(Clone, Debug)]
struct Criteria {
    each: Vec<(usize, Want)>,
    threshold: usize,
}

impl Criteria {
    /// One to three criteria, and a threshold from one to all of them.
    fn decode(input: &mut Input<'_>) -> Option<Criteria> {
        let head = input.byte()?;
        let n = usize::from(head % 3) + 1;
        let each = (0..n)
            .map(|_| input.byte().map(|b| (usize::from(b >> 7), Want::decode(b))))
            .collect::<Option<Vec<_>>>()?;
        let threshold = usize::from(head >> 2) % n + 1;
        Some(Criteria { each, threshold })
    }

    fn filter(&self) -> Filter {
        let criteria = self
            .each
            .iter()
            .map(|&(field, want)| (Box::from(FIELDS[field]), want.criterion()))
            .collect();
        Filter::new(criteria, Mode::AtLeast(self.threshold)).expect("a valid filter")
    }

    fn met(&self, message: &[Field; 2]) -> bool {
        let hits = self
            .each
            .iter()
            .filter(|&&(field, want)| want.met(message[field]))
            .count();
        hits >= self.threshold
    }
}

/// A message of the filtered target: each field absent, opaque or a small integer.
fn decode_message(b: u8) -> [Field; 2] {
    let field = |bits: u8| match bits % 6 {
        0 => Field::Absent,
        1 => Field::Opaque,
        v => Field::Int(i64::from(v) - 2),
    };
    [field(b), field(b >> 3)]
}

fn message(fields: &[Field; 2]) -> Message {
    let mut message = Message::new();
    for (name, field) in FIELDS.iter().zip(fields) {
        match *field {
            Field::Absent => {}
            Field::Opaque => message = message.with_opaque(name),
            Field::Int(v) => message = message.with(name, v),
        }
    }
    message
}

/// The filtered target: a dialect byte, then operations on every algorithm, plain and `where=`
/// subscriptions (one at a time, or many on one pattern at once, so that a pattern's bucket
/// grows past the size from which it is indexed and shrinks back), unsubscribes, and lookups
/// of topics with messages, singly and as a batch. Every engine answers as `naive`, and
/// `naive` as the harness's own scan of what it holds, each filter evaluated here.
pub fn filtered(data: &[u8]) {
    let mut input = Input { data };
    let Some(dialect) = input.dialect() else {
        return;
    };
    let all = engines(dialect, Limits::for_dialect(dialect), false);
    let (oracle, others) = all.split_first().expect("naive is there");
    let mut state = Filtered {
        oracle,
        others,
        held: Vec::new(),
        ids: Vec::new(),
    };
    for _ in 0..256 {
        let Some(op) = input.byte() else {
            break;
        };
        match op % 5 {
            0 | 1 => {
                let (Some(pattern), Some(s)) = (input.text(dialect), input.byte()) else {
                    break;
                };
                let criteria = if op % 5 == 1 {
                    let Some(criteria) = Criteria::decode(&mut input) else {
                        break;
                    };
                    Some(criteria)
                } else {
                    None
                };
                state.subscribe(&pattern, subscriber(s), criteria);
            }
            2 => {
                // Many subscribers on one pattern, each with criteria of its own.
                let (Some(pattern), Some(count), Some(first)) =
                    (input.text(dialect), input.byte(), input.byte())
                else {
                    break;
                };
                for i in 0..count % 48 {
                    let want = Want::decode(first.wrapping_add(i.wrapping_mul(5)));
                    let criteria = Criteria {
                        each: vec![(usize::from(i & 1), want)],
                        threshold: 1,
                    };
                    state.subscribe(&pattern, subscriber(first.wrapping_add(i)), Some(criteria));
                }
            }
            3 => {
                // Unsubscribe ids from one on, a run of them.
                let (Some(from), Some(count)) = (input.byte(), input.byte()) else {
                    break;
                };
                for i in usize::from(from)..usize::from(from) + usize::from(count % 40) {
                    state.unsubscribe(i);
                }
            }
            _ => {
                let (Some(topic), Some(m1), Some(m2)) =
                    (input.text(dialect), input.byte(), input.byte())
                else {
                    break;
                };
                let fields = [decode_message(m1), decode_message(m2)];
                let messages = [message(&fields[0]), message(&fields[1])];
                check_filtered(&all, &state.held, &topic, &fields, &messages);
            }
        }
    }
}

/// A subscription the filtered target holds: its id, pattern, subscriber and criteria (none:
/// plain).
type Held = (u64, String, Subscriber, Option<Criteria>);

/// The engines of the filtered target and what they hold.
struct Filtered<'e> {
    oracle: &'e Engine,
    others: &'e [Engine],
    held: Vec<Held>,
    /// Every id a subscribe returned, in order (an id again for a repeated subscribe).
    ids: Vec<u64>,
}

impl Filtered<'_> {
    /// Subscribes on every engine, with `criteria` if given; all must answer as `naive`.
    /// Keeps the id, and what it holds if new.
    fn subscribe(&mut self, pattern: &str, sub: Subscriber, criteria: Option<Criteria>) {
        let filter = criteria.as_ref().map(Criteria::filter);
        let on = |e: &Engine| match &filter {
            Some(filter) => e.subscribe_where(pattern, &sub, filter),
            None => e.subscribe(pattern, &sub),
        };
        let expected = on(self.oracle);
        for e in self.others {
            assert_eq!(on(e), expected, "{} subscribe {pattern:?}", e.algorithm());
        }
        if let Ok(id) = expected {
            self.ids.push(id);
            if !self.held.iter().any(|h| h.0 == id) {
                self.held.push((id, pattern.to_owned(), sub, criteria));
            }
        }
    }

    /// Unsubscribes the `i`-th id returned (wrapped, sometimes past the last: nothing) on
    /// every engine; all must answer alike, `true` only for an id held.
    fn unsubscribe(&mut self, i: usize) {
        let Some(&id) = self.ids.get(i % (self.ids.len() + 1)) else {
            return;
        };
        let expected = self.oracle.unsubscribe(id);
        for e in self.others {
            assert_eq!(e.unsubscribe(id), expected, "{} unsubscribe", e.algorithm());
        }
        assert_eq!(
            expected,
            self.held.iter().any(|h| h.0 == id),
            "unsubscribe {id}"
        );
        self.held.retain(|h| h.0 != id);
    }
}

/// One topic with two messages on `all` engines (`naive` first): each engine's single lookups
/// and batch as `naive`'s, and `naive`'s as the scan of `held`.
fn check_filtered(
    all: &[Engine],
    held: &[Held],
    topic: &str,
    fields: &[[Field; 2]; 2],
    messages: &[Message; 2],
) {
    let (oracle, others) = all.split_first().expect("naive is there");
    let dialect = oracle.dialect();
    let one = |e: &Engine, message: &Message| {
        let mut ids = Vec::new();
        e.lookup_fields_into(topic, message, &mut ids)
            .map(|()| sorted(e.resolve(&ids)))
    };
    for (fields, message) in fields.iter().zip(messages) {
        let expected = one(oracle, message);
        if let Ok(found) = &expected {
            let mut scan: Vec<Subscriber> = held
                .iter()
                .filter(|(_, pattern, _, criteria)| {
                    matches(dialect, pattern, topic) == Ok(true)
                        && criteria.as_ref().map_or(true, |c| c.met(fields))
                })
                .map(|h| h.2.clone())
                .collect();
            scan.sort();
            scan.dedup();
            assert_eq!(*found, scan, "naive {topic:?} {fields:?}");
        }
        for e in others {
            assert_eq!(
                one(e, message),
                expected,
                "{} {topic:?} {fields:?}",
                e.algorithm()
            );
            assert_eq!(
                e.matches_any_fields(topic, message).ok(),
                expected.as_ref().ok().map(|found| !found.is_empty()),
                "{} matches_any {topic:?}",
                e.algorithm()
            );
        }
    }
    let topics = [topic, topic];
    for e in all {
        let (mut ids, mut ends) = (Vec::new(), Vec::new());
        if e.lookup_batch_fields_into(&topics, messages, &mut ids, &mut ends)
            .is_ok()
        {
            let mut start = 0;
            for (end, message) in ends.into_iter().zip(messages) {
                assert_eq!(
                    Ok(sorted(e.resolve(&ids[start..end]))),
                    one(e, message),
                    "{} batch {topic:?}",
                    e.algorithm()
                );
                start = end;
            }
        }
    }
}
