//! Pattern relations on a matcher (issue 23): `covering` and `intersecting` on the `scale`
//! workload at 1M subscriptions (the Internet-of-Things shape: 90% exact, 10% wildcard, six levels), the
//! `trie` and `cstrie` walks beside the baseline: a scan deciding `covers` (`intersects`) for
//! every subscription's pattern, parsed once before the measurement, the query prepared once.
//!
//! Queries, 40 of each kind, drawn from the workload's topics: the topic itself (may a client
//! subscribe to this topic?), one device's every reading (`t.r.d.#`), one sensor of every
//! device in a region (`t.r.*.s.m.st`) and one statistic across a tenant (`t.*.*.s.*.st`).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use topicmatch_benches::rows::configure;
use topicmatch_benches::{scale, sized, Workload};
use topicmatch_core::relation::{Query, Relation, DEFAULT_MAX_WORK};
use topicmatch_core::{Algorithm, Limits, Pattern};

/// Relation decisions one scan iteration may make: the scan looks at every pattern per query,
/// so on 1M subscriptions it answers the first `SCAN_BUDGET / subscriptions` queries.
const SCAN_BUDGET: usize = 2_000_000;

/// The queries of the module docs.
fn queries(workload: &Workload) -> Vec<String> {
    let mut out = Vec::new();
    for topic in workload.topics.iter().take(40) {
        let w: Vec<&str> = topic.split('.').collect();
        out.push(topic.clone());
        out.push(format!("{}.{}.{}.#", w[0], w[1], w[2]));
        out.push(format!("{}.{}.*.{}.{}.{}", w[0], w[1], w[3], w[4], w[5]));
        out.push(format!("{}.*.*.{}.*.{}", w[0], w[3], w[5]));
    }
    out
}

fn relation_group(c: &mut Criterion, relation: Relation, name: &str) {
    let size = sized(1_000_000, 5_000);
    let workload = scale(size);
    let queries = queries(&workload);
    let dialect = workload.dialect;
    let limits = Limits::for_dialect(dialect);
    let parsed: Vec<Pattern> = queries
        .iter()
        .map(|q| Pattern::parse(dialect, &limits, q).expect("valid query"))
        .collect();
    let mut group = c.benchmark_group(name);
    configure(&mut group);

    // The baseline: every subscription's pattern decided for each query.
    let held = workload.parsed();
    let scanned = &parsed[..(SCAN_BUDGET / held.len()).clamp(1, parsed.len())];
    if scanned.len() < parsed.len() {
        eprintln!(
            "note: scan/{} answers the first {} of {} queries ({size} subscriptions)",
            workload.name,
            scanned.len(),
            parsed.len()
        );
    }
    group.throughput(Throughput::Elements(scanned.len() as u64));
    group.bench_function(BenchmarkId::new("scan", &workload.name), |b| {
        b.iter(|| {
            let mut found = 0usize;
            for q in scanned {
                let query = Query::new(relation, black_box(q), DEFAULT_MAX_WORK);
                for p in &held {
                    found += usize::from(query.holds(p.words()).expect("within the work limit"));
                }
            }
            black_box(found)
        });
    });
    drop(held);

    for algorithm in [Algorithm::Trie, Algorithm::Cstrie] {
        let engine = workload.engine(algorithm);
        group.throughput(Throughput::Elements(queries.len() as u64));
        group.bench_function(BenchmarkId::new(algorithm.name(), &workload.name), |b| {
            b.iter(|| {
                let mut found = 0usize;
                for q in &queries {
                    found += engine
                        .related(relation, black_box(q))
                        .expect("valid query")
                        .len();
                }
                black_box(found)
            });
        });
    }
    group.finish();
}

fn covering(c: &mut Criterion) {
    relation_group(c, Relation::Covers, "covering");
}

fn intersecting(c: &mut Criterion) {
    relation_group(c, Relation::Intersects, "intersecting");
}

criterion_group! {
    name = benches;
    config = topicmatch_benches::rows::criterion();
    targets = covering, intersecting
}
criterion_main!(benches);
