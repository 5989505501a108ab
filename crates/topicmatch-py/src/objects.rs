//! The Python object of every held subscriber, so results are built by reference counting
//! instead of re-creating an `int` or `str` per match.
//!
//! Each entry maps a subscriber id to the canonical object of its value (an exact `int` or
//! `str`, made once when the subscriber first subscribes). Subscriber ids are never reused,
//! so an entry can go stale (its subscriber left) but never wrong. Entries are added and
//! dropped only under [`Objects::write`], which callers hold across the engine operation, so
//! the cache holds exactly the subscribers the registry holds whenever no write is in flight.

use std::ops::Range;
use std::sync::{Mutex, MutexGuard, PoisonError, RwLock};

use pyo3::prelude::*;
use pyo3::types::PyList;
use rustc_hash::FxHashMap;
use topicmatch_core::{Engine, Subscriber, SubscriberId, SubscriptionId};

use crate::rows::{self, Resolved};
use crate::{convert, errors, gil};

/// Topics per GIL release in [`Objects::batch`]: big, because every release is a hand-over
/// to the other threads waiting for the GIL (512 measured worse than one release per batch,
/// with two threads at batches of 1,000 and 10,000); a bound only on the id buffers.
const CHUNK: usize = 1 << 16;

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
                // The lock guard is a temporary: the object is released after the lock, and
                // only once no batch that may have read it from the cache is still pinned
                // (see `rows`). Run later, maybe on a thread without the GIL, where PyO3
                // queues the decrement for the next thread that takes it.
                if let Some(object) = self.map_mut().remove(&sub) {
                    let guard = crossbeam_epoch::pin();
                    guard.defer(move || drop(object));
                    // Hands it to the global queue now, or it would wait in this thread's
                    // bag for more garbage.
                    guard.flush();
                }
            }
        }
        true
    }

    /// One list of subscribers per topic of a batch of `topics`: `lookup(range, ids, ends)`
    /// appends the subscriber ids of the topics in `range` and one row end per topic. The
    /// batch goes in chunks of [`CHUNK`] topics: each is looked up and resolved to objects
    /// with the GIL released, then its rows are built with it held. A subscriber that left
    /// meanwhile is skipped.
    pub fn batch<'py, F>(
        &self,
        py: Python<'py>,
        engine: &Engine,
        topics: usize,
        lookup: F,
    ) -> PyResult<Bound<'py, PyList>>
    where
        F: Fn(Range<usize>, &mut Vec<SubscriberId>, &mut Vec<usize>) -> topicmatch_core::Result<()>
            + Sync,
    {
        // Pinned before any object is read from the cache and kept until the rows hold their
        // own references: see `rows` for why that keeps every object alive.
        let pinned = crossbeam_epoch::pin();
        let out = rows::Batch::new(py, topics)?;
        // Sized once for the largest chunk (a few matches per topic is typical), reused.
        let most = topics.min(CHUNK);
        let (mut ids, mut ends) = (Vec::with_capacity(most * 4), Vec::with_capacity(most));
        let mut resolved = Resolved::default();
        for start in (0..topics).step_by(CHUNK) {
            let range = start..topics.min(start + CHUNK);
            resolved = gil::detach(py, || {
                ids.clear();
                ends.clear();
                lookup(range.clone(), &mut ids, &mut ends)?;
                self.resolve_detached(engine, &ids, &ends, &mut resolved);
                Ok(resolved)
            })?
            .map_err(errors::to_py)?;
            gil::guarded(|| out.fill(py, range, &resolved, &pinned))?;
        }
        Ok(out.finish())
    }

    /// Resolves a chunk's ids into `out` (emptied first): their objects, read from the cache
    /// under its read lock, without the GIL (see [`Objects::batch`]); a subscriber not yet
    /// cached is read from the registry.
    fn resolve_detached(
        &self,
        engine: &Engine,
        ids: &[SubscriberId],
        ends: &[usize],
        out: &mut Resolved,
    ) {
        out.clear();
        out.objects.reserve(ids.len());
        out.ends.reserve(ends.len());
        let map = self.map.read().unwrap_or_else(PoisonError::into_inner);
        let mut start = 0;
        for &end in ends {
            for id in &ids[start..end] {
                if let Some(object) = map.get(id) {
                    out.objects.push(object.as_ptr());
                } else if let Some(value) = engine.with_registry(|r| r.get(*id).cloned()) {
                    out.objects.push(std::ptr::null_mut());
                    out.late.push(value);
                }
            }
            out.ends.push(out.objects.len());
            start = end;
        }
    }

    /// The subscribers with these ids as one list (see [`Objects::resolve`]).
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
