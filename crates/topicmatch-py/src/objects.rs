//! The Python object of every held subscriber, so results are built by reference counting
//! instead of re-creating an `int` or `str` per match.
//!
//! Each entry maps a subscriber id to the canonical object of its value (an exact `int` or
//! `str`, made once when the subscriber first subscribes). Subscriber ids are never reused,
//! so an entry can go stale (its subscriber left) but never wrong. Entries are added and
//! dropped only under [`Objects::write`], which callers hold across the engine operation, so
//! the cache holds exactly the subscribers the registry holds whenever no write is in flight.

use std::sync::{Mutex, MutexGuard, PoisonError, RwLock};

use pyo3::prelude::*;
use pyo3::types::PyList;
use rustc_hash::FxHashMap;
use topicmatch_core::{Engine, Subscriber, SubscriberId, SubscriptionId};

use crate::convert;

/// The subscribers' Python objects, keyed by subscriber id.
#[derive(Default)]
pub struct Objects {
    map: RwLock<FxHashMap<SubscriberId, Py<PyAny>>>,
    /// Serialises subscribe and unsubscribe with their cache updates.
    writes: Mutex<()>,
}

impl Objects {
    /// A cache of every subscriber `engine` holds (for a restored engine).
    pub fn of_engine(py: Python<'_>, engine: &Engine) -> PyResult<Self> {
        let objects = Objects::default();
        let subscriptions = engine.subscriptions();
        {
            let mut map = objects.map_mut();
            engine.with_registry(|registry| {
                for s in &subscriptions {
                    if let Some(id) = registry.id_of(&s.subscriber) {
                        if let std::collections::hash_map::Entry::Vacant(slot) = map.entry(id) {
                            slot.insert(convert::subscriber_to_py(py, &s.subscriber)?.unbind());
                        }
                    }
                }
                Ok::<(), PyErr>(())
            })?;
        }
        Ok(objects)
    }

    /// Holds the write lock: subscribes and unsubscribes run one at a time with their cache
    /// updates, so an update never lands after a later write has undone it.
    pub fn write(&self) -> MutexGuard<'_, ()> {
        self.writes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn map_mut(&self) -> std::sync::RwLockWriteGuard<'_, FxHashMap<SubscriberId, Py<PyAny>>> {
        self.map.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records `subscriber`'s object after it subscribed (call under [`Objects::write`]).
    pub fn subscribed(
        &self,
        py: Python<'_>,
        engine: &Engine,
        subscriber: &Subscriber,
    ) -> PyResult<()> {
        let Some(id) = engine.with_registry(|registry| registry.id_of(subscriber)) else {
            return Ok(());
        };
        if !self
            .map
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(&id)
        {
            let object = convert::subscriber_to_py(py, subscriber)?.unbind();
            self.map_mut().entry(id).or_insert(object);
        }
        Ok(())
    }

    /// Unsubscribes `id` from `engine`, dropping its subscriber's object if that subscriber
    /// held no other subscription (call under [`Objects::write`]).
    pub fn unsubscribe(&self, engine: &Engine, id: SubscriptionId) -> bool {
        let subscriber = engine.subscriber_of(id);
        if !engine.unsubscribe(id) {
            return false;
        }
        if let Some(sub) = subscriber {
            if engine.with_registry(|registry| registry.get(sub).is_none()) {
                // The lock guard is a temporary: the object is released after the lock.
                let dropped = self.map_mut().remove(&sub);
                drop(dropped);
            }
        }
        true
    }

    /// One list of subscribers per batch entry: entry `i` holds `ids[ends[i-1]..ends[i]]`.
    /// A subscriber that left meanwhile is skipped.
    pub fn lists<'py>(
        &self,
        py: Python<'py>,
        engine: &Engine,
        ids: &[SubscriberId],
        ends: &[usize],
    ) -> PyResult<Bound<'py, PyList>> {
        let mut lens = Vec::with_capacity(ends.len());
        let objects = self.resolve(py, engine, ids, ends, &mut lens)?;
        let mut objects = objects.into_iter();
        let rows = lens
            .into_iter()
            .map(|len| {
                let row = PyList::new(py, objects.by_ref().take(len))?;
                // Kept out of the cyclic GC while the batch is built, so the collections our own
                // allocations trigger do not traverse the rows made so far (at batch 1,000 that
                // was a tenth of the call). SAFETY: `row` is a list just made and referenced
                // only here; any GC object may be untracked, and a list freed untracked is
                // fine (its dealloc untracks only if tracked). It holds only `int`s and `str`s,
                // so it is in no reference cycle while untracked.
                unsafe { pyo3::ffi::PyObject_GC_UnTrack(row.as_ptr().cast()) };
                Ok(row)
            })
            .collect::<PyResult<Vec<_>>>()?;
        let out = PyList::new(py, &rows)?;
        for row in &rows {
            // SAFETY: each row was untracked above and nothing since could track it (only
            // `rows` and `out` reference it, and no Python code has seen `out`); tracking it
            // again restores the normal state before Python code can reach it.
            unsafe { pyo3::ffi::PyObject_GC_Track(row.as_ptr().cast()) };
        }
        Ok(out)
    }

    /// The subscribers with these ids as one list (see [`Objects::lists`]).
    pub fn list<'py>(
        &self,
        py: Python<'py>,
        engine: &Engine,
        ids: &[SubscriberId],
    ) -> PyResult<Bound<'py, PyList>> {
        let mut lens = Vec::with_capacity(1);
        PyList::new(py, self.resolve(py, engine, ids, &[ids.len()], &mut lens)?)
    }

    /// The objects of `ids` in order, and in `lens` how many each batch entry kept. Holds the
    /// cache's read lock once and only increments reference counts under it: creating the
    /// lists may run the garbage collector, and so a finalizer that subscribes or
    /// unsubscribes on this matcher, which must not find the lock held.
    fn resolve<'py>(
        &self,
        py: Python<'py>,
        engine: &Engine,
        ids: &[SubscriberId],
        ends: &[usize],
        lens: &mut Vec<usize>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let map = self.map.read().unwrap_or_else(PoisonError::into_inner);
        let mut out = Vec::with_capacity(ids.len());
        let mut start = 0;
        for &end in ends {
            let before = out.len();
            for id in &ids[start..end] {
                push_object(py, &map, engine, *id, &mut out)?;
            }
            lens.push(out.len() - before);
            start = end;
        }
        Ok(out)
    }
}

/// Appends subscriber `id`'s object: the cached one, or (an id whose subscriber was
/// subscribed while the cache was not yet updated) a new one from the registry; nothing if
/// the subscriber has left.
fn push_object<'py>(
    py: Python<'py>,
    map: &FxHashMap<SubscriberId, Py<PyAny>>,
    engine: &Engine,
    id: SubscriberId,
    row: &mut Vec<Bound<'py, PyAny>>,
) -> PyResult<()> {
    if let Some(object) = map.get(&id) {
        row.push(object.bind(py).clone());
        return Ok(());
    }
    if let Some(object) = engine.with_registry(|registry| {
        registry
            .get(id)
            .map(|s| convert::subscriber_to_py(py, s))
            .transpose()
    })? {
        row.push(object);
    }
    Ok(())
}
