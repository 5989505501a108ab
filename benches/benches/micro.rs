//! The microbenchmarks of "Fast Topic Matching", `cold` and `hot`: subscribe, unsubscribe and one lookup, per
//! algorithm beside `floor` (one exact hash-map insert, removal or lookup).
//!
//! Subscribe and unsubscribe are timed one call at a time (the clock read, ~20 ns, is in every
//! row alike): each measured subscribe adds a pattern not held and is undone untimed, each
//! measured unsubscribe removes one added untimed, so the state stays hot or cold throughout.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion};
use criterion::{SamplingMode, Throughput};
use topicmatch_benches::{Floor, Micro, MICRO_PROBE_TOPIC};
use topicmatch_core::{Algorithm, Dialect, Engine, Limits, Subscriber};

fn engine(algorithm: Algorithm, micro: &Micro) -> Engine {
    let engine = Engine::new(Dialect::Amqp, algorithm, Limits::for_dialect(Dialect::Amqp))
        .expect("valid limits");
    for (pattern, subscriber) in micro.loaded.iter().zip(0..) {
        engine
            .subscribe(pattern, &Subscriber::Int(subscriber))
            .expect("valid pattern");
    }
    engine
}

/// The floor holds the probe's precomputed answer plus one entry per loaded pattern.
fn floor(micro: &Micro) -> Floor {
    let fast = Algorithm::ALL.iter().find(|a| **a != Algorithm::Naive);
    let answers = engine(*fast.unwrap_or(&Algorithm::Naive), micro);
    let mut floor = Floor::new(&answers, &[MICRO_PROBE_TOPIC.to_owned()]);
    for (pattern, subscriber) in micro.loaded.iter().zip(0..) {
        floor.insert(pattern, subscriber);
    }
    floor
}

fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(800))
        .sampling_mode(SamplingMode::Flat)
        .throughput(Throughput::Elements(1));
}

/// A subscriber id no loaded subscription uses.
fn fresh_subscriber(i: usize) -> Subscriber {
    Subscriber::Int(1_000_000 + i64::try_from(i).expect("small index"))
}

fn subscribe(c: &mut Criterion, micro: &Micro) {
    let mut group = c.benchmark_group("subscribe");
    configure(&mut group);
    let mut base = floor(micro);
    group.bench_function(BenchmarkId::new("floor", micro.name), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for i in 0..iters as usize {
                let pattern = &micro.fresh[i % micro.fresh.len()];
                let started = Instant::now();
                base.insert(black_box(pattern), i as u64);
                total += started.elapsed();
                base.remove(pattern);
            }
            total
        });
    });
    for &algorithm in Algorithm::ALL {
        let engine = engine(algorithm, micro);
        group.bench_function(BenchmarkId::new(algorithm.name(), micro.name), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for i in 0..iters as usize {
                    let slot = i % micro.fresh.len();
                    let subscriber = fresh_subscriber(slot);
                    let started = Instant::now();
                    let id = engine
                        .subscribe(black_box(&micro.fresh[slot]), &subscriber)
                        .expect("valid pattern");
                    total += started.elapsed();
                    assert!(engine.unsubscribe(id));
                }
                total
            });
        });
    }
    group.finish();
}

fn unsubscribe(c: &mut Criterion, micro: &Micro) {
    let mut group = c.benchmark_group("unsubscribe");
    configure(&mut group);
    let mut base = floor(micro);
    group.bench_function(BenchmarkId::new("floor", micro.name), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for i in 0..iters as usize {
                let pattern = &micro.fresh[i % micro.fresh.len()];
                base.insert(pattern, i as u64);
                let started = Instant::now();
                black_box(base.remove(black_box(pattern)));
                total += started.elapsed();
            }
            total
        });
    });
    for &algorithm in Algorithm::ALL {
        let engine = engine(algorithm, micro);
        group.bench_function(BenchmarkId::new(algorithm.name(), micro.name), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for i in 0..iters as usize {
                    let slot = i % micro.fresh.len();
                    let id = engine
                        .subscribe(&micro.fresh[slot], &fresh_subscriber(slot))
                        .expect("valid pattern");
                    let started = Instant::now();
                    let removed = engine.unsubscribe(black_box(id));
                    total += started.elapsed();
                    assert!(removed);
                }
                total
            });
        });
    }
    group.finish();
}

fn lookup_one(c: &mut Criterion, micro: &Micro) {
    let mut group = c.benchmark_group("lookup_one");
    configure(&mut group);
    let base = floor(micro);
    let mut out = Vec::with_capacity(64);
    group.bench_function(BenchmarkId::new("floor", micro.name), |b| {
        b.iter(|| {
            out.clear();
            base.lookup_into(black_box(MICRO_PROBE_TOPIC), &mut out);
            black_box(out.len())
        });
    });
    for &algorithm in Algorithm::ALL {
        let engine = engine(algorithm, micro);
        out.clear();
        engine.lookup_into(MICRO_PROBE_TOPIC, &mut out).unwrap();
        // Unlike the article's harness, the hot probe matches loaded patterns, not only its own.
        assert!(
            micro.name != "hot" || out.len() > 1,
            "hot lookup must touch loaded patterns"
        );
        group.bench_function(BenchmarkId::new(algorithm.name(), micro.name), |b| {
            b.iter(|| {
                out.clear();
                engine
                    .lookup_into(black_box(MICRO_PROBE_TOPIC), &mut out)
                    .unwrap();
                black_box(out.len())
            });
        });
    }
    group.finish();
}

fn micro(c: &mut Criterion) {
    for micro in [Micro::cold(), Micro::hot()] {
        subscribe(c, &micro);
        unsubscribe(c, &micro);
        lookup_one(c, &micro);
    }
}

criterion_group! {
    name = benches;
    config = topicmatch_benches::rows::criterion();
    targets = micro
}
criterion_main!(benches);
