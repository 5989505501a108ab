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
//! plus the topic's key and two counter reads (and, between changes, a sighting, and a probe
//! once something was filled in the generation). `generation` is 64 bits: it does not wrap in practice (584 years at
//! 10^9 changes a second).
//!
//! # Bounds
//! `capacity` entries (rounded up to even, at most [`MAX_SLOTS`]: 64 MiB of slots, whatever
//! is asked), in buckets of two slots (32 bytes, half a cache line). A topic has two buckets,
//! chosen by two hashes of its key, so four slots it may take: with one bucket each, a cache
//! holding as many topics as half its capacity left a tenth of them out (three or more topics
//! on one bucket); with two, under one in a hundred. Each slot keeps a tag beside its entry's
//! pointer, a hash of the entry's topic and generation: a lookup reads an entry only where
//! the tag is its own, so a topic not cached costs the two buckets' lines and no entry.
//! A topic is compared through its 16-byte [`Key`] (a topic under 16 bytes *is* its key; a
//! longer one's key is a hash, so its bytes are compared too). A topic is cached on its second
//! sighting *within one generation* ([`Doorkeeper`], keyed by topic and generation): a fill
//! costs allocations and a deferred free, and pays off only if hits follow before the next
//! change, so under steady churn (a change every few lookups) almost nothing is filled. It
//! replaces its own entry, else an empty or stale slot of its first bucket, then of its
//! second, else the one of its four slots its hash picks. Results
//! of more than [`MAX_IDS`] subscribers are not cached. Replaced entries are freed through the
//! epoch ([`Slot`]).

use super::kids::Key;
use super::raw::slot::Slot;
use super::raw::Pin;
use crate::matcher::SubscriberId;
use crate::matchers::shared::door::Doorkeeper;
use crate::sync::{AtomicU64, Ordering};

/// The most subscribers a cached result holds (8 KiB): bigger results are looked up each time.
pub(super) const MAX_IDS: usize = 1024;

/// The most entries a cache holds, whatever capacity is asked for: its slots are allocated
/// up front (16 bytes each; an entry itself only once filled).
pub(super) const MAX_SLOTS: usize = 1 << 22;

/// One topic's result, as of one generation.
struct Entry {
    generation: u64,
    key: Key,
    topic: Box<str>,
    ids: Box<[SubscriberId]>,
}

impl Entry {
    /// Whether this is the entry of `topic`, whose key is `key`.
    #[inline]
    fn is(&self, key: Key, topic: &str) -> bool {
        self.key == key && (!key.is_long() || *self.topic == *topic)
    }
}

/// One place for an entry: the entry, and the tag of the entry it holds ([`tag`]). The tag is
/// a hint, written after the entry; a reader still checks the entry it reads.
struct Cell {
    tag: AtomicU64,
    entry: Slot<Entry>,
}

impl Default for Cell {
    fn default() -> Self {
        Cell {
            tag: AtomicU64::new(0),
            entry: Slot::default(),
        }
    }
}

/// Two cells, in one half of a cache line.
#[derive(Default)]
#[repr(align(32))]
struct Bucket([Cell; 2]);

/// See the module docs.
pub(super) struct Cache {
    writing: AtomicU64,
    generation: AtomicU64,
    /// The latest generation any entry was filled in (a hint, only ever raised): a lookup of
    /// a later generation has nothing to find, and skips the probe.
    filled: AtomicU64,
    buckets: Box<[Bucket]>,
    door: Doorkeeper,
}

/// A topic's key for the cache, and the counters read before its lookup.
#[derive(Clone, Copy)]
pub(super) struct Ticket {
    key: Key,
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
    /// A cache of `capacity` entries (at least 2, at most [`MAX_SLOTS`]).
    pub(super) fn new(capacity: usize) -> Self {
        let capacity = capacity.clamp(2, MAX_SLOTS);
        Cache {
            writing: AtomicU64::new(0),
            generation: AtomicU64::new(0),
            filled: AtomicU64::new(0),
            buckets: (0..capacity.div_ceil(2))
                .map(|_| Bucket::default())
                .collect(),
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
            key: Key::of(topic),
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

    /// The cells a topic whose key is `key` may take: its first bucket's two, then its second
    /// bucket's (another bucket whenever there are two or more; with one, the same two again).
    #[inline]
    fn candidates(&self, key: Key) -> [&Cell; 4] {
        let buckets = self.buckets.len();
        let hash = key.hash();
        let first = scale(hash, buckets);
        // The second from other bits of the hash, among the other buckets.
        let other = (hash ^ (hash >> 32)).wrapping_mul(0xD6E8_FEB8_6659_FD93);
        // Below `2 * buckets - 1`: one subtraction wraps it (no division on the lookup path).
        let second = first + 1 + scale(other, buckets - 1);
        let second = if second >= buckets {
            second - buckets
        } else {
            second
        };
        let [a, b] = [&self.buckets[first].0, &self.buckets[second].0];
        [&a[0], &a[1], &b[0], &b[1]]
    }

    /// The cached subscribers of `topic`, if its entry is of `ticket`'s generation.
    #[inline]
    pub(super) fn get<'g>(
        &'g self,
        topic: &str,
        ticket: Ticket,
        pin: &'g Pin<'_>,
    ) -> Option<&'g [SubscriberId]> {
        // Relaxed: a hint; a hit is still decided by the entry's own stamp.
        if !ticket.quiet || self.filled.load(Ordering::Relaxed) != ticket.generation {
            return None;
        }
        let tag = tag(ticket.key, ticket.generation);
        self.candidates(ticket.key).into_iter().find_map(|cell| {
            // Relaxed: a hint; the entry's own stamp and key decide.
            if cell.tag.load(Ordering::Relaxed) != tag {
                return None;
            }
            let entry = cell.entry.load(pin)?;
            (entry.generation == ticket.generation && entry.is(ticket.key, topic))
                .then_some(&*entry.ids)
        })
    }

    /// Caches `ids` as `topic`'s subscribers, found by a walk that began after `ticket` was
    /// taken and has just ended: if no writer ran meanwhile, the topic was seen before in this
    /// generation, and the result is not too big.
    pub(super) fn fill(&self, topic: &str, ticket: Ticket, ids: &[SubscriberId], pin: &Pin<'_>) {
        if !self.still(ticket) || ids.len() > MAX_IDS {
            return;
        }
        let sighting = ticket.key.hash() ^ ticket.generation.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        if !self.door.seen_hash_before(sighting) {
            return;
        }
        let cells = self.candidates(ticket.key);
        let entries = cells.map(|cell| cell.entry.load(pin));
        let victim = entries
            .iter()
            .position(|e| e.is_some_and(|e| e.is(ticket.key, topic)))
            .or_else(|| {
                entries
                    .iter()
                    .position(|e| e.map_or(true, |e| e.generation != ticket.generation))
            })
            .unwrap_or_else(|| scale(ticket.key.hash().rotate_left(17), cells.len()));
        let cell = cells[victim];
        cell.entry.replace(
            Entry {
                generation: ticket.generation,
                key: ticket.key,
                topic: topic.into(),
                ids: ids.into(),
            },
            pin,
        );
        // After the entry: a reader seeing this tag with an older entry finds that entry's
        // stamp or key wrong, and misses.
        cell.tag
            .store(tag(ticket.key, ticket.generation), Ordering::Relaxed);
        // Raised only: a late fill of an older generation must not hide the newer entries.
        self.filled.fetch_max(ticket.generation, Ordering::Relaxed);
    }

    /// How many entries it can hold.
    #[cfg(test)]
    pub(super) fn slots(&self) -> usize {
        self.buckets.len() * 2
    }

    /// The slots now holding an entry of the current generation (tests and statistics).
    #[cfg(test)]
    pub(super) fn live(&self, pin: &Pin<'_>) -> usize {
        let generation = self.generation.load(Ordering::SeqCst);
        self.buckets
            .iter()
            .flat_map(|bucket| &bucket.0)
            .filter(|cell| {
                cell.entry
                    .load(pin)
                    .is_some_and(|e| e.generation == generation)
            })
            .count()
    }
}

/// The tag of an entry for a topic whose key is `key`, filled in `generation`: never 0, the
/// tag of a cell that was never filled.
#[inline]
fn tag(key: Key, generation: u64) -> u64 {
    (key.hash() ^ generation.wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1
}

/// `hash` scaled to `0..n` by multiply-shift (any `n`, no division); 0 when `n` is 0.
#[inline]
fn scale(hash: u64, n: usize) -> usize {
    ((u128::from(hash) * n as u128) >> 64) as usize
}
