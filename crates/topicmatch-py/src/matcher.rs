//! `topicmatch.Matcher`: a frozen class over the core engine, safe to share between threads.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use topicmatch_core::fields::{Filter, Message};
use topicmatch_core::{Algorithm, Config, Dialect, Engine, Limits, SubscriberId, Subscription};

use crate::objects::Objects;
use crate::{convert, criteria, errors, gil, topics};

/// Matches topics against wildcard subscriptions in one dialect with one algorithm.
#[pyclass(frozen, name = "Matcher", module = "topicmatch._native")]
pub struct PyMatcher {
    engine: Arc<Engine>,
    /// Every held subscriber's Python object, so results are built without re-creating them.
    objects: Objects,
}

fn limits_for(
    dialect: Dialect,
    max_topic_bytes: Option<usize>,
    max_levels: Option<usize>,
    max_subscriptions: Option<usize>,
) -> Limits {
    let defaults = Limits::for_dialect(dialect);
    Limits {
        max_topic_bytes: max_topic_bytes.unwrap_or(defaults.max_topic_bytes),
        max_levels: max_levels.unwrap_or(defaults.max_levels),
        max_subscriptions: max_subscriptions.unwrap_or(defaults.max_subscriptions),
    }
}

impl PyMatcher {
    /// The engine, for batch entry points elsewhere in the crate.
    pub(crate) fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Converts subscriber ids to a Python list of their (shared) objects.
    fn subscribers<'py>(
        &self,
        py: Python<'py>,
        ids: &[SubscriberId],
    ) -> PyResult<Bound<'py, PyList>> {
        self.objects.list(py, &self.engine, ids)
    }
}

#[pymethods]
impl PyMatcher {
    #[new]
    #[pyo3(signature = (dialect, algorithm = "cstrie", *, max_topic_bytes = None, max_levels = None, max_subscriptions = None, cache_capacity = None))]
    fn new(
        dialect: &str,
        algorithm: &str,
        max_topic_bytes: Option<&Bound<'_, PyAny>>,
        max_levels: Option<&Bound<'_, PyAny>>,
        max_subscriptions: Option<&Bound<'_, PyAny>>,
        cache_capacity: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let dialect: Dialect = dialect.parse().map_err(errors::to_py)?;
        let algorithm: Algorithm = algorithm.parse().map_err(errors::to_py)?;
        let limits = limits_for(
            dialect,
            convert::limit(max_topic_bytes, "max_topic_bytes")?,
            convert::limit(max_levels, "max_levels")?,
            convert::limit(max_subscriptions, "max_subscriptions")?,
        );
        let config = Config {
            dialect,
            limits,
            cache_capacity: convert::limit(cache_capacity, "cache_capacity")?,
        };
        let engine =
            gil::guarded(|| Engine::with_config(algorithm, config).map_err(errors::to_py))?;
        Ok(PyMatcher {
            engine: Arc::new(engine),
            objects: Objects::default(),
        })
    }

    /// The dialect's name.
    #[getter]
    fn dialect(&self) -> &'static str {
        self.engine.dialect().name()
    }

    /// The algorithm's name.
    #[getter]
    fn algorithm(&self) -> &'static str {
        self.engine.algorithm().name()
    }

    /// The bound on cached topics: `inverted_bitmap`'s rows, `cstrie`'s results; `None`: the
    /// default (16,384 rows; no result cache).
    #[getter]
    fn cache_capacity(&self) -> Option<usize> {
        self.engine.cache_capacity()
    }

    /// The limits in force, as a dict.
    #[getter]
    fn limits<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let l = self.engine.limits();
        let d = pyo3::types::PyDict::new(py);
        d.set_item("max_topic_bytes", l.max_topic_bytes)?;
        d.set_item("max_levels", l.max_levels)?;
        d.set_item(
            "max_subscriptions",
            (l.max_subscriptions != usize::MAX).then_some(l.max_subscriptions),
        )?;
        Ok(d)
    }

    /// Subscribes `subscriber` to `pattern`, and with `where` only to messages whose fields
    /// meet those criteria in `mode`; returns the subscription id (the same id again for the
    /// same pattern, criteria and subscriber).
    #[pyo3(signature = (pattern, subscriber, *, r#where = None, mode = None))]
    fn subscribe(
        &self,
        pattern: &Bound<'_, PyAny>,
        subscriber: &Bound<'_, PyAny>,
        r#where: Option<&Bound<'_, PyAny>>,
        mode: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let text = convert::pattern_text(pattern, self.engine.dialect())?;
        let subscriber = convert::subscriber(subscriber)?;
        let filter = match (r#where, mode) {
            (None, None) => None,
            (None, Some(_)) => {
                return Err(pyo3::exceptions::PyTypeError::new_err(
                    "mode applies to where= criteria; pass where= too",
                ))
            }
            (Some(criteria), mode) => {
                let all = pyo3::types::PyString::new(pattern.py(), "all").into_any();
                Some(criteria::filter(criteria, mode.unwrap_or(&all))?)
            }
        };
        let py = pattern.py();
        gil::guarded(|| {
            let _write = self.objects.write();
            let id = match &filter {
                None => self.engine.subscribe(&text, &subscriber),
                Some(f) => self.engine.subscribe_where(&text, &subscriber, f),
            }
            .map_err(errors::to_py)?;
            self.objects.subscribed(py, &self.engine, &subscriber)?;
            Ok(id)
        })
    }

    /// Removes a subscription by id: `True` if it existed, else `False`.
    fn unsubscribe(&self, subscription_id: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Some(id) = convert::subscription_id(subscription_id)? else {
            return Ok(false);
        };
        gil::guarded(|| {
            let _write = self.objects.write();
            Ok(self.objects.unsubscribe(&self.engine, id))
        })
    }

    /// The distinct subscribers whose patterns match `topic` and whose `where` criteria, if
    /// any, the message's `fields` meet (no `fields`: a message without fields).
    #[pyo3(signature = (topic, fields = None))]
    fn lookup<'py>(
        &self,
        py: Python<'py>,
        topic: &Bound<'py, PyAny>,
        fields: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let topic = convert::topic_str(topic, self.engine.dialect())?;
        let fields = fields
            .map(criteria::message)
            .transpose()?
            .unwrap_or_default();
        let engine = &self.engine;
        let ids = gil::detach(py, || {
            let mut ids = Vec::new();
            engine
                .lookup_fields_into(topic, &fields, &mut ids)
                .map(|()| ids)
        })?
        .map_err(errors::to_py)?;
        self.subscribers(py, &ids)
    }

    /// `lookup` for each topic, in one call; `fields`, if given, is a parallel iterable of
    /// the messages' field mappings (`None` for a message without fields). The matching runs
    /// with the GIL released.
    #[pyo3(signature = (topics, fields = None))]
    fn lookup_many<'py>(
        &self,
        py: Python<'py>,
        topics: &Bound<'py, PyAny>,
        fields: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let topics = topics::Topics::new(topics, self.engine.dialect())?;
        let fields = match fields {
            Some(f) => Some(parallel_fields(f, topics.len())?),
            None => None,
        };
        let engine = &self.engine;
        self.objects
            .batch(py, engine, topics.len(), |range, ids, ends| match &fields {
                None => engine.lookup_batch_into(&topics.strs(range), ids, ends),
                Some(fields) => {
                    for (topic, message) in topics.strs(range.clone()).iter().zip(&fields[range]) {
                        engine.lookup_fields_into(topic, message, ids)?;
                        ends.push(ids.len());
                    }
                    Ok(())
                }
            })
    }

    /// Whether at least one subscription matches `topic` (with `fields`, as `lookup`).
    #[pyo3(signature = (topic, fields = None))]
    fn matches_any(
        &self,
        py: Python<'_>,
        topic: &Bound<'_, PyAny>,
        fields: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let topic = convert::topic_str(topic, self.engine.dialect())?;
        let fields = fields
            .map(criteria::message)
            .transpose()?
            .unwrap_or_default();
        let engine = &self.engine;
        gil::detach(py, || engine.matches_any_fields(topic, &fields))?.map_err(errors::to_py)
    }

    /// The subscriptions whose pattern covers `pattern`, as `(id, pattern, subscriber)`.
    fn covering<'py>(&self, pattern: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        crate::relations::related(
            pattern.py(),
            &self.engine,
            topicmatch_core::Relation::Covers,
            pattern,
        )
    }

    /// The subscriptions whose pattern intersects `pattern`, as `(id, pattern, subscriber)`.
    fn intersecting<'py>(&self, pattern: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        crate::relations::related(
            pattern.py(),
            &self.engine,
            topicmatch_core::Relation::Intersects,
            pattern,
        )
    }

    /// Every subscription as `(id, pattern, subscriber)`, ordered by id.
    fn subscriptions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for s in gil::guarded(|| Ok(self.engine.subscriptions()))? {
            let sub = convert::subscriber_to_py(py, &s.subscriber)?;
            list.append((s.id, &*s.pattern, sub))?;
        }
        Ok(list)
    }

    /// The `where=` criteria as `(id, criteria, mode)`, ordered by id.
    fn filters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        filters_to_py(py, &self.engine)
    }

    fn __len__(&self) -> PyResult<usize> {
        gil::guarded(|| Ok(self.engine.len()))
    }

    fn __repr__(&self) -> PyResult<String> {
        Ok(format!(
            "Matcher(dialect={:?}, algorithm={:?}, subscriptions={})",
            self.engine.dialect().name(),
            self.engine.algorithm().name(),
            self.__len__()?
        ))
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let this = slf.get();
        let restore = py
            .import("topicmatch._native")?
            .getattr("_restore_matcher")?;
        let l = this.engine.limits();
        let args = (
            this.engine.dialect().name(),
            this.engine.algorithm().name(),
            (l.max_topic_bytes, l.max_levels, l.max_subscriptions),
            this.subscriptions(py)?,
            this.engine.next_id(),
            filters_to_py(py, &this.engine)?,
            this.engine.cache_capacity(),
        )
            .into_pyobject(py)?;
        Ok((restore, args))
    }
}

/// The messages of `lookup_many`'s `fields`: as many as there are topics.
fn parallel_fields(fields: &Bound<'_, PyAny>, topics: usize) -> PyResult<Vec<Message>> {
    let mut out = Vec::with_capacity(topics);
    for item in fields.try_iter()? {
        let item = item?;
        out.push(if item.is_none() {
            Message::new()
        } else {
            criteria::message(&item)?
        });
    }
    if out.len() != topics {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "fields must hold one mapping (or None) per topic: got {} for {topics} topics",
            out.len()
        )));
    }
    Ok(out)
}

/// The `where` criteria of every filtered subscription as `(id, criteria, mode)`.
fn filters_to_py<'py>(py: Python<'py>, engine: &Engine) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for (id, filter) in engine.filters() {
        list.append((
            id,
            criteria::criteria_to_py(py, &filter)?,
            criteria::mode_to_py(py, &filter)?,
        ))?;
    }
    Ok(list)
}

/// Rebuilds a pickled matcher, keeping every subscription id and `where` criteria.
#[pyfunction]
// The arguments are the pickle format: `__reduce__` passes each part of the state by position.
#[allow(clippy::too_many_arguments)]
#[pyo3(name = "_restore_matcher", signature = (dialect, algorithm, limits, subscriptions, next_id, filters = Vec::new(), cache_capacity = None))]
pub fn restore_matcher(
    py: Python<'_>,
    dialect: &str,
    algorithm: &str,
    limits: (usize, usize, usize),
    subscriptions: Vec<(u64, String, Bound<'_, PyAny>)>,
    next_id: u64,
    filters: Vec<(u64, Bound<'_, PyAny>, Bound<'_, PyAny>)>,
    cache_capacity: Option<usize>,
) -> PyResult<PyMatcher> {
    let filters = filters
        .into_iter()
        .map(|(id, crit, mode)| Ok((id, Arc::new(criteria::filter(&crit, &mode)?))))
        .collect::<PyResult<Vec<(u64, Arc<Filter>)>>>()?;
    let dialect: Dialect = dialect.parse().map_err(errors::to_py)?;
    let algorithm: Algorithm = algorithm.parse().map_err(errors::to_py)?;
    let limits = Limits {
        max_topic_bytes: limits.0,
        max_levels: limits.1,
        max_subscriptions: limits.2,
    };
    let subs = subscriptions
        .into_iter()
        .map(|(id, pattern, sub)| {
            Ok(Subscription {
                id,
                pattern: pattern.into(),
                subscriber: convert::subscriber(&sub)?,
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let config = Config {
        dialect,
        limits,
        cache_capacity,
    };
    let engine = gil::guarded(|| {
        Engine::restore_config(algorithm, config, &subs, &filters, next_id).map_err(errors::to_py)
    })?;
    let objects = Objects::of_engine(py, &engine)?;
    Ok(PyMatcher {
        engine: Arc::new(engine),
        objects,
    })
}
