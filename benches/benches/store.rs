//! `TopicStore`: the retained-message query ("which stored topics does this filter match?")
//! at 1M stored topics of the `large` shape (`tenant.region.device.sensor.metric.stat`), and
//! building the store.
//!
//! The store is built by inserts in random order. Rows per filter: `each` (`for_each_match`:
//! each match handed over as a borrowed `(&str, &u64)`, the topic text rebuilt in one buffer
//! as the walk descends: the output a Rust caller gets), `store` (each match copied into one
//! reused `Found` buffer, topic text and value id), `count` (the walk without building
//! topics) and `scan`, the baseline: every stored topic split into words and tested with
//! `Pattern::matches_words`, as a broker without an index does, each match copied into the
//! same `Found` buffer.
//! Filters: `plus` (`t00.us-east.*.temp.#`: one sensor of every device of one region),
//! `device` (`t00.us-east.<device>.#`: everything one device holds), `all` (`#`: every
//! topic, whose cost is the output). Throughput: matched topics per second.
//!
//! Build rows: `insert` (one `insert` per topic, in random order), `insert_many` (one call for
//! all of them) and `hashmap`, the baseline: the same topics into an `FxHashMap<String, u64>`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use topicmatch_benches::rows::configure;
use topicmatch_benches::{sized, stored_topics};
use topicmatch_core::topic::{split_words, Words};
use topicmatch_core::{Dialect, Found, Pattern, TopicStore};

const DIALECT: Dialect = Dialect::Amqp;

fn store_of(topics: &[String]) -> TopicStore<u64> {
    let store = TopicStore::new(DIALECT);
    for (id, topic) in (0..).zip(topics) {
        store.insert(topic, id).expect("valid topic");
    }
    store
}

/// The baseline: test every stored topic.
fn scan(pairs: &[(String, u64)], pattern: &Pattern, out: &mut Found<u64>) {
    for (topic, id) in pairs {
        let words: Words = split_words(DIALECT, topic).collect();
        if pattern.matches_words(&words) {
            out.push(topic, *id);
        }
    }
}

fn query_group(c: &mut Criterion) {
    let count = sized(1_000_000, 20_000);
    let topics = stored_topics(count, 24);
    let store = store_of(&topics);
    let pairs: Vec<(String, u64)> = (0..).zip(&topics).map(|(id, t)| (t.clone(), id)).collect();
    // A device stored under `t00.us-east`: the first one in order.
    let mut device = String::new();
    let region = store.filter("t00.us-east.#").expect("valid filter");
    store
        .read()
        .page(Some(&region), None, 1, |t, _| {
            t.split('.')
                .nth(2)
                .expect("six words")
                .clone_into(&mut device);
        })
        .expect("same dialect");
    let filters = [
        ("plus", "t00.us-east.*.temp.#".to_owned()),
        ("device", format!("t00.us-east.{device}.#")),
        ("all", "#".to_owned()),
    ];
    let mut group = c.benchmark_group("store_query");
    configure(&mut group);
    let label = topicmatch_benches::workloads::large::size_label(count);
    for (name, text) in &filters {
        let filter = store.filter(text).expect("valid filter");
        let expected = store.count(text).expect("valid filter");
        group.throughput(Throughput::Elements(expected.max(1) as u64));
        let mut found = Found::new();
        group.bench_function(BenchmarkId::new("store", format!("{name}/{label}")), |b| {
            b.iter(|| {
                found.clear();
                store
                    .read()
                    .match_into(black_box(&filter), &mut found)
                    .expect("same dialect");
                assert_eq!(found.len(), expected);
                black_box(found.len())
            });
        });
        group.bench_function(BenchmarkId::new("each", format!("{name}/{label}")), |b| {
            b.iter(|| {
                let mut bytes = 0;
                store
                    .read()
                    .for_each_match(black_box(&filter), |topic, id| {
                        bytes += topic.len() + usize::from(*id > 0);
                    })
                    .expect("same dialect");
                black_box(bytes)
            });
        });
        let pattern = filter.pattern().clone();
        group.bench_function(BenchmarkId::new("scan", format!("{name}/{label}")), |b| {
            b.iter(|| {
                found.clear();
                scan(&pairs, black_box(&pattern), &mut found);
                assert_eq!(found.len(), expected);
                black_box(found.len())
            });
        });
        group.bench_function(BenchmarkId::new("count", format!("{name}/{label}")), |b| {
            b.iter(|| {
                store
                    .read()
                    .count(black_box(&filter))
                    .expect("same dialect")
            });
        });
    }
    group.finish();
}

fn build_group(c: &mut Criterion) {
    let count = sized(1_000_000, 20_000);
    let topics = stored_topics(count, 24);
    let label = topicmatch_benches::workloads::large::size_label(count);
    let mut group = c.benchmark_group("store_build");
    configure(&mut group);
    group.throughput(Throughput::Elements(count as u64));
    group.bench_function(BenchmarkId::new("insert", &label), |b| {
        b.iter_with_large_drop(|| store_of(black_box(&topics)));
    });
    group.bench_function(BenchmarkId::new("insert_many", &label), |b| {
        b.iter_with_large_drop(|| {
            let store = TopicStore::new(DIALECT);
            store
                .insert_many((0u64..).zip(black_box(&topics)).map(|(id, t)| (t, id)))
                .expect("valid topics");
            store
        });
    });
    // The baseline of building: a hash map from topic text to value id, the scan's store.
    group.bench_function(BenchmarkId::new("hashmap", &label), |b| {
        b.iter_with_large_drop(|| {
            let mut map = rustc_hash::FxHashMap::default();
            for (id, topic) in (0u64..).zip(black_box(&topics)) {
                map.insert(topic.clone(), id);
            }
            map
        });
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = topicmatch_benches::rows::criterion();
    targets = query_group, build_group
}
criterion_main!(benches);
