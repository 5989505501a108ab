//! `TopicStore` under threads: writers churn their own topics (splitting and merging runs,
//! growing and shrinking wide levels, compacting) while readers query. Every answer must be
//! one the store gave at some instant: sorted, without duplicates, only matching topics, and
//! every permanent topic exactly once; a result read in pages across the writes still holds
//! every permanent topic exactly once, in order.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::thread;

use topicmatch_core::topic::split_words;
use topicmatch_core::{matches, Dialect, TopicStore};

const DIALECT: Dialect = Dialect::Mqtt;

fn words(t: &str) -> Vec<&str> {
    split_words(DIALECT, t).collect()
}

fn check_sorted_unique(found: &[String]) {
    for pair in found.windows(2) {
        assert!(words(&pair[0]) < words(&pair[1]), "{pair:?} out of order");
    }
}

#[test]
fn readers_see_consistent_answers_while_writers_churn() {
    let store: TopicStore<u64> = TopicStore::new(DIALECT);
    let permanent: Vec<String> = (0..400).map(|i| format!("p/{}/{i}", i % 40)).collect();
    for (i, t) in permanent.iter().enumerate() {
        store.insert(t, i as u64).unwrap();
    }
    let mut sorted_permanent = permanent.clone();
    sorted_permanent.sort_by(|a, b| words(a).cmp(&words(b)));
    let done = AtomicBool::new(false);
    let start = Barrier::new(4);
    thread::scope(|s| {
        for w in 0..2u64 {
            let (store, start, done) = (&store, &start, &done);
            s.spawn(move || {
                start.wait();
                for round in 0..300u64 {
                    // Topics that share the permanent ones' prefixes, so runs split and merge
                    // and the wide level grows and shrinks under the readers.
                    for i in 0..40 {
                        store.insert(&format!("p/{i}/w{w}"), round).unwrap();
                        store.insert(&format!("p/{i}/{round}/w{w}"), round).unwrap();
                    }
                    for i in 0..40 {
                        assert_eq!(store.remove(&format!("p/{i}/w{w}")).unwrap(), Some(round));
                        store.remove(&format!("p/{i}/{round}/w{w}")).unwrap();
                    }
                    if round % 100 == 99 {
                        store.compact();
                    }
                }
                done.store(true, Ordering::Release);
            });
        }
        for _ in 0..2 {
            let (store, start, done, permanent, sorted_permanent) =
                (&store, &start, &done, &permanent, &sorted_permanent);
            s.spawn(move || {
                start.wait();
                let filter = store.filter("p/+/#").unwrap();
                loop {
                    let finished = done.load(Ordering::Acquire);
                    for pattern in ["p/+/#", "#", "p/+/+", "+/7/#"] {
                        let found: Vec<String> = store
                            .matches(pattern)
                            .unwrap()
                            .into_iter()
                            .map(|(t, _)| t)
                            .collect();
                        check_sorted_unique(&found);
                        for t in &found {
                            assert!(matches(DIALECT, pattern, t).unwrap(), "{pattern} {t}");
                        }
                        let kept: Vec<&String> =
                            found.iter().filter(|t| permanent.contains(*t)).collect();
                        let expected: Vec<&String> = sorted_permanent
                            .iter()
                            .filter(|t| matches(DIALECT, pattern, t).unwrap())
                            .collect();
                        assert_eq!(kept, expected, "{pattern}");
                    }
                    assert!(store.count("p/+/+").unwrap() >= permanent.len());
                    // Pages across writes: each permanent topic exactly once, in order.
                    let mut paged = Vec::new();
                    let mut after: Option<String> = None;
                    loop {
                        let mut page = Vec::new();
                        let end = store
                            .read()
                            .page(Some(&filter), after.as_deref(), 16, |t, _| {
                                page.push(t.to_owned());
                            })
                            .unwrap();
                        if let Some(last) = page.last() {
                            after = Some(last.clone());
                        }
                        paged.extend(page);
                        if end {
                            break;
                        }
                    }
                    check_sorted_unique(&paged);
                    let kept: Vec<&String> =
                        paged.iter().filter(|t| permanent.contains(*t)).collect();
                    assert_eq!(kept, sorted_permanent.iter().collect::<Vec<_>>());
                    if finished {
                        break;
                    }
                }
            });
        }
    });
    assert_eq!(store.len(), permanent.len());
    let all: Vec<String> = store
        .matches("#")
        .unwrap()
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    assert_eq!(all, sorted_permanent);
}
