//! Memory per subscription per algorithm, from a counting global allocator: the bytes the
//! program asked for (live after loading minus live before), not allocator overhead or RSS.
//!
//! Two figures per algorithm: the bare matcher (patterns inserted directly, parsed beforehand
//! and not counted) and the whole engine (also its subscription table and subscriber
//! registry, as the Python `Matcher` holds). `floor` is a hash map from pattern text to
//! subscriber ids: the least any index of these subscriptions can hold.

use rustc_hash::FxHashMap;
use topicmatch_benches::alloc::{self, Counting};
use topicmatch_benches::{ftm, large, seed5, sized, Workload};
use topicmatch_core::Algorithm;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live() -> isize {
    alloc::live()
}

/// Bytes per subscription that `build` leaves allocated while its result is alive.
fn per_subscription<T>(count: usize, build: impl FnOnce() -> T) -> f64 {
    let before = live();
    let held = build();
    let after = live();
    drop(held);
    #[allow(clippy::cast_precision_loss)]
    let per = (after - before) as f64 / count.max(1) as f64;
    per
}

fn report(workload: &Workload) {
    let count = workload.subscriptions.len();
    let patterns = workload.parsed();
    let floor = per_subscription(count, || {
        let mut map: FxHashMap<&str, Vec<u64>> = FxHashMap::default();
        for ((pattern, _), id) in workload.subscriptions.iter().zip(0..) {
            map.entry(pattern.as_str()).or_default().push(id);
        }
        map
    });
    // Pattern text is borrowed above; charge its bytes as an owning map would.
    #[allow(clippy::cast_precision_loss)]
    let text = workload
        .subscriptions
        .iter()
        .map(|(p, _)| p.len())
        .sum::<usize>() as f64
        / count.max(1) as f64;
    println!(
        "memory/{:<8} {:>18} {count:>9} subs  {:>8.1} B/sub (hash map + pattern text)",
        workload.name,
        "floor",
        floor + text
    );
    for &algorithm in Algorithm::ALL {
        let matcher = per_subscription(count, || workload.matcher(algorithm, &patterns));
        let engine = per_subscription(count, || workload.engine(algorithm));
        println!(
            "memory/{:<8} {:>18} {count:>9} subs  {matcher:>8.1} B/sub matcher  {engine:>8.1} B/sub engine",
            workload.name,
            algorithm.name(),
        );
    }
}

fn main() {
    println!("bytes requested from the allocator per subscription (counting global allocator)");
    report(&ftm());
    report(&seed5(sized(10_000, 1_000), 1));
    report(&large(sized(1_000_000, 10_000)));
}
