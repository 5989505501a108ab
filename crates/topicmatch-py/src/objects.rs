//! The Python object of every held subscriber, in an array indexed by its dense subscriber id,
//! so a result is built by reference counting alone: one array read and one increment per
//! delivered subscriber, no hashing, no lock.
//!
//! The table is passive: its matcher (a `Matcher`'s engine, a `FieldMatcher`) calls
//! [`ObjectTable::set`] when a subscriber id is handed out (before any lookup can find it) and
//! [`ObjectTable::clear`] when its last subscription goes, both under the registry's lock.
//! Readers pin the epoch collector (`crossbeam_epoch`) before the lookup and keep the pin until
//! every object they read holds its own reference:
//!
//! - the slot array is replaced (never resized in place) when it grows, and the old one is
//!   freed through the collector, so a pinned reader's array stays valid;
//! - a departed subscriber's slot is emptied, and its object released, through the collector:
//!   a lookup pinned when it left still finds its object (the registry still resolves its id
//!   then too), so a message that lookup routed to it (a group's chosen member) is delivered.
//!   A subscriber that comes back under its id and leaves again has two such releases pending:
//!   the slot is emptied only by the last (the first may run while a lookup pinned between
//!   the two departures still reads the slot);
//! - an id found by a pinned lookup is not reused before the reader unpins (the registry's
//!   rule), so its slot holds that subscriber's object.

use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Arc;

use crossbeam_epoch::{Atomic, Guard, Owned};
use parking_lot::Mutex;
use pyo3::ffi;
use pyo3::prelude::*;
use topicmatch_core::{Registry, SubscriberId};

use crate::convert;

/// The objects' pointers, read by lookups; the references are owned by `Owners::objects`
/// (or, for a departed subscriber, by its pending `empty`).
type Slots = Box<[AtomicPtr<ffi::PyObject>]>;

/// The smallest array.
const MIN_SLOTS: usize = 64;

/// Subscriber objects by subscriber id.
pub struct ObjectTable {
    slots: Atomic<Slots>,
    /// Writers only (set and clear already run under the registry's lock; this keeps the
    /// table sound on its own), and growing the array.
    owners: Mutex<Owners>,
}

/// What the writers keep, by id.
#[derive(Default)]
struct Owners {
    /// The reference behind each non-null slot of a held subscriber.
    objects: Vec<Option<Py<PyAny>>>,
    /// How many of its departures' `empty` calls the collector holds.
    pending: Vec<u32>,
}

impl Default for ObjectTable {
    fn default() -> Self {
        ObjectTable {
            slots: Atomic::new(empty(MIN_SLOTS)),
            owners: Mutex::new(Owners::default()),
        }
    }
}

fn empty(len: usize) -> Slots {
    (0..len)
        .map(|_| AtomicPtr::new(std::ptr::null_mut()))
        .collect()
}

impl ObjectTable {
    /// The current array, valid while `guard` is pinned.
    #[inline]
    pub fn slots<'g>(&self, guard: &'g Guard) -> &'g [AtomicPtr<ffi::PyObject>] {
        // Acquire pairs with the Release store that published a grown array, so its copied
        // pointers are visible.
        let shared = self.slots.load(Ordering::Acquire, guard);
        // SAFETY: the array is never null (made in `default`, replaced by `grow`), and one
        // loaded while pinned is freed only through the collector, after `guard` unpins.
        unsafe { shared.deref() }
    }

    /// Subscriber `id`'s object, if it has one: a new reference to an object the table held
    /// while `guard` was pinned, which keeps it alive until then.
    pub fn object<'py>(
        &self,
        py: Python<'py>,
        guard: &Guard,
        id: SubscriberId,
    ) -> Option<Bound<'py, PyAny>> {
        let object = self
            .slots(guard)
            .get(usize::try_from(id).ok()?)?
            .load(Ordering::Acquire);
        // SAFETY: the GIL is held (`py`), and a non-null object is alive: it was in the table
        // while `guard` is pinned (see the module docs); `from_borrowed_ptr` takes a reference.
        (!object.is_null()).then(|| unsafe { Bound::from_borrowed_ptr(py, object) })
    }

    /// A table of every subscriber `registry` holds (a matcher restored from a snapshot).
    /// Makes only `int` and `str` objects, which never runs the garbage collector, so it may
    /// run under the registry's lock.
    pub fn of(py: Python<'_>, registry: &Registry) -> PyResult<Self> {
        let table = ObjectTable::default();
        for (id, value) in registry.iter() {
            table.set(id, convert::subscriber_to_py(py, value)?.unbind());
        }
        Ok(table)
    }

    /// Stores `object` as subscriber `id`'s.
    pub fn set(&self, id: SubscriberId, object: Py<PyAny>) {
        let at = id as usize;
        let guard = crossbeam_epoch::pin();
        let mut owners = self.owners.lock();
        let mut slots = self.slots(&guard);
        if at >= slots.len() {
            slots = self.grow(at + 1, &guard);
        }
        if owners.objects.len() <= at {
            owners.objects.resize_with(at + 1, || None);
            owners.pending.resize(at + 1, 0);
        }
        // Release pairs with readers' Acquire loads: the object is complete before they see
        // it. The slot may still show the id's last owner, whose `empty` is pending: that
        // `empty` then finds the owner set and only drops its reference.
        slots[at].store(object.as_ptr(), Ordering::Release);
        if let Some(old) = owners.objects[at].replace(object) {
            // Not expected (an id is handed out only once its owner left and was cleared),
            // but harmless: readers may still see `old` until the epoch passes.
            guard.defer(move || drop(old));
        }
    }

    /// The callback a subscribe passes to the core for a subscriber joining (called with its
    /// new id, under the core's write lock, only when the subscriber held no subscription):
    /// stores `object` as that subscriber's, once.
    pub fn joining(&self, object: Py<PyAny>) -> impl FnMut(SubscriberId) + '_ {
        let mut object = Some(object);
        move |id| {
            if let Some(object) = object.take() {
                self.set(id, object);
            }
        }
    }

    /// Empties subscriber `id`'s slot, and releases its object, once no thread pinned now can
    /// still be reading it (the subscriber left). Called as an unsubscribe's `left` callback
    /// (`unsubscribe_with`), which hands this thread's deferred functions to the collector
    /// after it: this one goes in the same bag as the registry's release of the id.
    pub fn clear(self: &Arc<Self>, id: SubscriberId) {
        let at = id as usize;
        let object = {
            let mut owners = self.owners.lock();
            let Some(object) = owners.objects.get_mut(at).and_then(Option::take) else {
                return;
            };
            owners.pending[at] += 1;
            object
        };
        let table = Arc::clone(self);
        crossbeam_epoch::pin().defer(move || table.empty(id, object));
    }

    /// Empties slot `id` unless the id was handed out again meanwhile (its owner is set: the
    /// slot shows the new subscriber's object, which may even be this same object) or another
    /// departure's `empty` is still pending (the slot may show the object that one releases,
    /// which a reader pinned before it may still read), then drops the reference: at once if
    /// this thread holds the GIL, else queued by PyO3 for the next thread that takes it
    /// (deferred functions run on whatever thread collects garbage). No reader holds the
    /// pointer any more: every thread pinned when the subscriber left has unpinned.
    ///
    /// It does not pin. It runs inside the collector, also from a thread's exit (its epoch
    /// handle, dropped with the thread's locals, pins once more and may collect); a pin there
    /// registers a new handle whose first pin collects again, running the next pending `empty`
    /// one call deeper, until a long queue of them overflows the thread's stack. The collecting
    /// thread may hold other locks (the registry's): the objects are exact `str` and `int` (the
    /// binding keeps no other kind), whose release runs no Python code, so nothing here can call
    /// back into the matcher.
    fn empty(&self, id: SubscriberId, object: Py<PyAny>) {
        {
            let mut owners = self.owners.lock();
            let at = id as usize;
            owners.pending[at] -= 1;
            if owners.pending[at] == 0 && owners.objects[at].is_none() {
                // SAFETY: the array is never null, and only `grow`, which runs holding
                // `owners` (held here), replaces it; a replaced array is freed through the
                // collector. So the array loaded now stays valid while `owners` is held.
                let slots = unsafe {
                    self.slots
                        .load(Ordering::Acquire, crossbeam_epoch::unprotected())
                        .deref()
                };
                slots[at].store(std::ptr::null_mut(), Ordering::Release);
            }
        }
        drop(object);
    }

    /// Replaces the array by one of at least `len` slots showing the same objects (call
    /// holding `owners`).
    fn grow<'g>(&self, len: usize, guard: &'g Guard) -> &'g [AtomicPtr<ffi::PyObject>] {
        let current = self.slots.load(Ordering::Acquire, guard);
        // SAFETY: as in `slots`.
        let old = unsafe { current.deref() };
        let bigger = empty(len.next_power_of_two().max(old.len() * 2));
        for (to, from) in bigger.iter().zip(old.iter()) {
            to.store(from.load(Ordering::Acquire), Ordering::Relaxed);
        }
        let new = self.slots.swap(Owned::new(bigger), Ordering::AcqRel, guard);
        // SAFETY: `new` is the array just replaced, now unreachable for later readers; it
        // owns no reference (the owners do), so freeing it drops no object.
        unsafe { guard.defer_destroy(new) };
        self.slots(guard)
    }
}

impl Drop for ObjectTable {
    fn drop(&mut self) {
        // SAFETY: `&mut self`: no reader or writer is left, and no guard can hold the array
        // beyond the table's life (a pending `empty` holds the table alive through its Arc).
        drop(unsafe {
            self.slots
                .load(Ordering::Relaxed, crossbeam_epoch::unprotected())
                .into_owned()
        });
        // The owners drop with the table (their references released through PyO3).
    }
}
