//! Property tests of `TopicStore` against the scan: after random inserts and removals, every
//! query (whole, counted, in pages, in a batch) returns exactly the stored topics that
//! `Pattern::matches_words` accepts, with their values, in word order; in every dialect.

use std::collections::BTreeMap;

use proptest::prelude::*;
use topicmatch_core::topic::split_words;
use topicmatch_core::{Dialect, Limits, Pattern, StoreLimits, TopicStore};

/// Words topics and filters are made of: empty words, `$` first levels, shared prefixes, a
/// byte below the separator (`-`), wildcard characters inside words, and words about eight
/// bytes long (the store spells words up to eight bytes in its nodes and interns longer ones)
/// sharing their first eight bytes.
const WORDS: [&str; 12] = [
    "a",
    "b",
    "",
    "$s",
    "ab",
    "a-b",
    "x*",
    "#y",
    "abcdefgh",
    "abcdefghi",
    "abcdefgh-z",
    "$abcdefghi",
];

fn text(dialect: Dialect, words: &[String]) -> String {
    words.join(&char::from(dialect.separator()).to_string())
}

fn word_list(dialect: Dialect, t: &str) -> Vec<&str> {
    split_words(dialect, t).collect()
}

/// The scan: every stored topic tested with the reference semantics, sorted by word list.
fn scan(dialect: Dialect, model: &BTreeMap<String, u32>, filter: &str) -> Vec<(String, u32)> {
    let pattern = Pattern::parse(dialect, &Limits::for_dialect(dialect), filter).unwrap();
    let mut out: Vec<(String, u32)> = model
        .iter()
        .filter(|(t, _)| pattern.matches_words(&word_list(dialect, t)))
        .map(|(t, v)| (t.clone(), *v))
        .collect();
    out.sort_by(|a, b| word_list(dialect, &a.0).cmp(&word_list(dialect, &b.0)));
    out
}

fn topic_words() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(
        prop::sample::select(&WORDS[..]).prop_map(str::to_owned),
        0..5,
    )
}

fn filter_words() -> impl Strategy<Value = Vec<String>> {
    let word = prop_oneof![
        3 => prop::sample::select(&WORDS[..]).prop_map(str::to_owned),
        2 => Just("ONE".to_owned()),
        2 => Just("MULTI".to_owned()),
    ];
    prop::collection::vec(word, 0..6)
}

fn filter_text(dialect: Dialect, words: &[String]) -> String {
    let words: Vec<String> = words
        .iter()
        .map(|w| match w.as_str() {
            "ONE" => dialect.one_wildcard().to_owned(),
            "MULTI" => dialect.multi_wildcard().to_owned(),
            _ => w.clone(),
        })
        .collect();
    text(dialect, &words)
}

fn check(
    dialect: Dialect,
    inserts: &[Vec<String>],
    removes: &[prop::sample::Index],
    filters: &[Vec<String>],
    page: usize,
) -> Result<(), TestCaseError> {
    let store = TopicStore::new(dialect);
    let mut model = BTreeMap::new();
    for (i, words) in inserts.iter().enumerate() {
        let topic = text(dialect, words);
        let value = i as u32;
        match store.insert(&topic, value) {
            Ok(old) => prop_assert_eq!(old, model.insert(topic, value)),
            Err(_) => prop_assert!(store.get(&topic).is_err()),
        }
    }
    let stored: Vec<String> = model.keys().cloned().collect();
    for index in removes {
        if stored.is_empty() {
            break;
        }
        let topic = index.get(&stored);
        prop_assert_eq!(store.remove(topic).unwrap(), model.remove(topic));
    }
    prop_assert_eq!(store.len(), model.len());
    let everything: Vec<(String, u32)> = {
        let mut all: Vec<(String, u32)> = model.iter().map(|(t, v)| (t.clone(), *v)).collect();
        all.sort_by(|a, b| word_list(dialect, &a.0).cmp(&word_list(dialect, &b.0)));
        all
    };
    let mut walked = Vec::new();
    store
        .read()
        .for_each(|t, v| walked.push((t.to_owned(), *v)));
    prop_assert_eq!(&walked, &everything);
    let mut texts = Vec::new();
    for words in filters {
        let filter = filter_text(dialect, words);
        let Ok(parsed) = store.filter(&filter) else {
            prop_assert!(store.matches(&filter).is_err());
            continue;
        };
        let expected = scan(dialect, &model, &filter);
        prop_assert_eq!(
            &store.matches(&filter).unwrap(),
            &expected,
            "{} {:?}",
            dialect,
            filter
        );
        prop_assert_eq!(store.count(&filter).unwrap(), expected.len());
        // Read in pages, the result is the same.
        let mut paged = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let mut got = Vec::new();
            let done = store
                .read()
                .page(Some(&parsed), after.as_deref(), page, |t, v| {
                    got.push((t.to_owned(), *v));
                })
                .unwrap();
            prop_assert!(got.len() <= page);
            if let Some((t, _)) = got.last() {
                after = Some(t.clone());
            }
            paged.extend(got);
            if done {
                break;
            }
        }
        prop_assert_eq!(&paged, &expected);
        texts.push(filter);
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let many = store.match_many(&refs).unwrap();
    for (filter, got) in refs.iter().zip(many) {
        prop_assert_eq!(got, scan(dialect, &model, filter));
    }
    Ok(())
}

/// Every (topic, value) of `store`, in order.
fn contents(store: &TopicStore<usize>) -> Vec<(String, usize)> {
    let mut all = Vec::new();
    store.read().for_each(|t, v| all.push((t.to_owned(), *v)));
    all
}

proptest! {
    /// `insert_many` stores what the same inserts one by one store (a topic given twice keeps
    /// its last value); a batch that the inserts one by one would fail on (an invalid topic,
    /// a new topic past `max_topics`) is refused whole and changes nothing.
    #[test]
    fn insert_many_equals_inserts_in_order(
        before in prop::collection::vec(topic_words(), 0..10),
        batch in prop::collection::vec(topic_words(), 0..40),
        cap in 0usize..40,
    ) {
        for dialect in [Dialect::Mqtt, Dialect::Amqp, Dialect::Nats] {
            let limits = StoreLimits { max_topics: cap, ..StoreLimits::for_dialect(dialect) };
            let (one, many) = (TopicStore::with_limits(dialect, limits), TopicStore::with_limits(dialect, limits));
            for (i, words) in before.iter().enumerate() {
                let topic = text(dialect, words);
                prop_assert_eq!(one.insert(&topic, i).is_ok(), many.insert(&topic, i).is_ok());
            }
            let items: Vec<(String, usize)> = batch
                .iter()
                .enumerate()
                .map(|(i, words)| (text(dialect, words), 100 + i))
                .collect();
            let mut fails = false;
            for (topic, value) in &items {
                fails |= one.insert(topic, *value).is_err();
            }
            let was = contents(&many);
            let done = many.insert_many(items.iter().map(|(t, v)| (t.as_str(), *v)));
            prop_assert_eq!(done.is_err(), fails, "{} {:?}", dialect, items);
            if fails {
                prop_assert_eq!(contents(&many), was);
            } else {
                prop_assert_eq!(contents(&many), contents(&one));
                prop_assert_eq!(many.len(), one.len());
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn amqp_store_equals_the_scan(
        inserts in prop::collection::vec(topic_words(), 0..40),
        removes in prop::collection::vec(any::<prop::sample::Index>(), 0..15),
        filters in prop::collection::vec(filter_words(), 1..8),
        page in 1usize..5,
    ) {
        check(Dialect::Amqp, &inserts, &removes, &filters, page)?;
    }

    #[test]
    fn mqtt_store_equals_the_scan(
        inserts in prop::collection::vec(topic_words(), 0..40),
        removes in prop::collection::vec(any::<prop::sample::Index>(), 0..15),
        filters in prop::collection::vec(filter_words(), 1..8),
        page in 1usize..5,
    ) {
        check(Dialect::Mqtt, &inserts, &removes, &filters, page)?;
    }

    #[test]
    fn nats_store_equals_the_scan(
        inserts in prop::collection::vec(topic_words(), 0..40),
        removes in prop::collection::vec(any::<prop::sample::Index>(), 0..15),
        filters in prop::collection::vec(filter_words(), 1..8),
        page in 1usize..5,
    ) {
        check(Dialect::Nats, &inserts, &removes, &filters, page)?;
    }

    /// Many children (sorted blocks and their index) and churn (pruning, compaction) keep
    /// the answers.
    #[test]
    fn wide_levels_and_churn(
        keys in prop::collection::vec(0u32..3000, 1..1500),
        gone in prop::collection::vec(any::<prop::sample::Index>(), 0..1500),
        probe in 0u32..3000,
    ) {
        let dialect = Dialect::Mqtt;
        let store = TopicStore::new(dialect);
        let mut model = BTreeMap::new();
        for (i, k) in keys.iter().enumerate() {
            let topic = format!("w/{}/{}", k % 97, k);
            store.insert(&topic, i as u32).unwrap();
            model.insert(topic, i as u32);
        }
        let stored: Vec<String> = model.keys().cloned().collect();
        for index in &gone {
            let topic = index.get(&stored);
            prop_assert_eq!(store.remove(topic).unwrap(), model.remove(topic));
        }
        for filter in ["#", "w/+/+", &format!("w/{}/+", probe % 97), &format!("+/+/{probe}"), "w/#"] {
            prop_assert_eq!(store.matches(filter).unwrap(), scan(dialect, &model, filter));
        }
        for (t, v) in &model {
            prop_assert_eq!(store.get(t).unwrap(), Some(*v));
        }
    }
}
