//! Synthetic subscriber ids: what the engine and the filter table hand a topic algorithm in
//! place of a registry id, and the numbered places that the ids of groups and buckets name.
//!
//! An id's bits, from the top:
//! - bit 63, [`SYNTHETIC`]: set in every synthetic id; registry ids never get that high;
//! - bits 62 to 60, its kind: [`GROUP`] (the engine's shared subscriptions and queue groups),
//!   [`MEMBER`] (one group subscription), [`BUCKET`] (the filtered subscriptions of one
//!   pattern), or none (one filtered subscription);
//! - below them, a member's or a filtered subscription's subscription id (below
//!   [`SUBSCRIPTION_IDS`]), or a group's or bucket's place ([`Places`]): its generation in
//!   bits 59 to 32, its index in bits 31 to 0.

use crate::matcher::{SubscriberId, SubscriptionId};

/// The bit every synthetic id has.
pub(crate) const SYNTHETIC: SubscriberId = 1 << 63;
/// With [`SYNTHETIC`]: a group, as the algorithm holds it; its place below.
pub(crate) const GROUP: SubscriberId = 1 << 62;
/// With [`SYNTHETIC`]: one group subscription, as the engine's table records it; its
/// subscription id below.
pub(crate) const MEMBER: SubscriberId = 1 << 61;
/// With [`SYNTHETIC`]: a bucket of filtered subscriptions, as the algorithm holds it; its
/// place below.
pub(crate) const BUCKET: SubscriberId = 1 << 60;

/// Subscription ids stay below this, so that a member's or a filtered subscription's id never
/// has a kind's bit.
pub(crate) const SUBSCRIPTION_IDS: SubscriptionId = BUCKET;

/// The generations of a place, below [`BUCKET`] once shifted.
pub(crate) const GENERATIONS: u64 = 1 << 28;

/// An id's bits from [`BUCKET`] up: [`SYNTHETIC`] and its kind.
const KIND: SubscriberId = !(BUCKET - 1);

/// The index an id of a place names (its low 32 bits).
#[inline]
pub(crate) fn index_of(id: SubscriberId) -> usize {
    (id & 0xFFFF_FFFF) as usize
}

/// Places numbered in 32 bits, each named by an id of one kind that carries the place's
/// generation: a place given back goes to the next entry taken, one generation on, so that an
/// id a walk found before its entry left never names the entry that took its place (for
/// 2^28 reuses of that place). Their number is the most entries held at once.
#[derive(Debug, Default)]
pub(crate) struct Places {
    /// By index: the generation of its entry, or of the last one.
    generations: Vec<u64>,
    /// The indices given back, reused before a new one is made.
    free: Vec<u32>,
}

impl Places {
    /// Takes a place: the one given back last, one generation on, or a new one. Its id, of
    /// `kind` ([`GROUP`] or [`BUCKET`]).
    ///
    /// # Panics
    /// Past 2^32 places held at once.
    pub(crate) fn take(&mut self, kind: SubscriberId) -> SubscriberId {
        debug_assert!(kind == GROUP || kind == BUCKET, "{kind:#x}");
        let index = if let Some(index) = self.free.pop() {
            let generation = &mut self.generations[index as usize];
            *generation = (*generation + 1) % GENERATIONS;
            index
        } else {
            self.generations.push(0);
            u32::try_from(self.generations.len() - 1).expect("at most 2^32 places held at once")
        };
        SYNTHETIC | kind | (self.generations[index as usize] << 32) | SubscriberId::from(index)
    }

    /// The index `id` names, if `id` is of `kind` and of its place's current generation (the
    /// entry holding the place, or the last one if it is free: the caller tells those apart).
    #[inline]
    pub(crate) fn index(&self, id: SubscriberId, kind: SubscriberId) -> Option<usize> {
        if id & KIND != SYNTHETIC | kind {
            return None;
        }
        let index = index_of(id);
        let generation = (id & (BUCKET - 1)) >> 32;
        (self.generations.get(index) == Some(&generation)).then_some(index)
    }

    /// Gives back the place of `id`, which [`Places::take`] returned and which was not given
    /// back since.
    pub(crate) fn give_back(&mut self, id: SubscriberId) {
        debug_assert!(self.index(id, id & KIND & !SYNTHETIC).is_some(), "{id:#x}");
        self.free
            .push(u32::try_from(index_of(id)).expect("places are numbered in 32 bits"));
    }

    /// How many places there are: the most held at once.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.generations.len()
    }
}

#[cfg(test)]
mod tests {
    use super::{index_of, Places, BUCKET, GENERATIONS, GROUP, MEMBER, SYNTHETIC};

    #[test]
    fn a_place_given_back_is_taken_again_under_a_new_id() {
        let mut places = Places::default();
        let first = places.take(BUCKET);
        let second = places.take(BUCKET);
        assert_eq!(
            (first, second),
            (SYNTHETIC | BUCKET, SYNTHETIC | BUCKET | 1)
        );
        places.give_back(first);
        let again = places.take(BUCKET);
        assert_eq!(index_of(again), index_of(first), "the place is reused");
        assert_eq!(again, SYNTHETIC | BUCKET | (1 << 32), "one generation on");
        assert_eq!(
            places.index(first, BUCKET),
            None,
            "a stale id names nothing"
        );
        assert_eq!(places.index(again, BUCKET), Some(0));
        assert_eq!(places.index(second, BUCKET), Some(1));
        assert_eq!(places.len(), 2);
    }

    #[test]
    fn generations_wrap_below_the_kind_bits() {
        let mut places = Places::default();
        let id = places.take(GROUP);
        places.generations[0] = GENERATIONS - 2;
        places.give_back(SYNTHETIC | GROUP | ((GENERATIONS - 2) << 32));
        let last = places.take(GROUP);
        assert_eq!(last, SYNTHETIC | GROUP | ((GENERATIONS - 1) << 32));
        assert_eq!(last & BUCKET, 0, "the generation stays below the kind bits");
        places.give_back(last);
        assert_eq!(
            places.take(GROUP),
            id,
            "after the last generation, the first again"
        );
    }

    #[test]
    fn an_id_of_another_kind_names_no_place() {
        let mut places = Places::default();
        let group = places.take(GROUP);
        assert_eq!(places.index(group, GROUP), Some(0));
        for other in [
            SYNTHETIC | BUCKET,
            SYNTHETIC | GROUP | BUCKET,
            SYNTHETIC | MEMBER,
            SYNTHETIC | MEMBER | GROUP,
            SYNTHETIC,
            GROUP,
            0,
        ] {
            assert_eq!(places.index(other, GROUP), None, "{other:#x}");
        }
        assert_eq!(places.index(group, BUCKET), None);
        assert_eq!(
            places.index(SYNTHETIC | GROUP | 1, GROUP),
            None,
            "no such place"
        );
    }
}
