//! `topicmatch.FieldMatcher`: content-based routing over the core's counting index; a frozen
//! class, safe to share between threads.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use topicmatch_core::fields::{FieldMatcher, FieldSubscription, Message};
use topicmatch_core::SubscriberId;

use crate::{convert, criteria, errors, gil, rows};

/// Matches messages' fields against subscriptions' criteria.
#[pyclass(frozen, name = "FieldMatcher", module = "topicmatch._native")]
pub struct PyFieldMatcher {
    matcher: Arc<FieldMatcher>,
    /// What a lookup costs, to decide whether to release the GIL.
    cost: gil::Cost,
}

impl PyFieldMatcher {
    /// The subscribers of `ids`, which a lookup found while the caller's epoch pin was held
    /// (so none has changed owner, see the core's `Registry`).
    fn subscribers<'py>(
        &self,
        py: Python<'py>,
        ids: &[SubscriberId],
    ) -> PyResult<Bound<'py, PyList>> {
        // The list is made after the registry lock is released: making it may run the garbage
        // collector, and so a finalizer that subscribes or unsubscribes here.
        let objects = self
            .matcher
            .with_registry(|registry| convert::subscriber_objects(py, registry, ids))?;
        PyList::new(py, objects)
    }
}

#[pymethods]
impl PyFieldMatcher {
    #[new]
    fn new() -> Self {
        PyFieldMatcher {
            matcher: Arc::new(FieldMatcher::new()),
            cost: gil::Cost::default(),
        }
    }

    /// Subscribes `subscriber` to messages meeting `criteria` in `mode` ("all", "any" or an
    /// int k: at least k criteria); returns the subscription id (the same id again for the
    /// same criteria, mode and subscriber).
    #[pyo3(signature = (criteria, subscriber, mode = None))]
    fn subscribe(
        &self,
        criteria: &Bound<'_, PyAny>,
        subscriber: &Bound<'_, PyAny>,
        mode: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let all = pyo3::types::PyString::new(criteria.py(), "all").into_any();
        let filter = criteria::filter(criteria, mode.unwrap_or(&all))?;
        let subscriber = convert::subscriber(subscriber)?;
        gil::guarded(|| Ok(self.matcher.subscribe(&filter, &subscriber)))
    }

    /// Removes a subscription by id: `True` if it existed, else `False`.
    fn unsubscribe(&self, subscription_id: u64) -> PyResult<bool> {
        gil::guarded(|| Ok(self.matcher.unsubscribe(subscription_id)))
    }

    /// The distinct subscribers whose criteria `message` meets.
    fn lookup<'py>(
        &self,
        py: Python<'py>,
        message: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let message = criteria::message(message)?;
        let matcher = &self.matcher;
        let _pinned = crossbeam_epoch::pin();
        let ids = self.cost.run(py, 1, || {
            let mut ids = Vec::new();
            matcher.lookup_into(&message, &mut ids);
            ids
        })?;
        self.subscribers(py, &ids)
    }

    /// `lookup` for each message, in one call; the matching runs with the GIL released when
    /// it is long (the rule of `Matcher.lookup_many`). A long batch runs in parts of about 50
    /// ms, and pending signal handlers run between them: Ctrl-C stops it.
    fn lookup_many<'py>(
        &self,
        py: Python<'py>,
        messages: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let messages: Vec<Message> = criteria::messages(messages)?;
        let matcher = &self.matcher;
        let _pinned = crossbeam_epoch::pin();
        let out = PyList::empty(py);
        let mut done = 0;
        while done < messages.len() {
            // Sized by what was measured so far, this call's parts included.
            let size = self
                .cost
                .topics_for_ns(gil::PART_NS)
                .min(messages.len() - done);
            let part = &messages[done..done + size];
            let (ids, ends) = self.cost.run(py, part.len(), || {
                let mut ids = Vec::new();
                let mut ends = Vec::with_capacity(part.len());
                for message in part {
                    matcher.lookup_into(message, &mut ids);
                    ends.push(ids.len());
                }
                (ids, ends)
            })?;
            {
                // Rows of ints and strs run no Python code: no collection either, so a signal
                // waits for the check below.
                let _paused = rows::GcPause::new(py);
                let mut start = 0;
                for end in ends {
                    out.append(self.subscribers(py, &ids[start..end])?)?;
                    start = end;
                }
            }
            done += part.len();
            if done < messages.len() {
                // A handler's exception (Ctrl-C's) ends the batch; the rows made are dropped.
                py.check_signals()?;
            }
        }
        Ok(out)
    }

    /// `{subscriber: number of criteria met}` for every subscriber with at least one met (the
    /// largest number over its subscriptions).
    fn hits<'py>(
        &self,
        py: Python<'py>,
        message: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let message = criteria::message(message)?;
        let matcher = &self.matcher;
        let _pinned = crossbeam_epoch::pin();
        let hits = self.cost.run(py, 1, || matcher.hits_ids(&message))?;
        self.matcher.with_registry(|registry| {
            let d = PyDict::new(py);
            for (id, n) in hits {
                if let Some(s) = registry.get(id) {
                    d.set_item(convert::subscriber_to_py(py, s)?, n)?;
                }
            }
            Ok(d)
        })
    }

    /// Every subscription as `(id, criteria, mode, subscriber)`, ordered by id.
    fn subscriptions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for s in self.matcher.subscriptions() {
            list.append((
                s.id,
                criteria::criteria_to_py(py, &s.filter)?,
                criteria::mode_to_py(py, &s.filter)?,
                convert::subscriber_to_py(py, &s.subscriber)?,
            ))?;
        }
        Ok(list)
    }

    fn __len__(&self) -> usize {
        self.matcher.len()
    }

    fn __repr__(&self) -> String {
        format!("FieldMatcher(subscriptions={})", self.matcher.len())
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let this = slf.get();
        let restore = py
            .import("topicmatch._native")?
            .getattr("_restore_field_matcher")?;
        let args = (this.subscriptions(py)?, this.matcher.next_id()).into_pyobject(py)?;
        Ok((restore, args))
    }
}

/// One pickled subscription: `(id, criteria, mode, subscriber)`.
type Pickled<'py> = (u64, Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>);

/// Rebuilds a pickled field matcher, keeping every subscription id.
#[pyfunction]
#[pyo3(name = "_restore_field_matcher")]
pub fn restore_field_matcher(
    subscriptions: Vec<Pickled<'_>>,
    next_id: u64,
) -> PyResult<PyFieldMatcher> {
    let subs = subscriptions
        .into_iter()
        .map(|(id, crit, mode, sub)| {
            Ok(FieldSubscription {
                id,
                filter: Arc::new(criteria::filter(&crit, &mode)?),
                subscriber: convert::subscriber(&sub)?,
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let matcher = FieldMatcher::restore(&subs, next_id).map_err(errors::to_py)?;
    Ok(PyFieldMatcher {
        matcher: Arc::new(matcher),
        cost: gil::Cost::default(),
    })
}
