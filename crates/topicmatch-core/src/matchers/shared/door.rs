//! Admission (the doorkeeper of `TinyLFU`) for the caches keyed by topic (`inverted_bitmap`'s
//! rows, `cstrie`'s results): a topic is cached only on its second sighting within a window, so
//! a stream of unique topics costs one uncached lookup each instead of a cache fill and an
//! eviction that would push useful entries out.
//!
//! Two bits per hashed topic, in one 64-bit word of an array of atomics (a blocked Bloom
//! filter); a sighting sets them and reports whether both were already set. After `window`
//! sightings the bits are cleared, so stale topics age out. False positives only admit a topic
//! early (each admission costs a compile and an eviction, so a stream of unique topics must
//! rarely pass: under 5% at the end of a window, under 2% on average); nothing depends on the
//! answer for correctness.

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use rustc_hash::FxBuildHasher;

/// The seen-once filter.
#[derive(Debug)]
pub(crate) struct Doorkeeper {
    bits: Box<[AtomicU64]>,
    sightings: AtomicUsize,
    window: usize,
}

impl Doorkeeper {
    /// A filter sized for a row table of `capacity`: 32 bits per row (up to 2M rows), cleared
    /// every `4 * capacity` sightings.
    pub(crate) fn new(capacity: usize) -> Self {
        // At most 8 MiB, whatever the capacity asked for.
        let words = capacity.min(1 << 21).div_ceil(2).next_power_of_two();
        Doorkeeper {
            bits: (0..words).map(|_| AtomicU64::new(0)).collect(),
            sightings: AtomicUsize::new(0),
            window: capacity.saturating_mul(4).max(64),
        }
    }

    /// Records a sighting of `topic`; whether it had been seen in this window.
    pub(crate) fn seen_before(&self, topic: &str) -> bool {
        self.seen_hash_before(FxBuildHasher.hash_one(topic))
    }

    /// Records a sighting of whatever hashes to `hash` (well mixed: its top and bottom bits
    /// are used); whether it had been seen in this window.
    pub(crate) fn seen_hash_before(&self, hash: u64) -> bool {
        let word = (hash >> 6) as usize & (self.bits.len() - 1);
        let mask = 1u64 << (hash & 63) | 1u64 << ((hash >> 58) & 63);
        // Relaxed throughout: the bits are a frequency hint; no data is published through them.
        let before = self.bits[word].fetch_or(mask, Ordering::Relaxed);
        if self.sightings.fetch_add(1, Ordering::Relaxed) % self.window == self.window - 1 {
            for w in &*self.bits {
                w.store(0, Ordering::Relaxed);
            }
        }
        before & mask == mask
    }
}
