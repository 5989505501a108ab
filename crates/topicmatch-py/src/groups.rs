//! The groups side of `Matcher`: group names in, `lookup_groups`' pair out, and the groups of
//! a pickled matcher.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use topicmatch_core::fields::Message;
use topicmatch_core::{Dialect, Engine};

use crate::matcher::PyMatcher;
use crate::{convert, errors, gil, rows};

/// A group name: a `str` (else `TypeError`) that is valid UTF-8 (else `InvalidPattern`, as
/// for the rest of a group name's rules, which are the engine's).
pub fn name(obj: &Bound<'_, PyAny>, dialect: Dialect) -> PyResult<String> {
    let s = obj.cast::<PyString>().map_err(|_| {
        PyTypeError::new_err(format!(
            "group must be str, not {}",
            convert::type_name(obj)
        ))
    })?;
    Ok(s.to_str()
        .map_err(|_| {
            errors::invalid_pattern(format!(
                "invalid {dialect} group name: not valid UTF-8 (it contains a lone surrogate)"
            ))
        })?
        .to_owned())
}

/// `Matcher.lookup_groups`: `(plain, {(group, pattern): members})`.
pub fn lookup_groups<'py>(
    py: Python<'py>,
    matcher: &PyMatcher,
    topic: &str,
    fields: &Message,
) -> PyResult<Bound<'py, PyTuple>> {
    let engine = matcher.engine();
    let guard = crossbeam_epoch::pin();
    let (plain, groups) = matcher
        .cost()
        .run(py, 1, || {
            let (mut plain, mut groups) = (Vec::new(), Vec::new());
            engine
                .lookup_groups_into(topic, fields, &mut plain, &mut groups)
                .map(|()| (plain, groups))
        })?
        .map_err(errors::to_py)?;
    gil::guarded(|| {
        let table = matcher.table();
        let plain = rows::list(py, table, &guard, &plain)?;
        let by_group = PyDict::new(py);
        for g in groups {
            let members = rows::list(py, table, &guard, &g.members)?;
            by_group.set_item((&*g.name, &*g.pattern), members)?;
        }
        PyTuple::new(py, [plain.into_any(), by_group.into_any()])
    })
}

/// Every group subscription as `(id, group)`, ordered by id.
pub fn to_py<'py>(py: Python<'py>, engine: &Engine) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for (id, group) in engine.groups() {
        list.append((id, &*group))?;
    }
    Ok(list)
}
