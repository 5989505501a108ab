//! The groups side of `Matcher`: group names in, `lookup_groups`' pair out, and the groups of
//! a pickled matcher.

use std::cell::Cell;

use parking_lot::RwLock;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use topicmatch_core::fields::Message;
use topicmatch_core::{Dialect, Engine, GroupMatch, SubscriberId};

use crate::batch::{with_kept, Kept, KEPT_IDS};
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
    with_kept(&FOUND, |found| {
        let Found {
            plain,
            groups,
            members,
            keys,
        } = found;
        matcher
            .cost()
            .run(py, 1, || {
                engine.lookup_groups_into(topic, fields, plain, groups, members)
            })?
            .map_err(errors::to_py)?;
        gil::guarded(|| {
            // A list per group (thousands, for a topic that many groups match): no collection
            // runs in the middle (no Python code runs here, as `GcPause` requires: the keys
            // are tuples of `str`, hashed and compared natively).
            let _paused = rows::GcPause::new(py);
            matcher.group_keys().keys(py, engine, groups, keys)?;
            let table = matcher.table();
            let plain = rows::list(py, table, &guard, plain)?;
            let by_group = PyDict::new(py);
            for (g, key) in groups.iter().zip(keys.iter()) {
                // None: the group left since the lookup, as if before it.
                if let Some(key) = key {
                    let row = rows::list(py, table, &guard, &members[g.members.clone()])?;
                    by_group.set_item(key.bind(py), row)?;
                }
            }
            PyTuple::new(py, [plain.into_any(), by_group.into_any()])
        })
    })
}

/// What a `lookup_groups` call finds: its buffers, kept per thread for the next call (made
/// and freed by each call, they would cost a sixth of a call of one group).
#[derive(Default)]
struct Found {
    plain: Vec<SubscriberId>,
    groups: Vec<GroupMatch>,
    members: Vec<SubscriberId>,
    /// Each group's key, `None` for a group gone since the lookup ([`GroupKeys::keys`]).
    keys: Vec<Option<Py<PyTuple>>>,
}

/// The most groups a kept [`Found`] has room for (512 KiB, and 128 KiB of keys); its ids are
/// kept up to [`KEPT_IDS`], as a batch's are.
const KEPT_GROUPS: usize = 1 << 14;

thread_local! {
    static FOUND: Cell<Found> = const {
        Cell::new(Found {
            plain: Vec::new(),
            groups: Vec::new(),
            members: Vec::new(),
            keys: Vec::new(),
        })
    };
}

impl Kept for Found {
    fn clear(&mut self) {
        self.plain.clear();
        self.groups.clear();
        self.members.clear();
        self.keys.clear();
    }

    fn small(&self) -> bool {
        self.plain.capacity() <= KEPT_IDS
            && self.members.capacity() <= KEPT_IDS
            && self.groups.capacity() <= KEPT_GROUPS
            && self.keys.capacity() <= KEPT_GROUPS
    }
}

/// The `(name, pattern)` tuple of each group `lookup_groups` has found, by the group's slot:
/// made once, then given to every result by one reference count increment, with no string
/// made or hashed again (threads read the table together, once a call; a miss writes it). An
/// entry holds while its group is held; a group that takes a slot given back replaces the
/// entry (until then it keeps the tuple of a group that left: as many entries as the most
/// groups held at once).
#[derive(Default)]
pub struct GroupKeys(RwLock<Vec<Option<Keyed>>>);

/// A group's id and its key.
type Keyed = (u64, Py<PyTuple>);

impl GroupKeys {
    /// Pushes to `keys` the key of each of `groups`, in order: `None` for a group gone since
    /// the lookup that found it.
    fn keys(
        &self,
        py: Python<'_>,
        engine: &Engine,
        groups: &[GroupMatch],
        keys: &mut Vec<Option<Py<PyTuple>>>,
    ) -> PyResult<()> {
        let mut missing = false;
        {
            // One read for the call; under it only reference count increments, no object
            // made or freed (a thread that waits for the lock holds the GIL).
            let table = self.0.read();
            keys.extend(groups.iter().map(|g| {
                let key = table
                    .get(g.slot)
                    .and_then(Option::as_ref)
                    .filter(|(id, _)| *id == g.id)
                    .map(|(_, key)| key.clone_ref(py));
                missing |= key.is_none();
                key
            }));
        }
        if missing {
            for (g, key) in groups.iter().zip(keys.iter_mut()) {
                if key.is_none() {
                    *key = self.make(py, engine, g)?;
                }
            }
        }
        Ok(())
    }

    /// Makes group `g`'s key and keeps it in its slot; `None` if the group is gone.
    fn make(
        &self,
        py: Python<'_>,
        engine: &Engine,
        g: &GroupMatch,
    ) -> PyResult<Option<Py<PyTuple>>> {
        let Some((name, pattern)) = engine.group_key(g.id) else {
            return Ok(None);
        };
        // Made with the lock released (as above).
        let key =
            PyTuple::new(py, [PyString::new(py, &name), PyString::new(py, &pattern)])?.unbind();
        let replaced = {
            let mut table = self.0.write();
            if table.len() <= g.slot {
                table.resize_with(g.slot + 1, || None);
            }
            table[g.slot].replace((g.id, key.clone_ref(py)))
        };
        drop(replaced);
        Ok(Some(key))
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
