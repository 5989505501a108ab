//! `lookup_many`'s result: one list of subscriber objects per topic, built with the GIL held
//! for as short a time as possible.
//!
//! The lookups AND the translation of subscriber ids to their cached objects run with the
//! GIL released ([`Objects::resolve_detached`] reads the cache under its own lock and keeps
//! raw object pointers). What is left under the GIL is the irreducible part: one
//! `PyList_New` per row, one reference count increment and one store per subscriber, with
//! the cyclic GC paused so no collection runs while the rows are made.
//!
//! Why the pointers stay valid: the thread pins a `crossbeam-epoch` guard before it resolves
//! and keeps it until every pointer has been increfed. The cache never releases an object
//! directly when a subscriber leaves: it removes the object under its write lock and defers
//! the release to the epoch collector ([`Objects::unsubscribe`]), which runs it only after
//! every thread pinned at that moment has unpinned. So an object read from the cache while
//! pinned is alive until that guard goes, and the strong references the rows take keep it
//! alive after.

use crossbeam_epoch::Guard;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyList;
use topicmatch_core::Subscriber;

use crate::convert;

/// A batch's subscribers as borrowed object pointers, resolved without the GIL.
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
// and the objects are only touched by `Resolved::lists`, with the GIL held. Moving the
// vector between threads is no different from moving the integers it holds.
unsafe impl Send for Resolved {}

impl Resolved {
    /// An empty batch with room for `ids` subscribers and `rows` rows.
    pub fn with_capacity(ids: usize, rows: usize) -> Self {
        Resolved {
            objects: Vec::with_capacity(ids),
            late: Vec::new(),
            ends: Vec::with_capacity(rows),
        }
    }

    /// The rows as a list of lists. `_pinned` must be the guard that was pinned (on this
    /// thread) before the objects were resolved, and still is: it keeps them alive.
    pub fn lists<'py>(&self, py: Python<'py>, _pinned: &Guard) -> PyResult<Bound<'py, PyList>> {
        let _paused = GcPause::new(py);
        // SAFETY: the GIL is held; a null result (out of memory) becomes the pending error.
        let out =
            unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyList_New(len(self.ends.len())))? };
        // SAFETY: `PyList_New` returns a list.
        let out = unsafe { out.cast_into_unchecked::<PyList>() };
        let mut late = self.late.iter();
        let mut start = 0;
        for (i, &end) in self.ends.iter().enumerate() {
            let row = &self.objects[start..end];
            // SAFETY: the GIL is held.
            let list = unsafe { ffi::PyList_New(len(row.len())) };
            if list.is_null() {
                return Err(PyErr::fetch(py));
            }
            // SAFETY: `out` is a new list of `ends.len()` slots and slot `i` is still empty;
            // the store steals the new reference to `list`. From here `out` owns the row, so
            // an early return frees it (a list frees its empty slots as `NULL`s).
            unsafe { ffi::PyList_SET_ITEM(out.as_ptr(), len(i), list) };
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
        Ok(out)
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
