//! Concurrent throughput: 1 to 16 threads sharing one matcher, mixing lookups (ftm topics) and
//! subscribes, at 50/50 and 90/10 lookup/subscribe. Every subscribe inserts a distinct
//! (pattern, subscriber) pair, so none is a no-op; the matcher is rebuilt with the ftm
//! subscriptions before each timed run. The machine has 2 cores: above 2 threads the runs are
//! oversubscribed and measure behaviour under contention, not parallel speed-up.
//!
//! The `trie` (one lock for writers) is the baseline row; `naive` runs at 1-4 threads only, with
//! fewer operations, since each of its lookups scans every pattern.
//!
//! Also `bulk_load`: 10k and 100k children loaded under one node, which the CS-trie of "Fast Topic Matching"
//! does in quadratic time (it copies the child map per insert).

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use topicmatch_benches::threads::timed_span;
use topicmatch_benches::{ftm, Workload};
use topicmatch_core::{Algorithm, Config, Dialect, Limits, Matcher, Pattern, SubscriberId};

const THREADS: &[usize] = &[1, 2, 4, 8, 12, 16];
/// Operations per timed run, split evenly over the threads: enough for tens of milliseconds,
/// so that threads beyond the cores share them over many scheduler slices rather than each
/// running through its part in one. (A tenth in unoptimised builds, where `cargo test --benches`
/// runs each benchmark once as a smoke test.)
const OPS: usize = if cfg!(debug_assertions) {
    24_000
} else {
    240_000
};
const NAIVE_OPS: usize = 2_400;

enum Op {
    Lookup(usize),
    Subscribe(Pattern, SubscriberId),
}

fn parse(dialect: Dialect, text: &str) -> Pattern {
    Pattern::parse(dialect, &Limits::for_dialect(dialect), text).expect("valid pattern")
}

/// Each thread's operations: every `subscribe_every`-th one a subscribe of a new pattern (an
/// ftm pattern plus a word unique to this operation), the rest lookups of ftm topics.
fn plans(w: &Workload, threads: usize, ops: usize, subscribe_every: usize) -> Vec<Vec<Op>> {
    let per = ops / threads;
    (0..threads)
        .map(|t| {
            (0..per)
                .map(|k| {
                    let n = t * per + k;
                    if k % subscribe_every == 0 {
                        let base = &w.subscriptions[n % w.subscriptions.len()].0;
                        let pattern = parse(w.dialect, &format!("{base}.u{n}"));
                        Op::Subscribe(pattern, 1_000_000 + n as SubscriberId)
                    } else {
                        Op::Lookup((n * 7) % w.topics.len())
                    }
                })
                .collect()
        })
        .collect()
}

/// Lets crossbeam-epoch free the `cstrie` nodes retired outside the timed part (the setup's
/// inserts, the previous run's matcher), so that each run pays only for its own garbage, as the
/// `trie` pays for its drop outside the timed part.
fn settle() {
    for _ in 0..256 {
        crossbeam_epoch::pin().flush();
    }
}

/// One timed run on a fresh matcher holding the workload's subscriptions, from the first
/// thread's start to the last one's end (`timed_span`: each thread reads the clock itself).
fn run(algorithm: Algorithm, w: &Workload, base: &[Pattern], plans: &[Vec<Op>]) -> Duration {
    let matcher = algorithm.build(Config::new(w.dialect));
    for (i, p) in base.iter().enumerate() {
        matcher.insert(p, i as SubscriberId);
    }
    settle();
    let m: &dyn Matcher = &*matcher;
    let span = timed_span(
        plans.len(),
        |_| Vec::with_capacity(64),
        |k, mut out| {
            for op in &plans[k] {
                match op {
                    Op::Lookup(i) => {
                        out.clear();
                        m.lookup_into(&w.topics[*i], &mut out).expect("valid topic");
                        black_box(out.len());
                    }
                    Op::Subscribe(p, id) => m.insert(p, *id),
                }
            }
        },
    );
    drop(matcher);
    settle();
    span
}

fn concurrency(c: &mut Criterion) {
    let w = ftm();
    let base: Vec<Pattern> = w
        .subscriptions
        .iter()
        .map(|(p, _)| parse(w.dialect, p))
        .collect();
    for (mix, subscribe_every) in [("90-10", 10), ("50-50", 2)] {
        let mut group = c.benchmark_group(format!("concurrency-{mix}"));
        group.sample_size(10);
        group.warm_up_time(Duration::from_millis(500));
        group.measurement_time(Duration::from_secs(2));
        for &threads in THREADS {
            for algorithm in [Algorithm::Trie, Algorithm::Cstrie, Algorithm::Naive] {
                let ops = if algorithm == Algorithm::Naive {
                    if threads > 4 {
                        continue;
                    }
                    NAIVE_OPS
                } else {
                    OPS
                };
                let plans = plans(&w, threads, ops, subscribe_every);
                group.throughput(Throughput::Elements((ops / threads * threads) as u64));
                let id = BenchmarkId::new(algorithm.name(), format!("{threads}t"));
                group.bench_function(id, |b| {
                    b.iter_custom(|iters| {
                        (0..iters).map(|_| run(algorithm, &w, &base, &plans)).sum()
                    });
                });
            }
        }
        group.finish();
    }
}

fn bulk_load(c: &mut Criterion) {
    let dialect = Dialect::Amqp;
    let mut group = c.benchmark_group("bulk_load");
    group.sample_size(10);
    for n in [10_000usize, 100_000] {
        let patterns: Vec<Pattern> = (0..n)
            .map(|i| parse(dialect, &format!("wide.w{i}")))
            .collect();
        group.throughput(Throughput::Elements(n as u64));
        for algorithm in [Algorithm::Trie, Algorithm::Cstrie] {
            group.bench_function(BenchmarkId::new(algorithm.name(), n), |b| {
                b.iter_with_large_drop(|| {
                    let m = algorithm.build(Config::new(dialect));
                    for (i, p) in patterns.iter().enumerate() {
                        m.insert(p, i as SubscriberId);
                    }
                    m
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, concurrency, bulk_load);
criterion_main!(benches);
