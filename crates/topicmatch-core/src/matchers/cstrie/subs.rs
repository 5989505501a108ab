//! A level's subscriber set: two ids inline in the main node, a shared array up to [`FEW`], a
//! persistent HAMT beyond.
//!
//! Most patterns have one or two subscribers; keeping them inline keeps the main node within
//! one cache line. Up to [`FEW`] ids sit in one shared array, copied by an update (a bounded
//! copy of at most 2 KiB) and read by a lookup as one run of memory: a filter held by hundreds
//! of subscribers delivers them at memory speed, where a HAMT's nodes would cost a pointer
//! chase each. Past that the set moves to a [`Hamt`], so a subscribe or unsubscribe never copies
//! more than a bounded number of ids (the RabbitMQ failure mode of copying 20k subscribers per
//! subscribe cannot happen). It moves back to an array only below [`FEW`] / 2, so a set
//! hovering around the threshold does not convert back and forth.
//!
//! A large set's HAMT takes one of two forms, chosen when the set outgrows its array:
//! - **Runs** (the ids average at least two per chunk of 64, `id >> 6`): each chunk maps to
//!   the bitmap of the set's ids in it. Subscriber ids are dense and handed out in order, so
//!   the subscribers of a popular filter mostly share chunks: 100,000 ids subscribed in a row
//!   are 1,563 entries (37 KB), read a bitmap at a time, where one entry per id would be
//!   1.6 MB of nodes and a cache miss every few ids.
//! - **Scattered** (fewer): one entry per id, whose slots are smaller (16 bytes, not 24).
//!
//! Either way an update copies one HAMT path. The form only decides speed, never the answer,
//! and a set keeps its form until it falls back to an array.

use super::hamt::{Hamt, Placed};
use super::raw::{Array, Delta};
use crate::hint::prefetch;
use crate::matcher::SubscriberId;
use crate::sync::Arc;

/// Most ids kept inline.
const INLINE: usize = 2;
/// Most ids kept in a shared array.
const FEW: usize = 256;

/// The position of a subscriber in the HAMT: a bijection on `u64`, so it never collides, and
/// it spreads consecutive ids over the low bits the HAMT indexes by first.
#[inline]
fn sub_hash(sub: SubscriberId) -> u64 {
    sub.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl Placed for SubscriberId {
    fn place(&self) -> u64 {
        sub_hash(*self)
    }
}

/// Ids per chunk of a set of runs: 64, one bitmap.
const CHUNK_BITS: u32 = 6;

/// A chunk of 64 ids: `id >> CHUNK_BITS`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct Chunk(SubscriberId);

impl Chunk {
    /// The chunk of `sub` and its bit in the chunk's bitmap.
    #[inline]
    fn of(sub: SubscriberId) -> (Chunk, u64) {
        (
            Chunk(sub >> CHUNK_BITS),
            1 << (sub & ((1 << CHUNK_BITS) - 1)),
        )
    }

    /// Where the chunk sits in the HAMT.
    #[inline]
    fn hash(self) -> u64 {
        // Its first id's position: a bijection on chunks too.
        sub_hash(self.0 << CHUNK_BITS)
    }

    /// Appends the ids of this chunk set in `bits` to `out`, in ascending order.
    #[inline]
    fn append(self, mut bits: u64, out: &mut Vec<SubscriberId>) {
        let base = self.0 << CHUNK_BITS;
        if bits.is_power_of_two() {
            out.push(base | SubscriberId::from(bits.trailing_zeros()));
            return;
        }
        // An iterator of known length: `extend` makes room once, no check per id.
        out.extend((0..bits.count_ones()).map(|_| {
            let id = base | SubscriberId::from(bits.trailing_zeros());
            bits &= bits - 1;
            id
        }));
    }
}

impl Placed for Chunk {
    fn place(&self) -> u64 {
        self.hash()
    }
}

/// A set of subscriber ids, cheap to copy (two ids or one pointer).
#[derive(Clone)]
pub(super) enum Subs {
    /// Up to [`INLINE`] ids: the first `len`.
    Inline(u8, [SubscriberId; INLINE]),
    /// Up to [`FEW`] ids.
    Few(Arc<[SubscriberId]>),
    /// More, scattered: one entry per id.
    Many(Hamt<SubscriberId, ()>),
    /// More, in runs: each chunk holding some, with the bitmap of those.
    Runs(Hamt<Chunk, u64>),
}

impl Default for Subs {
    fn default() -> Self {
        Subs::Inline(0, [0; INLINE])
    }
}

impl Subs {
    /// A set of `ids` (distinct, at most [`FEW`]).
    fn of(ids: &[SubscriberId]) -> Subs {
        debug_assert!(ids.len() <= FEW);
        if ids.len() <= INLINE {
            let mut inline = [0; INLINE];
            inline[..ids.len()].copy_from_slice(ids);
            Subs::Inline(ids.len() as u8, inline)
        } else {
            Subs::Few(ids.into())
        }
    }

    /// The ids of a set held in a slice.
    #[inline]
    fn slice(&self) -> Option<&[SubscriberId]> {
        match self {
            Subs::Inline(len, ids) => Some(&ids[..usize::from(*len)]),
            Subs::Few(ids) => Some(ids),
            Subs::Many(_) | Subs::Runs(_) => None,
        }
    }

    /// Whether the set is empty.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        match self {
            Subs::Inline(len, _) => *len == 0,
            // A shared array or a map is never empty (it would have been converted).
            Subs::Few(_) | Subs::Many(_) | Subs::Runs(_) => false,
        }
    }

    /// The set with `sub` added, its HAMT nodes recorded in `delta`.
    pub(super) fn with(&self, sub: SubscriberId, delta: &mut Delta) -> Subs {
        if let Subs::Inline(len, ids) = *self {
            let len = usize::from(len);
            if len < INLINE && !ids[..len].contains(&sub) {
                // The usual case, a new leaf's first id: no copy through a buffer.
                let mut ids = ids;
                ids[len] = sub;
                return Subs::Inline(len as u8 + 1, ids);
            }
        }
        match (self, self.slice()) {
            (_, Some(ids)) if ids.contains(&sub) => self.clone(),
            (_, Some(ids)) if ids.len() < FEW => {
                let mut next = Vec::with_capacity(ids.len() + 1);
                next.extend_from_slice(ids);
                next.push(sub);
                Subs::of(&next)
            }
            (_, Some(ids)) => Subs::large(ids, sub, delta),
            (Subs::Many(map), None) => Subs::Many(map.insert(sub, (), |s| *s == sub, delta)),
            (Subs::Runs(map), None) => {
                add(map, sub, delta).map_or_else(|| self.clone(), Subs::Runs)
            }
            (_, None) => unreachable!("only a map has no slice"),
        }
    }

    /// The set without `sub`, its HAMT nodes recorded in `delta`, or `None` if it is not there.
    pub(super) fn without(&self, sub: SubscriberId, delta: &mut Delta) -> Option<Subs> {
        if let Some(ids) = self.slice() {
            let at = ids.iter().position(|s| *s == sub)?;
            let mut next = ids.to_vec();
            next.swap_remove(at);
            return Some(Subs::of(&next));
        }
        let set = match self {
            Subs::Many(map) => Subs::Many(map.remove(sub_hash(sub), |s| *s == sub, delta)?),
            Subs::Runs(map) => Subs::Runs(remove(map, sub, delta)?),
            Subs::Inline(..) | Subs::Few(_) => unreachable!("only a map has no slice"),
        };
        // Fewer entries than that are needed for fewer ids, and cheap to count then.
        if set.entries() < FEW / 2 {
            let mut ids = Vec::with_capacity(FEW / 2);
            set.collect(&mut ids);
            if ids.len() < FEW / 2 {
                // Back to an array: no version links the map's nodes any more.
                set.for_each_array(&mut |array| delta.stale(array));
                return Some(Subs::of(&ids));
            }
        }
        Some(set)
    }

    /// The map of the [`FEW`] `ids` and `sub`: runs if they average two ids or more a chunk.
    fn large(ids: &[SubscriberId], sub: SubscriberId, delta: &mut Delta) -> Subs {
        let mut chunks: Vec<Chunk> = ids
            .iter()
            .chain([&sub])
            .map(|&id| Chunk::of(id).0)
            .collect();
        chunks.sort_unstable_by_key(|c| c.0);
        chunks.dedup();
        if 2 * chunks.len() <= ids.len() + 1 {
            let mut map = Hamt::default();
            for &id in ids.iter().chain([&sub]) {
                map = add(&map, id, delta).expect("the ids of a set are distinct");
            }
            Subs::Runs(map)
        } else {
            let mut map = Hamt::default();
            for &id in ids.iter().chain([&sub]) {
                map = map.insert(id, (), |s| *s == id, delta);
            }
            Subs::Many(map)
        }
    }

    /// The entries of a map (at most the ids), 0 for an array.
    fn entries(&self) -> usize {
        match self {
            Subs::Many(map) => map.len(),
            Subs::Runs(map) => map.len(),
            Subs::Inline(..) | Subs::Few(_) => 0,
        }
    }

    /// Calls `f` on every shared array of this version (a large set's HAMT nodes).
    pub(super) fn for_each_array(&self, f: &mut impl FnMut(Array)) {
        match self {
            Subs::Many(map) => map.for_each_array(f),
            Subs::Runs(map) => map.for_each_array(f),
            Subs::Inline(..) | Subs::Few(_) => {}
        }
    }

    /// Asks for the first lines of a shared array's ids (the hardware's stream prefetch takes
    /// a longer array's rest), without waiting for them.
    #[inline]
    pub(super) fn prefetch(&self) {
        /// Lines asked for: a set of up to 32 ids.
        const LINES: usize = 4;
        if let Subs::Few(ids) = self {
            let start = ids.as_ptr().cast::<u8>();
            let bytes = std::mem::size_of_val::<[SubscriberId]>(ids);
            for line in 0..LINES.min(bytes.div_ceil(64)) {
                prefetch(start.wrapping_add(64 * line));
            }
        }
    }

    /// Appends the ids to `out`.
    #[inline(always)]
    #[allow(clippy::inline_always)] // measured: called from the lookup's inner loop
    pub(super) fn collect(&self, out: &mut Vec<SubscriberId>) {
        match self {
            // A loop, not `extend_from_slice`: for a few ids a `memcpy` call costs more.
            Subs::Inline(len, ids) => {
                for &id in &ids[..usize::from(*len)] {
                    out.push(id);
                }
            }
            Subs::Few(ids) => out.extend_from_slice(ids),
            Subs::Many(map) => map.for_each(|s, ()| out.push(*s)),
            Subs::Runs(map) => map.for_each(|&chunk, &bits| chunk.append(bits, out)),
        }
    }
}

/// `map` with `sub` added, or `None` if it holds `sub` already.
fn add(map: &Hamt<Chunk, u64>, sub: SubscriberId, delta: &mut Delta) -> Option<Hamt<Chunk, u64>> {
    let (chunk, bit) = Chunk::of(sub);
    let bits = map.get(chunk.hash(), |c| *c == chunk).copied().unwrap_or(0);
    (bits & bit == 0).then(|| map.insert(chunk, bits | bit, |c| *c == chunk, delta))
}

/// `map` without `sub`, or `None` if it does not hold `sub`.
fn remove(
    map: &Hamt<Chunk, u64>,
    sub: SubscriberId,
    delta: &mut Delta,
) -> Option<Hamt<Chunk, u64>> {
    let (chunk, bit) = Chunk::of(sub);
    let bits = *map.get(chunk.hash(), |c| *c == chunk)?;
    if bits & bit == 0 {
        None
    } else if bits == bit {
        map.remove(chunk.hash(), |c| *c == chunk, delta)
    } else {
        Some(map.insert(chunk, bits & !bit, |c| *c == chunk, delta))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::super::raw::Delta;
    use super::{Subs, FEW};
    use crate::matcher::SubscriberId;

    fn ids(set: &Subs) -> Vec<SubscriberId> {
        let mut out = Vec::new();
        set.collect(&mut out);
        out.sort_unstable();
        out
    }

    /// Adds `all` one by one (twice each), then removes them in order, checking the set after
    /// every step; `large` tells which map the full set must be.
    fn up_and_down(all: &[SubscriberId], large: fn(&Subs) -> bool) {
        // One delta for every update: every node allocated is in it, freed at the end.
        let mut delta = Delta::default();
        let mut set = Subs::default();
        for &id in all {
            set = set.with(id, &mut delta);
            set = set.with(id, &mut delta);
        }
        assert!(large(&set));
        let mut left: BTreeSet<SubscriberId> = all.iter().copied().collect();
        for &id in all {
            assert_eq!(ids(&set), left.iter().copied().collect::<Vec<_>>());
            set = set.without(id, &mut delta).expect("present");
            assert!(set.without(id, &mut delta).is_none());
            left.remove(&id);
        }
        assert!(matches!(set, Subs::Inline(0, _)));
        assert!(set.is_empty());
        delta.free_all_versions();
    }

    #[test]
    fn ids_in_a_row_are_kept_as_runs_both_ways() {
        let all: Vec<SubscriberId> = (0..3 * FEW as u64).collect();
        up_and_down(&all, |set| matches!(set, Subs::Runs(_)));
    }

    #[test]
    fn scattered_ids_are_kept_one_entry_each_both_ways() {
        // One id per chunk of 64, and synthetic ids with their top bits set.
        let all: Vec<SubscriberId> = (0..3 * FEW as u64)
            .map(|i| {
                if i % 2 == 0 {
                    64 * i + 5
                } else {
                    (1 << 63) | (97 * i)
                }
            })
            .collect();
        up_and_down(&all, |set| matches!(set, Subs::Many(_)));
    }

    #[test]
    fn runs_keep_ids_at_both_ends_of_a_chunk_and_of_the_id_space() {
        let mut all: Vec<SubscriberId> = (0..FEW as u64).map(|i| 128 + i).collect();
        all.extend([0, 63, 64, 127, u64::MAX, u64::MAX - 63, (1 << 63) | 1]);
        up_and_down(&all, |set| matches!(set, Subs::Runs(_)));
    }

    /// Ids from a few chunks, some dense and some not, with top bits set or not.
    fn id() -> impl Strategy<Value = SubscriberId> {
        prop_oneof![
            0..400u64,
            (0..64u64).prop_map(|i| 64 * i * 7 + 3),
            (0..300u64).prop_map(|i| (1 << 63) | i),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any sequence of adds and removes leaves the set holding what a `BTreeSet` holds,
        /// whichever form it passes through.
        #[test]
        fn a_set_holds_what_a_btreeset_holds(
            ops in proptest::collection::vec((prop::bool::weighted(0.65), id()), 0..1500)
        ) {
            let mut delta = Delta::default();
            let mut set = Subs::default();
            let mut model = BTreeSet::new();
            for (i, (add, id)) in ops.into_iter().enumerate() {
                if add {
                    set = set.with(id, &mut delta);
                    model.insert(id);
                } else {
                    let removed = set.without(id, &mut delta);
                    prop_assert_eq!(removed.is_some(), model.remove(&id));
                    if let Some(next) = removed {
                        set = next;
                    }
                }
                if i % 7 == 0 || model.len() % 128 == 0 {
                    prop_assert_eq!(ids(&set), model.iter().copied().collect::<Vec<_>>());
                }
                prop_assert_eq!(set.is_empty(), model.is_empty());
            }
            prop_assert_eq!(ids(&set), model.iter().copied().collect::<Vec<_>>());
            delta.free_all_versions();
        }
    }
}
