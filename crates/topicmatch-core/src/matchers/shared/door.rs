//! Admission (the doorkeeper of `TinyLFU`) for the caches keyed by topic (`inverted_bitmap`'s
//! rows, `cstrie`'s results): a topic is cached only on its second sighting within a window, so
//! a stream of unique topics costs one uncached lookup each instead of a cache fill and an
//! eviction that would push useful entries out.
//!
//! Two bits per hashed topic, in one 64-bit word of an array of atomics (a blocked Bloom
//! filter); a sighting sets them and reports whether both were already set. After about
//! `window` sightings the bits are cleared, so stale topics age out. False positives only admit
//! a topic early (each admission costs a compile and an eviction, so a stream of unique topics
//! must rarely pass: under 5% at the end of a window, under 2% on average); nothing depends on
//! the answer for correctness.
//!
//! Every uncached lookup of every thread comes here, so nothing here is one word all threads
//! write: the sightings are counted in [`SHARDS`] counters on cache lines of their own, chosen
//! by the topic's hash, and a shard that completes its part of a window bumps the count of
//! parts (once per `window / SHARDS` sightings); the fields every sighting reads share no line
//! with a counter; and a word whose two bits are already set is only read, so a repeated
//! topic's sightings leave its line shared.

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;
use rustc_hash::FxBuildHasher;

/// Sighting counters.
const SHARDS: usize = 16;

/// The seen-once filter.
#[derive(Debug)]
pub(crate) struct Doorkeeper {
    bits: Box<[AtomicU64]>,
    /// Sightings, by shard (see the module docs).
    counts: Box<[CachePadded<AtomicUsize>]>,
    /// Parts of a window completed: the bits are cleared once every [`SHARDS`] of them.
    parts: CachePadded<AtomicUsize>,
    /// Sightings of one shard that complete a part.
    part: usize,
}

impl Doorkeeper {
    /// A filter sized for a row table of `capacity`: 32 bits per row (up to 2M rows), cleared
    /// about every `4 * capacity` sightings.
    pub(crate) fn new(capacity: usize) -> Self {
        // At most 8 MiB, whatever the capacity asked for.
        let words = capacity.min(1 << 21).div_ceil(2).next_power_of_two();
        let window = capacity.saturating_mul(4).max(64);
        Doorkeeper {
            bits: (0..words).map(|_| AtomicU64::new(0)).collect(),
            counts: (0..SHARDS)
                .map(|_| CachePadded::new(AtomicUsize::new(0)))
                .collect(),
            parts: CachePadded::new(AtomicUsize::new(0)),
            part: window / SHARDS,
        }
    }

    /// Records a sighting of `topic`; whether it had been seen in this window.
    pub(crate) fn seen_before(&self, topic: &str) -> bool {
        self.seen_hash_before(FxBuildHasher.hash_one(topic))
    }

    /// Records a sighting of whatever hashes to `hash` (well mixed: its top and bottom bits
    /// are used); whether it had been seen in this window.
    pub(crate) fn seen_hash_before(&self, hash: u64) -> bool {
        let word = &self.bits[(hash >> 6) as usize & (self.bits.len() - 1)];
        let mask = 1u64 << (hash & 63) | 1u64 << ((hash >> 58) & 63);
        // Relaxed throughout: the bits are a frequency hint; no data is published through them.
        let mut before = word.load(Ordering::Relaxed);
        if before & mask != mask {
            before = word.fetch_or(mask, Ordering::Relaxed);
        }
        let shard = &self.counts[(hash >> 40) as usize % SHARDS];
        if shard.fetch_add(1, Ordering::Relaxed) % self.part == self.part - 1
            && self.parts.fetch_add(1, Ordering::Relaxed) % SHARDS == SHARDS - 1
        {
            for w in &*self.bits {
                w.store(0, Ordering::Relaxed);
            }
        }
        before & mask == mask
    }
}

#[cfg(test)]
mod tests {
    use super::Doorkeeper;
    use std::hash::BuildHasher;

    use rustc_hash::FxBuildHasher;

    fn hash(i: u64) -> u64 {
        FxBuildHasher.hash_one(i)
    }

    #[test]
    fn a_second_sighting_is_seen_and_a_first_is_not() {
        let door = Doorkeeper::new(1024);
        assert!(!door.seen_hash_before(hash(1)));
        assert!(door.seen_hash_before(hash(1)));
        assert!(!door.seen_hash_before(hash(2)));
    }

    /// Unique topics: under 5% pass at any point of a window, under 2% over many windows.
    #[test]
    fn unique_sightings_rarely_pass() {
        let capacity = 1024;
        let door = Doorkeeper::new(capacity);
        let window = (4 * capacity) as u64;
        let mut passed = 0;
        let mut late = 0;
        for i in 0..20 * window {
            if door.seen_hash_before(hash(i)) {
                passed += 1;
                if i % window >= window - window / 10 {
                    late += 1;
                }
            }
        }
        assert!(
            passed * 50 < 20 * window,
            "{passed} of {} passed",
            20 * window
        );
        // The last tenth of each window, the filter at its fullest.
        assert!(
            late * 20 < 2 * window,
            "{late} of {} passed late",
            2 * window
        );
    }

    /// The bits are cleared about once a window: a topic seen long ago is new again.
    #[test]
    fn old_sightings_age_out() {
        let capacity = 64;
        let door = Doorkeeper::new(capacity);
        assert!(!door.seen_hash_before(hash(u64::MAX)));
        for i in 0..2 * 4 * capacity as u64 {
            door.seen_hash_before(hash(i));
        }
        assert!(!door.seen_hash_before(hash(u64::MAX)));
    }

    /// Threads sighting at once: every sighting is counted, and a topic a thread sees twice
    /// is seen.
    #[test]
    fn threads_share_one_filter() {
        let door = Doorkeeper::new(1 << 16);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let door = &door;
                s.spawn(move || {
                    for i in 0..10_000u64 {
                        let h = hash(t << 32 | i);
                        door.seen_hash_before(h);
                        assert!(door.seen_hash_before(h));
                    }
                });
            }
        });
        let counted: usize = door
            .counts
            .iter()
            .map(|c| c.load(std::sync::atomic::Ordering::Relaxed))
            .sum();
        assert_eq!(counted, 80_000);
    }
}
