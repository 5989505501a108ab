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

/// A set of subscriber ids, cheap to copy (two ids or one pointer).
#[derive(Clone)]
pub(super) enum Subs {
    /// Up to [`INLINE`] ids: the first `len`.
    Inline(u8, [SubscriberId; INLINE]),
    /// Up to [`FEW`] ids.
    Few(Arc<[SubscriberId]>),
    /// More.
    Many(Hamt<SubscriberId, ()>),
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
            Subs::Many(_) => None,
        }
    }

    /// Whether the set is empty.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        match self {
            Subs::Inline(len, _) => *len == 0,
            // A shared array or a map is never empty (it would have been converted).
            Subs::Few(_) | Subs::Many(_) => false,
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
            (_, Some(ids)) => {
                let mut map = Hamt::default();
                for &id in ids.iter().chain([&sub]) {
                    map = map.insert(id, (), |s| *s == id, delta);
                }
                Subs::Many(map)
            }
            (Subs::Many(map), None) => Subs::Many(map.insert(sub, (), |s| *s == sub, delta)),
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
        let Subs::Many(map) = self else {
            unreachable!("only a map has no slice")
        };
        let map = map.remove(sub_hash(sub), |s| *s == sub, delta)?;
        if map.len() < FEW / 2 {
            // Back to an array: no version links the map's nodes any more.
            map.for_each_array(&mut |array| delta.stale(array));
            let mut ids = Vec::with_capacity(FEW / 2);
            map.for_each(|s, ()| ids.push(*s));
            return Some(Subs::of(&ids));
        }
        Some(Subs::Many(map))
    }

    /// Calls `f` on every shared array of this version (a large set's HAMT nodes).
    pub(super) fn for_each_array(&self, f: &mut impl FnMut(Array)) {
        if let Subs::Many(map) = self {
            map.for_each_array(f);
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
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::super::raw::Delta;
    use super::{Subs, FEW};

    #[test]
    fn crosses_the_inline_threshold_both_ways() {
        // One delta for every update: every node allocated is in it, freed at the end.
        let mut delta = Delta::default();
        let mut set = Subs::default();
        let n = 3 * FEW as u64;
        for i in 0..n {
            set = set.with(i, &mut delta);
            set = set.with(i, &mut delta);
        }
        assert!(matches!(set, Subs::Many(_)));
        for i in 0..n {
            let mut out = Vec::new();
            set.collect(&mut out);
            out.sort_unstable();
            assert_eq!(out, (i..n).collect::<Vec<_>>());
            set = set.without(i, &mut delta).expect("present");
            assert!(set.without(i, &mut delta).is_none());
        }
        assert!(matches!(set, Subs::Inline(0, _)));
        assert!(set.is_empty());
        delta.free_all_versions();
    }
}
