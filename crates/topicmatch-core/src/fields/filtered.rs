//! Topic subscriptions with field criteria (`where=`): the bookkeeping the [`Engine`] keeps
//! beside its topic algorithm.
//!
//! A filtered subscription enters the topic algorithm under a synthetic subscriber id of its
//! own (the subscription id with the top bit set; registry ids never get that high). The topic
//! match narrows the candidates; for each synthetic id among them, the engine evaluates that
//! subscription's [`Filter`] against the message's fields, keeps the real subscriber if it
//! passes, and deduplicates.
//!
//! [`Engine`]: crate::Engine

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;
use rustc_hash::FxHashMap;

use crate::fields::criteria::Filter;
use crate::fields::message::Message;
use crate::hint::prefetch;
use crate::matcher::{dedup_tail, SubscriberId, SubscriptionId};

/// The bit that marks a synthetic subscriber id.
const SYNTHETIC: SubscriberId = 1 << 63;

/// Candidates resolved together by [`FilterTable::resolve_tail`].
const STAGE: usize = 16;

/// Whether `id` stands for a filtered subscription.
pub fn is_synthetic(id: SubscriberId) -> bool {
    id & SYNTHETIC != 0
}

/// The subscription a synthetic id stands for.
pub fn subscription_of(synthetic: SubscriberId) -> SubscriptionId {
    synthetic & !SYNTHETIC
}

/// Whether any of `ids` stands for a filtered subscription: one OR over the ids (no branch
/// per id), since every lookup asks it of its result.
#[inline]
pub fn any_synthetic(ids: &[SubscriberId]) -> bool {
    ids.iter().fold(0, |acc, &id| acc | id) & SYNTHETIC != 0
}

struct Held {
    pattern: Arc<str>,
    filter: Arc<Filter>,
    subscriber: SubscriberId,
}

#[derive(Default)]
struct Inner {
    by_synthetic: FxHashMap<SubscriberId, Held>,
    by_key: FxHashMap<(Arc<str>, Arc<Filter>, SubscriberId), SubscriptionId>,
}

/// Filtered subscriptions by synthetic id and by (pattern, filter, subscriber).
#[derive(Default)]
pub struct FilterTable {
    inner: RwLock<Inner>,
    /// How many are held: read without the lock by every lookup that meets a synthetic id.
    count: AtomicUsize,
}

impl FilterTable {
    /// The id of an identical filtered subscription, if one is held.
    pub fn existing(
        &self,
        pattern: &Arc<str>,
        filter: &Arc<Filter>,
        subscriber: SubscriberId,
    ) -> Option<SubscriptionId> {
        let key = (pattern.clone(), filter.clone(), subscriber);
        self.inner.read().by_key.get(&key).copied()
    }

    /// Holds a new filtered subscription; returns the synthetic id to insert in the algorithm.
    pub fn insert(
        &self,
        id: SubscriptionId,
        pattern: Arc<str>,
        filter: Arc<Filter>,
        subscriber: SubscriberId,
    ) -> SubscriberId {
        assert!(!is_synthetic(id), "subscription ids stay below 2^63");
        let synthetic = id | SYNTHETIC;
        let mut inner = self.inner.write();
        let key = (pattern.clone(), filter.clone(), subscriber);
        inner.by_key.insert(key, id);
        self.count.fetch_add(1, Ordering::Release);
        inner.by_synthetic.insert(
            synthetic,
            Held {
                pattern,
                filter,
                subscriber,
            },
        );
        synthetic
    }

    /// The registry id behind `id`: itself unless synthetic, in which case the filtered
    /// subscription is forgotten.
    pub fn release(&self, id: SubscriberId) -> SubscriberId {
        if !is_synthetic(id) {
            return id;
        }
        let mut inner = self.inner.write();
        let held = inner.by_synthetic.remove(&id).expect("held synthetic id");
        self.count.fetch_sub(1, Ordering::Release);
        inner
            .by_key
            .remove(&(held.pattern, held.filter, held.subscriber));
        held.subscriber
    }

    /// The registry id behind `id` (itself unless synthetic).
    pub fn real(&self, id: SubscriberId) -> SubscriberId {
        if !is_synthetic(id) {
            return id;
        }
        self.inner
            .read()
            .by_synthetic
            .get(&id)
            .expect("held synthetic id")
            .subscriber
    }

    /// Whether no filtered subscription is held.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.count.load(Ordering::Acquire) == 0
    }

    /// Every filtered subscription's id and filter.
    pub fn filters(&self) -> Vec<(SubscriptionId, Arc<Filter>)> {
        let inner = self.inner.read();
        let mut all: Vec<_> = inner
            .by_synthetic
            .iter()
            .map(|(synthetic, held)| (synthetic & !SYNTHETIC, held.filter.clone()))
            .collect();
        all.sort_unstable_by_key(|(id, _)| *id);
        all
    }

    /// Replaces each synthetic id in `out[start..]` by its real subscriber if `message` passes
    /// its filter (drops it otherwise), then deduplicates that tail. The engine calls it only
    /// when [`any_synthetic`] found one there.
    ///
    /// A tail of more than [`STAGE`] ids goes [`STAGE`] at a time through three rounds: their
    /// subscriptions found in the table (each filter asked for), then their filters' criteria
    /// asked for, then each filter evaluated. One candidate's evaluation is a chain of
    /// dependent loads (the table's entry, the filter, its criteria, their field names); in
    /// rounds, the loads of different candidates overlap instead of each waiting for the one
    /// before. A topic matched by 250 filtered subscriptions of one criterion each resolves
    /// 1.5x as fast as one candidate at a time (docs/BENCHMARKS.md, "Content-based
    /// routing"); a shorter tail, the usual one, is resolved one id at a time.
    pub fn resolve_tail(&self, out: &mut Vec<SubscriberId>, start: usize, message: &Message) {
        let inner = self.inner.read();
        let found = |id| {
            // A subscription removed since the topic walk saw it is simply gone.
            is_synthetic(id)
                .then(|| inner.by_synthetic.get(&id))
                .flatten()
        };
        let mut kept = start;
        let mut keep = |out: &mut Vec<SubscriberId>, id, held: Option<&Held>| {
            let real = if is_synthetic(id) {
                held.filter(|held| held.filter.matches(message))
                    .map(|held| held.subscriber)
            } else {
                Some(id)
            };
            if let Some(real) = real {
                out[kept] = real;
                kept += 1;
            }
        };
        if out.len() - start <= STAGE {
            for at in start..out.len() {
                let id = out[at];
                keep(out, id, found(id));
            }
        } else {
            let mut held: [Option<&Held>; STAGE] = [None; STAGE];
            let mut next = start;
            while next < out.len() {
                let stage = next..out.len().min(next + STAGE);
                for (slot, &id) in held.iter_mut().zip(&out[stage.clone()]) {
                    *slot = found(id);
                    if let Some(held) = slot {
                        prefetch(Arc::as_ptr(&held.filter).cast());
                    }
                }
                for held in held[..stage.len()].iter().flatten() {
                    held.filter.prefetch();
                }
                for (&slot, at) in held.iter().zip(stage.clone()) {
                    let id = out[at];
                    keep(out, id, slot);
                }
                next = stage.end;
            }
        }
        out.truncate(kept);
        dedup_tail(out, start);
    }
}

#[cfg(test)]
mod tests {
    use super::{any_synthetic, SYNTHETIC};

    #[test]
    fn any_synthetic_sees_the_marked_id_wherever_it_sits() {
        assert!(!any_synthetic(&[]));
        assert!(!any_synthetic(&[0, 1, SYNTHETIC - 1]));
        for at in 0..4 {
            let mut ids = vec![3, 7, u64::MAX >> 1, 0];
            ids[at] |= SYNTHETIC;
            assert!(any_synthetic(&ids), "marked id at {at}");
        }
    }
}
