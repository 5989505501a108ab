//! How lookup cost grows with the subscription count: the `large` shape at 1k to 1M.

use criterion::{criterion_group, criterion_main, Criterion};
use topicmatch_benches::rows::{configure, lookup_rows};
use topicmatch_benches::{scale, test_mode};

fn scale_group(c: &mut Criterion) {
    let sizes: &[usize] = if test_mode() {
        &[1_000, 5_000]
    } else {
        &[1_000, 10_000, 100_000, 1_000_000]
    };
    let mut group = c.benchmark_group("scale");
    configure(&mut group);
    for &size in sizes {
        let workload = scale(size);
        lookup_rows(&mut group, &workload, &workload.name);
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = topicmatch_benches::rows::criterion();
    targets = scale_group
}
criterion_main!(benches);
