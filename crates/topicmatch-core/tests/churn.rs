//! Subscribe/unsubscribe churn returns memory: for every algorithm, batches of distinct
//! patterns (distinct words, distinct string subscribers) are subscribed and removed again,
//! and the process's resident size after the run stays at what it was after a warm-up.
//!
//! The default size keeps `cargo test` quick; `make churn` runs millions of patterns in release
//! mode (`TOPICMATCH_CHURN_PATTERNS`) and prints the figures quoted in docs/HARDENING.md.
//! This binary holds this one test, so no other test allocates while it measures.

use std::time::Instant;

use topicmatch_core::{Algorithm, Dialect, Engine, Limits, Subscriber};

/// Subscriptions held at once: the churn's working set.
const BATCH: usize = 2_000;

/// Patterns churned before the first measurement, so the allocator reaches its steady state.
const WARM_UP: usize = 5 * BATCH;

/// Allowed growth of the resident size after the warm-up. A leak of 160 bytes per pattern
/// exceeds it at the default size, of 1 byte per pattern at `make churn`'s.
const SLACK_KB: u64 = 3 * 1024;

fn patterns_per_algorithm() -> usize {
    std::env::var("TOPICMATCH_CHURN_PATTERNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000)
}

/// The process's resident set size, in KiB (`VmRSS` of `/proc/self/status`).
fn rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("procfs");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS line")
}

/// The `n`-th distinct pattern; shapes vary so wildcard edges churn too.
fn pattern(n: usize) -> String {
    match n % 4 {
        0 => format!("t{n}.x.*"),
        1 => format!("t{n}.#.y{}", n % 7),
        2 => format!("*.t{n}.#"),
        _ => format!("t{n}"),
    }
}

/// Subscribes and removes `count` distinct patterns from `first` on, `BATCH` at a time.
fn churn(e: &Engine, first: usize, count: usize) {
    let held = e.len();
    for start in (first..first + count).step_by(BATCH) {
        let ids: Vec<u64> = (start..start + BATCH)
            .map(|n| {
                let subscriber = Subscriber::Str(format!("s{n}").into());
                e.subscribe(&pattern(n), &subscriber).unwrap()
            })
            .collect();
        assert_eq!(e.len(), held + BATCH);
        let probe = format!("t{start}.x.z");
        assert_eq!(
            e.lookup(&probe).unwrap(),
            vec![Subscriber::Str(format!("s{start}").into())]
        );
        for id in ids {
            assert!(e.unsubscribe(id));
        }
    }
    assert_eq!(e.len(), held);
}

#[test]
fn churn_returns_memory() {
    let total = patterns_per_algorithm().div_ceil(2 * BATCH) * 2 * BATCH;
    for &algorithm in Algorithm::ALL {
        let e = Engine::new(Dialect::Amqp, algorithm, Limits::for_dialect(Dialect::Amqp)).unwrap();
        let keep = e.subscribe("keep.*", &Subscriber::Int(-1)).unwrap();
        churn(&e, 0, WARM_UP);
        let before = rss_kb();
        let started = Instant::now();
        churn(&e, WARM_UP, total / 2);
        let half = rss_kb();
        churn(&e, WARM_UP + total / 2, total - total / 2);
        let after = rss_kb();
        println!(
            "churn {algorithm}: {total} patterns subscribed and removed in {:.1} s; RSS after \
             warm-up {before} KiB, half-way {half} KiB, at the end {after} KiB",
            started.elapsed().as_secs_f64()
        );
        assert!(
            after <= before + SLACK_KB,
            "{algorithm}: resident size grew from {before} KiB to {after} KiB"
        );
        assert_eq!(e.lookup("keep.t1").unwrap(), vec![Subscriber::Int(-1)]);
        assert!(e.lookup("t5").unwrap().is_empty());
        assert!(e.unsubscribe(keep));
        assert!(e.is_empty());
    }
}
