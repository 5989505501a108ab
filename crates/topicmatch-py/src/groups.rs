//! The groups side of `Matcher`: group names in, `lookup_groups`' pair out, and the groups of
//! a pickled matcher.

use parking_lot::RwLock;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use topicmatch_core::fields::Message;
use topicmatch_core::{Dialect, Engine, GroupMatch};

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
    let (plain, groups, members) = matcher
        .cost()
        .run(py, 1, || {
            let (mut plain, mut groups, mut members) = (Vec::new(), Vec::new(), Vec::new());
            engine
                .lookup_groups_into(topic, fields, &mut plain, &mut groups, &mut members)
                .map(|()| (plain, groups, members))
        })?
        .map_err(errors::to_py)?;
    gil::guarded(|| {
        let table = matcher.table();
        let plain = rows::list(py, table, &guard, &plain)?;
        let by_group = PyDict::new(py);
        for g in groups {
            let row = rows::list(py, table, &guard, &members[g.members.clone()])?;
            by_group.set_item(matcher.group_keys().key(py, &g)?, row)?;
        }
        PyTuple::new(py, [plain.into_any(), by_group.into_any()])
    })
}

/// The `(name, pattern)` tuple of each group `lookup_groups` has found, by the group's slot:
/// made once, then given to every result by one reference count increment, with no string
/// made or hashed again (threads read the table together; a miss writes it). An entry holds
/// while its group is held; a group that takes a slot given back replaces the entry (until
/// then it keeps the tuple of a group that left: as many entries as the most groups held at
/// once).
#[derive(Default)]
pub struct GroupKeys(RwLock<Vec<Option<Keyed>>>);

/// A group's id and its key.
type Keyed = (u64, Py<PyTuple>);

impl GroupKeys {
    /// Group `g`'s key.
    fn key<'py>(&self, py: Python<'py>, g: &GroupMatch) -> PyResult<Bound<'py, PyTuple>> {
        if let Some((id, key)) = self.0.read().get(g.slot).and_then(Option::as_ref) {
            if *id == g.id {
                return Ok(key.bind(py).clone());
            }
        }
        // Made with the lock released: no Python object is made or freed while it is held (a
        // collection then could run a finalizer that looks up groups on this matcher, and a
        // thread waiting for the lock holds the GIL).
        let key = PyTuple::new(
            py,
            [PyString::new(py, &g.name), PyString::new(py, &g.pattern)],
        )?;
        let replaced = {
            let mut keys = self.0.write();
            if keys.len() <= g.slot {
                keys.resize_with(g.slot + 1, || None);
            }
            keys[g.slot].replace((g.id, key.clone().unbind()))
        };
        drop(replaced);
        Ok(key)
    }
}

/// Every group subscription as `(id, group)`, ordered by id.
pub fn to_py<'py>(py: Python<'py>, engine: &Engine) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for (id, group) in engine.groups() {
        list.append((id, &*group))?;
    }
    Ok(list)
}
