//! `topicmatch.FieldMatcher`: content-based routing over the core's counting index; a frozen
//! class, safe to share between threads.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use topicmatch_core::fields::{FieldMatcher, FieldSubscription, Message};

use crate::objects::ObjectTable;
use crate::{batch, convert, criteria, errors, gil, rows};

/// Matches messages' fields against subscriptions' criteria.
#[pyclass(frozen, name = "FieldMatcher", module = "topicmatch._native")]
pub struct PyFieldMatcher {
    matcher: Arc<FieldMatcher>,
    /// Every held subscriber's object, by subscriber id: results are made from it.
    table: Arc<ObjectTable>,
    /// What a lookup costs, to decide whether to release the GIL.
    cost: gil::Cost,
}

impl PyFieldMatcher {
    fn with_matcher(py: Python<'_>, matcher: FieldMatcher) -> PyResult<Self> {
        let table = matcher.with_registry(|registry| ObjectTable::of(py, registry))?;
        Ok(PyFieldMatcher {
            matcher: Arc::new(matcher),
            table: Arc::new(table),
            cost: gil::Cost::default(),
        })
    }
}

#[pymethods]
impl PyFieldMatcher {
    #[new]
    fn new(py: Python<'_>) -> PyResult<Self> {
        PyFieldMatcher::with_matcher(py, FieldMatcher::new())
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
        let value = convert::subscriber(subscriber)?;
        let mut joining =
            self.table
                .joining(convert::canonical(subscriber.py(), subscriber, &value)?);
        gil::guarded(|| {
            self.matcher
                .subscribe_with(&filter, &value, &mut joining)
                .map_err(errors::to_py)
        })
    }

    /// Removes a subscription by id: `True` if it existed, else `False`.
    fn unsubscribe(&self, subscription_id: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Some(subscription_id) = convert::subscription_id(subscription_id)? else {
            return Ok(false);
        };
        let table = &self.table;
        gil::guarded(|| {
            Ok(self
                .matcher
                .unsubscribe_with(subscription_id, &mut |sub| table.clear(sub)))
        })
    }

    /// The distinct subscribers whose criteria `message` meets.
    fn lookup<'py>(
        &self,
        py: Python<'py>,
        message: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let message = criteria::message(message)?;
        let matcher = &self.matcher;
        // Pinned from before the lookup until the list holds its objects (see `objects`).
        let guard = crossbeam_epoch::pin();
        let ids = self.cost.run(py, 1, || {
            let mut ids = Vec::new();
            matcher.lookup_into(&message, &mut ids);
            ids
        })?;
        gil::guarded(|| rows::list(py, &self.table, &guard, &ids))
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
        let matcher = &*self.matcher;
        batch::rows(
            py,
            &self.cost,
            &self.table,
            messages.len(),
            |part, ids, ends| {
                matcher.lookup_batch_into(&messages[part], ids, ends);
                Ok(())
            },
        )
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
        let guard = crossbeam_epoch::pin();
        let hits = self.cost.run(py, 1, || matcher.hits_ids(&message))?;
        let d = PyDict::new(py);
        for (id, n) in hits {
            // A subscriber that left after the lookup still has its object: `guard` was pinned
            // before it.
            if let Some(object) = self.table.object(py, &guard, id) {
                d.set_item(object, n)?;
            }
        }
        Ok(d)
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
        let restore = convert::native(py, "_restore_field_matcher")?;
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
    py: Python<'_>,
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
    PyFieldMatcher::with_matcher(py, matcher)
}
