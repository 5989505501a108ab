//! Loom models of the CS-trie's compare-and-swap protocol: every interleaving (up to a
//! preemption bound) of concurrent insert, remove and lookup on tiny tries. Run with
//! `make loom` (`RUSTFLAGS="--cfg loom"`).
//!
//! What is modelled: the I-nodes' atomic main pointers (loom's `AtomicPtr` through
//! `src/sync.rs`), so every load and CAS is a scheduling point and loom explores the
//! retry loops, tombstoning, contraction and helping. What is not: crossbeam-epoch, which loom
//! cannot instrument; under `--cfg loom` retired nodes are freed when the matcher drops, and the
//! reclamation is checked instead by valgrind (`make valgrind`) and the address sanitizer
//! (`make asan`).
#![cfg(loom)]

use std::sync::Arc;

use loom::thread;
use topicmatch_core::matchers::cstrie::CsTrieMatcher;
use topicmatch_core::{Config, Dialect, Limits, Matcher, Pattern, SubscriberId};

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(f);
}

fn trie() -> Arc<CsTrieMatcher> {
    Arc::new(CsTrieMatcher::new(Config::new(Dialect::Amqp)))
}

fn p(text: &str) -> Pattern {
    Pattern::parse(Dialect::Amqp, &Limits::for_dialect(Dialect::Amqp), text).unwrap()
}

fn found(m: &CsTrieMatcher, topic: &str) -> Vec<SubscriberId> {
    let mut out = Vec::new();
    m.lookup_into(topic, &mut out).unwrap();
    out.sort_unstable();
    out
}

#[test]
fn concurrent_inserts_under_one_level_both_land() {
    model(|| {
        let m = trie();
        let other = Arc::clone(&m);
        let t = thread::spawn(move || other.insert(&p("a.b"), 1));
        m.insert(&p("a.c"), 2);
        t.join().unwrap();
        assert_eq!(found(&m, "a.b"), [1]);
        assert_eq!(found(&m, "a.c"), [2]);
    });
}

#[test]
fn insert_beside_a_contracting_remove_survives() {
    model(|| {
        let m = trie();
        m.insert(&p("a.b"), 1);
        let other = Arc::clone(&m);
        let t = thread::spawn(move || assert!(other.remove(&p("a.b"), 1)));
        m.insert(&p("a.c"), 2);
        t.join().unwrap();
        assert_eq!(found(&m, "a.b"), []);
        assert_eq!(found(&m, "a.c"), [2]);
        assert!(m.remove(&p("a.c"), 2));
        assert!(m.is_empty(), "contraction left a level behind");
    });
}

#[test]
fn insert_below_a_level_being_tombstoned_survives() {
    model(|| {
        let m = trie();
        m.insert(&p("a.b"), 1);
        let other = Arc::clone(&m);
        let t = thread::spawn(move || assert!(other.remove(&p("a.b"), 1)));
        m.insert(&p("a.b.c"), 2);
        t.join().unwrap();
        assert_eq!(found(&m, "a.b"), []);
        assert_eq!(found(&m, "a.b.c"), [2]);
        assert!(m.remove(&p("a.b.c"), 2));
        assert!(m.is_empty());
    });
}

#[test]
fn removes_emptying_sibling_levels_shrink_the_trie_to_empty() {
    model(|| {
        let m = trie();
        m.insert(&p("a.b.x"), 1);
        m.insert(&p("a.c"), 2);
        let other = Arc::clone(&m);
        let t = thread::spawn(move || assert!(other.remove(&p("a.b.x"), 1)));
        assert!(m.remove(&p("a.c"), 2));
        t.join().unwrap();
        assert!(m.is_empty());
    });
}

#[test]
fn subscribe_and_unsubscribe_on_one_leaf() {
    model(|| {
        let m = trie();
        m.insert(&p("a"), 1);
        let other = Arc::clone(&m);
        let t = thread::spawn(move || other.insert(&p("a"), 2));
        assert!(m.remove(&p("a"), 1));
        t.join().unwrap();
        assert_eq!(found(&m, "a"), [2]);
    });
}

#[test]
fn lookup_sees_untouched_subscriptions_and_nothing_unknown() {
    model(|| {
        let m = trie();
        m.insert(&p("a.*"), 1);
        m.insert(&p("a.b"), 2);
        let other = Arc::clone(&m);
        let t = thread::spawn(move || {
            assert!(other.remove(&p("a.b"), 2));
            other.insert(&p("a.#"), 3);
        });
        let seen = found(&m, "a.b");
        assert!(
            seen.contains(&1),
            "lost a subscription nobody touched: {seen:?}"
        );
        assert!(seen.iter().all(|s| [1, 2, 3].contains(s)), "{seen:?}");
        t.join().unwrap();
        assert_eq!(found(&m, "a.b"), [1, 3]);
    });
}

/// The result cache (`cache_capacity`): once a lookup has seen a subscription gone, a later
/// lookup never gets it back from a cached entry, even while the remove that took it has not
/// returned yet. (A hit needs no writer under way: with only the generation checked, the stale
/// entry of "x" would answer between the remove's CAS and its bump.)
#[test]
fn a_cached_result_never_brings_back_a_removed_subscription() {
    use loom::sync::atomic::{AtomicBool, Ordering::SeqCst};
    model(|| {
        let config = Config {
            cache_capacity: Some(4),
            ..Config::new(Dialect::Amqp)
        };
        let m = Arc::new(CsTrieMatcher::new(config));
        m.insert(&p("#"), 1);
        // Seen twice, so cached: as of the generation holding `#`.
        assert_eq!(found(&m, "x"), [1]);
        assert_eq!(found(&m, "x"), [1]);
        let gone = Arc::new(AtomicBool::new(false));
        let (remover, watcher, saw) = (Arc::clone(&m), Arc::clone(&m), Arc::clone(&gone));
        let a = thread::spawn(move || assert!(remover.remove(&p("#"), 1)));
        let c = thread::spawn(move || {
            // "y" is not cached: this walks the trie.
            if found(&watcher, "y").is_empty() {
                saw.store(true, SeqCst);
            }
        });
        if gone.load(SeqCst) {
            assert_eq!(found(&m, "x"), [0u64; 0], "a cached entry brought `#` back");
        }
        a.join().unwrap();
        c.join().unwrap();
        assert_eq!(found(&m, "x"), [0u64; 0]);
    });
}
