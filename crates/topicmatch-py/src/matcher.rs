//! `topicmatch.Matcher`: a frozen class over the core engine, safe to share between threads.
//!
//! Every lookup follows one path: the topics are read from their Python objects, the epoch
//! collector is pinned, the core matches (with the GIL released only when [`gil::Cost`]
//! expects the work to pay for the hand-over), and the rows are built from the subscriber
//! object table ([`ObjectTable`]) before the pin is dropped.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use topicmatch_core::fields::{Filter, Message};
use topicmatch_core::{
    Algorithm, Config, Dialect, Engine, GroupPolicy, Limits, SubscriberId, Subscription,
};

use crate::batch::with_ids;
use crate::objects::ObjectTable;
use crate::{arrow, batch, convert, criteria, errors, gil, groups, rows, topics};

/// Matches topics against wildcard subscriptions in one dialect with one algorithm.
#[pyclass(frozen, name = "Matcher", module = "topicmatch._native")]
pub struct PyMatcher {
    engine: Arc<Engine>,
    /// Every held subscriber's Python object, by subscriber id.
    table: Arc<ObjectTable>,
    /// What a lookup costs, to decide whether to release the GIL.
    cost: gil::Cost,
    /// The `(group, pattern)` keys of `lookup_groups`' results.
    group_keys: groups::GroupKeys,
}

/// The limits of `dialect` with the given ones in place of its defaults (`None`: the default).
fn limits_for(
    dialect: Dialect,
    max_topic_bytes: Option<usize>,
    max_levels: Option<usize>,
    max_subscriptions: Option<usize>,
    max_multi_wildcards: Option<usize>,
) -> Limits {
    let defaults = Limits::for_dialect(dialect);
    Limits {
        max_topic_bytes: max_topic_bytes.unwrap_or(defaults.max_topic_bytes),
        max_levels: max_levels.unwrap_or(defaults.max_levels),
        max_subscriptions: max_subscriptions.unwrap_or(defaults.max_subscriptions),
        max_multi_wildcards: max_multi_wildcards.unwrap_or(defaults.max_multi_wildcards),
    }
}

impl PyMatcher {
    fn with_engine(py: Python<'_>, engine: Engine) -> PyResult<Self> {
        let table = Arc::new(engine.with_registry(|registry| ObjectTable::of(py, registry))?);
        Ok(PyMatcher {
            engine: Arc::new(engine),
            table,
            cost: gil::Cost::default(),
            group_keys: groups::GroupKeys::default(),
        })
    }

    /// The engine.
    pub(crate) fn engine(&self) -> &Engine {
        &self.engine
    }

    /// [`subscriber_table`](Self::subscriber_table)'s list.
    fn table_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let guard = crossbeam_epoch::pin();
        // Which ids name a subscriber that holds a subscription (one that left may keep its
        // object a moment longer, for lookups under way). Read first: making the list may run
        // a finalizer that subscribes, which must not find the registry locked.
        let live: Vec<bool> = self.engine.with_registry(|r| {
            (0..r.id_bound())
                .map(|id| r.is_live(id as SubscriberId))
                .collect()
        });
        let list = PyList::empty(py);
        for (id, live) in (0..).zip(live) {
            // None for an id whose subscriber left.
            list.append(live.then(|| self.table.object(py, &guard, id)).flatten())?;
        }
        Ok(list)
    }

    /// The subscriber objects by id.
    pub(crate) fn table(&self) -> &ObjectTable {
        &self.table
    }

    /// The lookup cost rule of this matcher.
    pub(crate) fn cost(&self) -> &gil::Cost {
        &self.cost
    }

    /// The keys of `lookup_groups`' results.
    pub(crate) fn group_keys(&self) -> &groups::GroupKeys {
        &self.group_keys
    }

    /// A single-topic call's topic (a `str` of this matcher's dialect) and message (the
    /// `fields` mapping; none: a message without fields).
    fn message<'a>(
        &self,
        topic: &'a Bound<'_, PyAny>,
        fields: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<(&'a str, Message)> {
        let topic = convert::topic_str(topic, self.engine.dialect())?;
        let fields = fields
            .map(criteria::message)
            .transpose()?
            .unwrap_or_default();
        Ok((topic, fields))
    }
}

#[pymethods]
impl PyMatcher {
    #[new]
    #[pyo3(signature = (dialect, algorithm = None, *, max_topic_bytes = None, max_levels = None, max_subscriptions = None, max_multi_wildcards = None, cache_capacity = None, shared_subscriptions = None, group_policy = None))]
    #[pyo3(
        text_signature = "(dialect, algorithm='cstrie', *, max_topic_bytes=None, max_levels=None, max_subscriptions=None, max_multi_wildcards=None, cache_capacity=None, shared_subscriptions=None, group_policy='round_robin')"
    )]
    // The keyword arguments of the Python constructor.
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        dialect: &Bound<'_, PyAny>,
        algorithm: Option<&Bound<'_, PyAny>>,
        max_topic_bytes: Option<&Bound<'_, PyAny>>,
        max_levels: Option<&Bound<'_, PyAny>>,
        max_subscriptions: Option<&Bound<'_, PyAny>>,
        max_multi_wildcards: Option<&Bound<'_, PyAny>>,
        cache_capacity: Option<&Bound<'_, PyAny>>,
        shared_subscriptions: Option<bool>,
        group_policy: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let dialect: Dialect = convert::setting(dialect, "dialect")?;
        let algorithm =
            algorithm.map_or(Ok(Algorithm::Cstrie), |a| convert::setting(a, "algorithm"))?;
        let limits = limits_for(
            dialect,
            convert::limit(max_topic_bytes, "max_topic_bytes")?,
            convert::limit(max_levels, "max_levels")?,
            convert::limit(max_subscriptions, "max_subscriptions")?,
            convert::cap(max_multi_wildcards, "max_multi_wildcards")?,
        );
        let config = Config {
            dialect,
            limits,
            cache_capacity: convert::limit(cache_capacity, "cache_capacity")?,
        };
        let policy = group_policy.map_or(Ok(GroupPolicy::default()), |p| {
            convert::setting(p, "group_policy")
        })?;
        let shared = shared_subscriptions.unwrap_or(dialect == Dialect::Mqtt);
        let engine = gil::guarded(|| {
            Engine::with_config(algorithm, config)
                .and_then(|e| e.with_groups(policy, shared))
                .map_err(errors::to_py)
        })?;
        PyMatcher::with_engine(py, engine)
    }

    /// How a group's member is chosen: `"round_robin"`, `"random"` or `"hash"`.
    #[getter]
    fn group_policy(&self) -> &'static str {
        self.engine.group_policy().name()
    }

    /// Whether MQTT `$share/{group}/{filter}` texts are group subscriptions.
    #[getter]
    fn shared_subscriptions(&self) -> bool {
        self.engine.shared_subscriptions()
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
            convert::limit_or_none(l.max_subscriptions),
        )?;
        d.set_item(
            "max_multi_wildcards",
            convert::limit_or_none(l.max_multi_wildcards),
        )?;
        Ok(d)
    }

    /// Subscribes `subscriber` to `pattern`, with `where` only to messages whose fields meet
    /// those criteria in `mode`, with `group` as a member of that group (a message goes to one
    /// member of each matching group); returns the subscription id (the same id again for the
    /// same pattern, criteria, group and subscriber).
    #[pyo3(signature = (pattern, subscriber, *, r#where = None, mode = None, group = None))]
    fn subscribe(
        &self,
        pattern: &Bound<'_, PyAny>,
        subscriber: &Bound<'_, PyAny>,
        r#where: Option<&Bound<'_, PyAny>>,
        mode: Option<&Bound<'_, PyAny>>,
        group: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let group = group
            .map(|g| groups::name(g, self.engine.dialect()))
            .transpose()?;
        let subscriber_obj = subscriber;
        let text = convert::pattern_text(pattern, self.engine.dialect())?;
        let subscriber = convert::subscriber(subscriber_obj)?;
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
        let mut joining = self
            .table
            .joining(convert::canonical(py, subscriber_obj, &subscriber)?);
        gil::guarded(|| {
            self.engine
                .subscribe_with(
                    text,
                    &subscriber,
                    filter.as_ref(),
                    group.as_deref(),
                    &mut joining,
                )
                .map_err(errors::to_py)
        })
    }

    /// Removes a subscription by id: `True` if it existed, else `False`.
    fn unsubscribe(&self, subscription_id: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Some(id) = convert::subscription_id(subscription_id)? else {
            return Ok(false);
        };
        let table = &self.table;
        gil::guarded(|| {
            Ok(self
                .engine
                .unsubscribe_with(id, &mut |sub| table.clear(sub)))
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
        let (topic, fields) = self.message(topic, fields)?;
        let engine = &*self.engine;
        let guard = crossbeam_epoch::pin();
        with_ids(|ids| {
            self.cost
                .run(py, 1, || engine.lookup_fields_into(topic, &fields, ids))?
                .map_err(errors::to_py)?;
            gil::guarded(|| rows::list(py, &self.table, &guard, ids))
        })
    }

    /// `lookup` for each topic, in one call; `fields`, if given, is a parallel iterable of
    /// the messages' field mappings (`None` for a message without fields). The matching runs
    /// with the GIL released; a long batch runs in parts, and a signal handler that raises
    /// (Ctrl-C) stops it between two.
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
        let engine = &*self.engine;
        let strs = topics.strs(0..topics.len());
        batch::rows(
            py,
            &self.cost,
            &self.table,
            strs.len(),
            |part, ids, ends| {
                let topics = &strs[part.clone()];
                match &fields {
                    None => engine.lookup_batch_into(topics, ids, ends),
                    Some(fields) => {
                        engine.lookup_batch_fields_into(topics, &fields[part], ids, ends)
                    }
                }
            },
        )
    }

    /// `lookup` for every topic of an Arrow string array, plain or dictionary-encoded (any
    /// object with `__arrow_c_array__` or `__arrow_c_stream__`; a table of one string column,
    /// such as a `DuckDB` relation; a pandas `Series` of strings), with the GIL released
    /// throughout (taken back once per 50 ms of a long batch to run pending signal handlers:
    /// Ctrl-C stops it): an Arrow `list<uint32>` array whose row `i` holds the subscriber indices
    /// (see `subscriber_table`) of topic `i`; a null topic gives a null row. An invalid topic
    /// raises `InvalidTopic` naming its index, or with `errors=True` gives a null row and the
    /// pair `(lists, errors)`, `errors` a `string` array holding each invalid topic's reason.
    #[pyo3(signature = (topics, *, errors = false))]
    fn lookup_arrow<'py>(
        &self,
        py: Python<'py>,
        topics: &Bound<'py, PyAny>,
        errors: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        arrow::lookup_arrow(py, self, topics, errors)
    }

    /// The subscriber objects by index: entry `k` is the subscriber of index `k` as
    /// `lookup_arrow` reports it, `None` where no subscriber holds that index. An index
    /// names the same subscriber until that subscriber leaves (its last subscription goes);
    /// a later subscriber may then get it. So the table maps every result returned before the
    /// next unsubscribe.
    fn subscriber_table<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        gil::guarded(|| self.table_list(py))
    }

    /// Whether at least one subscription matches `topic` (with `fields`, as `lookup`).
    #[pyo3(signature = (topic, fields = None))]
    fn matches_any(
        &self,
        py: Python<'_>,
        topic: &Bound<'_, PyAny>,
        fields: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let (topic, fields) = self.message(topic, fields)?;
        let engine = &*self.engine;
        self.cost
            .run(py, 1, || engine.matches_any_fields(topic, &fields))?
            .map_err(errors::to_py)
    }

    /// The subscriptions whose pattern covers `pattern`, as `(id, pattern, subscriber)`;
    /// `LimitExceeded` once deciding one held pattern passes `max_work` (as `covers`).
    #[pyo3(signature = (pattern, *, max_work = None))]
    fn covering<'py>(
        &self,
        pattern: &Bound<'py, PyAny>,
        max_work: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        crate::relations::related(
            pattern.py(),
            &self.engine,
            topicmatch_core::Relation::Covers,
            pattern,
            max_work,
        )
    }

    /// The subscriptions whose pattern intersects `pattern`, as `(id, pattern, subscriber)`.
    fn intersecting<'py>(&self, pattern: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        crate::relations::related(
            pattern.py(),
            &self.engine,
            topicmatch_core::Relation::Intersects,
            pattern,
            None,
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

    /// `lookup` with the groups apart: the subscribers outside groups, and a dict from each
    /// matching group's `(group, pattern)` to all its members, so a broker can choose with a
    /// policy of its own.
    #[pyo3(signature = (topic, fields = None))]
    fn lookup_groups<'py>(
        &self,
        py: Python<'py>,
        topic: &Bound<'py, PyAny>,
        fields: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let (topic, fields) = self.message(topic, fields)?;
        groups::lookup_groups(py, self, topic, &fields)
    }

    /// The group of every group subscription as `(id, group)`, ordered by id.
    fn groups<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        groups::to_py(py, &self.engine)
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
        let restore = convert::native(py, "_restore_matcher")?;
        let l = this.engine.limits();
        let args = (
            this.engine.dialect().name(),
            this.engine.algorithm().name(),
            (l.max_topic_bytes, l.max_levels, l.max_subscriptions),
            this.subscriptions(py)?,
            this.engine.next_id(),
            filters_to_py(py, &this.engine)?,
            this.engine.cache_capacity(),
            groups::to_py(py, &this.engine)?,
            this.engine.group_policy().name(),
            this.engine.shared_subscriptions(),
            convert::limit_or_none(l.max_multi_wildcards),
        )
            .into_pyobject(py)?;
        Ok((restore, args))
    }
}

/// The messages of `lookup_many`'s `fields`: as many as there are topics.
fn parallel_fields(fields: &Bound<'_, PyAny>, topics: usize) -> PyResult<Vec<Message>> {
    if fields.cast::<pyo3::types::PyMapping>().is_ok() {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "fields must be an iterable of one mapping (or None) per topic, not a single mapping",
        ));
    }
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
#[pyo3(name = "_restore_matcher", signature = (dialect, algorithm, limits, subscriptions, next_id, filters = Vec::new(), cache_capacity = None, groups = Vec::new(), group_policy = "round_robin", shared_subscriptions = None, max_multi_wildcards = None))]
pub fn restore_matcher(
    py: Python<'_>,
    dialect: &str,
    algorithm: &str,
    limits: (usize, usize, usize),
    subscriptions: Vec<(u64, String, Bound<'_, PyAny>)>,
    next_id: u64,
    filters: Vec<(u64, Bound<'_, PyAny>, Bound<'_, PyAny>)>,
    cache_capacity: Option<usize>,
    groups: Vec<(u64, String)>,
    group_policy: &str,
    shared_subscriptions: Option<bool>,
    max_multi_wildcards: Option<usize>,
) -> PyResult<PyMatcher> {
    let groups: Vec<(u64, Arc<str>)> = groups.into_iter().map(|(id, g)| (id, g.into())).collect();
    let policy: GroupPolicy = group_policy.parse().map_err(errors::to_py)?;
    let filters = filters
        .into_iter()
        .map(|(id, crit, mode)| Ok((id, Arc::new(criteria::filter(&crit, &mode)?))))
        .collect::<PyResult<Vec<(u64, Arc<Filter>)>>>()?;
    let dialect: Dialect = dialect.parse().map_err(errors::to_py)?;
    let algorithm: Algorithm = algorithm.parse().map_err(errors::to_py)?;
    let limits = limits_for(
        dialect,
        Some(limits.0),
        Some(limits.1),
        Some(limits.2),
        max_multi_wildcards,
    );
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
    let shared = shared_subscriptions.unwrap_or(dialect == Dialect::Mqtt);
    let engine = gil::guarded(|| {
        Engine::with_config(algorithm, config)
            .and_then(|e| e.with_groups(policy, shared))
            .and_then(|e| e.restored(&subs, &filters, &groups, next_id))
            .map_err(errors::to_py)
    })?;
    PyMatcher::with_engine(py, engine)
}
