//! Lookup throughput per algorithm on `ftm`, `seed5` and `large`, beside `floor` and `naive`.

use criterion::{criterion_group, criterion_main, Criterion};
use topicmatch_benches::rows::{configure, lookup_rows};
use topicmatch_benches::{ftm, large, seed5, sized};

fn lookup(c: &mut Criterion) {
    let mut group = c.benchmark_group("lookup");
    configure(&mut group);
    let ftm = ftm();
    lookup_rows(&mut group, &ftm, &ftm.name);
    drop(ftm);
    let seed5 = seed5(sized(10_000, 1_000), sized(20_000, 1_000));
    lookup_rows(&mut group, &seed5, &seed5.name);
    drop(seed5);
    let large = large(sized(1_000_000, 10_000));
    lookup_rows(&mut group, &large, &large.name);
    group.finish();
}

criterion_group! {
    name = benches;
    config = topicmatch_benches::rows::criterion();
    targets = lookup
}
criterion_main!(benches);
