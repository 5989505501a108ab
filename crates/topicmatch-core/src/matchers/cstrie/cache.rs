//! The optional result cache (`cache_capacity`): a topic's subscribers as its last full lookup
//! found them, kept while no subscribe or unsubscribe has changed the trie since. NATS's sublist
//! keeps the same kind of cache; it pays off when topics repeat (the ftm workload: 896 distinct
//! topics in 100,000 messages) and lookups far outnumber changes.
//!
//! # How it stays exact
//! Two counters: `writing`, the inserts and removes under way, and `generation`, those finished.
//! A writer increments `writing` before its first CAS; when it is done (changed or not, even
//! unwinding) it increments `generation`, then decrements `writing` ([`Change`]). A lookup
//! reads `writing`, then `generation` (its [`Ticket`]); every access is `SeqCst`, so all of them
//! fall in one total order that the argument below follows.
//! - **Fill.** A walk may fill an entry only if `writing` was 0 when its ticket was taken, and
//!   `writing` then `generation`, read again after the walk, are 0 and unchanged. A writer whose
//!   CAS fell inside the walk incremented `writing` before it: either it is still under way at
//!   the second read of `writing`, or it finished, and then bumped `generation` before that
//!   read. So no CAS happened during the walk: the entry is an exact snapshot of the trie,
//!   stamped with the generation.
//! - **Hit.** A lookup that read `writing` = 0 at time t, then the stamp's generation, returns
//!   the entry. A CAS since the entry's walk, and before t, belongs to a writer that had
//!   incremented `writing` before t, so finished before t (0 at t), so bumped `generation`
//!   before t, which the lookup would have read. So at t the trie equals the entry: the cached
//!   result is the whole result at one instant (a stronger guarantee than an uncached walk's,
//!   see docs/CONCURRENCY.md).
//!
//! Every change thus empties the cache logically (entries of older stamps never hit again), so
//! it suits read-mostly matchers; while writers are busy the lookups walk as if it were absent,
//! plus one hash, two counter reads and a probe, and a fill for topics seen twice between
//! changes. `generation` is 64 bits: it does not wrap in practice (584 years at 10^9 changes a
//! second).

//! # Bounds
//! `capacity` slots, direct-mapped by the topic's hash (a collision replaces the entry). A topic
//! is cached on its second sighting ([`Doorkeeper`]), or at once if its slot holds its own stale
//! entry; results of more than [`MAX_IDS`] subscribers are not cached. Replaced entries are
//! freed through the epoch ([`Slot`]).

use std::hash::BuildHasher;

use rustc_hash::FxBuildHasher;

use super::raw::{Pin, Slot};
use crate::matcher::SubscriberId;
use crate::matchers::door::Doorkeeper;
use crate::sync::{AtomicU64, Ordering};

/// The most subscribers a cached result holds (8 KiB): bigger results are looked up each time.
pub(super) const MAX_IDS: usize = 1024;

/// One topic's result, as of one generation.
struct Entry {
    generation: u64,
    hash: u64,
    topic: Box<str>,
    ids: Box<[SubscriberId]>,
}

/// See the module docs.
pub(super) struct Cache {
    writing: AtomicU64,
    generation: AtomicU64,
    slots: Box<[Slot<Entry>]>,
    door: Doorkeeper,
}

/// A topic's key for the cache: its hash, and the counters read before its lookup.
#[derive(Clone, Copy)]
pub(super) struct Ticket {
    hash: u64,
    generation: u64,
    /// No writer was under way: the cache may answer, or be filled.
    quiet: bool,
}

/// An insert or remove under way; finishing (dropped) it invalidates the cached results.
pub(super) struct Change<'c>(&'c Cache);

impl Drop for Change<'_> {
    fn drop(&mut self) {
        // The order matters (module docs): the generation first, then `writing`.
        self.0.generation.fetch_add(1, Ordering::SeqCst);
        self.0.writing.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Cache {
    /// A cache of `capacity` entries (at least 1).
    pub(super) fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Cache {
            writing: AtomicU64::new(0),
            generation: AtomicU64::new(0),
            slots: (0..capacity).map(|_| Slot::default()).collect(),
            door: Doorkeeper::new(capacity),
        }
    }

    /// Starts an insert or remove: call before its first CAS, keep until it is done.
    #[inline]
    pub(super) fn change(&self) -> Change<'_> {
        self.writing.fetch_add(1, Ordering::SeqCst);
        Change(self)
    }

    /// The ticket of `topic`, taken before looking it up.
    #[inline]
    pub(super) fn ticket(&self, topic: &str) -> Ticket {
        let quiet = self.writing.load(Ordering::SeqCst) == 0;
        Ticket {
            hash: FxBuildHasher.hash_one(topic),
            generation: self.generation.load(Ordering::SeqCst),
            quiet,
        }
    }

    /// Whether no writer started since `ticket` was taken (and none was under way then).
    #[inline]
    fn still(&self, ticket: Ticket) -> bool {
        ticket.quiet
            && self.writing.load(Ordering::SeqCst) == 0
            && self.generation.load(Ordering::SeqCst) == ticket.generation
    }

    /// The slot of a topic hashing to `hash`.
    #[inline]
    fn slot(&self, hash: u64) -> &Slot<Entry> {
        // Multiply-shift: any number of slots, no division.
        let index = (u128::from(hash) * self.slots.len() as u128) >> 64;
        &self.slots[index as usize]
    }

    /// The cached subscribers of `topic`, if its entry is of `ticket`'s generation.
    #[inline]
    pub(super) fn get<'g>(
        &'g self,
        topic: &str,
        ticket: Ticket,
        pin: &'g Pin<'_>,
    ) -> Option<&'g [SubscriberId]> {
        if !ticket.quiet {
            return None;
        }
        let entry = self.slot(ticket.hash).load(pin)?;
        (entry.generation == ticket.generation
            && entry.hash == ticket.hash
            && *entry.topic == *topic)
            .then_some(&*entry.ids)
    }

    /// Caches `ids` as `topic`'s subscribers, found by a walk that began after `ticket` was
    /// taken and has just ended: if no writer ran meanwhile, the topic was seen before (or its
    /// slot holds its own older entry), and the result is not too big.
    pub(super) fn fill(&self, topic: &str, ticket: Ticket, ids: &[SubscriberId], pin: &Pin<'_>) {
        if ids.len() > MAX_IDS || !self.still(ticket) {
            return;
        }
        let slot = self.slot(ticket.hash);
        let refresh = slot
            .load(pin)
            .is_some_and(|entry| entry.hash == ticket.hash && *entry.topic == *topic);
        if !refresh && !self.door.seen_before(topic) {
            return;
        }
        slot.replace(
            Entry {
                generation: ticket.generation,
                hash: ticket.hash,
                topic: topic.into(),
                ids: ids.into(),
            },
            pin,
        );
    }

    /// The slots now holding an entry of the current generation (tests and statistics).
    #[cfg(test)]
    pub(super) fn live(&self, pin: &Pin<'_>) -> usize {
        let generation = self.generation.load(Ordering::SeqCst);
        self.slots
            .iter()
            .filter(|slot| slot.load(pin).is_some_and(|e| e.generation == generation))
            .count()
    }
}
