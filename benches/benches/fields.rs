//! Content-based routing: the counting index (`FieldMatcher`) against a linear scan of the same
//! subscriptions, and its cost per message as subscriptions grow from 1k to 1M.
//!
//! Workload (deterministic): 20 fields, `f0..f9` with string values and `f10..f19` with integer
//! values, 100 values each drawn from a Zipf(1.0) distribution over their ranks. A subscription
//! has 1-5 criteria on distinct fields. The `mixed` set: 75% equality, 10% an `in` set of 2-3
//! values, 5% presence, 10% a comparison (numeric fields); mode "all" for 80%, "any" 10%, at
//! least k 10%. The `eq-all` set (a headers exchange's `x-match: all`): equality only, mode
//! "all". A message carries 10 of the 20 fields, values from the same Zipf distribution.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use topicmatch_core::fields::{Criterion as Crit, FieldMatcher, Filter, Message, Mode, Value};
use topicmatch_core::Subscriber;

const FIELDS: usize = 20;
const VALUES: usize = 100;
const MESSAGES: usize = 1_000;

/// splitmix64: a small, deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in [0, 1).
    #[allow(clippy::cast_precision_loss)]
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Zipf(s) over ranks `0..n` by inverse CDF.
struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    #[allow(clippy::cast_precision_loss)]
    fn new(n: usize, s: f64) -> Self {
        let mut acc = 0.0;
        let mut cdf: Vec<f64> = (1..=n)
            .map(|k| {
                acc += 1.0 / (k as f64).powf(s);
                acc
            })
            .collect();
        for c in &mut cdf {
            *c /= acc;
        }
        Zipf { cdf }
    }

    fn sample(&self, rng: &mut Rng) -> usize {
        let u = rng.unit();
        self.cdf.partition_point(|&c| c < u).min(self.cdf.len() - 1)
    }
}

fn field(i: usize) -> String {
    format!("f{i}")
}

fn value(field: usize, rank: usize) -> Value {
    if field < FIELDS / 2 {
        Value::from(format!("v{rank}").as_str())
    } else {
        Value::from(i64::try_from(rank).expect("small rank"))
    }
}

/// Which kinds of criteria a generated set holds.
#[derive(Clone, Copy)]
enum Mix {
    Mixed,
    EqAll,
}

fn filters(n: usize, seed: u64, mix: Mix) -> Vec<Filter> {
    let mut rng = Rng(seed);
    let zipf = Zipf::new(VALUES, 1.0);
    (0..n)
        .map(|_| {
            let count = 1 + rng.below(5);
            let mut fields: Vec<usize> = Vec::with_capacity(count);
            while fields.len() < count {
                let f = rng.below(FIELDS);
                if !fields.contains(&f) {
                    fields.push(f);
                }
            }
            let criteria = fields
                .iter()
                .map(|&f| {
                    let roll = rng.below(100);
                    let numeric = f >= FIELDS / 2;
                    let c = if matches!(mix, Mix::EqAll) || roll < 75 || (roll >= 90 && !numeric) {
                        Crit::Eq(value(f, zipf.sample(&mut rng)))
                    } else if roll < 85 {
                        let k = 2 + rng.below(2);
                        Crit::In((0..k).map(|_| value(f, zipf.sample(&mut rng))).collect())
                    } else if roll < 90 {
                        Crit::Present
                    } else {
                        let t = value(f, zipf.sample(&mut rng));
                        if rng.below(2) == 0 {
                            Crit::Lt(t)
                        } else {
                            Crit::Ge(t)
                        }
                    };
                    (field(f).into_boxed_str(), c)
                })
                .collect();
            let mode = match (mix, rng.below(10)) {
                (Mix::Mixed, 0) => Mode::Any,
                (Mix::Mixed, 1) => Mode::AtLeast(1 + rng.below(count)),
                _ => Mode::All,
            };
            Filter::new(criteria, mode).expect("generated criteria are valid")
        })
        .collect()
}

fn messages(seed: u64) -> Vec<Message> {
    let mut rng = Rng(seed);
    let zipf = Zipf::new(VALUES, 1.0);
    (0..MESSAGES)
        .map(|_| {
            let mut m = Message::new();
            while m.len() < FIELDS / 2 {
                let f = rng.below(FIELDS);
                m.set(&field(f), Some(value(f, zipf.sample(&mut rng))));
            }
            m
        })
        .collect()
}

/// Whether criterion measures (`cargo bench`) rather than checks (`cargo test --benches`).
fn measuring() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn index(filters: &[Filter]) -> FieldMatcher {
    let fm = FieldMatcher::new();
    for (i, f) in (0..).zip(filters) {
        fm.subscribe(f, &Subscriber::Int(i)).unwrap();
    }
    fm
}

/// The straightforward evaluator, stopping each subscription as soon as its outcome is known.
fn scan(filters: &[Filter], message: &Message, out: &mut Vec<usize>) {
    for (i, f) in filters.iter().enumerate() {
        let need = f.threshold();
        let n = f.criteria().len();
        let (mut met, mut missed) = (0, 0);
        for (name, c) in f.criteria() {
            if message.get(name).is_some_and(|v| c.met_by(v)) {
                met += 1;
                if met >= need {
                    out.push(i);
                    break;
                }
            } else {
                missed += 1;
                if n - missed < need {
                    break;
                }
            }
        }
    }
}

fn index_vs_scan(c: &mut Criterion) {
    let msgs = messages(2);
    let mut group = c.benchmark_group("fields");
    group.throughput(Throughput::Elements(MESSAGES as u64));
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    let mut out = Vec::with_capacity(1024);
    for (mix, name) in [(Mix::Mixed, "10k-mixed"), (Mix::EqAll, "10k-eq-all")] {
        let subs = filters(10_000, 1, mix);
        let fm = index(&subs);
        // Both sides must agree before their speed means anything.
        let checked = if measuring() { MESSAGES } else { 20 };
        for m in &msgs[..checked] {
            let mut want = Vec::new();
            scan(&subs, m, &mut want);
            let mut got = Vec::new();
            fm.lookup_into(m, &mut got);
            assert_eq!(got.len(), want.len(), "index and scan disagree");
        }
        group.bench_function(BenchmarkId::new("scan", name), |b| {
            let mut hits = Vec::with_capacity(1024);
            b.iter(|| {
                for m in &msgs {
                    hits.clear();
                    scan(&subs, black_box(m), &mut hits);
                }
                black_box(hits.len())
            });
        });
        group.bench_function(BenchmarkId::new("index", name), |b| {
            b.iter(|| {
                for m in &msgs {
                    out.clear();
                    fm.lookup_into(black_box(m), &mut out);
                }
                black_box(out.len())
            });
        });
    }
    group.finish();
}

fn scaling(c: &mut Criterion) {
    let all = messages(2);
    let mut group = c.benchmark_group("fields_scaling");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    let mut out = Vec::with_capacity(1 << 16);
    // TOPICMATCH_FIELDS_MAX caps the sizes built (building a million takes a while); so does
    // `cargo test --benches`, which runs each benchmark once to check that it works.
    let max: usize = std::env::var("TOPICMATCH_FIELDS_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if measuring() { 1_000_000 } else { 1_000 });
    for (n, name) in [
        (1_000, "1k"),
        (10_000, "10k"),
        (100_000, "100k"),
        (1_000_000, "1M"),
    ]
    .into_iter()
    .filter(|(n, _)| *n <= max)
    {
        let subs = filters(n, 1, Mix::Mixed);
        let fm = index(&subs);
        // Fewer messages for the large sets keep the run short; throughput is per message.
        let msgs = &all[..if n > 10_000 { 100 } else { MESSAGES }];
        group.throughput(Throughput::Elements(msgs.len() as u64));
        if n == 1_000 {
            group.bench_function(BenchmarkId::new("scan", name), |b| {
                let mut hits = Vec::with_capacity(1024);
                b.iter(|| {
                    for m in msgs {
                        hits.clear();
                        scan(&subs, black_box(m), &mut hits);
                    }
                    black_box(hits.len())
                });
            });
        }
        let (mut matched, mut hits) = (0usize, 0usize);
        for m in msgs {
            out.clear();
            fm.lookup_into(m, &mut out);
            matched += out.len();
            hits += fm.hits_ids(m).iter().map(|(_, n)| n).sum::<usize>();
        }
        eprintln!(
            "fields_scaling/{name}: per message {} matches, {} criteria met",
            matched / msgs.len(),
            hits / msgs.len()
        );
        group.bench_function(BenchmarkId::new("index", name), |b| {
            b.iter(|| {
                for m in msgs {
                    out.clear();
                    fm.lookup_into(black_box(m), &mut out);
                }
                black_box(out.len())
            });
        });
    }
    group.finish();
}

criterion_group!(benches, index_vs_scan, scaling);
criterion_main!(benches);
