//! [`FieldMatcher`]: content subscriptions (criteria on message fields) with ids, idempotent
//! subscribe, a subscriber registry and snapshots, over the counting [`Index`].

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::error::{Error, Result};
use crate::fields::criteria::Filter;
use crate::fields::ids::Slot;
use crate::fields::index::{Index, Report};
use crate::fields::message::Message;
use crate::matcher::{dedup_tail, SubscriberId, SubscriptionId};
use crate::registry::{Registry, Subscriber};
use crate::sync::{ReadMostly, READ_BATCH};

/// One content subscription, as a snapshot lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldSubscription {
    /// Its id.
    pub id: SubscriptionId,
    /// Its criteria and mode.
    pub filter: Arc<Filter>,
    /// The subscriber.
    pub subscriber: Subscriber,
}

struct Entry {
    id: SubscriptionId,
    filter: Arc<Filter>,
    subscriber: SubscriberId,
}

struct Inner {
    index: Index,
    /// By slot; `None` for a free slot.
    entries: Vec<Option<Entry>>,
    /// The subscriber of each slot, apart from `entries` so that resolving a lookup's slots
    /// reads 8 dense bytes per match.
    subscribers: Vec<SubscriberId>,
    by_id: FxHashMap<SubscriptionId, Slot>,
    by_key: FxHashMap<(Arc<Filter>, SubscriberId), SubscriptionId>,
    registry: Registry,
    next_id: SubscriptionId,
}

/// Matches messages' fields against subscriptions' criteria (content-based routing).
///
/// Thread-safe: every method takes `&self`; lookups share a read lock, subscribe and
/// unsubscribe take it for writing.
pub struct FieldMatcher {
    inner: ReadMostly<Inner>,
}

impl Default for FieldMatcher {
    fn default() -> Self {
        FieldMatcher::new()
    }
}

impl FieldMatcher {
    /// A new, empty matcher.
    pub fn new() -> Self {
        FieldMatcher {
            inner: ReadMostly::new(Inner {
                index: Index::default(),
                entries: Vec::new(),
                subscribers: Vec::new(),
                by_id: FxHashMap::default(),
                by_key: FxHashMap::default(),
                registry: Registry::default(),
                next_id: 1,
            }),
        }
    }

    /// Subscribes `subscriber` with `filter`; the same pair again returns the same id. Fails
    /// only when the ids are exhausted (a matcher restored with `next_id` at 2^64 - 1): a new
    /// pair is then refused rather than given an id already held.
    pub fn subscribe(&self, filter: &Filter, subscriber: &Subscriber) -> Result<SubscriptionId> {
        self.subscribe_with(filter, subscriber, &mut |_| {})
    }

    /// [`subscribe`](Self::subscribe) that calls `joined(id)` when `subscriber` is new (it held
    /// no subscription): under the write lock, before any lookup can find `id`. What a caller
    /// keeps beside each subscriber id (a binding's objects) is then in place before the id is
    /// ever returned.
    pub fn subscribe_with(
        &self,
        filter: &Filter,
        subscriber: &Subscriber,
        joined: &mut dyn FnMut(SubscriberId),
    ) -> Result<SubscriptionId> {
        let mut inner = self.inner.write();
        let filter = Arc::new(filter.clone());
        if let Some(existing) = inner.existing(&filter, subscriber) {
            return Ok(existing);
        }
        let id = inner.next_id;
        if id == SubscriptionId::MAX {
            return Err(Error::InvalidArgument(
                "subscription ids are exhausted".into(),
            ));
        }
        inner.insert(filter, subscriber, id, joined);
        inner.next_id += 1;
        Ok(id)
    }

    /// Removes a subscription; `false` if there was none with this id. Its slot is reused.
    pub fn unsubscribe(&self, id: SubscriptionId) -> bool {
        self.unsubscribe_with(id, &mut |_| {})
    }

    /// [`unsubscribe`](Self::unsubscribe) that calls `left(sub)` when it removed the last
    /// subscription of subscriber `sub`: under the write lock, so before `sub` can be reused
    /// (see [`Registry`]).
    ///
    /// What `left` defers to the epoch collector on this thread goes to its global queue with
    /// the registry's release of `sub`, in one bag.
    pub fn unsubscribe_with(&self, id: SubscriptionId, left: &mut dyn FnMut(SubscriberId)) -> bool {
        let mut inner = self.inner.write();
        let Some(slot) = inner.by_id.remove(&id) else {
            return false;
        };
        let entry = inner.entries[slot as usize].take().expect("a held slot");
        inner.index.remove(slot, &entry.filter);
        inner.by_key.remove(&(entry.filter, entry.subscriber));
        inner.registry.release_then(entry.subscriber, left);
        true
    }

    /// Appends the ids of the distinct subscribers whose criteria `message` meets.
    pub fn lookup_into(&self, message: &Message, out: &mut Vec<SubscriberId>) {
        self.inner.read().lookup_into(message, out);
    }

    /// Looks up every message of `messages` in order: appends each one's distinct subscribers
    /// to `out` (as [`lookup_into`](Self::lookup_into)), then pushes `out.len()` to `ends`, so
    /// message `i`'s subscribers are `out[ends[i - 1]..ends[i]]`. The read lock is taken once
    /// per `READ_BATCH` messages: a subscribe waits for at most that many lookups.
    pub fn lookup_batch_into(
        &self,
        messages: &[Message],
        out: &mut Vec<SubscriberId>,
        ends: &mut Vec<usize>,
    ) {
        for part in messages.chunks(READ_BATCH) {
            let inner = self.inner.read();
            for message in part {
                inner.lookup_into(message, out);
                ends.push(out.len());
            }
        }
    }

    /// The distinct subscribers whose criteria `message` meets.
    pub fn lookup(&self, message: &Message) -> Vec<Subscriber> {
        // Pinned from the lookup to the resolution: no id found can change owner meanwhile.
        #[cfg(not(loom))]
        let _pinned = crossbeam_epoch::pin();
        let mut ids = Vec::new();
        self.lookup_into(message, &mut ids);
        self.with_registry(|r| ids.iter().filter_map(|id| r.get(*id).cloned()).collect())
    }

    /// For each subscriber with at least one criterion met, the number met (the largest over
    /// its subscriptions), ordered by subscriber id.
    pub fn hits_ids(&self, message: &Message) -> Vec<(SubscriberId, usize)> {
        let inner = self.inner.read();
        let mut hits: Vec<(SubscriberId, usize)> = Vec::new();
        inner.index.lookup(message, Report::Hits, |slot, count| {
            hits.push((inner.subscribers[slot as usize], count as usize));
        });
        hits.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        hits.dedup_by_key(|h| h.0);
        hits
    }

    /// [`hits_ids`](Self::hits_ids) resolved to subscriber values.
    pub fn hits(&self, message: &Message) -> Vec<(Subscriber, usize)> {
        #[cfg(not(loom))]
        let _pinned = crossbeam_epoch::pin();
        let hits = self.hits_ids(message);
        self.with_registry(|r| {
            hits.iter()
                .filter_map(|(id, n)| r.get(*id).map(|s| (s.clone(), *n)))
                .collect()
        })
    }

    /// Runs `f` with read access to the registry (to resolve many ids under one lock).
    pub fn with_registry<R>(&self, f: impl FnOnce(&Registry) -> R) -> R {
        f(&self.inner.read().registry)
    }

    /// How many subscriptions are held.
    pub fn len(&self) -> usize {
        self.inner.read().by_id.len()
    }

    /// Whether no subscription is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every subscription, ordered by id.
    pub fn subscriptions(&self) -> Vec<FieldSubscription> {
        let inner = self.inner.read();
        let mut all: Vec<FieldSubscription> = inner
            .entries
            .iter()
            .flatten()
            .map(|e| FieldSubscription {
                id: e.id,
                filter: e.filter.clone(),
                subscriber: inner.registry.get(e.subscriber).cloned().expect("held"),
            })
            .collect();
        all.sort_unstable_by_key(|s| s.id);
        all
    }

    /// The id the next new subscription will get.
    pub fn next_id(&self) -> SubscriptionId {
        self.inner.read().next_id
    }

    /// Rebuilds a matcher from a snapshot, keeping every id. Fails if two entries clash, so a
    /// corrupted snapshot never loads partly.
    pub fn restore(subscriptions: &[FieldSubscription], next_id: SubscriptionId) -> Result<Self> {
        let matcher = FieldMatcher::new();
        {
            let mut inner = matcher.inner.write();
            let mut max_id = 0;
            for s in subscriptions {
                if s.id == SubscriptionId::MAX {
                    return Err(Error::InvalidArgument(format!(
                        "snapshot holds subscription id {}: ids stay below 2^64 - 1",
                        s.id
                    )));
                }
                if inner.by_id.contains_key(&s.id) {
                    return Err(Error::InvalidArgument(format!(
                        "snapshot repeats subscription id {}",
                        s.id
                    )));
                }
                if inner.existing(&s.filter, &s.subscriber).is_some() {
                    return Err(Error::InvalidArgument(format!(
                        "snapshot repeats subscription ({}, {:?})",
                        s.filter, s.subscriber
                    )));
                }
                inner.insert(s.filter.clone(), &s.subscriber, s.id, &mut |_| {});
                max_id = max_id.max(s.id);
            }
            inner.next_id = next_id.max(max_id + 1);
        }
        Ok(matcher)
    }
}

impl Inner {
    /// Appends the ids of the distinct subscribers whose criteria `message` meets.
    fn lookup_into(&self, message: &Message, out: &mut Vec<SubscriberId>) {
        let start = out.len();
        self.index.lookup(message, Report::Matches, |slot, _| {
            out.push(self.subscribers[slot as usize]);
        });
        // Only a subscriber holding several subscriptions can be reported twice.
        if self.by_id.len() > self.registry.len() {
            dedup_tail(out, start);
        }
    }

    /// The id of (`filter`, `subscriber`), if held.
    fn existing(&self, filter: &Arc<Filter>, subscriber: &Subscriber) -> Option<SubscriptionId> {
        let sub = self.registry.id_of(subscriber)?;
        self.by_key.get(&(filter.clone(), sub)).copied()
    }

    /// Inserts the pair, new (see [`Inner::existing`]), with `id`. `joined` hears of a new
    /// subscriber id (see [`FieldMatcher::subscribe_with`]).
    fn insert(
        &mut self,
        filter: Arc<Filter>,
        subscriber: &Subscriber,
        id: SubscriptionId,
        joined: &mut dyn FnMut(SubscriberId),
    ) {
        let (sub, new) = self.registry.acquire_new(subscriber);
        if new {
            joined(sub);
        }
        let slot = self.index.insert(&filter);
        if self.entries.len() < self.index.slots() {
            self.entries.resize_with(self.index.slots(), || None);
            self.subscribers.resize(self.index.slots(), 0);
        }
        self.subscribers[slot as usize] = sub;
        self.entries[slot as usize] = Some(Entry {
            id,
            filter: filter.clone(),
            subscriber: sub,
        });
        self.by_id.insert(id, slot);
        self.by_key.insert((filter, sub), id);
    }
}
