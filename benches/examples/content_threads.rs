//! Read-side thread scaling of content routing: N threads share one `FieldMatcher`, each
//! looking up messages one at a time (`FieldMatcher::lookup_into`), and N threads share one
//! engine holding `where=` subscriptions, each looking up batches of 1,000 topics with their
//! messages (`Engine::lookup_batch_fields_into`, what `Matcher.lookup_many(topics, fields)`
//! runs with the GIL released). Timed as the `threads` example times the topic walk: thread
//! counts take turns run by run, each keeps its fastest run, each ratio is against the first
//! count.
//!
//! The workloads (deterministic):
//! - `fields`: 20,000 subscriptions `user = u`, `u` drawn below 5,000 (four subscribers a
//!   message on average); messages with `user` and `kind`;
//! - `where`: 5,000 subscriptions on the 20 filters `a/<k>/+`, each `where x = v`, `v` drawn
//!   below 50 (250 candidates a topic, five delivered); topics `a/<k>/<n>` with messages
//!   carrying `x` and `kind`.
//!
//! `cargo run --release -p topicmatch-benches --example content_threads -- [RUNS]`
//! (default: 10 runs; thread counts 1, 2, 4, 8 and 16, or the comma-separated list in
//! `TOPICMATCH_THREADS`).

use std::hint::black_box;

use topicmatch_benches::rng::Rng;
use topicmatch_benches::threads::{fastest, scaling_line, thread_counts, timed_span};
use topicmatch_core::fields::{Criterion, FieldMatcher, Filter, Message, Mode, Value};
use topicmatch_core::{Algorithm, Dialect, Engine, Limits, Subscriber};

/// Messages (and topics) looked up per round.
const BATCH_U32: u32 = 1_000;
const BATCH: usize = BATCH_U32 as usize;
/// Seconds of one thread's part of a run.
const SECONDS: f64 = 0.05;

/// A filter of one criterion, `field = value`.
fn equals(field: &str, value: usize) -> Filter {
    let value = i64::try_from(value).expect("a small value");
    Filter::new(
        vec![(Box::from(field), Criterion::Eq(Value::from(value)))],
        Mode::All,
    )
    .expect("a valid filter")
}

/// A message of `(field, value)` integer fields and one text field.
fn message(fields: &[(&str, usize)]) -> Message {
    fields
        .iter()
        .fold(Message::new().with("kind", "mail"), |m, &(name, v)| {
            m.with(name, i64::try_from(v).expect("a small value"))
        })
}

/// One round of [`BATCH`] lookups, given a thread's buffers (subscriber ids, batch ends).
type Round<'a> = &'a (dyn Fn(&mut (Vec<u64>, Vec<usize>)) + Sync);

/// Messages per second of `threads` threads each running `round` `rounds` times, from the
/// first thread's start to the last one's end.
fn rate(threads: usize, rounds: usize, round: Round<'_>) -> f64 {
    let span = timed_span(
        threads,
        |_| (Vec::new(), Vec::new()),
        |_, mut buffers| {
            for _ in 0..rounds {
                round(&mut buffers);
            }
        },
    );
    let messages = u32::try_from(threads * rounds * BATCH).expect("under 2^32 lookups a run");
    f64::from(messages) / span.as_secs_f64()
}

/// Prints the scaling of `round` over `counts`, each run as long as one thread's `SECONDS`.
fn report(name: &str, runs: usize, counts: &[usize], round: Round<'_>) {
    // The probe is also the warm-up.
    let probe = rate(1, 20, round);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let rounds = ((SECONDS * probe / f64::from(BATCH_U32)) as usize).max(1);
    let best = fastest(runs, counts, |threads| rate(threads, rounds, round));
    println!("{name:>6}: {}", scaling_line(counts, &best));
}

fn main() {
    let runs = std::env::args()
        .nth(1)
        .map_or(10, |n| n.parse().expect("RUNS: a number"));
    let counts = thread_counts();
    let mut rng = Rng::new(5);
    println!(
        "{runs} runs per thread count, each thread looking up as many rounds of {BATCH} \
         messages as one thread does in {SECONDS} s; fastest run, ratio to the first count"
    );

    let fields = FieldMatcher::new();
    for i in 0..20_000 {
        fields
            .subscribe(&equals("user", rng.below(5_000)), &Subscriber::Int(i))
            .unwrap();
    }
    let messages: Vec<Message> = (0..BATCH)
        .map(|_| message(&[("user", rng.below(5_000))]))
        .collect();
    report("fields", runs, &counts, &|(out, _)| {
        for m in &messages {
            out.clear();
            fields.lookup_into(black_box(m), out);
            black_box(out.len());
        }
    });

    let engine = Engine::new(
        Dialect::Mqtt,
        Algorithm::Cstrie,
        Limits::for_dialect(Dialect::Mqtt),
    )
    .expect("a valid configuration");
    for i in 0..5_000 {
        let pattern = format!("a/{}/+", rng.below(20));
        engine
            .subscribe_where(&pattern, &Subscriber::Int(i), &equals("x", rng.below(50)))
            .expect("a valid subscription");
    }
    let topics: Vec<String> = (0..BATCH)
        .map(|_| format!("a/{}/{}", rng.below(20), rng.below(100)))
        .collect();
    let topics: Vec<&str> = topics.iter().map(String::as_str).collect();
    let messages: Vec<Message> = (0..BATCH)
        .map(|_| message(&[("x", rng.below(50))]))
        .collect();
    report("where", runs, &counts, &|(out, ends)| {
        out.clear();
        ends.clear();
        engine
            .lookup_batch_fields_into(black_box(&topics), &messages, out, ends)
            .expect("valid topics");
        black_box(out.len());
    });
}
