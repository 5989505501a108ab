//! `covers` and `intersects` against their definitions: a brute-force oracle over every topic
//! up to a length that provably suffices ([`oracle`]), exhaustively on short patterns and by
//! property tests on longer ones; the peers' vectors of `tests/cases/relations.json`; the work
//! limit.

#[path = "relations/oracle.rs"]
mod oracle;

use proptest::prelude::*;
use serde_json::Value;
use topicmatch_core::relation::{self, DEFAULT_MAX_WORK};
use topicmatch_core::{covers, intersects, Dialect, Error, Limit, Limits, Pattern};

fn parse(dialect: Dialect, text: &str) -> Pattern {
    Pattern::parse(dialect, &Limits::for_dialect(dialect), text).expect("a valid pattern")
}

/// Both relations of (a, b) and (b, a) against the oracle.
fn agree(dialect: Dialect, a: &str, b: &str) -> Result<(), TestCaseError> {
    let (pa, pb) = (parse(dialect, a), parse(dialect, b));
    for (x, y, px, py) in [(a, b, &pa, &pb), (b, a, &pb, &pa)] {
        let got = relation::covers(px, py).expect("within the work limit");
        prop_assert_eq!(
            got,
            oracle::covers(px, py),
            "{} covers({:?}, {:?})",
            dialect,
            x,
            y
        );
        let got = relation::intersects(px, py).unwrap();
        prop_assert_eq!(
            got,
            oracle::intersects(px, py),
            "{} intersects({:?}, {:?})",
            dialect,
            x,
            y
        );
    }
    Ok(())
}

/// The literal words patterns are built from: empty words and `$` words where they matter.
fn literals(dialect: Dialect) -> &'static [&'static str] {
    match dialect {
        Dialect::Amqp => &["a", "b", ""],
        Dialect::Mqtt => &["a", "b", "", "$s"],
        Dialect::Nats => &["a", "b", "$s"],
    }
}

/// Every valid pattern of at most `max` words over the literals and wildcards.
fn all_patterns(dialect: Dialect, max: usize) -> Vec<String> {
    let mut vocabulary: Vec<&str> = literals(dialect).to_vec();
    vocabulary.extend([dialect.one_wildcard(), dialect.multi_wildcard()]);
    let sep = char::from(dialect.separator()).to_string();
    let mut texts = vec![String::new()];
    let mut layer = vec![Vec::<&str>::new()];
    for _ in 0..max {
        let mut next = Vec::new();
        for words in &layer {
            for w in &vocabulary {
                let mut longer = words.clone();
                longer.push(w);
                texts.push(longer.join(&sep));
                next.push(longer);
            }
        }
        layer = next;
    }
    texts.sort();
    texts.dedup();
    let limits = Limits::for_dialect(dialect);
    texts
        .into_iter()
        .filter(|t| Pattern::parse(dialect, &limits, t).is_ok())
        .collect()
}

#[test]
fn every_pair_of_short_patterns_agrees_with_brute_force() {
    for dialect in Dialect::ALL {
        let patterns = all_patterns(dialect, 2);
        assert!(patterns.len() > 20, "{dialect}: {patterns:?}");
        for a in &patterns {
            for b in &patterns {
                agree(dialect, a, b).unwrap();
            }
        }
    }
}

/// A valid pattern of up to five words (MQTT and NATS: the multi-word wildcard last).
fn pattern(dialect: Dialect) -> impl Strategy<Value = String> {
    let one = dialect.one_wildcard();
    let multi = dialect.multi_wildcard();
    let mut words: Vec<&'static str> = literals(dialect).to_vec();
    words.push(one);
    if dialect == Dialect::Amqp {
        words.push(multi);
    }
    let sep = char::from(dialect.separator()).to_string();
    (
        prop::collection::vec(prop::sample::select(words), 0..5),
        any::<bool>(),
    )
        .prop_map(move |(mut w, tail)| {
            if tail {
                w.push(multi);
            }
            w.join(&sep)
        })
        .prop_filter("valid", move |t| {
            Pattern::parse(dialect, &Limits::for_dialect(dialect), t).is_ok()
        })
}

/// Whether the oracle's enumeration for (a, b) stays small enough to run.
fn affordable(dialect: Dialect, a: &str, b: &str) -> bool {
    let (pa, pb) = (parse(dialect, a), parse(dialect, b));
    let size = oracle::alphabet(&pa, &pb).len();
    let len = [
        oracle::covers_bound(&pa, &pb),
        oracle::covers_bound(&pb, &pa),
        oracle::intersects_bound(&pa, &pb),
    ]
    .into_iter()
    .max()
    .unwrap();
    oracle::topics_up_to(size, len) <= 20_000
}

fn dialect_and_pair() -> impl Strategy<Value = (Dialect, String, String)> {
    prop::sample::select(Dialect::ALL.to_vec())
        .prop_flat_map(|d| (Just(d), pattern(d), pattern(d)))
        .prop_filter("enumerable", |(d, a, b)| affordable(*d, a, b))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn relations_agree_with_brute_force((dialect, a, b) in dialect_and_pair()) {
        agree(dialect, &a, &b)?;
    }

    #[test]
    fn covers_is_a_preorder_inside_intersects(
        (dialect, a, b) in dialect_and_pair(),
        c_seed in any::<prop::sample::Index>(),
    ) {
        let patterns = all_patterns(dialect, 2);
        let c = c_seed.get(&patterns);
        let (pa, pb, pc) = (parse(dialect, &a), parse(dialect, &b), parse(dialect, c));
        let ab = relation::covers(&pa, &pb).unwrap();
        prop_assert!(relation::covers(&pa, &pa).unwrap());
        // Every valid pattern matches some valid topic.
        prop_assert!(!ab || relation::intersects(&pa, &pb).unwrap());
        prop_assert_eq!(
            relation::intersects(&pa, &pb).unwrap(),
            relation::intersects(&pb, &pa).unwrap()
        );
        if ab && relation::covers(&pb, &pc).unwrap() {
            prop_assert!(relation::covers(&pa, &pc).unwrap(), "{} {:?} {:?} {:?}", dialect, a, b, c);
        }
    }
}

fn suites() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/cases/relations.json"
    );
    let text = std::fs::read_to_string(path).expect("relation case table exists");
    let table: Value = serde_json::from_str(&text).expect("relation case table is JSON");
    table["suites"].as_array().expect("suites").clone()
}

fn rows<'a>(suite: &'a Value, kind: &str) -> &'a [Value] {
    suite[kind].as_array().map_or(&[], Vec::as_slice)
}

#[test]
fn the_peers_vectors_hold() {
    let (mut count, mut checked) = (0, 0);
    for suite in suites() {
        let source = suite["source"].as_str().unwrap();
        let dialect: Dialect = suite["dialect"].as_str().unwrap().parse().unwrap();
        for (kind, f) in [
            ("covers", covers as fn(Dialect, &str, &str) -> _),
            ("intersects", intersects),
        ] {
            for row in rows(&suite, kind) {
                let (a, b) = (row[0].as_str().unwrap(), row[1].as_str().unwrap());
                let expected = row[2].as_bool().unwrap();
                assert_eq!(
                    f(dialect, a, b),
                    Ok(expected),
                    "{source}: {kind}({a:?}, {b:?})"
                );
                count += 1;
                // The rows agree with the definition too, where its enumeration is short.
                if !affordable(dialect, a, b) {
                    continue;
                }
                let (pa, pb) = (parse(dialect, a), parse(dialect, b));
                let oracle = if kind == "covers" {
                    oracle::covers(&pa, &pb)
                } else {
                    oracle::intersects(&pa, &pb)
                };
                assert_eq!(oracle, expected, "{source}: oracle {kind}({a:?}, {b:?})");
                checked += 1;
            }
        }
        for row in rows(&suite, "invalid") {
            let (a, b) = (row[0].as_str().unwrap(), row[1].as_str().unwrap());
            for result in [covers(dialect, a, b), intersects(dialect, a, b)] {
                assert!(
                    matches!(result, Err(Error::InvalidPattern { .. })),
                    "{source}: ({a:?}, {b:?}) gave {result:?}"
                );
            }
            count += 1;
        }
    }
    assert!(count > 200, "{count} rows");
    assert!(checked > 100, "{checked} rows checked by the oracle");
}

#[test]
fn patterns_of_two_dialects_are_not_related() {
    let a = parse(Dialect::Amqp, "a.*");
    let b = parse(Dialect::Nats, "a.*");
    assert!(matches!(
        relation::covers(&a, &b),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        relation::intersects(&a, &b),
        Err(Error::InvalidArgument(_))
    ));
}

/// `#.a.*^k.#` against `#.a.#.a.# …` (n runs): the sets of positions the specific pattern's
/// runs can leave the general one in multiply; a small budget stops the search, a larger one
/// decides it.
#[test]
fn a_costly_pair_stops_at_the_work_limit() {
    let k = 12;
    let general = format!("#.a{}.b.#", ".*".repeat(k));
    let specific = (0..14).map(|_| "a").collect::<Vec<_>>().join(".#.") + ".#.b";
    let (g, s) = (
        parse(Dialect::Amqp, &general),
        parse(Dialect::Amqp, &specific),
    );
    let err = relation::covers_within(&g, &s, 1000).unwrap_err();
    assert!(
        matches!(
            err,
            Error::LimitExceeded {
                limit: Limit::RelationWork,
                max: 1000,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("max_work"), "{err}");
    // With the default budget it is either decided or refused, never left running.
    match relation::covers(&g, &s) {
        Ok(_) => {}
        Err(e) => assert!(matches!(e, Error::LimitExceeded { max, .. } if max == DEFAULT_MAX_WORK)),
    }
    // A pattern covers itself at once, however many runs it has.
    assert_eq!(relation::covers(&s, &s), Ok(true));
}

#[test]
fn long_patterns_of_the_common_shapes_are_decided() {
    // 2,000 levels each: MQTT and NATS patterns have one multi-word wildcard, last.
    let levels = |w: &str| vec![w; 2000].join("/");
    let mqtt = |t: &str| parse(Dialect::Mqtt, t);
    let g = mqtt(&format!("{}/#", levels("+")));
    let s = mqtt(&format!("{}/#", levels("x")));
    assert_eq!(relation::covers(&g, &s), Ok(true));
    assert_eq!(relation::covers(&s, &g), Ok(false));
    assert_eq!(relation::intersects(&g, &s), Ok(true));
    let nats = |t: &str| parse(Dialect::Nats, t);
    let dotted = |w: &str| vec![w; 2000].join(".");
    let g = nats(&format!("{}.>", dotted("*")));
    let s = nats(&dotted("x"));
    assert_eq!(relation::covers(&g, &s), Ok(false));
    assert_eq!(relation::intersects(&g, &s), Ok(false));
    let s = nats(&format!("{}.y", dotted("x")));
    assert_eq!(relation::covers(&g, &s), Ok(true));
}
