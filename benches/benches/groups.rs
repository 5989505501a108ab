//! What groups cost a lookup: ftm with every tenth subscription in a group (one of three
//! groups per pattern, so a group has several members) beside the same subscriptions without
//! groups, per algorithm and group policy. The baseline row of each algorithm is `plain`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use topicmatch_benches::ftm;
use topicmatch_benches::rows::{bench_topics, configure};
use topicmatch_core::{Algorithm, Engine, GroupPolicy, Subscriber};

/// The ftm subscriptions, every tenth one in group `g{i % 3}` when `grouped`.
fn engine(algorithm: Algorithm, policy: GroupPolicy, grouped: bool) -> Engine {
    let w = ftm();
    let engine = Engine::new(
        w.dialect,
        algorithm,
        topicmatch_core::Limits::for_dialect(w.dialect),
    )
    .and_then(|e| e.with_groups(policy, false))
    .expect("valid settings");
    for (i, (pattern, subscriber)) in w.subscriptions.iter().enumerate() {
        let subscriber = Subscriber::Int(*subscriber);
        if grouped && i % 10 == 0 {
            engine.subscribe_group(pattern, &subscriber, &format!("g{}", i % 3))
        } else {
            engine.subscribe(pattern, &subscriber)
        }
        .expect("ftm patterns are valid");
    }
    engine
}

fn groups(c: &mut Criterion) {
    let mut group = c.benchmark_group("groups");
    configure(&mut group);
    let topics = ftm().topics;
    for algorithm in [
        Algorithm::Cstrie,
        Algorithm::Trie,
        Algorithm::OptimizedBitmap,
    ] {
        let rows = [
            ("plain", GroupPolicy::RoundRobin, false),
            ("round_robin", GroupPolicy::RoundRobin, true),
            ("random", GroupPolicy::Random, true),
            ("hash", GroupPolicy::Hash, true),
        ];
        for (name, policy, grouped) in rows {
            let engine = engine(algorithm, policy, grouped);
            bench_topics(
                &mut group,
                BenchmarkId::new(format!("{}/{name}", algorithm.name()), "ftm-10%-grouped"),
                &topics,
                |t, out| engine.lookup_into(t, out).expect("ftm topics are valid"),
            );
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = topicmatch_benches::rows::criterion();
    targets = groups
}
criterion_main!(benches);
