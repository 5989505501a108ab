//! What a lookup reads of the groups: each group's members as one immutable version, in an
//! array indexed by the group's index, read without a lock.
//!
//! A membership change builds a new version and swaps it in; the array is replaced (never
//! resized in place) when it grows. Replaced versions and arrays are freed through the epoch
//! collector (`crossbeam_epoch`), so a reader keeps what it loaded for as long as it stays
//! pinned. Writers are serialised by the caller (the group table's writers' lock). Under
//! `--cfg loom` (no epoch collector) the same API sits on a read-write lock.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use crate::matcher::SubscriberId;

/// One version of a group, as lookups read it. In declaration order (`repr(C)`): a lookup
/// reads `id`, then `only` for a group of one, from the version's first 24 bytes.
#[repr(C)]
pub(super) struct View {
    /// The group's id: a walk's id whose index another group has taken since names another.
    pub(super) id: SubscriberId,
    /// The one member of a group of one (most groups of a broker with one consumer per
    /// queue): no choice to make, and the members are not read.
    pub(super) only: Option<SubscriberId>,
    /// The members' subscriber ids, in the order they joined.
    pub(super) members: Box<[SubscriberId]>,
    /// The round-robin position, shared by every version of the group (in NATS, by every
    /// group of its queue).
    pub(super) turn: Arc<AtomicUsize>,
    /// The group's name (in NATS, its queue's).
    pub(super) name: Arc<str>,
    /// The pattern its members subscribed.
    pub(super) pattern: Arc<str>,
}

#[cfg(not(loom))]
pub(super) use epoch::{pin, Pin, Reader, Views};

#[cfg(loom)]
pub(super) use locked::{pin, Pin, Reader, Views};

#[cfg(not(loom))]
mod epoch {
    use std::sync::atomic::Ordering;

    use crossbeam_epoch::{Atomic, Guard, Owned, Shared};

    use super::View;

    type Slots = Box<[Atomic<View>]>;

    /// What a reader holds while it reads versions: a pin of the epoch collector.
    pub(in crate::engine) type Pin = Guard;

    /// Pins this thread (cheap when it is pinned already).
    #[inline]
    pub(in crate::engine) fn pin() -> Pin {
        crossbeam_epoch::pin()
    }

    /// Group versions by group index.
    pub(in crate::engine) struct Views {
        slots: Atomic<Slots>,
    }

    impl Default for Views {
        fn default() -> Self {
            Views {
                slots: Atomic::new(empty(16)),
            }
        }
    }

    fn empty(len: usize) -> Slots {
        (0..len).map(|_| Atomic::null()).collect()
    }

    impl Views {
        fn slots<'g>(&self, guard: &'g Guard) -> &'g [Atomic<View>] {
            // Acquire pairs with the Release swap that published a grown array.
            let shared = self.slots.load(Ordering::Acquire, guard);
            // SAFETY: never null (made in `default`, replaced by `set`), and an array loaded
            // while pinned is freed only through the collector, after `guard` unpins.
            unsafe { shared.deref() }
        }

        /// Sets group `index`'s version (`None`: the group is gone). Callers serialise writes.
        pub(in crate::engine) fn set(&self, index: usize, view: Option<View>) {
            let guard = crossbeam_epoch::pin();
            let mut slots = self.slots(&guard);
            if index >= slots.len() {
                let bigger = empty((index + 1).next_power_of_two().max(slots.len() * 2));
                for (to, from) in bigger.iter().zip(slots) {
                    to.store(from.load(Ordering::Acquire, &guard), Ordering::Relaxed);
                }
                let old = self
                    .slots
                    .swap(Owned::new(bigger), Ordering::AcqRel, &guard);
                // SAFETY: the array just replaced is unreachable for later readers; its
                // versions moved to the new array, so freeing it frees no version.
                unsafe { guard.defer_destroy(old) };
                slots = self.slots(&guard);
            }
            let new = view.map_or(Shared::null(), |v| Owned::new(v).into_shared(&guard));
            // Release pairs with readers' Acquire loads: the version is complete first.
            let old = slots[index].swap(new, Ordering::AcqRel, &guard);
            if !old.is_null() {
                // SAFETY: `old` was this slot's version, now replaced and unreachable for
                // later readers; it is freed once every reader pinned now has unpinned.
                unsafe { guard.defer_destroy(old) };
            }
        }

        /// The array's length.
        #[cfg(test)]
        pub(in crate::engine) fn len(&self) -> usize {
            self.slots(&crossbeam_epoch::pin()).len()
        }

        /// A reader of the versions, valid as long as `guard` is pinned.
        #[inline]
        pub(in crate::engine) fn reader<'g>(&self, guard: &'g Pin) -> Reader<'g> {
            Reader {
                slots: self.slots(guard),
                guard,
            }
        }
    }

    /// Reads the versions under one pin.
    pub(in crate::engine) struct Reader<'g> {
        slots: &'g [Atomic<View>],
        guard: &'g Guard,
    }

    impl<'g> Reader<'g> {
        /// Group `index`'s version, if the group is held.
        #[inline]
        pub(in crate::engine) fn get(&self, index: usize) -> Option<&'g View> {
            let view = self.slots.get(index)?.load(Ordering::Acquire, self.guard);
            // SAFETY: a version loaded while pinned is freed only through the collector,
            // after the reader's guard unpins, which outlives `'g`.
            unsafe { view.as_ref() }
        }
    }

    impl Drop for Views {
        fn drop(&mut self) {
            // SAFETY: `&mut self`: no reader or writer is left.
            unsafe {
                let guard = crossbeam_epoch::unprotected();
                let slots = self.slots.load(Ordering::Relaxed, guard).into_owned();
                for slot in slots.iter() {
                    let view = slot.load(Ordering::Relaxed, guard);
                    if !view.is_null() {
                        drop(view.into_owned());
                    }
                }
            }
        }
    }
}

#[cfg(loom)]
mod locked {
    use parking_lot::{RwLock, RwLockReadGuard};

    use super::View;

    /// Nothing to hold: the reader takes the lock.
    pub(in crate::engine) type Pin = ();

    pub(in crate::engine) fn pin() -> Pin {}

    /// Group versions by group index, behind a lock (the loom build has no epoch collector).
    #[derive(Default)]
    pub(in crate::engine) struct Views {
        slots: RwLock<Vec<Option<View>>>,
    }

    impl Views {
        pub(in crate::engine) fn set(&self, index: usize, view: Option<View>) {
            let mut slots = self.slots.write();
            if slots.len() <= index {
                slots.resize_with(index + 1, || None);
            }
            slots[index] = view;
        }

        #[cfg(test)]
        pub(in crate::engine) fn len(&self) -> usize {
            self.slots.read().len()
        }

        pub(in crate::engine) fn reader<'g>(&'g self, _pin: &'g Pin) -> Reader<'g> {
            Reader {
                slots: self.slots.read(),
            }
        }
    }

    /// Reads the versions under the lock.
    pub(in crate::engine) struct Reader<'g> {
        slots: RwLockReadGuard<'g, Vec<Option<View>>>,
    }

    impl Reader<'_> {
        pub(in crate::engine) fn get(&self, index: usize) -> Option<&View> {
            self.slots.get(index)?.as_ref()
        }
    }
}
