//! The Python object of every held subscriber, in an array indexed by its dense subscriber id,
//! so a result is built by reference counting alone: one array read and one increment per
//! delivered subscriber, no hashing, no lock.
//!
//! The table is passive: the engine calls [`ObjectTable::set`] when a subscriber id is handed
//! out (before any lookup can find it) and [`ObjectTable::clear`] when its last subscription
//! goes (before the id can be reused), both under the registry's lock, so writes to one slot
//! are ordered. Readers pin the epoch collector (`crossbeam_epoch`) before the lookup and keep
//! the pin until every object they read holds its own reference:
//!
//! - the slot array is replaced (never resized in place) when it grows, and the old one is
//!   freed through the collector, so a pinned reader's array stays valid;
//! - a cleared slot's object is released through the collector too, so an object a pinned
//!   reader loaded stays alive until it has taken its reference;
//! - an id found by a pinned lookup is not reused before the reader unpins (the registry's
//!   rule), so its slot holds that subscriber's object or, if it left meanwhile, nothing.

use std::sync::atomic::{AtomicPtr, Ordering};

use crossbeam_epoch::{Atomic, Guard, Owned};
use parking_lot::Mutex;
use pyo3::ffi;
use pyo3::prelude::*;
use topicmatch_core::SubscriberId;

/// One owned reference per non-null slot.
type Slots = Box<[AtomicPtr<ffi::PyObject>]>;

/// The smallest array.
const MIN_SLOTS: usize = 64;

/// Subscriber objects by subscriber id.
pub struct ObjectTable {
    slots: Atomic<Slots>,
    /// Serialises growing the array (set and clear already run under the registry's lock;
    /// this keeps the table sound on its own).
    grow: Mutex<()>,
}

impl Default for ObjectTable {
    fn default() -> Self {
        ObjectTable {
            slots: Atomic::new(empty(MIN_SLOTS)),
            grow: Mutex::new(()),
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

    /// Stores `object` (taking its reference) as subscriber `id`'s.
    pub fn set(&self, py: Python<'_>, id: SubscriberId, object: Py<PyAny>) {
        let at = id as usize;
        let guard = crossbeam_epoch::pin();
        let mut slots = self.slots(&guard);
        if at >= slots.len() {
            slots = self.grow(at + 1, &guard);
        }
        // Release pairs with readers' Acquire loads: the object is complete before they see
        // it. A slot being set is empty (its id was free), so nothing is overwritten.
        let old = slots[at].swap(object.into_ptr(), Ordering::AcqRel);
        debug_assert!(
            old.is_null(),
            "a subscriber id was handed out while still in use"
        );
        if !old.is_null() {
            retire(py, &guard, old);
        }
    }

    /// Empties subscriber `id`'s slot; its object is released once no reader can hold it.
    pub fn clear(&self, py: Python<'_>, id: SubscriberId) {
        let guard = crossbeam_epoch::pin();
        let slots = self.slots(&guard);
        if let Some(slot) = slots.get(id as usize) {
            let old = slot.swap(std::ptr::null_mut(), Ordering::AcqRel);
            if !old.is_null() {
                retire(py, &guard, old);
            }
        }
    }

    /// Replaces the array by one of at least `len` slots holding the same objects.
    fn grow<'g>(&self, len: usize, guard: &'g Guard) -> &'g [AtomicPtr<ffi::PyObject>] {
        let _one = self.grow.lock();
        let current = self.slots.load(Ordering::Acquire, guard);
        // SAFETY: as in `slots`.
        let old = unsafe { current.deref() };
        if old.len() >= len {
            return old;
        }
        let bigger = empty(len.next_power_of_two().max(old.len() * 2));
        for (to, from) in bigger.iter().zip(old.iter()) {
            to.store(from.load(Ordering::Acquire), Ordering::Relaxed);
        }
        let new = self.slots.swap(Owned::new(bigger), Ordering::AcqRel, guard);
        // SAFETY: `new` is the array just replaced, now unreachable for later readers; the
        // references its slots held moved to the new array, so freeing it drops no object.
        unsafe { guard.defer_destroy(new) };
        self.slots(guard)
    }
}

/// Releases `object`'s reference once every thread pinned now has unpinned. The deferred
/// drop may run on a thread without the GIL: PyO3 then queues the decrement for the next
/// thread that takes it.
fn retire(py: Python<'_>, guard: &Guard, object: *mut ffi::PyObject) {
    // SAFETY: the table owned one reference to `object`, handed over here exactly once.
    let object = unsafe { Bound::from_owned_ptr(py, object) }.unbind();
    guard.defer(move || drop(object));
    // To the global queue now: left in this thread's bag, it would wait for 63 more.
    guard.flush();
}

impl Drop for ObjectTable {
    fn drop(&mut self) {
        // SAFETY: `&mut self`: no reader or writer is left, and no guard can hold the array
        // beyond the table's life (every reader borrows the table).
        let slots = unsafe {
            self.slots
                .load(Ordering::Relaxed, crossbeam_epoch::unprotected())
                .into_owned()
        };
        let mut objects = slots
            .iter()
            .map(|s| s.load(Ordering::Relaxed))
            .filter(|p| !p.is_null())
            .peekable();
        if objects.peek().is_some() {
            // A matcher is dropped by its Python object's deallocation, with the GIL held.
            Python::attach(|py| {
                for object in objects {
                    // SAFETY: each slot owned one reference, released once here.
                    drop(unsafe { Bound::from_owned_ptr(py, object) });
                }
            });
        }
    }
}
