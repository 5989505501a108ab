//! The fuzz harness: decodes raw bytes into inputs and checks every property. It depends on
//! topicmatch-core only, so `crates/topicmatch-core/tests/fuzz_regressions.rs` includes this
//! very file to replay the committed regression inputs under plain `cargo test`.
//!
//! Two targets: [`parse`] (the pattern and topic parsers of every dialect never panic, fail
//! only with their typed errors, and agree with `matches`; `covers` and `intersects` keep their
//! laws and agree with `matches` on a topic) and [`differential`] (an arbitrary sequence of
//! subscribe (plain or into a group), unsubscribe, lookup (with each group's member chosen by
//! the topic's hash, and the groups apart), `matches_any`, `covering` and `intersecting` gives
//! identical results on every algorithm and on `naive`, whose relations agree with a scan).

use topicmatch_core::fields::Message;
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
    let (mut plain, mut groups) = (Vec::new(), Vec::new());
    e.lookup_groups_into(topic, &Message::new(), &mut plain, &mut groups)?;
    let mut described: Vec<String> = groups
        .iter()
        .map(|g| {
            format!(
                "{}|{}|{:?}",
                g.name,
                g.pattern,
                sorted(e.resolve(&g.members))
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
                let subscriber = subscriber(s);
                let expected = oracle.subscribe_group(&pattern, &subscriber, &group);
                for e in others {
                    let got = e.subscribe_group(&pattern, &subscriber, &group);
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
            0 | 1 => {
                let (Some(pattern), Some(s)) = (input.text(dialect), input.byte()) else {
                    break;
                };
                let subscriber = subscriber(s);
                let expected = oracle.subscribe(&pattern, &subscriber);
                for e in others {
                    let got = e.subscribe(&pattern, &subscriber);
                    assert_eq!(got, expected, "{} subscribe {pattern:?}", e.algorithm());
                }
                if let Ok(id) = expected {
                    ids.push(id);
                }
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
