//! A level's subscriber set: a few ids inline in the main node, a persistent HAMT beyond.
//!
//! Most patterns have a handful of subscribers; keeping up to [`INLINE`] of them inline makes
//! collecting them a slice copy. Past that the set moves to a [`Hamt`], so a subscribe or
//! unsubscribe never copies more than a bounded number of ids (the RabbitMQ failure mode of
//! copying 20k subscribers per subscribe cannot happen). It moves back inline only below
//! [`INLINE`] / 2, so a set hovering around the threshold does not convert back and forth.

use smallvec::SmallVec;

use super::hamt::Hamt;
use crate::matcher::SubscriberId;

/// Most subscribers kept inline.
const INLINE: usize = 8;

/// The position of a subscriber in the HAMT: a bijection on `u64`, so it never collides, and
/// it spreads consecutive ids over the low bits the HAMT indexes by first.
#[inline]
fn sub_hash(sub: SubscriberId) -> u64 {
    sub.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// A set of subscriber ids, cheap to copy (at most [`INLINE`] ids or one pointer).
#[derive(Clone)]
pub(super) enum Subs {
    /// Up to [`INLINE`] ids.
    Few(SmallVec<[SubscriberId; INLINE]>),
    /// More.
    Many(Hamt<SubscriberId, ()>),
}

impl Default for Subs {
    fn default() -> Self {
        Subs::Few(SmallVec::new())
    }
}

impl Subs {
    /// Whether the set is empty.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        match self {
            Subs::Few(ids) => ids.is_empty(),
            Subs::Many(map) => map.is_empty(),
        }
    }

    /// The set with `sub` added.
    pub(super) fn with(&self, sub: SubscriberId) -> Subs {
        match self {
            Subs::Few(ids) if ids.contains(&sub) => self.clone(),
            Subs::Few(ids) if ids.len() < INLINE => {
                let mut ids = ids.clone();
                ids.push(sub);
                Subs::Few(ids)
            }
            Subs::Few(ids) => {
                let mut map = Hamt::default();
                for &id in ids.iter().chain([&sub]) {
                    map = map.insert(sub_hash(id), id, (), |s| *s == id);
                }
                Subs::Many(map)
            }
            Subs::Many(map) => Subs::Many(map.insert(sub_hash(sub), sub, (), |s| *s == sub)),
        }
    }

    /// The set without `sub`, or `None` if it is not there.
    pub(super) fn without(&self, sub: SubscriberId) -> Option<Subs> {
        match self {
            Subs::Few(ids) => {
                let at = ids.iter().position(|s| *s == sub)?;
                let mut ids = ids.clone();
                ids.swap_remove(at);
                Some(Subs::Few(ids))
            }
            Subs::Many(map) => {
                let map = map.remove(sub_hash(sub), |s| *s == sub)?;
                if map.len() < INLINE / 2 {
                    let mut ids = SmallVec::new();
                    map.for_each(|s, ()| ids.push(*s));
                    return Some(Subs::Few(ids));
                }
                Some(Subs::Many(map))
            }
        }
    }

    /// Appends the ids to `out`.
    #[inline]
    pub(super) fn collect(&self, out: &mut Vec<SubscriberId>) {
        match self {
            // A loop, not `extend_from_slice`: for a few ids a `memcpy` call costs more.
            Subs::Few(ids) => {
                out.reserve(ids.len());
                for &id in ids {
                    out.push(id);
                }
            }
            Subs::Many(map) => map.for_each(|s, ()| out.push(*s)),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{Subs, INLINE};

    #[test]
    fn crosses_the_inline_threshold_both_ways() {
        let mut set = Subs::default();
        let n = 3 * INLINE as u64;
        for i in 0..n {
            set = set.with(i);
            set = set.with(i);
        }
        assert!(matches!(set, Subs::Many(_)));
        for i in 0..n {
            let mut out = Vec::new();
            set.collect(&mut out);
            out.sort_unstable();
            assert_eq!(out, (i..n).collect::<Vec<_>>());
            set = set.without(i).expect("present");
            assert!(set.without(i).is_none());
        }
        assert!(matches!(set, Subs::Few(_)));
        assert!(set.is_empty());
    }
}
