//! A long batch lookup does not hold back the epoch collector: `Engine::lookup_batch_into` and
//! `lookup_batch_fields_into` pin a part of the batch at a time, so what another thread's
//! unsubscribe defers (a binding's release of the subscriber's object) runs while the batch is
//! still going. One test in its own binary: the collector's queue is the process's, and other
//! tests' garbage in it would be collected first.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use topicmatch_core::fields::{Criterion, Filter, Message, Mode, Value};
use topicmatch_core::{Algorithm, Dialect, Engine, Limits, Subscriber, SubscriberId};

/// How long the first batch of a case lasts, about: the departure comes 20 ms into it. A case
/// whose release is not seen during its batch is tried again with batches twice, four and
/// eight times as long, so that a batch cut short by a noisy machine's timing is not taken for
/// a release held back: a batch under one pin holds back the release however long it lasts.
const BATCH: Duration = Duration::from_millis(400);
const TRIES: u32 = 4;

/// How the batch is asked.
#[derive(Clone, Copy, Debug)]
enum Call {
    Topics,
    Fields,
}

/// Topics (none matching) enough for a batch of `call` to last about `length`, as timed on a
/// batch of 20,000.
fn topics_for(engine: &Engine, call: Call, length: Duration) -> usize {
    const TRIAL: usize = 20_000;
    let topics = vec!["z/q"; TRIAL];
    let messages = vec![Message::new(); TRIAL];
    let (mut out, mut ends) = (Vec::new(), Vec::new());
    let started = Instant::now();
    look_up(engine, call, &topics, &messages, &mut out, &mut ends);
    let trial = started.elapsed().as_nanos().max(1);
    let count = length.as_nanos() * TRIAL as u128 / trial;
    usize::try_from(count).map_or(50_000_000, |count| count.clamp(TRIAL, 50_000_000))
}

fn look_up(
    engine: &Engine,
    call: Call,
    topics: &[&str],
    messages: &[Message],
    out: &mut Vec<SubscriberId>,
    ends: &mut Vec<usize>,
) {
    match call {
        Call::Topics => engine.lookup_batch_into(topics, out, ends),
        Call::Fields => engine.lookup_batch_fields_into(topics, messages, out, ends),
    }
    .expect("valid topics");
}

/// Whether a departure's deferred release runs while another thread's batch lookup (of topics
/// matching nothing, lasting about `length`) is still going.
fn released_during_a_batch(engine: &Arc<Engine>, call: Call, length: Duration) -> bool {
    let count = topics_for(engine, call, length);
    let departing = engine
        .subscribe("a/+", &Subscriber::from("departing"))
        .expect("a valid pattern");
    let (started, done) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let batch = {
        let (engine, started, done) = (Arc::clone(engine), Arc::clone(&started), Arc::clone(&done));
        thread::spawn(move || {
            let topics = vec!["z/q"; count];
            let messages = match call {
                Call::Topics => Vec::new(),
                Call::Fields => vec![Message::new(); count],
            };
            let (mut out, mut ends) = (Vec::new(), Vec::new());
            started.store(true, Ordering::SeqCst);
            look_up(&engine, call, &topics, &messages, &mut out, &mut ends);
            done.store(true, Ordering::SeqCst);
            assert_eq!(ends.len(), count);
            assert!(out.is_empty());
        })
    };
    while !started.load(Ordering::SeqCst) {
        thread::yield_now();
    }
    // Well inside the batch.
    thread::sleep(Duration::from_millis(20));
    let released = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&released);
    assert!(engine.unsubscribe_with(departing, &mut move |_| {
        let flag = Arc::clone(&flag);
        crossbeam_epoch::pin().defer(move || flag.store(true, Ordering::SeqCst));
    }));
    let during = loop {
        // `done` read first: a release seen after it read false came while the batch ran.
        let finished = done.load(Ordering::SeqCst);
        if released.load(Ordering::SeqCst) {
            break !finished;
        }
        if finished {
            break false;
        }
        drop(crossbeam_epoch::pin());
    };
    batch.join().expect("the batch thread");
    during
}

#[test]
fn a_departure_is_released_while_a_long_batch_lookup_runs() {
    let limits = Limits::for_dialect(Dialect::Mqtt);
    let mut waited = Vec::new();
    for &algorithm in Algorithm::ALL {
        // Plain subscriptions: the algorithm's own batch path (the CS-trie pins for its walk).
        let plain = Arc::new(Engine::new(Dialect::Mqtt, algorithm, limits).expect("an engine"));
        plain
            .subscribe("b/#", &Subscriber::Int(1))
            .expect("a valid pattern");
        // A group and a filtered subscription: the engine's path that resolves them, pinned for
        // picking members.
        let resolving = Arc::new(Engine::new(Dialect::Mqtt, algorithm, limits).expect("an engine"));
        resolving
            .subscribe_group("b/#", &Subscriber::Int(1), "g")
            .expect("a valid pattern");
        let filter = Filter::new(vec![("n".into(), Criterion::Eq(Value::from(1)))], Mode::All)
            .expect("a valid filter");
        resolving
            .subscribe_where("c/#", &Subscriber::Int(2), &filter)
            .expect("a valid pattern");
        for (engine, call, what) in [
            (&plain, Call::Topics, "plain subscriptions"),
            (&resolving, Call::Topics, "a group and a filter"),
            (&resolving, Call::Fields, "a group and a filter"),
        ] {
            let released =
                (0..TRIES).any(|t| released_during_a_batch(engine, call, BATCH * (1 << t)));
            if !released {
                waited.push(format!("{algorithm}, {what}, {call:?}"));
            }
        }
    }
    assert!(
        waited.is_empty(),
        "the release waited for the batch to end: {waited:?}"
    );
}
