//! `lookup_many`'s result: one list of subscriber objects per topic, built with the GIL held
//! for as short a time as possible.
//!
//! The lookups AND the translation of subscriber ids to their cached objects run with the
//! GIL released (`Objects::batch` reads the cache under its own lock and keeps raw object
//! pointers), a chunk of topics at a time. What is left under the GIL is the irreducible part: one
//! `PyList_New` per row, one reference count increment and one store per subscriber, with
//! the cyclic GC paused so no collection runs while the rows are made.
//!
//! Why the pointers stay valid: the thread pins a `crossbeam-epoch` guard before it resolves
//! and keeps it until every pointer has been increfed. The cache never releases an object
//! directly when a subscriber leaves: it removes the object under its write lock and defers
//! the release to the epoch collector (`Objects::unsubscribe`), which runs it only after
//! every thread pinned at that moment has unpinned. So an object read from the cache while
//! pinned is alive until that guard goes, and the strong references the rows take keep it
//! alive after.

use std::ops::Range;

use crossbeam_epoch::Guard;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyList;
use topicmatch_core::Subscriber;

use crate::convert;

/// A chunk's subscribers as borrowed object pointers, resolved without the GIL.
#[derive(Default)]
pub struct Resolved {
    /// Each kept subscriber's cached object, row after row; null: a subscriber not yet in the
    /// cache (its subscribe is in flight), whose value is the next one of `late`.
    pub(crate) objects: Vec<*mut ffi::PyObject>,
    /// The values of the subscribers not yet cached, in order.
    pub(crate) late: Vec<Subscriber>,
    /// Row `i` holds `objects[ends[i-1]..ends[i]]`.
    pub(crate) ends: Vec<usize>,
}

// SAFETY: the pointers are only read (never dereferenced) off the thread that resolved them,
// and the objects are only touched by `Batch::fill`, with the GIL held. Moving the vector
// between threads is no different from moving the integers it holds.
unsafe impl Send for Resolved {}

impl Resolved {
    /// Empties it, keeping the room.
    pub fn clear(&mut self) {
        self.objects.clear();
        self.late.clear();
        self.ends.clear();
    }
}

/// The result list of a batch, filled chunk by chunk. Kept out of the cyclic GC until
/// [`Batch::finish`]: until then some of its slots are still empty (`NULL`), and a list the
/// collector tracks can be reached from Python code (`gc.get_objects()`) while the GIL is
/// released between chunks.
pub struct Batch<'py>(Bound<'py, PyList>);

impl<'py> Batch<'py> {
    /// An empty result of `rows` slots.
    pub fn new(py: Python<'py>, rows: usize) -> PyResult<Self> {
        // SAFETY: the GIL is held; a null result (out of memory) becomes the pending error.
        let list = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyList_New(len(rows)))? };
        // SAFETY: the GIL is held and the list is new and tracked (`PyList_New` tracks it);
        // a list is freed the same whether tracked or not (its dealloc untracks only if
        // tracked).
        unsafe { ffi::PyObject_GC_UnTrack(list.as_ptr().cast()) };
        // SAFETY: `PyList_New` returns a list.
        Ok(Batch(unsafe { list.cast_into_unchecked::<PyList>() }))
    }

    /// Builds the rows of the topics in `range` from `chunk`. `_pinned` must be the guard that
    /// was pinned (on this thread) before the chunk's objects were resolved, and still is:
    /// it keeps them alive.
    pub fn fill(
        &self,
        py: Python<'py>,
        range: Range<usize>,
        chunk: &Resolved,
        _pinned: &Guard,
    ) -> PyResult<()> {
        if range.len() != chunk.ends.len() || range.end > self.0.len() {
            return Err(crate::errors::internal(format!(
                "internal error: {} rows for topics {range:?} of {}",
                chunk.ends.len(),
                self.0.len()
            )));
        }
        let _paused = GcPause::new(py);
        let mut late = chunk.late.iter();
        let mut start = 0;
        for (i, &end) in range.zip(&chunk.ends) {
            let row = &chunk.objects[start..end];
            // SAFETY: the GIL is held.
            let list = unsafe { ffi::PyList_New(len(row.len())) };
            if list.is_null() {
                return Err(PyErr::fetch(py));
            }
            // SAFETY: slot `i` is in range (checked above) and still empty (each topic's slot
            // is filled once); the store steals the new reference to `list`. From here the
            // result owns the row, so an early return frees it (a list frees its empty slots
            // as `NULL`s).
            unsafe { ffi::PyList_SET_ITEM(self.0.as_ptr(), len(i), list) };
            for (j, &object) in row.iter().enumerate() {
                let object = if object.is_null() {
                    let value = late.next().expect("one late value per null pointer");
                    convert::subscriber_to_py(py, value)?.into_ptr()
                } else {
                    // SAFETY: the GIL is held, and the object is alive: it was in the cache
                    // while `_pinned` was pinned, and a cached object is released only
                    // through the epoch collector, after this guard unpins.
                    unsafe { ffi::Py_INCREF(object) };
                    object
                };
                // SAFETY: `list` is a new list of `row.len()` slots, `j` is one of them and
                // still empty; the store steals the reference just made.
                unsafe { ffi::PyList_SET_ITEM(list, len(j), object) };
            }
            start = end;
        }
        Ok(())
    }

    /// The filled result, back in the cyclic GC.
    pub fn finish(self) -> Bound<'py, PyList> {
        // SAFETY: the GIL is held; the list was untracked by `new` and nothing since could
        // track it (only this struct references it, and no Python code has seen it). Every
        // slot is filled: `Objects::batch` calls `fill` for every chunk of the batch.
        unsafe { ffi::PyObject_GC_Track(self.0.as_ptr().cast()) };
        self.0
    }
}

/// Pauses the cyclic garbage collector while alive (if it was enabled).
///
/// Making the rows allocates one container each, and every few hundred allocations start a
/// collection that would traverse the rows made so far (and could run finalizers, that is
/// arbitrary Python code, in the middle of a batch). Nothing in between runs Python code or
/// releases the GIL, so no other thread can see the collector off; it is back on, and counts
/// every row made, before the result is returned.
struct GcPause(bool);

impl GcPause {
    fn new(_py: Python<'_>) -> Self {
        // SAFETY: the GIL is held (`_py`).
        GcPause(unsafe { ffi::PyGC_Disable() } == 1)
    }
}

impl Drop for GcPause {
    fn drop(&mut self) {
        if self.0 {
            // SAFETY: made with the GIL held by `new`, and dropped in the same scope, before
            // the GIL can have been released.
            unsafe { ffi::PyGC_Enable() };
        }
    }
}

/// A length or index as `Py_ssize_t` (a Rust allocation never exceeds `isize::MAX` bytes).
fn len(n: usize) -> ffi::Py_ssize_t {
    ffi::Py_ssize_t::try_from(n).expect("a length fits in Py_ssize_t")
}
