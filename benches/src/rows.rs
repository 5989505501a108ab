//! The rows every lookup group shares: `floor`, each algorithm, and `naive` on a budget.

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput};
use topicmatch_core::{Algorithm, Engine, SubscriberId};

use crate::floor::Floor;
use crate::workload::Workload;

/// Pattern checks one `naive` iteration may do: naive scans every subscription per topic, so
/// on big sets it looks up only the first `NAIVE_BUDGET / subscriptions` topics (at least one)
/// and its throughput is per topic of that shorter batch.
pub const NAIVE_BUDGET: usize = 500_000;

/// Criterion without its HTML plots and with fewer bootstrap resamples: on two shared cores
/// the analysis would otherwise take longer than the measurement.
pub fn criterion() -> Criterion {
    Criterion::default().without_plots().nresamples(10_000)
}

/// Short, flat sampling: a full `cargo bench` must fit in minutes on two shared cores.
pub fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1500))
        .sampling_mode(SamplingMode::Flat);
}

/// Benches `lookup` over every topic of `topics` as one iteration, `Throughput` = topics.
pub fn bench_topics(
    group: &mut BenchmarkGroup<'_, WallTime>,
    id: BenchmarkId,
    topics: &[String],
    mut lookup: impl FnMut(&str, &mut Vec<SubscriberId>),
) {
    group.throughput(Throughput::Elements(topics.len() as u64));
    let mut out = Vec::with_capacity(256);
    group.bench_function(id, |b| {
        b.iter(|| {
            let mut found = 0;
            for topic in topics {
                out.clear();
                lookup(black_box(topic), &mut out);
                found += out.len();
            }
            black_box(found)
        });
    });
}

/// The topics `naive` looks up on `workload` (see [`NAIVE_BUDGET`]).
pub fn naive_topics(workload: &Workload) -> &[String] {
    let n = (NAIVE_BUDGET / workload.subscriptions.len().max(1)).clamp(1, workload.topics.len());
    &workload.topics[..n]
}

/// The rows of one workload, labelled `param`: `floor`, then every algorithm (and `cstrie` with
/// its result cache, `cstrie_cached`). Engines are built
/// one at a time and dropped before the next, so a 1M-subscription workload fits in memory.
pub fn lookup_rows(group: &mut BenchmarkGroup<'_, WallTime>, workload: &Workload, param: &str) {
    let mut floor_done = false;
    // Naive last: the floor's answers come from a fast algorithm.
    let order = Algorithm::ALL
        .iter()
        .filter(|a| **a != Algorithm::Naive)
        .chain(Algorithm::ALL.iter().filter(|a| **a == Algorithm::Naive));
    for &algorithm in order {
        let engine = workload.engine(algorithm);
        if !floor_done {
            let floor = Floor::new(&engine, &workload.topics);
            bench_topics(
                group,
                BenchmarkId::new("floor", param),
                &workload.topics,
                |t, out| floor.lookup_into(t, out),
            );
            floor_done = true;
        }
        let topics = if algorithm == Algorithm::Naive {
            let topics = naive_topics(workload);
            if topics.len() < workload.topics.len() {
                eprintln!(
                    "note: naive/{param} looks up the first {} of {} topics ({} subscriptions)",
                    topics.len(),
                    workload.topics.len(),
                    workload.subscriptions.len()
                );
            }
            topics
        } else {
            &workload.topics
        };
        bench_topics(
            group,
            BenchmarkId::new(algorithm.name(), param),
            topics,
            |t, out| lookup(&engine, t, out),
        );
        if algorithm == Algorithm::Cstrie {
            // The same with its result cache (cached and uncached figures side by side).
            drop(engine);
            let cached = workload.cached_cstrie();
            bench_topics(
                group,
                BenchmarkId::new("cstrie_cached", param),
                topics,
                |t, out| lookup(&cached, t, out),
            );
        }
    }
}

#[inline]
fn lookup(engine: &Engine, topic: &str, out: &mut Vec<SubscriberId>) {
    engine
        .lookup_into(topic, out)
        .expect("workload topics are valid");
}
