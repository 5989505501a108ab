//! `topicmatch.TopicStore`: the core's [`TopicStore`] holding Python objects, a frozen class
//! safe to share between threads; and its lazy iterator, `TopicStoreIterator`.
//!
//! Values are held as `Arc<Py<PyAny>>`: the store's own lock guards the trie, and a query
//! copies out `Arc`s (an atomic increment, no GIL) under that lock, so the walk can run with
//! the GIL released and the Python objects are made after the lock is gone. Nothing Python
//! runs under a store lock: a replaced or removed value is dropped (its reference released,
//! maybe running a finalizer) by the caller after the core has unlocked. A side table of
//! objects indexed by value ids would need its own lock kept in step with the trie's, or a
//! query would meet ids whose object a concurrent write already let go.

use std::sync::{Arc, Mutex, PoisonError};

use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use topicmatch_core::{Dialect, Filter, Found, StoreLimits, TopicStore};

use crate::{convert, errors, gil, rows};

/// A stored value.
type Value = Arc<Py<PyAny>>;

/// Stores at least this big answer a wildcard query with the GIL released: a wildcard walk
/// of thousands of topics takes longer than handing the GIL over (`gil::DETACH_NS`); a
/// literal filter is one lookup, and a smaller store a short walk, both kept under the GIL.
const DETACH_MIN: usize = 4096;

/// Topics a `TopicStoreIterator` reads per visit to the store.
const PAGE: usize = 256;

/// Pairs made between two runs of pending signal handlers (about 10 ms of work).
const SIGNAL_EVERY: usize = 1 << 16;

/// A map from concrete topics to Python objects, queried by wildcard filters.
#[pyclass(frozen, name = "TopicStore", module = "topicmatch._native")]
pub struct PyTopicStore {
    store: Arc<TopicStore<Value>>,
}

/// The (topic, value) pairs `found[range]` as a list of tuples. Pending signal handlers run
/// once per [`SIGNAL_EVERY`] pairs and at the end: a handler that raises (Ctrl-C) stops a long
/// answer, the pairs made so far dropped. (They run here, with collections paused, and not in
/// the first collection after the pause, where a `gc.callbacks` entry would run them and lose
/// their exception.)
fn pairs<'py>(
    py: Python<'py>,
    found: &Found<Value>,
    range: std::ops::Range<usize>,
) -> PyResult<Bound<'py, PyList>> {
    // No collection while the pairs are made: each tuple is a new container, and a collection
    // every few hundred would traverse the tuples made so far (a tenth of a large answer's
    // time, or more).
    let _paused = rows::GcPause::new(py);
    let mut items = Vec::with_capacity(range.len());
    for (made, i) in range.enumerate() {
        if made % SIGNAL_EVERY == SIGNAL_EVERY - 1 {
            py.check_signals()?;
        }
        let topic = PyString::new(py, found.topic(i)).into_any();
        items.push(PyTuple::new(
            py,
            [topic, found.value(i).clone_ref(py).into_bound(py)],
        )?);
    }
    let list = PyList::new(py, items)?;
    py.check_signals()?;
    Ok(list)
}

impl PyTopicStore {
    fn filter(&self, filter: &Bound<'_, PyAny>) -> PyResult<Filter> {
        let text = convert::pattern_text(filter, self.store.dialect())?;
        self.store.filter(text).map_err(errors::to_py)
    }

    /// Whether answering `filter` is worth releasing the GIL.
    fn detach(&self, filter: &Filter) -> bool {
        filter.pattern().has_wildcards() && self.store.len() >= DETACH_MIN
    }

    /// The matches of `filter`, walked with the GIL released if worth it.
    fn found(&self, py: Python<'_>, filter: &Filter) -> PyResult<Found<Value>> {
        let store = &self.store;
        let walk = || {
            let mut found = Found::new();
            store.read().match_into(filter, &mut found).map(|()| found)
        };
        gil::run_if(py, self.detach(filter), walk)?.map_err(errors::to_py)
    }

    fn iterator(&self, filter: Option<Filter>, keys: bool) -> PyStoreIter {
        PyStoreIter {
            store: Arc::clone(&self.store),
            filter,
            keys,
            state: Mutex::new(Page::default()),
        }
    }
}

#[pymethods]
impl PyTopicStore {
    #[new]
    #[pyo3(signature = (dialect, *, max_topic_bytes = None, max_levels = None, max_topics = None))]
    fn new(
        dialect: &Bound<'_, PyAny>,
        max_topic_bytes: Option<&Bound<'_, PyAny>>,
        max_levels: Option<&Bound<'_, PyAny>>,
        max_topics: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let dialect: Dialect = convert::setting(dialect, "dialect")?;
        let defaults = StoreLimits::for_dialect(dialect);
        let limits = StoreLimits {
            max_topic_bytes: convert::limit(max_topic_bytes, "max_topic_bytes")?
                .unwrap_or(defaults.max_topic_bytes),
            max_levels: convert::limit(max_levels, "max_levels")?.unwrap_or(defaults.max_levels),
            max_topics: convert::limit(max_topics, "max_topics")?.unwrap_or(defaults.max_topics),
        };
        Ok(PyTopicStore {
            store: Arc::new(TopicStore::with_limits(dialect, limits)),
        })
    }

    /// The dialect's name.
    #[getter]
    fn dialect(&self) -> &'static str {
        self.store.dialect().name()
    }

    /// The limits in force, as a dict (`max_topics` is `None` when unbounded).
    #[getter]
    fn limits<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let l = self.store.limits();
        let d = PyDict::new(py);
        d.set_item("max_topic_bytes", l.max_topic_bytes)?;
        d.set_item("max_levels", l.max_levels)?;
        d.set_item("max_topics", convert::limit_or_none(l.max_topics))?;
        Ok(d)
    }

    fn __setitem__(&self, topic: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let topic = convert::topic_str(topic, self.store.dialect())?;
        let value = Arc::new(value.clone().unbind());
        let old = gil::guarded(|| self.store.insert(topic, value).map_err(errors::to_py))?;
        // Released here, after the store's lock: its finalizer may use the store.
        drop(old);
        Ok(())
    }

    /// Stores every `(topic, value)` pair of `items` (a mapping, or an iterable of pairs) in
    /// one batch, faster than one `store[topic] = value` each: every topic is checked first,
    /// so an invalid one, or going past `max_topics`, raises and stores nothing. A topic given
    /// twice keeps its last value.
    fn update(&self, items: &Bound<'_, PyAny>) -> PyResult<()> {
        let pairs = pairs_of(items, self.store.dialect())?;
        gil::guarded(|| self.store.insert_many(pairs).map_err(errors::to_py))
    }

    fn __getitem__<'py>(&self, topic: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = topic.py();
        let text = convert::topic_str(topic, self.store.dialect())?;
        gil::guarded(|| {
            self.store
                .get_with(text, |v| v.clone_ref(py))
                .map_err(errors::to_py)
        })?
        .map(|v| v.into_bound(py))
        .ok_or_else(|| PyKeyError::new_err(topic.clone().unbind()))
    }

    fn __delitem__(&self, topic: &Bound<'_, PyAny>) -> PyResult<()> {
        let text = convert::topic_str(topic, self.store.dialect())?;
        let old = gil::guarded(|| self.store.remove(text).map_err(errors::to_py))?;
        match old {
            Some(old) => {
                drop(old);
                Ok(())
            }
            None => Err(PyKeyError::new_err(topic.clone().unbind())),
        }
    }

    fn __contains__(&self, topic: &Bound<'_, PyAny>) -> PyResult<bool> {
        let topic = convert::topic_str(topic, self.store.dialect())?;
        gil::guarded(|| self.store.contains(topic).map_err(errors::to_py))
    }

    fn __len__(&self) -> usize {
        self.store.len()
    }

    /// The value stored under `topic`, or `default`.
    #[pyo3(signature = (topic, default = None))]
    fn get<'py>(
        &self,
        topic: &Bound<'py, PyAny>,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = topic.py();
        let text = convert::topic_str(topic, self.store.dialect())?;
        let found = gil::guarded(|| {
            self.store
                .get_with(text, |v| v.clone_ref(py))
                .map_err(errors::to_py)
        })?;
        Ok(match found {
            Some(v) => v.into_bound(py),
            None => default.unwrap_or_else(|| py.None().into_bound(py)),
        })
    }

    /// Removes `topic` and returns its value; if it is not stored, returns `default`, or
    /// raises `KeyError` without one (as `dict.pop`).
    #[pyo3(signature = (topic, *default))]
    fn pop<'py>(
        &self,
        topic: &Bound<'py, PyAny>,
        default: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = topic.py();
        if default.len() > 1 {
            return Err(PyTypeError::new_err(format!(
                "pop expected at most 2 arguments, got {}",
                default.len() + 1
            )));
        }
        let text = convert::topic_str(topic, self.store.dialect())?;
        let old = gil::guarded(|| self.store.remove(text).map_err(errors::to_py))?;
        match old {
            Some(v) => Ok(v.clone_ref(py).into_bound(py)),
            None if default.len() == 1 => default.get_item(0),
            None => Err(PyKeyError::new_err(topic.clone().unbind())),
        }
    }

    /// Removes every topic.
    fn clear(&self) -> PyResult<()> {
        gil::guarded(|| {
            self.store.clear();
            Ok(())
        })
    }

    /// Gives back spare memory: the room left in the trie's vectors, and the slots of words
    /// freed by removals. Queries need no upkeep (each level is stored in walk order).
    fn compact(&self, py: Python<'_>) -> PyResult<()> {
        let store = &self.store;
        gil::detach(py, || store.compact())
    }

    /// The stored `(topic, value)` pairs whose topic `filter` matches, in order.
    #[pyo3(name = "match")]
    fn match_<'py>(
        &self,
        py: Python<'py>,
        filter: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let filter = self.filter(filter)?;
        let found = self.found(py, &filter)?;
        pairs(py, &found, 0..found.len())
    }

    /// How many stored topics `filter` matches.
    fn count(&self, py: Python<'_>, filter: &Bound<'_, PyAny>) -> PyResult<usize> {
        let filter = self.filter(filter)?;
        let store = &self.store;
        gil::run_if(py, self.detach(&filter), || store.read().count(&filter))?
            .map_err(errors::to_py)
    }

    /// `match` for each filter, all at one instant, in one call with the GIL released. Every
    /// filter is checked before any is answered.
    fn match_many<'py>(
        &self,
        py: Python<'py>,
        filters: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        if filters.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(
                "filters must be an iterable of str, not a single str",
            ));
        }
        let filters = filters
            .try_iter()?
            .map(|f| self.filter(&f?))
            .collect::<PyResult<Vec<Filter>>>()?;
        let store = &self.store;
        let (found, ends) = gil::detach(py, || {
            let reader = store.read();
            let mut found = Found::new();
            let mut ends = Vec::with_capacity(filters.len());
            for filter in &filters {
                reader.match_into(filter, &mut found)?;
                ends.push(found.len());
            }
            Ok((found, ends))
        })?
        .map_err(errors::to_py)?;
        // One pause over every filter's pairs (`pairs` pauses too, within it).
        let _paused = rows::GcPause::new(py);
        let mut start = 0;
        let lists = ends
            .into_iter()
            .map(|end| {
                let list = pairs(py, &found, start..end);
                start = end;
                list
            })
            .collect::<PyResult<Vec<_>>>()?;
        let lists = PyList::new(py, lists)?;
        py.check_signals()?;
        Ok(lists)
    }

    /// A lazy iterator of the `(topic, value)` pairs `filter` matches, in order, read from
    /// the store a page at a time (no lock is held between pages).
    fn iter_match(&self, filter: &Bound<'_, PyAny>) -> PyResult<PyStoreIter> {
        Ok(self.iterator(Some(self.filter(filter)?), false))
    }

    /// Every stored topic, in order, lazily.
    fn __iter__(&self) -> PyStoreIter {
        self.iterator(None, true)
    }

    /// Every stored `(topic, value)` pair, in order, lazily.
    fn items(&self) -> PyStoreIter {
        self.iterator(None, false)
    }

    fn __repr__(&self) -> String {
        format!(
            "TopicStore(dialect={:?}, topics={})",
            self.store.dialect().name(),
            self.store.len()
        )
    }

    /// Pickles as an empty store of the same dialect and limits, then its pairs as the state
    /// [`__setstate__`](Self::__setstate__) stores: pickle records the store before its values,
    /// so a value that refers back to the store (or holds it) pickles as a dict's would.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>, Bound<'py, PyList>)> {
        let py = slf.py();
        let this = slf.get();
        let restore = convert::native(py, "_restore_topic_store")?;
        let mut found = Found::new();
        gil::guarded(|| {
            this.store
                .read()
                .for_each(|t, v| found.push(t, Arc::clone(v)));
            Ok(())
        })?;
        let l = this.store.limits();
        let args = (
            this.store.dialect().name(),
            (
                l.max_topic_bytes,
                l.max_levels,
                convert::limit_or_none(l.max_topics),
            ),
            PyTuple::empty(py),
        )
            .into_pyobject(py)?;
        Ok((restore, args, pairs(py, &found, 0..found.len())?))
    }

    /// Unpickling's second step: stores the pickled pairs, as [`update`](Self::update) does.
    fn __setstate__(&self, state: &Bound<'_, PyAny>) -> PyResult<()> {
        self.update(state)
    }
}

/// Rebuilds a pickled store.
#[pyfunction]
#[pyo3(name = "_restore_topic_store")]
pub fn restore_topic_store(
    dialect: &str,
    limits: (usize, usize, Option<usize>),
    items: &Bound<'_, PyAny>,
) -> PyResult<PyTopicStore> {
    let dialect: Dialect = dialect.parse().map_err(errors::to_py)?;
    let limits = StoreLimits {
        max_topic_bytes: limits.0,
        max_levels: limits.1,
        max_topics: limits.2.unwrap_or(usize::MAX),
    };
    let store = TopicStore::with_limits(dialect, limits);
    let pairs = pairs_of(items, dialect)?;
    gil::guarded(|| store.insert_many(pairs).map_err(errors::to_py))?;
    Ok(PyTopicStore {
        store: Arc::new(store),
    })
}

/// The `(topic, value)` pairs of a mapping or of an iterable of pairs, each topic a `str`
/// (else `TypeError`); the topics' rules are the store's to check.
fn pairs_of(items: &Bound<'_, PyAny>, dialect: Dialect) -> PyResult<Vec<(String, Value)>> {
    let items = if items.is_instance_of::<PyDict>() || items.hasattr("keys")? {
        items.call_method0("items")?
    } else {
        items.clone()
    };
    let mut pairs = Vec::with_capacity(items.len().unwrap_or(0));
    for item in items.try_iter()? {
        let item = item?;
        let (topic, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) =
            item.extract().map_err(|_| {
                PyTypeError::new_err(format!(
                    "expected a (topic, value) pair, not {}",
                    convert::type_name(&item)
                ))
            })?;
        let topic = convert::topic_str(&topic, dialect)?.to_owned();
        pairs.push((topic, Arc::new(value.unbind())));
    }
    Ok(pairs)
}

/// Where an iterator stands: the page read last and how far into it.
#[derive(Default)]
struct Page {
    found: Found<Value>,
    next: usize,
    /// Whether the store had nothing after this page.
    last: bool,
}

/// A lazy iterator over a `TopicStore`: its topics, or the `(topic, value)` pairs of all or
/// of a filter's matches, in order. It holds no lock between pages: a topic stored while it
/// runs may or may not appear, one removed may still appear if its page was read before;
/// every topic stored throughout appears exactly once.
#[pyclass(frozen, name = "TopicStoreIterator", module = "topicmatch._native")]
pub struct PyStoreIter {
    store: Arc<TopicStore<Value>>,
    filter: Option<Filter>,
    keys: bool,
    state: Mutex<Page>,
}

#[pymethods]
impl PyStoreIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        // Only Rust work under the iterator's lock; the objects are made after it.
        let next = gil::guarded(|| {
            let mut page = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            if page.next == page.found.len() {
                if page.last {
                    return Ok(None);
                }
                let after = page.found.last_topic().map(str::to_owned);
                let page = &mut *page;
                page.found.clear();
                page.next = 0;
                let found = &mut page.found;
                page.last = self
                    .store
                    .read()
                    .page(self.filter.as_ref(), after.as_deref(), PAGE, |t, v| {
                        found.push(t, Arc::clone(v));
                    })
                    .map_err(errors::to_py)?;
                if page.found.is_empty() {
                    page.last = true;
                    return Ok(None);
                }
            }
            let i = page.next;
            page.next += 1;
            Ok(Some((
                page.found.topic(i).to_owned(),
                Arc::clone(page.found.value(i)),
            )))
        })?;
        let Some((topic, value)) = next else {
            return Ok(None);
        };
        let topic = PyString::new(py, &topic).into_any();
        if self.keys {
            return Ok(Some(topic));
        }
        Ok(Some(
            PyTuple::new(py, [topic, value.clone_ref(py).into_bound(py)])?.into_any(),
        ))
    }
}

/// Adds `TopicStore`, its iterator and its restore function to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTopicStore>()?;
    m.add_class::<PyStoreIter>()?;
    m.add_function(wrap_pyfunction!(restore_topic_store, m)?)
}
