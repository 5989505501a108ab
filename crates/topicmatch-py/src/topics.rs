//! The topics of a batch, copied out of their Python strings for use without the GIL.
//!
//! The text of every topic goes into one Rust buffer: topics are short, so copying them costs
//! less than holding a reference to each (an increment now, a decrement later, and for a
//! list a snapshot so that another thread emptying it cannot free a string under us), and
//! nothing Python owns is touched once the GIL is released.

use std::ops::Range;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::critical_section::with_critical_section;
use pyo3::types::{PyList, PyString, PyTuple};
use topicmatch_core::Dialect;

use crate::errors;

/// A batch's topics, one after the other in one buffer.
#[derive(Default)]
pub struct Topics {
    text: String,
    /// Topic `i` is `text[ends[i-1]..ends[i]]`.
    ends: Vec<usize>,
}

/// `e`, with a pointer to `lookup_arrow` when `obj` is an Arrow array (whose items are Arrow
/// scalars, not `str`).
fn arrow_hint(obj: &Bound<'_, PyAny>, e: PyErr) -> PyErr {
    let py = obj.py();
    let arrow = ["__arrow_c_array__", "__arrow_c_stream__"]
        .iter()
        .any(|name| obj.hasattr(*name).unwrap_or(false));
    if arrow && e.is_instance_of::<PyTypeError>(py) {
        PyTypeError::new_err(format!(
            "{}; an Arrow array goes to lookup_arrow, which reads it without a Python object \
             per topic",
            e.value(py)
        ))
    } else {
        e
    }
}

impl Topics {
    /// Copies the topics of `obj`: an iterable of `str` (a single `str` is a `TypeError`).
    /// Items are checked as they are read, so the errors come in order: those of the first
    /// bad item, or the iterator's own.
    pub fn new(obj: &Bound<'_, PyAny>, dialect: Dialect) -> PyResult<Self> {
        if obj.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(
                "topics must be an iterable of str, not a single str",
            ));
        }
        let mut out = Topics::default();
        // Exact lists and tuples are read directly; anything else (subclasses included, which
        // may override `__iter__`) through the iterator protocol.
        if let Ok(list) = obj.cast_exact::<PyList>() {
            // One snapshot of a list that another thread may change meanwhile: the GIL makes
            // the read atomic, and on a free-threaded build the list's critical section does
            // (reading a topic calls no Python code, so nothing suspends it).
            with_critical_section(list.as_any(), || {
                out.reserve(list.len());
                list.iter().try_for_each(|item| out.push(&item, dialect))
            })?;
        } else if let Ok(tuple) = obj.cast_exact::<PyTuple>() {
            out.reserve(tuple.len());
            for item in tuple.iter_borrowed() {
                out.push(&item, dialect)?;
            }
        } else {
            // A hint only: `__len__` may lie, so a huge one reserves no more than a batch.
            out.reserve(obj.len().unwrap_or(0).min(1 << 16));
            for item in obj.try_iter()? {
                out.push(&item?, dialect).map_err(|e| arrow_hint(obj, e))?;
            }
        }
        Ok(out)
    }

    fn reserve(&mut self, topics: usize) {
        self.ends.reserve_exact(topics);
        self.text.reserve(topics * 16);
    }

    /// Appends one topic: a `str` (else `TypeError`) of valid UTF-8 (else `InvalidTopic`).
    fn push(&mut self, item: &Bound<'_, PyAny>, dialect: Dialect) -> PyResult<()> {
        let s = item.cast::<PyString>().map_err(|_| {
            PyTypeError::new_err(format!(
                "topic must be str, not {}",
                crate::convert::type_name(item)
            ))
        })?;
        self.text.push_str(
            s.to_str()
                .map_err(|_| errors::lone_surrogate_topic(s, dialect))?,
        );
        self.ends.push(self.text.len());
        Ok(())
    }

    /// How many topics.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// The topics in `range`, in order.
    pub fn strs(&self, range: Range<usize>) -> Vec<&str> {
        let mut start = match range.start {
            0 => 0,
            i => self.ends[i - 1],
        };
        self.ends[range]
            .iter()
            .map(|&end| {
                let topic = &self.text[start..end];
                start = end;
                topic
            })
            .collect()
    }
}
