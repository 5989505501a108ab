//! A cell holding one immutable boxed value, replaced whole and read under a [`Pin`]: the
//! result cache's entries ([`super::super::cache`]). A replaced value is freed through the
//! epoch, so a reader that loaded it keeps a valid reference until its pin ends.

use std::ptr;

use super::Pin;
use crate::sync::{AtomicPtr, Ordering};

/// An optional boxed `T`, shared by every thread; see the module docs.
pub(in super::super) struct Slot<T: Send + 'static> {
    value: AtomicPtr<T>,
}

impl<T: Send + 'static> Default for Slot<T> {
    fn default() -> Self {
        Slot {
            value: AtomicPtr::new(ptr::null_mut()),
        }
    }
}

impl<T: Send + 'static> Slot<T> {
    /// The value now, valid while `pin` is held.
    #[inline]
    pub(in super::super) fn load<'g>(&'g self, _pin: &'g Pin<'_>) -> Option<&'g T> {
        // Acquire pairs with the Release of the `replace` that stored the pointer, so the
        // value's fields are visible.
        let value = self.value.load(Ordering::Acquire);
        // SAFETY: a non-null pointer here came from `Box::into_raw` in `replace`. It is freed
        // only (a) by a later `replace` that swapped it out, through the epoch, after every
        // guard active at that moment (ours included, since we loaded it before the swap or
        // hold no reference from after it) is dropped; or (b) by `Drop`, which needs `&mut`,
        // so no pin borrowing this slot is alive.
        unsafe { value.as_ref() }
    }

    /// Puts `value` in, retiring the value it replaces.
    pub(in super::super) fn replace(&self, value: T, pin: &Pin<'_>) {
        let new = Box::into_raw(Box::new(value));
        // AcqRel: Release publishes the new value's fields to `load`; Acquire orders the old
        // value's retirement after its own publication (it is freed on some thread later).
        let old = self.value.swap(new, Ordering::AcqRel);
        if old.is_null() {
            return;
        }
        #[cfg(not(loom))]
        // SAFETY: `old` came from `Box::into_raw` and was unlinked from the slot by this swap,
        // so no thread pinning after now can load it, and it is retired once (only the swap
        // that removed it sees it). The deferred function runs after every guard active now is
        // dropped; `T: Send`, so it may drop on any thread.
        unsafe {
            pin.guard.defer_unchecked(move || drop(Box::from_raw(old)));
        }
        #[cfg(loom)]
        {
            // SAFETY: as above; kept until the matcher drops (never freed early).
            let old: Box<dyn Send> = unsafe { Box::from_raw(old) };
            pin.reclaim.retired_values.lock().unwrap().push(old);
        }
    }
}

impl<T: Send + 'static> Drop for Slot<T> {
    fn drop(&mut self) {
        // A swap rather than `get_mut`, which loom's atomics lack.
        let value = self.value.swap(ptr::null_mut(), Ordering::Relaxed);
        if !value.is_null() {
            // SAFETY: the slot owns its current value (from `Box::into_raw`), and `&mut self`
            // means no reader holds it.
            drop(unsafe { Box::from_raw(value) });
        }
    }
}
