//! Lookup throughput per algorithm on each workload, beside the `floor` and `naive` baselines.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use topicmatch_benches::{ftm, Floor};
use topicmatch_core::Algorithm;

fn lookup(c: &mut Criterion) {
    let workload = ftm();
    let mut group = c.benchmark_group("lookup");
    group.throughput(Throughput::Elements(workload.topics.len() as u64));
    group.sample_size(10);
    let floor = Floor::new(&workload.engine(Algorithm::Trie), &workload.topics);
    let mut out = Vec::with_capacity(64);
    group.bench_function(BenchmarkId::new("floor", workload.name), |b| {
        b.iter(|| {
            for topic in &workload.topics {
                out.clear();
                floor.lookup_into(black_box(topic), &mut out);
            }
            black_box(out.len())
        });
    });
    for &algorithm in Algorithm::ALL {
        let engine = workload.engine(algorithm);
        group.bench_function(BenchmarkId::new(algorithm.name(), workload.name), |b| {
            b.iter(|| {
                for topic in &workload.topics {
                    out.clear();
                    engine.lookup_into(black_box(topic), &mut out).unwrap();
                }
                black_box(out.len())
            });
        });
    }
    group.finish();
}

criterion_group!(benches, lookup);
criterion_main!(benches);
