//! Quick timings of a `TopicStore` of the `large` shape, each beside its baseline in the same
//! run (best of `reps`): building against an `FxHashMap<String, u64>`, queries against the
//! scan (every stored topic split and tested with `Pattern::matches_words`). The criterion
//! bench (`--bench store`) is the reference; this is for a quick look:
//!
//! ```text
//! cargo run --release -p topicmatch-benches --example store_speed [-- topics [reps [part]]]
//! ```
//!
//! `part`: `build`, `query`, `all` (the default), or `insert` (inserts alone, to profile).
//! Times are this thread's CPU time where Linux tells it (so that other processes on a shared
//! machine count less; cache and memory contention still count), best of `reps`.
//!
//! Build rows: `insert` (one `insert` per topic, in random order), `bulk` (one
//! `insert_many`), `hashmap` (the baseline). Query rows, per filter: `scan` (the baseline),
//! `each` (`for_each_match`: each match as a borrowed `(&str, &V)`, the topic text rebuilt
//! in one buffer), `found` (each match copied into a reused `Found`, as the bench does),
//! `count`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;
use topicmatch_benches::stored_topics;
use topicmatch_core::topic::{split_words, Words};
use topicmatch_core::{Dialect, Found, Pattern, TopicStore};

const DIALECT: Dialect = Dialect::Amqp;

/// This thread's time on a CPU so far (Linux: `/proc/thread-self/schedstat`), so that a figure
/// taken on a shared machine counts the time the thread ran, not the time it waited for a
/// core; `None` where that file is missing.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// The best time per run of `f` over `reps` batches (on a CPU where this thread's CPU time is
/// known, else on the wall clock), and its last result. A batch repeats `f` for at least
/// 100 ms, as the CPU time moves in scheduler ticks; results are dropped after the timing.
fn best<T>(reps: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let start = Instant::now();
    let mut last = black_box(f());
    let once = start.elapsed().max(Duration::from_micros(1));
    let runs = (Duration::from_millis(100).as_nanos() / once.as_nanos()).clamp(1, 1000) as u32;
    let mut best = Duration::MAX;
    let mut outs = Vec::with_capacity(runs as usize);
    for _ in 0..reps {
        drop(std::mem::take(&mut outs));
        outs = Vec::with_capacity(runs as usize);
        let (wall, cpu) = (Instant::now(), cpu_time());
        for _ in 0..runs {
            outs.push(black_box(f()));
        }
        // The counter moves at the scheduler's pace: a batch it missed goes by the wall.
        let took = match (cpu, cpu_time()) {
            (Some(start), Some(end)) => end.checked_sub(start).filter(|t| !t.is_zero()),
            _ => None,
        }
        .unwrap_or_else(|| wall.elapsed());
        best = best.min(took / runs);
    }
    if let Some(out) = outs.pop() {
        last = out;
    }
    (best, last)
}

#[allow(clippy::cast_precision_loss)]
fn rate(n: usize, t: Duration) -> String {
    format!(
        "{:8.2} M/s ({:12.3} µs)",
        n as f64 / t.as_secs_f64() / 1e6,
        t.as_secs_f64() * 1e6
    )
}

fn build(topics: &[String]) -> TopicStore<u64> {
    let store = TopicStore::new(DIALECT);
    for (id, topic) in (0u64..).zip(topics) {
        store.insert(topic, id).expect("valid topic");
    }
    store
}

/// The same store from one `insert_many`.
fn build_many(topics: &[String]) -> TopicStore<u64> {
    let store = TopicStore::new(DIALECT);
    store
        .insert_many((0u64..).zip(topics).map(|(id, t)| (t, id)))
        .expect("valid topics");
    store
}

#[allow(clippy::cast_precision_loss)]
fn main() {
    let mut args = std::env::args().skip(1);
    let count: usize = args
        .next()
        .map_or(1_000_000, |a| a.parse().expect("a topic count"));
    let reps: usize = args
        .next()
        .map_or(5, |a| a.parse().expect("a repeat count"));
    let part = args.next().unwrap_or_else(|| "all".to_owned());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("{count} topics; load average at the start: {}", load.trim());
    let topics = stored_topics(count, 24);
    if part == "insert" {
        let (t_insert, _) = best(reps, || build(&topics));
        println!("insert   {}", rate(count, t_insert));
        return;
    }
    if part != "query" {
        build_part(&topics, reps);
    }
    if part != "build" {
        query_part(&topics, reps);
    }
}

fn build_part(topics: &[String], reps: usize) {
    let count = topics.len();
    let (t_map, _) = best(reps, || {
        let mut map = FxHashMap::default();
        for (id, topic) in (0u64..).zip(topics) {
            map.insert(topic.clone(), id);
        }
        map
    });
    let (t_insert, store) = best(reps, || build(topics));
    drop(store);
    let (t_many, store) = best(reps, || build_many(topics));
    drop(store);
    println!("insert   {}", rate(count, t_insert));
    println!("bulk     {}", rate(count, t_many));
    println!("hashmap  {}", rate(count, t_map));
    println!(
        "time / hashmap's: insert {:.2}, bulk {:.2}",
        t_insert.as_secs_f64() / t_map.as_secs_f64(),
        t_many.as_secs_f64() / t_map.as_secs_f64()
    );
    let compacted = build(topics);
    let (t_compact, ()) = best(1, || compacted.compact());
    println!("compact  {}", rate(count, t_compact));
}

#[allow(clippy::cast_precision_loss)]
fn query_part(topics: &[String], reps: usize) {
    let store = build(topics);
    let pairs: Vec<(String, u64)> = (0..).zip(topics).map(|(id, t)| (t.clone(), id)).collect();
    // A device stored under `t00.us-east`: the first one in order.
    let mut device = String::new();
    let region = store.filter("t00.us-east.#").expect("valid filter");
    store
        .read()
        .page(Some(&region), None, 1, |t, _| {
            t.split('.')
                .nth(2)
                .expect("six words")
                .clone_into(&mut device);
        })
        .expect("same dialect");
    let mut found = Found::new();
    for text in [
        "t00.us-east.*.temp.#",
        &format!("t00.us-east.{device}.#"),
        "#",
    ] {
        let filter = store.filter(text).expect("valid filter");
        let pattern: Pattern = filter.pattern().clone();
        let n = store.count(text).expect("valid");
        let (t_scan, ()) = best(reps.min(3), || {
            found.clear();
            for (topic, id) in &pairs {
                let words: Words = split_words(DIALECT, topic).collect();
                if pattern.matches_words(&words) {
                    found.push(topic, *id);
                }
            }
            assert_eq!(found.len(), n);
        });
        let (t_found, ()) = best(reps, || {
            found.clear();
            store
                .read()
                .match_into(&filter, &mut found)
                .expect("same dialect");
            assert_eq!(found.len(), n);
        });
        let (t_each, bytes) = best(reps, || {
            let mut bytes = 0usize;
            store
                .read()
                .for_each_match(&filter, |t, v| bytes += t.len() + *v as usize)
                .expect("same dialect");
            bytes
        });
        black_box(bytes);
        let (t_count, _) = best(reps, || store.read().count(&filter).expect("same dialect"));
        println!("{text} ({n} matches)");
        println!("  scan   {}", rate(n, t_scan));
        println!("  each   {}", rate(n, t_each));
        println!("  found  {}", rate(n, t_found));
        println!("  count  {}", rate(n, t_count));
        println!(
            "  scan's time / found's {:.0}x, / each's {:.0}x",
            t_scan.as_secs_f64() / t_found.as_secs_f64(),
            t_scan.as_secs_f64() / t_each.as_secs_f64()
        );
    }
}
