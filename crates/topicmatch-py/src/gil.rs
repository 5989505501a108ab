//! The one place the GIL is released, and the rule that decides when.
//!
//! Handing the GIL over costs microseconds when other threads are waiting for it (each
//! release wakes one of them, each re-take may sleep), while one lookup costs about a
//! hundred nanoseconds. So work runs holding the GIL unless it is expected to take at least
//! [`DETACH_NS`]: a walk of a few hundred nanoseconds never pays for a hand-over, a batch of
//! thousands of topics does. The expectation comes from what the call knows and what was
//! measured: each matcher keeps a [`Cost`], a running average of its core work per topic
//! (timed on every batch call and on one single-topic call in [`SAMPLE_EVERY`] per thread),
//! and a call's estimate is that average times its number of topics ([`UNMEASURED_NS`] a
//! topic until the matcher has measured one). A matcher whose
//! lookups are long (a `naive` scan of a million patterns, topics matching thousands of
//! subscribers) thus releases the GIL even for one topic, and a small batch on a fast matcher
//! keeps it. With the GIL held, N threads calling `lookup` share one core's worth of
//! matching, which CPython hands between them every switch interval: their total is one
//! thread's, less what each hand-over costs, which it costs any Python code that holds the GIL.
//!
//! Whichever way the work runs, a panic inside it is caught here and becomes
//! `TopicMatchError`: no panic crosses into Python.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use pyo3::prelude::*;

use crate::errors;

/// Work expected to take at least this long (ns) runs with the GIL released.
pub const DETACH_NS: u64 = 20_000;

/// The longest a part of a batch (`Matcher.lookup_many`, `FieldMatcher.lookup_many`) is
/// expected to take, in ns, by the matcher's measured cost per topic (a batch of slow lookups
/// finding few subscribers each, such as a `naive` scan of many patterns, is parts of at most
/// this long). Between parts the call holds the GIL and runs pending signal handlers: a Ctrl-C
/// stops a long batch within about this long, raising `KeyboardInterrupt`.
pub const PART_NS: u64 = 50_000_000;

/// The cost per topic assumed while a matcher has measured none, in ns (about one walk on a
/// small matcher): a first batch of a few hundred topics or more releases the GIL, a first
/// single lookup keeps it.
pub const UNMEASURED_NS: u64 = 100;

/// The topics of a batch's first part while its matcher has measured nothing: one, timed, sizes
/// the parts after it (a first batch of slow lookups runs no longer than one lookup before its
/// first signal check).
pub const FIRST_PART: usize = 1;

/// One single-topic call in this many, per thread, is timed (a clock read costs about a
/// fifth of a lookup; batches are always timed).
pub const SAMPLE_EVERY: u32 = 64;

thread_local! {
    /// Single-topic calls on this thread since the last timed one.
    static CALLS: Cell<u32> = const { Cell::new(0) };
}

/// A running average of a matcher's core work per topic, in ns (0: nothing measured yet,
/// so the next call is timed whatever its size, and estimated at [`UNMEASURED_NS`] a topic).
#[derive(Default)]
pub struct Cost {
    per_topic: AtomicU64,
    /// A running average of subscriber ids per topic in batches, in sixteenths: the room a
    /// batch's result vector is given up front (so it is not copied as it grows).
    ids_per_topic: AtomicU64,
}

impl Cost {
    /// The current average per topic, in ns.
    pub fn per_topic(&self) -> u64 {
        self.per_topic.load(Ordering::Relaxed)
    }

    /// Runs `work` on `topics` topics, with the GIL released if the estimate reaches
    /// [`DETACH_NS`], else holding it; times it when the rule above says so.
    pub fn run<T, F>(&self, py: Python<'_>, topics: usize, work: F) -> PyResult<T>
    where
        T: Send,
        F: FnOnce() -> T + Send,
    {
        let per_topic = self.per_topic();
        let timed = per_topic == 0 || topics > 1 || sample();
        let estimate = match per_topic {
            0 => UNMEASURED_NS,
            known => known,
        }
        .saturating_mul(topics as u64);
        let run = || {
            if !timed {
                return work();
            }
            let start = Instant::now();
            let out = work();
            self.record(start.elapsed().as_nanos(), topics);
            out
        };
        if estimate >= DETACH_NS {
            detach(py, run)
        } else {
            guarded(|| Ok(run()))
        }
    }

    /// Room for the subscriber ids of a batch of `topics` topics: the average so far, with a
    /// quarter more (at least 4 per topic).
    pub fn ids_capacity(&self, topics: usize) -> usize {
        let sixteenths = self.ids_per_topic.load(Ordering::Relaxed).max(64);
        let per_topic = usize::try_from(sixteenths.saturating_mul(5) / 64).unwrap_or(usize::MAX);
        topics.saturating_mul(per_topic)
    }

    /// How many topics give about `ids` subscriber ids, by the average so far (at least one).
    pub fn topics_for_ids(&self, ids: usize) -> usize {
        let sixteenths = self.ids_per_topic.load(Ordering::Relaxed).max(16);
        let topics = (ids as u64).saturating_mul(16) / sixteenths;
        usize::try_from(topics).unwrap_or(usize::MAX).max(1)
    }

    /// How many topics are expected to take about `ns` nanoseconds, by the average so far
    /// (at least one; [`FIRST_PART`] while nothing is measured yet).
    pub fn topics_for_ns(&self, ns: u64) -> usize {
        match self.per_topic() {
            0 => FIRST_PART,
            per_topic => usize::try_from(ns / per_topic).unwrap_or(usize::MAX).max(1),
        }
    }

    /// Folds a batch's `ids` subscriber ids over `topics` topics into the average.
    pub fn record_ids(&self, ids: usize, topics: usize) {
        if topics == 0 {
            return;
        }
        let sample = (ids as u64).saturating_mul(16) / topics as u64;
        let old = self.ids_per_topic.load(Ordering::Relaxed);
        let new = if old == 0 {
            sample
        } else {
            old - old / 4 + sample / 4
        };
        self.ids_per_topic.store(new, Ordering::Relaxed);
    }

    /// Folds one timed call into the average (a quarter weight: it follows a change of the
    /// matcher within a few calls, and one odd call moves it by a quarter).
    fn record(&self, elapsed_ns: u128, topics: usize) {
        let sample = u64::try_from(elapsed_ns / topics.max(1) as u128)
            .unwrap_or(u64::MAX)
            .max(1);
        let old = self.per_topic();
        let new = if old == 0 {
            sample
        } else {
            old - old / 4 + sample / 4
        };
        // A plain store: a lost update among racing threads only drops one sample.
        self.per_topic.store(new.max(1), Ordering::Relaxed);
    }
}

/// Runs `work` with the GIL released if `long`, else holding it (for calls without a
/// [`Cost`], which size their work from their input).
pub fn run_if<T, F>(py: Python<'_>, long: bool, work: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce() -> T + Send,
{
    if long {
        detach(py, work)
    } else {
        guarded(|| Ok(work()))
    }
}

/// Whether this single-topic call is one of the sampled ones.
fn sample() -> bool {
    CALLS.with(|calls| {
        let n = calls.get() + 1;
        if n >= SAMPLE_EVERY {
            calls.set(0);
            true
        } else {
            calls.set(n);
            false
        }
    })
}

/// Runs `work` with the GIL released, so other Python threads run meanwhile.
pub fn detach<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce() -> T + Send,
{
    py.detach(|| catch_unwind(AssertUnwindSafe(work)))
        .map_err(|panic| errors::internal(format!("internal error: {}", panic_message(&panic))))
}

/// Runs `work` holding the GIL, turning a panic into `TopicMatchError`.
pub fn guarded<T>(work: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(work)).unwrap_or_else(|panic| {
        Err(errors::internal(format!(
            "internal error: {}",
            panic_message(&panic)
        )))
    })
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic in the native code".to_owned()
    }
}
