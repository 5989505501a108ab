//! The inverted bitmap family (issue 4): row AND cost scalar vs SIMD, lookups beside the
//! `floor` on ftm (uncached, unique topics, filtering), `matches_any` on filters of a word
//! each, subscribe/unsubscribe cold and hot,
//! memory per subscription, and the `auto` crossover between bitmap and trie.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use topicmatch_benches::{ftm, Floor, Workload};
use topicmatch_core::matchers::optimized_bitmap::simd;
use topicmatch_core::{Algorithm, Config, Dialect, Limits, Matcher, Pattern};

/// Counts live heap bytes, for the memory figures.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// `GlobalAlloc` contract holds as it does for `System`; the counter is a side effect only.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded from our caller, who upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded from our caller, who upholds `dealloc`'s contract.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded from our caller, who upholds `realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const BITMAP_ALGORITHMS: [Algorithm; 4] = [
    Algorithm::InvertedBitmap,
    Algorithm::OptimizedBitmap,
    Algorithm::Auto,
    Algorithm::Trie,
];

/// A deterministic pseudo-random sequence (64-bit LCG, high bits).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// `count` distinct AMQP wildcard patterns of 4 words over a 24-word vocabulary per level
/// (each word `*` with probability 1/4, a trailing `#` 1 in 8), and 10,000 topics from the same
/// vocabulary.
fn generated(count: usize) -> Workload {
    let mut rng = Lcg(count as u64);
    let mut seen = std::collections::HashSet::new();
    let mut subscriptions = Vec::with_capacity(count);
    while subscriptions.len() < count {
        let mut words: Vec<String> = (0..4)
            .map(|level| match rng.below(4) {
                0 => "*".to_owned(),
                _ => format!("l{level}w{}", rng.below(24)),
            })
            .collect();
        if rng.below(8) == 0 {
            "#".clone_into(&mut words[3]);
        }
        if !words.iter().any(|w| w == "*" || w == "#") {
            "*".clone_into(&mut words[1]);
        }
        let text = words.join(".");
        if seen.insert(text.clone()) {
            let id = i64::try_from(subscriptions.len()).expect("small");
            subscriptions.push((text, id));
        }
    }
    let topics = (0..10_000)
        .map(|_| {
            (0..4)
                .map(|level| format!("l{level}w{}", rng.below(24)))
                .collect::<Vec<_>>()
                .join(".")
        })
        .collect();
    Workload {
        name: "generated".to_owned(),
        dialect: Dialect::Amqp,
        subscriptions,
        topics,
    }
}

fn matcher(algorithm: Algorithm, workload: &Workload) -> Box<dyn Matcher> {
    let m = algorithm.build(Config::new(workload.dialect));
    let limits = Limits::for_dialect(workload.dialect);
    for (text, id) in &workload.subscriptions {
        m.insert(
            &Pattern::parse(workload.dialect, &limits, text).unwrap(),
            u64::try_from(*id).expect("ids are not negative"),
        );
    }
    m
}

fn criterion() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .sample_size(10)
}

/// One AND of a row into the accumulator, at 1k, 10k and 100k subscription bits.
fn bitmap_and(c: &mut Criterion) {
    let mut group = c.benchmark_group("bitmap_and");
    for bits in [1_000usize, 10_000, 100_000] {
        let words = bits.div_ceil(64);
        let mut rng = Lcg(7);
        let mut acc: Vec<u64> = (0..words).map(|_| rng.below(u64::MAX)).collect();
        // All ones: the AND leaves `acc` unchanged, so every iteration does the full work.
        let row = vec![u64::MAX; words];
        group.throughput(Throughput::Elements(bits as u64));
        group.bench_function(BenchmarkId::new("scalar", bits), |b| {
            b.iter(|| simd::and_scalar(black_box(&mut acc), black_box(&row)));
        });
        let name = if simd::has_avx2() {
            "avx2"
        } else {
            "simd_fallback"
        };
        group.bench_function(BenchmarkId::new(name, bits), |b| {
            b.iter(|| simd::and_simd(black_box(&mut acc), black_box(&row)));
        });
    }
    group.finish();
}

/// ftm lookups beside the floor: hits, a stream of unique topics (no reuse within the row
/// table's capacity) and filtering.
fn bitmap_ftm(c: &mut Criterion) {
    let workload = ftm();
    let floor = Floor::new(&workload.engine(Algorithm::Trie), &workload.topics);
    // The ftm topics with a unique last word: 100,000 distinct topics of ftm's shape.
    let unique: Vec<String> = workload
        .topics
        .iter()
        .enumerate()
        .map(|(i, t)| format!("{}.u{i}", t.rsplit_once('.').map_or("", |(head, _)| head)))
        .collect();
    let mut group = c.benchmark_group("bitmap_ftm");
    group.throughput(Throughput::Elements(workload.topics.len() as u64));
    let mut out = Vec::with_capacity(64);
    group.bench_function(BenchmarkId::new("floor", "lookup"), |b| {
        b.iter(|| {
            for topic in &workload.topics {
                out.clear();
                floor.lookup_into(black_box(topic), &mut out);
            }
            black_box(out.len())
        });
    });
    for algorithm in BITMAP_ALGORITHMS {
        let m = matcher(algorithm, &workload);
        for (name, topics) in [("lookup", &workload.topics), ("unique", &unique)] {
            group.bench_function(BenchmarkId::new(algorithm.name(), name), |b| {
                b.iter(|| {
                    for topic in topics {
                        out.clear();
                        m.lookup_into(black_box(topic), &mut out).unwrap();
                    }
                    black_box(out.len())
                });
            });
        }
        group.bench_function(BenchmarkId::new(algorithm.name(), "matches_any"), |b| {
            b.iter(|| {
                let mut n = 0usize;
                for topic in &workload.topics {
                    n += usize::from(m.matches_any(black_box(topic)).unwrap());
                }
                black_box(n)
            });
        });
    }
    group.finish();
}

/// `matches_any` on filters of a word each at 2,000, 10,000 and 50,000 filters, beside the
/// `cstrie`, in two families of MQTT filters, each with 1,000 topics one filter matches each
/// (`hit`, spread over the filters) and 1,000 that none matches (`miss`):
/// - `a/{i%100}/+/{i}` (ids `{algorithm}/hit`, `/miss`): a miss's last word no filter names;
/// - `a/+/{i}` for even `i` beside `a/{i}/+` for odd `i` (`/crossed_hit`, `/crossed_miss`):
///   every level past the first holds a wildcard filter, and a miss names no filter's word.
fn bitmap_any_distinct(c: &mut Criterion) {
    let mut group = c.benchmark_group("bitmap_any_distinct");
    let limits = Limits::for_dialect(Dialect::Mqtt);
    group.throughput(Throughput::Elements(1_000));
    for count in [2_000usize, 10_000, 50_000] {
        let step = count / 1_000;
        let spread = || (0..1_000).map(move |k| k * step + step / 2);
        let distinct = (
            "",
            (0..count)
                .map(|i| format!("a/{}/+/{i}", i % 100))
                .collect::<Vec<_>>(),
            spread()
                .map(|i| format!("a/{}/x/{i}", i % 100))
                .collect::<Vec<_>>(),
            (0..1_000)
                .map(|k| format!("a/{}/x/none{k}", k % 100))
                .collect::<Vec<_>>(),
        );
        // Filter or topic `i` of the crossed family, `word` in the place of its wildcard.
        let crossed_one = |i: usize, word: &str| {
            if i.is_multiple_of(2) {
                format!("a/{word}/{i}")
            } else {
                format!("a/{i}/{word}")
            }
        };
        let crossed = (
            "crossed_",
            (0..count).map(|i| crossed_one(i, "+")).collect(),
            spread().map(|i| crossed_one(i, "x")).collect(),
            (0..1_000).map(|k| format!("a/q{k}/none{k}")).collect(),
        );
        for (family, filters, hit, miss) in [distinct, crossed] {
            for algorithm in [Algorithm::OptimizedBitmap, Algorithm::Cstrie] {
                let m = algorithm.build(Config::new(Dialect::Mqtt));
                for (i, text) in filters.iter().enumerate() {
                    m.insert(
                        &Pattern::parse(Dialect::Mqtt, &limits, text).unwrap(),
                        i as u64,
                    );
                }
                for (name, topics, expect) in [("hit", &hit, 1_000), ("miss", &miss, 0)] {
                    let n = topics.iter().filter(|t| m.matches_any(t).unwrap()).count();
                    assert_eq!(n, expect, "{} {family}{name} at {count}", algorithm.name());
                    let id =
                        BenchmarkId::new(format!("{}/{family}{name}", algorithm.name()), count);
                    group.bench_function(id, |b| {
                        b.iter(|| {
                            let mut n = 0usize;
                            for topic in topics {
                                n += usize::from(m.matches_any(black_box(topic)).unwrap());
                            }
                            black_box(n)
                        });
                    });
                }
            }
        }
    }
    group.finish();
}

/// Subscribe and unsubscribe one new wildcard pattern at a time, on an empty matcher (cold)
/// and on one holding ftm's 1,000 subscriptions with every ftm topic looked up twice (hot).
fn bitmap_subscribe(c: &mut Criterion) {
    let workload = ftm();
    let limits = Limits::for_dialect(Dialect::Amqp);
    let patterns: Vec<Pattern> = (0..1_000)
        .map(|i| Pattern::parse(Dialect::Amqp, &limits, &format!("{}.*.n{i}", i % 10)).unwrap())
        .collect();
    let mut group = c.benchmark_group("bitmap_subscribe");
    group.throughput(Throughput::Elements(patterns.len() as u64));
    let mut algorithms = vec![Algorithm::Naive];
    algorithms.extend(BITMAP_ALGORITHMS);
    for algorithm in algorithms {
        for state in ["cold", "hot"] {
            let m = if state == "cold" {
                algorithm.build(Config::new(Dialect::Amqp))
            } else {
                let m = matcher(algorithm, &workload);
                let mut out = Vec::new();
                // Twice: once its row table is full, `inverted_bitmap` caches a topic on its
                // second sighting.
                for topic in workload.topics.iter().chain(&workload.topics) {
                    out.clear();
                    m.lookup_into(topic, &mut out).unwrap();
                }
                m
            };
            let timed = |subscribe: bool, iters: u64| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    for (i, p) in patterns.iter().enumerate() {
                        m.insert(p, 10_000 + i as u64);
                    }
                    let mid = Instant::now();
                    for (i, p) in patterns.iter().enumerate() {
                        m.remove(p, 10_000 + i as u64);
                    }
                    total += if subscribe {
                        mid - start
                    } else {
                        mid.elapsed()
                    };
                }
                total
            };
            group.bench_function(
                BenchmarkId::new(algorithm.name(), format!("subscribe_{state}")),
                |b| b.iter_custom(|iters| timed(true, iters)),
            );
            group.bench_function(
                BenchmarkId::new(algorithm.name(), format!("unsubscribe_{state}")),
                |b| b.iter_custom(|iters| timed(false, iters)),
            );
        }
    }
    group.finish();
}

/// Lookup throughput of the bitmap and the trie as wildcard patterns grow: where `auto`
/// switches.
fn auto_crossover(c: &mut Criterion) {
    let mut group = c.benchmark_group("auto_crossover");
    // Unoptimised builds (`cargo test --benches`) only check that the group runs.
    let counts: &[usize] = if cfg!(debug_assertions) {
        &[1_000]
    } else {
        &[1_000, 3_000, 10_000, 30_000]
    };
    for &count in counts {
        let workload = generated(count);
        group.throughput(Throughput::Elements(workload.topics.len() as u64));
        let mut out = Vec::with_capacity(256);
        for algorithm in [Algorithm::OptimizedBitmap, Algorithm::Trie] {
            let m = matcher(algorithm, &workload);
            group.bench_function(BenchmarkId::new(algorithm.name(), count), |b| {
                b.iter(|| {
                    for topic in &workload.topics {
                        out.clear();
                        m.lookup_into(black_box(topic), &mut out).unwrap();
                    }
                    black_box(out.len())
                });
            });
        }
    }
    group.finish();
}

/// Live heap bytes per subscription, from the counting allocator: matcher built and filled,
/// then after looking up every topic twice (what `inverted_bitmap` caches).
fn memory(_: &mut Criterion) {
    // Criterion does not filter this target: skip it when a filter names other groups only.
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    if filter.is_some_and(|f| !f.contains("memory")) {
        return;
    }
    let mut algorithms = vec![Algorithm::Naive];
    algorithms.extend(BITMAP_ALGORITHMS);
    let generated_count = if cfg!(debug_assertions) {
        1_000
    } else {
        10_000
    };
    for workload in [ftm(), generated(generated_count)] {
        for &algorithm in &algorithms {
            let before = LIVE.load(Ordering::Relaxed);
            let m = matcher(algorithm, &workload);
            let filled = LIVE.load(Ordering::Relaxed);
            let mut out = Vec::new();
            for topic in workload.topics.iter().chain(&workload.topics) {
                out.clear();
                m.lookup_into(topic, &mut out).unwrap();
            }
            drop(out);
            let looked = LIVE.load(Ordering::Relaxed);
            let n = workload.subscriptions.len();
            println!(
                "memory/{}/{}: {} B/subscription, {} B/subscription after lookups",
                algorithm.name(),
                workload.name,
                filled.saturating_sub(before) / n,
                looked.saturating_sub(before) / n,
            );
            drop(m);
        }
    }
}

criterion_group! {
    name = benches;
    config = criterion();
    targets = memory, bitmap_and, bitmap_ftm, bitmap_any_distinct, bitmap_subscribe, auto_crossover
}
criterion_main!(benches);
