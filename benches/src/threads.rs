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

/// The thread counts an example compares: those listed in `TOPICMATCH_THREADS`
/// (comma-separated), else 1, 2, 4, 8 and 16.
///
/// # Panics
/// If `TOPICMATCH_THREADS` holds anything but numbers.
pub fn thread_counts() -> Vec<usize> {
    match std::env::var("TOPICMATCH_THREADS") {
        Ok(list) => list
            .split(',')
            .map(|n| {
                n.trim()
                    .parse()
                    .expect("TOPICMATCH_THREADS: numbers, comma-separated")
            })
            .collect(),
        Err(_) => vec![1, 2, 4, 8, 16],
    }
}

/// The fastest of `runs` results of `rate(threads)` for each of `counts`, the counts taking
/// turns run by run: on a shared machine the fastest run is the least disturbed, and taking
/// turns spreads any drift over every count.
pub fn fastest(runs: usize, counts: &[usize], mut rate: impl FnMut(usize) -> f64) -> Vec<f64> {
    let mut best = vec![0.0f64; counts.len()];
    for _ in 0..runs {
        for (best, &threads) in best.iter_mut().zip(counts) {
            *best = best.max(rate(threads));
        }
    }
    best
}

/// Each count's rate (per second, shown in millions) and its ratio to the first count's.
pub fn scaling_line(counts: &[usize], rates: &[f64]) -> String {
    let line: Vec<String> = counts
        .iter()
        .zip(rates)
        .map(|(t, rate)| format!("{t}t {:6.2} M/s ({:5.2}x)", rate / 1e6, rate / rates[0]))
        .collect();
    line.join("   ")
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

    #[test]
    fn fastest_keeps_each_counts_best_run() {
        let mut calls = Vec::new();
        let mut next = [5.0, 1.0, 7.0, 3.0].into_iter();
        let best = fastest(2, &[1, 4], |t| {
            calls.push(t);
            next.next().unwrap()
        });
        assert_eq!(calls, vec![1, 4, 1, 4]);
        assert_eq!(best, vec![7.0, 3.0]);
        assert_eq!(
            scaling_line(&[1, 4], &best),
            "1t   0.00 M/s ( 1.00x)   4t   0.00 M/s ( 0.43x)"
        );
    }
}
