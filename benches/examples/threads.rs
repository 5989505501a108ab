//! The core's read-only thread scaling on ftm: N threads share one engine, each looking up
//! batches of 1,000 ftm topics through `Engine::lookup_batch_into` (the call the Python
//! package's `lookup_many` and `lookup_arrow` make with the GIL released), timed from the
//! first thread's start to the last one's end. Thread counts alternate run by run and each
//! keeps its fastest run; each ratio is against the first count. It is what the machine gives
//! the walk alone: the ceiling for the Python batch calls' scaling on the same machine.
//! A second line per algorithm (`values`) has each thread call `Engine::lookup` on every topic
//! of its batches instead: the Rust API that returns the subscribers' values (one read of the
//! engine's registry and one `Vec` per topic).
//!
//! `cargo run --release -p topicmatch-benches --example threads -- [RUNS] [ALGORITHM...]`
//! (default: 10 runs of `cstrie`; thread counts 1, 2, 4, 8 and 16, or the comma-separated
//! list in `TOPICMATCH_THREADS`).

use std::hint::black_box;

use topicmatch_benches::threads::{fastest, scaling_line, thread_counts, timed_span};
use topicmatch_benches::{ftm, passes_and_names};
use topicmatch_core::Engine;

/// Topics per batch, as the Python bench's batches.
const BATCH_U32: u32 = 1_000;
const BATCH: usize = BATCH_U32 as usize;
/// Seconds of one thread's part of a run.
const SECONDS: f64 = 0.05;

/// Topics per second of `threads` threads each looking up `rounds` batches (each from its own
/// place in the stream; with `values`, through `Engine::lookup` topic by topic), from the
/// first thread's start to the last one's end.
fn run(engine: &Engine, batches: &[Vec<&str>], threads: usize, rounds: usize, values: bool) -> f64 {
    let span = timed_span(
        threads,
        |_| (Vec::new(), Vec::new()),
        |k, (mut out, mut ends): (Vec<_>, Vec<_>)| {
            for r in 0..rounds {
                out.clear();
                ends.clear();
                let batch = &batches[(k * rounds + r) % batches.len()];
                if values {
                    for topic in batch {
                        black_box(engine.lookup(black_box(topic)).expect("a valid topic"));
                    }
                    continue;
                }
                engine
                    .lookup_batch_into(black_box(batch), &mut out, &mut ends)
                    .expect("ftm topics are valid");
                black_box(out.len());
            }
        },
    );
    let topics = u32::try_from(threads * rounds * BATCH).expect("under 2^32 topics a run");
    f64::from(topics) / span.as_secs_f64()
}

fn main() {
    let (runs, names) = passes_and_names(10, &["cstrie"]);
    let counts = thread_counts();
    let w = ftm();
    let batches: Vec<Vec<&str>> = w
        .topics
        .chunks_exact(BATCH)
        .map(|c| c.iter().map(String::as_str).collect())
        .collect();
    println!(
        "{runs} runs per thread count, each thread looking up as many batches of {BATCH} ftm \
         topics as one thread does in {SECONDS} s; fastest run, ratio to the first count"
    );
    for name in &names {
        let engine = w.engine_named(name);
        for values in [false, true] {
            // The probe is also the warm-up; whole batches, at least one, follow from its rate.
            let probe = run(&engine, &batches, 1, 20, values);
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let rounds = ((SECONDS * probe / f64::from(BATCH_U32)) as usize).max(1);
            let best = fastest(runs, &counts, |threads| {
                run(&engine, &batches, threads, rounds, values)
            });
            let call = if values { "values" } else { "batches" };
            println!("{name:>18} {call:>7}: {}", scaling_line(&counts, &best));
        }
    }
}
