//! The `Matcher` trait: the contract every algorithm keeps.

use std::cell::RefCell;

use crate::dialect::{Dialect, Limits};
use crate::error::Result;
use crate::pattern::{Pattern, Word};
use crate::relation::Query;

/// An interned subscriber. The core never sees Python objects, only these ids; the
/// [`Registry`](crate::Registry) maps them to and from subscriber values. Ids are dense (from
/// 0 up) and reused only once no lookup pinned when their subscriber left can still see them
/// (see the registry's docs).
pub type SubscriberId = u64;

/// The id of one subscription: what [`Engine::subscribe`](crate::Engine::subscribe) returns
/// and [`Engine::unsubscribe`](crate::Engine::unsubscribe) takes.
pub type SubscriptionId = u64;

/// What every algorithm is built from: the dialect and the limits it enforces on topics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// The dialect of every pattern and topic.
    pub dialect: Dialect,
    /// Limits checked on every topic.
    pub limits: Limits,
    /// The most topics an algorithm that caches per topic keeps: `inverted_bitmap`'s rows
    /// (default 16,384), `cstrie`'s results (default: no cache; at most 4,194,304 whatever is
    /// asked); `None`: the default.
    /// [`Engine`](crate::Engine) refuses it for other algorithms.
    pub cache_capacity: Option<usize>,
}

impl Config {
    /// The dialect's default limits.
    pub fn new(dialect: Dialect) -> Self {
        Config {
            dialect,
            limits: Limits::for_dialect(dialect),
            cache_capacity: None,
        }
    }
}

/// A topic-matching algorithm.
///
/// # Contract
///
/// - **Semantics.** `lookup_into(topic)` appends exactly the subscribers having at least one
///   inserted pattern `p` with `p.matches_words(words(topic))` (see
///   [`Pattern::matches_words`], the reference semantics that the `naive` matcher executes),
///   each subscriber **once**, in no particular order. It never clears `out`.
/// - **Validation.** `lookup_into` and `matches_any` validate `topic` with
///   [`parse_topic`](crate::topic::parse_topic) under the config's dialect and limits, and return
///   its error unchanged for an invalid topic, leaving `out` as it was.
/// - **Bookkeeping is the caller's.** The [`Engine`](crate::Engine) deduplicates subscriptions
///   and assigns their ids: `insert` is never called twice for the same (pattern, subscriber)
///   without a `remove` between, and `remove` only for pairs inserted. Patterns arrive already
///   validated for the config's dialect and limits.
/// - **Concurrency.** All methods take `&self` and may be called from any number of threads at
///   once. A lookup concurrent with `insert`/`remove` of a pattern it would match may or may not
///   see that change; it always sees every change that completed before it started, and never
///   reports a subscriber whose every matching pattern was removed before it started.
/// - **No panics** on any input that passed validation; no unbounded recursion; AMQP `#`
///   matching stays polynomial in the number of words.
/// - **Cost.** Beyond the result, a lookup should not allocate for topics of up to
///   [`INLINE_WORDS`](crate::topic::INLINE_WORDS) words.
pub trait Matcher: Send + Sync {
    /// The algorithm's name, as `Algorithm::name` spells it.
    fn name(&self) -> &'static str;

    /// Adds `subscriber` under `pattern`.
    fn insert(&self, pattern: &Pattern, subscriber: SubscriberId);

    /// Removes `subscriber` from `pattern`; returns whether it was there.
    fn remove(&self, pattern: &Pattern, subscriber: SubscriberId) -> bool;

    /// Appends the distinct subscribers matching `topic` to `out`.
    fn lookup_into(&self, topic: &str, out: &mut Vec<SubscriberId>) -> Result<()>;

    /// Whether at least one pattern matches `topic` (filtering mode).
    fn matches_any(&self, topic: &str) -> Result<bool>;

    /// Looks up every topic of `topics` in order: appends each one's distinct subscribers to
    /// `out` (as [`lookup_into`](Matcher::lookup_into)) and then pushes `out.len()` to `ends`,
    /// so topic `i`'s subscribers are `out[ends[i - 1]..ends[i]]`. On the first invalid topic it
    /// returns that topic's error; what was pushed for earlier topics stays.
    ///
    /// Algorithms override it to pay per-lookup set-up (an epoch pin, a lock) once per batch.
    fn lookup_batch_into(
        &self,
        topics: &[&str],
        out: &mut Vec<SubscriberId>,
        ends: &mut Vec<usize>,
    ) -> Result<()> {
        for topic in topics {
            self.lookup_into(topic, out)?;
            ends.push(out.len());
        }
        Ok(())
    }

    /// [`lookup_into`](Matcher::lookup_into) for a caller that can tell whether every
    /// subscriber is held under one pattern at most: `distinct` as for
    /// [`lookup_batch_distinct_into`](Matcher::lookup_batch_distinct_into), whose contract the
    /// caller keeps. The default ignores it.
    fn lookup_distinct_into(
        &self,
        topic: &str,
        out: &mut Vec<SubscriberId>,
        distinct: &dyn Fn() -> bool,
    ) -> Result<()> {
        let _ = distinct;
        self.lookup_into(topic, out)
    }

    /// [`lookup_batch_into`](Matcher::lookup_batch_into) for a caller that can tell whether
    /// every subscriber is held under one pattern at most: `distinct()`, asked after a topic's
    /// walk and under the walk's epoch pin, says so. An algorithm may then skip removing
    /// duplicates from a topic whose walk reached each pattern once (no subscriber can be
    /// there twice). The caller must keep `distinct()` false from before a subscriber's second
    /// pattern is inserted until every thread pinned when it was removed has unpinned. The
    /// default ignores it.
    fn lookup_batch_distinct_into(
        &self,
        topics: &[&str],
        out: &mut Vec<SubscriberId>,
        ends: &mut Vec<usize>,
        distinct: &dyn Fn() -> bool,
    ) -> Result<()> {
        let _ = distinct;
        self.lookup_batch_into(topics, out, ends)
    }

    /// Appends every held pattern standing in `query`'s relation to the query (it covers the
    /// query, or intersects it; [`crate::relation`]), with its subscribers: one [`Related`] per
    /// pattern, each pattern once, found by walking the algorithm's index rather than trying
    /// every pattern. Returns `Ok(false)`, appending nothing, when the algorithm has no index
    /// to walk (the default) or its walk would visit more states than the query's budget
    /// ([`Query::walk_budget`]): the caller then scans its own list of subscriptions. Fails only
    /// as [`Relation::holds`](crate::relation::Relation::holds) does (a `covers` past its
    /// work limit), leaving `out` as it was.
    fn related_into(&self, query: &Query<'_>, out: &mut Vec<Related>) -> Result<bool> {
        let _ = (query, out);
        Ok(false)
    }
}

/// A held pattern a relation walk found, with its subscribers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Related {
    /// The words of the pattern as the algorithm holds it (an MQTT shared subscription's
    /// filter).
    pub words: Vec<Word>,
    /// The subscribers held under it.
    pub subscribers: Vec<SubscriberId>,
}

/// Ids below this are de-duplicated by a stamp array indexed by id (the registry's ids are
/// dense); larger ones (the engine's synthetic ids of filtered subscriptions) by a sort.
const STAMPED_IDS: SubscriberId = 1 << 24;

/// Per-thread de-duplication stamps: `marks[id] == generation` when `id` was seen in the
/// current call. One generation per call, so nothing is cleared between calls.
struct Stamps {
    generation: u32,
    marks: Vec<u32>,
}

thread_local! {
    static STAMPS: RefCell<Stamps> = const {
        RefCell::new(Stamps { generation: 0, marks: Vec::new() })
    };
}

/// Removes duplicates from `out[start..]`, keeping each id's first occurrence in place: the
/// shared tail step of algorithms whose walk can reach one subscriber through several
/// patterns. A few ids are compared with each other; more take one array read and write per
/// id (a stamp in a per-thread array as long as the largest id seen, at most 64 MiB), no
/// hashing and no sort.
pub fn dedup_tail(out: &mut Vec<SubscriberId>, start: usize) {
    /// Up to this many ids, comparing each with those kept costs less than the stamps.
    const FEW: usize = 16;
    let len = out.len() - start;
    if len < 2 {
        return;
    }
    if len <= FEW {
        let mut kept = start + 1;
        for i in start + 1..out.len() {
            let id = out[i];
            if !out[start..kept].contains(&id) {
                out[kept] = id;
                kept += 1;
            }
        }
        out.truncate(kept);
        return;
    }
    let sparse = STAMPS.with(|stamps| stamps.borrow_mut().keep_first(out, start));
    if sparse {
        sort_dedup_tail(out, start);
    }
}

impl Stamps {
    /// Drops every repeated stamped id from `out[start..]`; whether an id too large to stamp
    /// was kept (the caller then sorts).
    fn keep_first(&mut self, out: &mut Vec<SubscriberId>, start: usize) -> bool {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.marks.fill(0);
            self.generation = 1;
        }
        let generation = self.generation;
        let mut sparse = false;
        let mut kept = start;
        let mut i = start;
        while i < out.len() {
            // The array borrowed once per pass, so the loop reads it in place; a pass ends at
            // an id past its end, which the array then grows to hold.
            let marks = &mut self.marks[..];
            while i < out.len() {
                let id = out[i];
                if id < STAMPED_IDS {
                    let Some(mark) = marks.get_mut(id as usize) else {
                        break;
                    };
                    i += 1;
                    if *mark == generation {
                        continue;
                    }
                    *mark = generation;
                } else {
                    i += 1;
                    sparse = true;
                }
                out[kept] = id;
                kept += 1;
            }
            if i < out.len() {
                self.marks
                    .resize((out[i] as usize + 1).next_power_of_two(), 0);
            }
        }
        out.truncate(kept);
        sparse
    }
}

/// Sorts and removes duplicates from `out[start..]`.
fn sort_dedup_tail(out: &mut Vec<SubscriberId>, start: usize) {
    let tail = &mut out[start..];
    if tail.len() < 2 {
        return;
    }
    tail.sort_unstable();
    let mut kept = start + 1;
    for i in start + 1..out.len() {
        if out[i] != out[kept - 1] {
            out[kept] = out[i];
            kept += 1;
        }
    }
    out.truncate(kept);
}

/// Gives memory back once a map is at most a quarter full, so churn through many
/// subscriptions does not pin the high-water mark: it shrinks to twice the length, which only
/// happens again after half of what is left was removed (amortised O(1) per removal).
pub fn shrink_if_sparse<K, V, S>(map: &mut std::collections::HashMap<K, V, S>)
where
    K: Eq + std::hash::Hash,
    S: std::hash::BuildHasher,
{
    const MIN_CAPACITY: usize = 64;
    if map.capacity() > MIN_CAPACITY && map.len() * 4 < map.capacity() {
        map.shrink_to(map.len() * 2);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{dedup_tail, SubscriberId, STAMPED_IDS};
    use proptest::prelude::*;

    /// What `dedup_tail` must leave: the prefix untouched, then each id's first occurrence in
    /// order, or sorted and distinct when an id is too large to stamp.
    fn expected(ids: &[SubscriberId], start: usize) -> Vec<SubscriberId> {
        let mut out = ids[..start].to_vec();
        let tail = &ids[start..];
        if tail.len() > 16 && tail.iter().any(|&id| id >= STAMPED_IDS) {
            let mut sorted = tail.to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            out.extend(sorted);
        } else {
            for &id in tail {
                if !out[start..].contains(&id) {
                    out.push(id);
                }
            }
        }
        out
    }

    fn ids() -> impl Strategy<Value = SubscriberId> {
        prop_oneof![
            8 => 0..64u64,
            1 => 0..STAMPED_IDS,
            1 => STAMPED_IDS..STAMPED_IDS + 4,
        ]
    }

    proptest! {
        #[test]
        fn keeps_each_first_occurrence(
            ids in proptest::collection::vec(ids(), 0..200),
            start in 0usize..8,
        ) {
            let start = start.min(ids.len());
            let mut out = ids.clone();
            dedup_tail(&mut out, start);
            prop_assert_eq!(&out, &expected(&ids, start));
            // Again on the same thread: the stamps of the call before must not leak into it.
            let mut again = ids.clone();
            dedup_tail(&mut again, start);
            prop_assert_eq!(again, out);
        }
    }

    #[test]
    fn repeats_only() {
        let mut out = vec![5; 100];
        dedup_tail(&mut out, 0);
        assert_eq!(out, vec![5]);
        // The prefix is not part of the tail: its ids are kept again in the tail.
        let mut out: Vec<SubscriberId> = (0..40).chain(0..40).collect();
        dedup_tail(&mut out, 3);
        let want: Vec<SubscriberId> = (0..40).chain(0..3).collect();
        assert_eq!(out, want);
    }
}
