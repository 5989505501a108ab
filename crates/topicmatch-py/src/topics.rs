//! The topics of a batch, borrowed as `&str` for use without the GIL.
//!
//! An exact `list` is snapshotted into a tuple (one C call that increments every item's
//! reference count), an exact `tuple` is held as it is: either way the strings stay alive,
//! whatever another thread does to the caller's list meanwhile, and each topic is borrowed
//! straight from its `str` (CPython keeps a `str`'s UTF-8 form as long as the object). Any
//! other iterable goes through the iterator protocol, one held `str` per item.

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyList, PyString, PyTuple};
use topicmatch_core::Dialect;

use crate::errors;

/// Strong references to a batch's topics.
pub enum Held<'py> {
    /// An exact list's snapshot, or an exact tuple.
    Tuple(Bound<'py, PyTuple>),
    /// The items of any other iterable, each checked as it was read.
    Backed(Vec<PyBackedStr>),
}

impl<'py> Held<'py> {
    /// Holds the topics of `obj`: an iterable of `str` (a single `str` is a `TypeError`).
    /// Items of an iterable other than an exact list or tuple are checked as they are read,
    /// so the errors come in order: those of the first bad item, or the iterator's own.
    pub fn new(obj: &Bound<'py, PyAny>, dialect: Dialect) -> PyResult<Self> {
        if obj.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(
                "topics must be an iterable of str, not a single str",
            ));
        }
        // Exact lists and tuples are read directly; anything else (subclasses included, which
        // may override `__iter__`) through the iterator protocol.
        if let Ok(list) = obj.cast_exact::<PyList>() {
            return Ok(Held::Tuple(list.to_tuple()));
        }
        if let Ok(tuple) = obj.cast_exact::<PyTuple>() {
            return Ok(Held::Tuple(tuple.clone()));
        }
        // A hint only: `__len__` may lie, so a huge one reserves no more than a batch.
        let mut out = Vec::with_capacity(obj.len().unwrap_or(0).min(1 << 16));
        for item in obj.try_iter()? {
            let s = item?
                .cast_into::<PyString>()
                .map_err(|e| not_str(&e.into_inner()))?;
            out.push(PyBackedStr::try_from(s).map_err(|_| lone_surrogate_topic(dialect))?);
        }
        Ok(Held::Backed(out))
    }

    /// Every topic as `&str`, borrowed from the held strings; for a tuple, the errors of its
    /// first item that is not a `str` of valid UTF-8.
    pub fn strs(&self, dialect: Dialect) -> PyResult<Vec<&str>> {
        match self {
            Held::Backed(held) => Ok(held.iter().map(|t| &**t).collect()),
            Held::Tuple(tuple) => {
                let mut out = Vec::with_capacity(tuple.len());
                for item in tuple.iter_borrowed() {
                    let Ok(s) = item.cast::<PyString>() else {
                        return Err(not_str(&item));
                    };
                    let mut len: ffi::Py_ssize_t = 0;
                    // SAFETY: the GIL is held and `s` is a `str`. On success the pointer is
                    // the string's UTF-8 form, `len` bytes long, which CPython keeps until the
                    // string dies; the tuple holds the string at least as long as `self`
                    // lives, which bounds the returned borrows.
                    let data = unsafe { ffi::PyUnicode_AsUTF8AndSize(s.as_ptr(), &raw mut len) };
                    if data.is_null() {
                        // A lone surrogate: drop the pending `UnicodeEncodeError`.
                        drop(PyErr::fetch(tuple.py()));
                        return Err(lone_surrogate_topic(dialect));
                    }
                    // SAFETY: on success `data` points at `len` (non-negative) bytes of valid
                    // UTF-8 that outlive `self` (see above).
                    out.push(unsafe {
                        std::str::from_utf8_unchecked(std::slice::from_raw_parts(
                            data.cast::<u8>(),
                            usize::try_from(len).unwrap_or(0),
                        ))
                    });
                }
                Ok(out)
            }
        }
    }
}

fn not_str(obj: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!(
        "topic must be str, not {}",
        crate::convert::type_name(obj)
    ))
}

/// A topic that is not valid UTF-8 (a lone surrogate).
pub fn lone_surrogate_topic(dialect: Dialect) -> PyErr {
    errors::invalid_topic(format!(
        "invalid {dialect} topic: not valid UTF-8 (it contains a lone surrogate)"
    ))
}
