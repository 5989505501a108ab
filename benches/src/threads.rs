//! Timing work spread over threads.

use std::sync::Barrier;
use std::time::{Duration, Instant};

/// Runs `work(k)` on `threads` scoped threads (`k` in `0..threads`), started together past a
/// barrier, and returns the time from the first thread's start to the last one's end.
///
/// Each thread reads the clock itself. (A clock started by the coordinating thread after the
/// barrier would miss whatever the workers do while that thread waits for a core, which with
/// more threads than cores is often a whole scheduler slice: runs then measured up to several
/// times the machine's capacity.) `prepare(k)` runs on thread `k` before the barrier, untimed,
/// and its result is what `work` gets.
pub fn timed_span<S, P, W>(threads: usize, prepare: P, work: W) -> Duration
where
    P: Fn(usize) -> S + Sync,
    W: Fn(usize, S) + Sync,
{
    let barrier = Barrier::new(threads);
    let spans: Vec<(Instant, Instant)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|k| {
                let (barrier, prepare, work) = (&barrier, &prepare, &work);
                s.spawn(move || {
                    let state = prepare(k);
                    barrier.wait();
                    let start = Instant::now();
                    work(k, state);
                    (start, Instant::now())
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().expect("a timed thread panicked"))
            .collect()
    });
    let first = spans.iter().map(|span| span.0).min();
    let last = spans.iter().map(|span| span.1).max();
    match (first, last) {
        (Some(first), Some(last)) => last - first,
        _ => Duration::ZERO,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn every_thread_works_once_and_only_the_work_is_timed() {
        let ran = Mutex::new(Vec::new());
        let span = timed_span(
            4,
            |k| {
                std::thread::sleep(Duration::from_millis(300));
                k * 10
            },
            |k, state| {
                std::thread::sleep(Duration::from_millis(20));
                ran.lock().unwrap().push((k, state));
            },
        );
        let mut ran = ran.into_inner().unwrap();
        ran.sort_unstable();
        assert_eq!(ran, vec![(0, 0), (1, 10), (2, 20), (3, 30)]);
        assert!(span >= Duration::from_millis(20), "{span:?}");
        assert!(
            span < Duration::from_millis(300),
            "the preparation is not timed: {span:?}"
        );
    }
}
