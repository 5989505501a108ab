//! The high fan-out sets (`fanout-cuts`, `fanout-crowds`, `fanout-broadcast`) in the core
//! alone, in each dialect's syntax: each algorithm's whole set of topics as one
//! `Engine::lookup_batch_into` call, passes interleaved, the fastest and the median pass in ns
//! per topic and per delivered subscriber.
//! The Python boundary benchmark (`python -m topicmatch.bench.boundary`) measures the same
//! shapes (MQTT) through Python.
//!
//! `cargo run --release -p topicmatch-benches --example fanout -- [PASSES] [ALGORITHM...]`
//! (default: 20 passes of `cstrie`, `trie` and `inverted_bitmap`; `cstrie_cached` names the
//! `cstrie` with its result cache).

use std::hint::black_box;
use std::time::Instant;

use topicmatch_benches::{fanout, passes_and_names, Shape};
use topicmatch_core::Dialect;

fn main() {
    let (passes, names) = passes_and_names(20, &["cstrie", "trie", "inverted_bitmap"]);
    let sets = [Shape::Cuts, Shape::Crowds, Shape::Broadcast]
        .into_iter()
        .flat_map(|shape| Dialect::ALL.map(|d| (shape, d)));
    for (shape, dialect) in sets {
        let w = fanout(shape, dialect);
        let topics: Vec<&str> = w.topics.iter().map(String::as_str).collect();
        let engines: Vec<_> = names.iter().map(|name| w.engine_named(name)).collect();
        let mut out = Vec::new();
        let mut ends = Vec::with_capacity(topics.len());
        let mut times = vec![Vec::with_capacity(passes); engines.len()];
        let mut delivered = 0;
        for _ in 0..passes {
            for (engine, row) in engines.iter().zip(&mut times) {
                out.clear();
                ends.clear();
                let start = Instant::now();
                engine
                    .lookup_batch_into(black_box(&topics), &mut out, &mut ends)
                    .expect("fan-out topics are valid");
                row.push(start.elapsed().as_secs_f64() * 1e9);
                delivered = out.len();
            }
        }
        println!(
            "{}: {} subscriptions, {} topics, {} subscribers per topic; {passes} passes",
            w.name,
            w.subscriptions.len(),
            topics.len(),
            delivered / topics.len()
        );
        #[allow(clippy::cast_precision_loss)] // counts far below 2^52
        let (n, d) = (topics.len() as f64, delivered as f64);
        for (name, row) in names.iter().zip(&mut times) {
            row.sort_by(f64::total_cmp);
            let (best, median) = (row[0], row[row.len() / 2]);
            println!(
                "{name:>18}: fastest {:8.1} ns per topic, {:6.2} per delivered  median {:8.1}, {:6.2}",
                best / n,
                best / d,
                median / n,
                median / d
            );
        }
    }
}
