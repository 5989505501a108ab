//! Results as Python lists of subscriber objects, built with the GIL held: per delivered
//! subscriber one reference count increment and one store, after one read of the object table
//! (for a batch, made beforehand with the GIL released: [`resolve`]).
//!
//! The caller pins the epoch collector before the lookup whose ids it passes and keeps the pin
//! until the rows are built: that keeps every object read from the table alive until its row
//! holds its own reference (see [`crate::objects`]). A subscriber that left meanwhile has an
//! empty slot and is left out.

use std::sync::atomic::{AtomicPtr, Ordering};

use crossbeam_epoch::Guard;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyList;
use topicmatch_core::SubscriberId;

use crate::objects::ObjectTable;

/// The subscribers with these ids, as one new list.
pub fn list<'py>(
    py: Python<'py>,
    table: &ObjectTable,
    guard: &Guard,
    ids: &[SubscriberId],
) -> PyResult<Bound<'py, PyList>> {
    let slots = table.slots(guard);
    row(py, ids, |id| object_of(slots, id))
}

/// Replaces each id of `ids` by the address of its subscriber's object (0 where the
/// subscriber left), for [`Rows::push`]. It reads the table only, which needs a pin and not the GIL:
/// a batch resolves its ids with the GIL released, and the rows are built holding it with one
/// read, one increment and one store per subscriber. The caller's own pin, taken before the
/// lookup and kept until the rows are built, keeps the objects alive meanwhile (see
/// [`crate::objects`]); `pinned` may be another guard of the same thread.
pub fn resolve(table: &ObjectTable, pinned: &Guard, ids: &mut [SubscriberId]) {
    let slots = table.slots(pinned);
    for id in ids {
        *id = object_of(slots, *id) as usize as SubscriberId;
    }
}

/// Subscriber `id`'s object in the table's `slots`, null if it has none.
#[inline]
fn object_of(slots: &[AtomicPtr<ffi::PyObject>], id: SubscriberId) -> *mut ffi::PyObject {
    slots
        .get(id as usize)
        .map_or(std::ptr::null_mut(), |s| s.load(Ordering::Acquire))
}

/// The list of a batch's rows, one list per topic, filled a part of the batch at a time
/// ([`Rows::push`]) from the addresses [`resolve`] made of the part's ids.
pub struct Rows<'py> {
    out: Bound<'py, PyList>,
    filled: usize,
}

impl<'py> Rows<'py> {
    /// The rows of `topics` topics, none made yet. Until all are, the list has empty slots,
    /// and the GIL is released between parts: the list stays out of the garbage collector's
    /// reach (untracked, so that no other thread finds it through `gc.get_objects()`) until
    /// [`Rows::finish`].
    pub fn new(py: Python<'py>, topics: usize) -> PyResult<Self> {
        let out = new_list(py, topics)?;
        // SAFETY: the GIL is held and `out` is a new list, tracked by `PyList_New`.
        unsafe { ffi::PyObject_GC_UnTrack(out.as_ptr().cast()) };
        Ok(Rows { out, filled: 0 })
    }

    /// Makes the next rows: topic `i`'s subscribers are `objects[ends[i - 1]..ends[i]]`.
    /// `_pinned` is the pin held since before the lookup, which keeps every object alive until
    /// its row holds it.
    pub fn push(
        &mut self,
        _pinned: &Guard,
        objects: &[SubscriberId],
        ends: &[usize],
    ) -> PyResult<()> {
        let py = self.out.py();
        if self.filled + ends.len() > self.out.len() {
            return Err(crate::errors::internal(format!(
                "internal error: {} more rows for a batch of {} topics, {} made",
                ends.len(),
                self.out.len(),
                self.filled
            )));
        }
        // No collection may run while the rows are made: each row is a new container, and a
        // collection every few hundred would traverse the rows made so far and could run
        // finalizers (arbitrary Python code) in the middle of the batch.
        let _paused = GcPause::new(py);
        let mut start = 0;
        for &end in ends {
            let row = row(py, &objects[start..end], |address| {
                address as usize as *mut ffi::PyObject
            })?;
            // SAFETY: `out` is a new list of one slot per topic, and slot `self.filled` is
            // still empty (in range: `ends` are the rows of topics not made yet); the store
            // steals the reference `into_ptr` gives up.
            unsafe {
                ffi::PyList_SET_ITEM(self.out.as_ptr(), ssize(self.filled), row.into_ptr());
            }
            self.filled += 1;
            start = end;
        }
        Ok(())
    }

    /// The list, once every topic's row is made. (Dropped unfinished, the list is freed with
    /// its empty slots: its deallocation skips them, and untracks it only if tracked.)
    pub fn finish(self) -> PyResult<Bound<'py, PyList>> {
        if self.filled == self.out.len() {
            // SAFETY: the GIL is held, and `out` was untracked by `new` and is full now.
            unsafe { ffi::PyObject_GC_Track(self.out.as_ptr().cast()) };
            Ok(self.out)
        } else {
            Err(crate::errors::internal(format!(
                "internal error: {} rows made for a batch of {} topics",
                self.filled,
                self.out.len()
            )))
        }
    }
}

/// A new list of the objects of `ids` (`object` gives each one's, null for a subscriber that
/// left, which the list leaves out).
fn row<'py>(
    py: Python<'py>,
    ids: &[SubscriberId],
    object: impl Fn(SubscriberId) -> *mut ffi::PyObject,
) -> PyResult<Bound<'py, PyList>> {
    let row = unfilled_list(py, ids.len())?;
    let filled = fill(row.as_ptr(), ids, object);
    set_filled(py, &row, ids.len(), filled)?;
    Ok(row)
}

/// A new empty list with room for `len` items, not zeroed: the caller fills the first slots
/// ([`fill`]) and then gives their count to [`set_filled`]. Until then its length is 0, so
/// that its deallocation, should the caller fail before, releases no item. CPython's own lists
/// of known length are made this way (`list_new_prealloc`); `PyList_New` zeroes its slots, a
/// `memset` of 3% of a `lookup_many` call of hundreds of subscribers a topic. The items array
/// comes from `PyMem_Malloc`, which a list of a build with the GIL frees with `PyMem_Free`.
#[cfg(not(Py_GIL_DISABLED))]
fn unfilled_list(py: Python<'_>, len: usize) -> PyResult<Bound<'_, PyList>> {
    let list = new_list(py, 0)?;
    if len > 0 {
        let bytes = len
            .checked_mul(std::mem::size_of::<*mut ffi::PyObject>())
            .filter(|&bytes| ffi::Py_ssize_t::try_from(bytes).is_ok())
            .ok_or_else(|| pyo3::exceptions::PyMemoryError::new_err(()))?;
        // SAFETY: the GIL is held (`py`).
        let items = unsafe { ffi::PyMem_Malloc(bytes) }.cast::<*mut ffi::PyObject>();
        if items.is_null() {
            return Err(pyo3::exceptions::PyMemoryError::new_err(()));
        }
        // SAFETY: `list` is a new empty list, not shared yet, whose item array is null
        // (`PyList_New(0)`); it owns `items` from here on.
        unsafe {
            let list = list.as_ptr().cast::<ffi::PyListObject>();
            (*list).ob_item = items;
            (*list).allocated = ssize(len);
        }
    }
    Ok(list)
}

/// Gives the list made by [`unfilled_list`] its length: its first `filled` slots.
#[cfg(not(Py_GIL_DISABLED))]
#[allow(clippy::unnecessary_wraps)] // the same signature as the free-threaded build's
fn set_filled(
    _py: Python<'_>,
    list: &Bound<'_, PyList>,
    _len: usize,
    filled: usize,
) -> PyResult<()> {
    // SAFETY: the GIL is held (`_py`); slots `0..filled` hold references (`fill`), and
    // `filled` is at most the list's allocated room.
    unsafe { (*list.as_ptr().cast::<ffi::PyVarObject>()).ob_size = ssize(filled) };
    Ok(())
}

/// A new list of `len` empty slots. On a free-threaded build a list's items array is
/// allocated with a header of CPython's own, so the list is made by `PyList_New`.
#[cfg(Py_GIL_DISABLED)]
fn unfilled_list(py: Python<'_>, len: usize) -> PyResult<Bound<'_, PyList>> {
    new_list(py, len)
}

/// Shortens the list made by [`unfilled_list`] to its first `filled` slots, if some of its
/// `len` were left empty.
#[cfg(Py_GIL_DISABLED)]
fn set_filled(py: Python<'_>, list: &Bound<'_, PyList>, len: usize, filled: usize) -> PyResult<()> {
    if filled < len {
        truncate(py, list, filled)?;
    }
    Ok(())
}

/// A new list of `len` empty slots, which the caller fills before any Python code sees it.
fn new_list(py: Python<'_>, len: usize) -> PyResult<Bound<'_, PyList>> {
    // SAFETY: the GIL is held; a null result (out of memory) becomes the pending error.
    let list = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyList_New(ssize(len)))? };
    // SAFETY: `PyList_New` returns a list.
    Ok(unsafe { list.cast_into_unchecked::<PyList>() })
}

/// Stores the objects of `ids` (`object` gives each one's, null for a subscriber that left)
/// into the new list `list` (with room for at least `ids.len()` items, none stored yet), from
/// its first slot, skipping the null ones; how many it stored.
#[inline]
fn fill(
    list: *mut ffi::PyObject,
    ids: &[SubscriberId],
    object: impl Fn(SubscriberId) -> *mut ffi::PyObject,
) -> usize {
    // The list's item array, read once: the stores below are to it, and the increments to
    // other objects, so nothing can move it (what `PyList_SET_ITEM` would read again for
    // each item, as an increment might have changed the list).
    // SAFETY: `list` is a new list (every caller's `unfilled_list`), not shared yet.
    let items = unsafe { (*list.cast::<ffi::PyListObject>()).ob_item };
    let mut filled = 0;
    for &id in ids {
        let object = object(id);
        if object.is_null() {
            continue;
        }
        // SAFETY: the GIL is held (every caller holds a `Python` token), the object is alive
        // (it was in the table while the caller's guard was pinned, see the module docs), and
        // slot `filled` of the new list's room is in range (`filled < ids.len()`) and holds
        // nothing yet; the store takes over the reference the increment made.
        unsafe {
            ffi::Py_INCREF(object);
            items.add(filled).write(object);
        }
        filled += 1;
    }
    filled
}

/// Shortens a list whose first `len` slots are filled and the rest empty.
#[cfg(Py_GIL_DISABLED)]
fn truncate(py: Python<'_>, list: &Bound<'_, PyList>, len: usize) -> PyResult<()> {
    // SAFETY: slicing deletion of the empty tail: `PyList_SetSlice` with NULL deletes the
    // items, and a NULL item is skipped by the list's decrement (`Py_XDECREF`).
    let status = unsafe {
        ffi::PyList_SetSlice(
            list.as_ptr(),
            ssize(len),
            ssize(list.len()),
            std::ptr::null_mut(),
        )
    };
    if status == 0 {
        Ok(())
    } else {
        Err(PyErr::fetch(py))
    }
}

/// Pauses the cyclic garbage collector while alive (if it was enabled), for code that makes
/// many containers in a row: a collection in the middle would run `gc.callbacks` and
/// finalizers, Python code in which a pending signal's handler runs and its exception (Ctrl-C's
/// `KeyboardInterrupt`) is lost as unraisable. Nothing in between may run Python code or
/// release the GIL, so no other thread can see it off, except pending signal handlers run on
/// purpose (`TopicStore`'s answers check for them while paused, so that none is left for the
/// first collection after): a handler that waits lets other threads run paused meanwhile.
pub(crate) struct GcPause(bool);

impl GcPause {
    pub(crate) fn new(_py: Python<'_>) -> Self {
        // SAFETY: the GIL is held (`_py`).
        GcPause(unsafe { ffi::PyGC_Disable() } == 1)
    }
}

impl Drop for GcPause {
    fn drop(&mut self) {
        if self.0 {
            // SAFETY: made with the GIL held by `new`, dropped in the same scope before the
            // GIL can have been released.
            unsafe { ffi::PyGC_Enable() };
        }
    }
}

/// A length or index as `Py_ssize_t` (a Rust allocation never exceeds `isize::MAX` bytes).
fn ssize(n: usize) -> ffi::Py_ssize_t {
    ffi::Py_ssize_t::try_from(n).expect("a length fits in Py_ssize_t")
}
