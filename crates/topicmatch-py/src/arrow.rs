//! `Matcher.lookup_arrow`: a whole Arrow string array looked up in one call, without a Python
//! object per topic or per subscriber.
//!
//! The topics come in through the Arrow `PyCapsule` interface (`__arrow_c_array__` or
//! `__arrow_c_stream__`, read by `pyo3-arrow`), as a string array or a table of one string
//! column: pyarrow, polars, `DuckDB` and pandas' Arrow columns hand their buffers over without
//! a copy. A pandas `Series` before pandas 3.0 has no such interface: pyarrow reads it
//! ([`topic_chunks`]).
//!
//! The lookups (the engine's batch path, a window of rows at a time) and the building of the
//! result (a `list<uint32>` array of subscriber indices) run in one stretch, with the GIL
//! released when the batch is big enough to pay for it ([`crate::gil::Cost`]), taken back
//! only once per 50 ms of a long batch to run pending signal handlers ([`Signals`]); the
//! result goes back through the same interface ([`ArrowArray`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::builder::StringBuilder;
use arrow_array::cast::AsArray;
use arrow_array::{make_array, Array, ArrayAccessor, ArrayRef, ListArray, UInt32Array};
use arrow_buffer::{NullBuffer, NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, FieldRef};
use crossbeam_epoch::Guard;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyTuple};
use pyo3_arrow::input::AnyArray;
use topicmatch_core::{Engine, SubscriberId};

use crate::batch::{with_ids, KEPT_IDS};
use crate::errors;
use crate::gil;
use crate::matcher::PyMatcher;

/// An Arrow array held by topicmatch, exported through the Arrow `PyCapsule` interface:
/// `pyarrow.array(x)`, `polars.Series(x)` and the like take it without a copy.
#[pyclass(frozen, name = "ArrowArray", module = "topicmatch._native")]
pub struct ArrowArray {
    array: ArrayRef,
    field: FieldRef,
}

impl ArrowArray {
    fn new(array: ArrayRef, name: &str) -> Self {
        let field = Arc::new(Field::new(name, array.data_type().clone(), true));
        ArrowArray { array, field }
    }
}

#[pymethods]
impl ArrowArray {
    /// The array as a pair of `PyCapsule`s (schema, array): the Arrow C Data Interface.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyCapsule>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        Ok(pyo3_arrow::ffi::to_array_pycapsules(
            py,
            self.field.clone(),
            &self.array,
            requested_schema,
        )?)
    }

    /// The array's type as a `PyCapsule` (the Arrow C Data Interface's schema).
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        Ok(pyo3_arrow::ffi::to_schema_pycapsule(
            py,
            self.field.as_ref(),
        )?)
    }

    fn __len__(&self) -> usize {
        self.array.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "ArrowArray(type={}, len={})",
            self.array.data_type(),
            self.array.len()
        )
    }
}

/// The result being built: `list<uint32>` rows, and the reasons of invalid topics if asked.
struct Lists {
    offsets: Vec<i32>,
    values: Vec<u32>,
    /// The rows' validity, made only once a row is null.
    valid: NullBufferBuilder,
    errors: Option<StringBuilder>,
}

/// Why a batch stopped: a malformed array, an invalid topic (when errors are not collected),
/// a limit of the output format, or a signal handler that raised.
enum Stop {
    Malformed(String),
    Invalid(usize, topicmatch_core::Error),
    Overflow,
    Interrupted(PyErr),
}

/// Runs pending signal handlers once per [`gil::PART_NS`] of a batch's work, taking the GIL
/// for it: a handler that raises (Ctrl-C) stops a long batch, its rows dropped. The GIL is
/// otherwise released throughout, so one take each 50 ms costs the batch nothing measurable.
struct Signals {
    since: Instant,
}

impl Signals {
    fn new() -> Self {
        Signals {
            since: Instant::now(),
        }
    }

    fn check(&mut self) -> Result<(), Stop> {
        if self.since.elapsed() < Duration::from_nanos(gil::PART_NS) {
            return Ok(());
        }
        #[allow(clippy::redundant_closure_for_method_calls)] // the method is not general in 'py
        Python::attach(|py| py.check_signals()).map_err(Stop::Interrupted)?;
        self.since = Instant::now();
        Ok(())
    }
}

/// Rows looked up in one batch of the engine: its set-up (an epoch pin) paid once for many
/// topics, and its ids still in cache when they are copied out (on ftm and the `crowds`
/// fan-out set, 32 and 1,024 rows measured slower). Fewer where topics match thousands of
/// subscribers: a window's ids stay within the thread's kept buffer
/// ([`crate::batch::KEPT_IDS`]), not a buffer of tens of megabytes faulted in on every call.
const WINDOW: usize = 256;

/// The buffers of one window's batch, reused from window to window (the ids: the thread's
/// kept buffer), and the call's epoch pin, which the windows' lookups share.
struct Scratch<'a> {
    topics: Vec<&'a str>,
    ids: Vec<SubscriberId>,
    ends: Vec<usize>,
    signals: Signals,
    /// Renewed before each window: a pin held for the whole of a long call would hold back
    /// every release other threads' departures defer meanwhile (each a few KB of the
    /// collector's) until it ended.
    pin: Guard,
}

impl Lists {
    fn new(rows: usize, values: usize, collect_errors: bool) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        Lists {
            offsets,
            values: Vec::with_capacity(values),
            valid: NullBufferBuilder::new(rows),
            errors: collect_errors.then(|| StringBuilder::with_capacity(rows, 0)),
        }
    }

    /// Adds the rows of `chunk` (the rows from `*first_row` on) to `window`, looking the window
    /// up ([`Self::push_window`]) each time it holds `size` rows; the caller looks up the last
    /// rows left in it.
    fn push_rows<'a>(
        &mut self,
        engine: &Engine,
        first_row: &mut usize,
        chunk: &'a dyn Array,
        size: usize,
        window: &mut Vec<Option<&'a str>>,
        scratch: &mut Scratch<'a>,
    ) -> Result<(), Stop> {
        for_each_topic(chunk, |topic| {
            window.push(topic);
            if window.len() == size {
                self.push_window(engine, *first_row, window, scratch)?;
                *first_row += window.len();
                window.clear();
            }
            Ok(())
        })
    }

    /// Looks up the rows `first_row..` of `window` (`None`: a null topic) through the
    /// engine's batch path and appends their lists. A batch stops at an invalid topic with
    /// the rows before it kept: that row alone is looked up again, which names it or records
    /// its reason, and the batch goes on after it.
    fn push_window<'a>(
        &mut self,
        engine: &Engine,
        first_row: usize,
        window: &[Option<&'a str>],
        scratch: &mut Scratch<'a>,
    ) -> Result<(), Stop> {
        scratch.signals.check()?;
        scratch.pin.repin();
        let Scratch {
            topics, ids, ends, ..
        } = scratch;
        let mut done = 0;
        while done < window.len() {
            let rest = &window[done..];
            topics.clear();
            topics.extend(rest.iter().flatten());
            ids.clear();
            ends.clear();
            let batch = engine.lookup_batch_into(topics, ids, ends);
            let mut found = ends.iter();
            let mut from = 0;
            for topic in rest {
                if topic.is_some() {
                    let Some(&end) = found.next() else {
                        // The topic the batch stopped at.
                        break;
                    };
                    self.append_ids(&ids[from..end]);
                    from = end;
                }
                self.end_row(topic.is_some(), None)?;
                done += 1;
            }
            // Only a topic stops the batch (nulls never reach it): looked up alone, its row is
            // named in the error or its reason recorded.
            if let Some(&Some(topic)) = window.get(done) {
                debug_assert!(batch.is_err());
                self.push_one(engine, first_row + done, topic, ids)?;
                done += 1;
            }
        }
        Ok(())
    }

    /// Looks up the topic of row `row` alone and appends its list, or (collecting errors) a
    /// null row with its reason.
    fn push_one(
        &mut self,
        engine: &Engine,
        row: usize,
        topic: &str,
        ids: &mut Vec<SubscriberId>,
    ) -> Result<(), Stop> {
        ids.clear();
        match engine.lookup_into(topic, ids) {
            Ok(()) => {
                self.append_ids(ids);
                self.end_row(true, None)
            }
            Err(e) if self.errors.is_some() => self.end_row(false, Some(e.to_string())),
            Err(e) => Err(Stop::Invalid(row, e)),
        }
    }

    /// Appends the rows of a dictionary-encoded chunk ([`by_value`]) from one lookup per value
    /// of its dictionary: each row copies its value's list. A group's member is picked per
    /// message, so the engine must never have held a group: if one came while the values were
    /// looked up, nothing is appended and `false` comes back (the caller then looks the rows
    /// up one by one; the picks of the values' lookups are dropped, no row loses its own).
    fn push_dictionary<'a>(
        &mut self,
        engine: &Engine,
        first_row: usize,
        chunk: &'a dyn Array,
        size: usize,
        scratch: &mut Scratch<'a>,
    ) -> Result<bool, Stop> {
        let dictionary = chunk.as_any_dictionary();
        let values = dictionary.values().as_ref();
        // The values' rows, an invalid value's as a null (its row is looked up alone below,
        // to name it or give its reason).
        let mut memo = Lists::new(values.len(), values.len(), true);
        let mut window = Vec::with_capacity(size.min(values.len()));
        let mut done = 0;
        memo.push_rows(engine, &mut done, values, size, &mut window, scratch)?;
        memo.push_window(engine, done, &window, scratch)?;
        // Read after the lookups: `true` means none of them picked a group's member.
        if !engine.answers_by_topic() {
            return Ok(false);
        }
        let keys = dictionary.keys();
        let offsets = &memo.offsets;
        for (row, index) in dictionary.normalized_keys().into_iter().enumerate() {
            if row % WINDOW == 0 {
                scratch.signals.check()?;
            }
            if keys.is_null(row) || values.is_null(index) {
                self.end_row(false, None)?;
            } else if memo.valid.is_valid(index) {
                // Offsets are lengths (`end_row`), never negative.
                let (start, end) = (
                    offsets[index].unsigned_abs(),
                    offsets[index + 1].unsigned_abs(),
                );
                let (start, end) = (start as usize, end as usize);
                self.values.extend_from_slice(&memo.values[start..end]);
                self.end_row(true, None)?;
            } else {
                self.push_one(
                    engine,
                    first_row + row,
                    text(values, index),
                    &mut scratch.ids,
                )?;
            }
        }
        Ok(true)
    }

    /// Appends subscriber ids to the row being built, as indices.
    fn append_ids(&mut self, ids: &[SubscriberId]) {
        // Subscriber ids are dense and far below 2^32 (one per subscriber).
        self.values.extend(ids.iter().map(|&id| id as u32));
    }

    /// Ends the row whose values were appended last: valid (a list, maybe empty) or null,
    /// with the reason of an invalid topic.
    fn end_row(&mut self, valid: bool, error: Option<String>) -> Result<(), Stop> {
        self.valid.append(valid);
        if let Some(errors) = &mut self.errors {
            errors.append_option(error);
        }
        let end = i32::try_from(self.values.len()).map_err(|_| Stop::Overflow)?;
        self.offsets.push(end);
        Ok(())
    }

    fn finish(mut self) -> (ArrayRef, Option<ArrayRef>) {
        let item = Arc::new(Field::new_list_field(DataType::UInt32, true));
        let nulls = self.valid.finish();
        let lists = ListArray::new(
            item,
            OffsetBuffer::new(ScalarBuffer::from(self.offsets)),
            Arc::new(UInt32Array::from(self.values)),
            nulls,
        );
        let errors = self.errors.map(|mut e| Arc::new(e.finish()) as ArrayRef);
        (Arc::new(lists), errors)
    }
}

/// Calls `each(topic)` for every row of a string array (or a dictionary of strings) in order
/// (`None` for a null).
fn for_each_topic<'a>(
    chunk: &'a dyn Array,
    mut each: impl FnMut(Option<&'a str>) -> Result<(), Stop>,
) -> Result<(), Stop> {
    match chunk.data_type() {
        DataType::Utf8 => chunk.as_string::<i32>().iter().try_for_each(&mut each),
        DataType::LargeUtf8 => chunk.as_string::<i64>().iter().try_for_each(&mut each),
        DataType::Utf8View => chunk.as_string_view().iter().try_for_each(&mut each),
        DataType::Dictionary(_, _) => {
            let dictionary = chunk.as_any_dictionary();
            let values = dictionary.values();
            if values.is_empty() {
                // No values: every key is null (a valid key indexes a value).
                return (0..chunk.len()).try_for_each(|_| each(None));
            }
            let keys = (dictionary.keys(), dictionary.normalized_keys());
            match values.data_type() {
                DataType::Utf8 => by_key(keys, &values.as_string::<i32>(), each),
                DataType::LargeUtf8 => by_key(keys, &values.as_string::<i64>(), each),
                DataType::Utf8View => by_key(keys, &values.as_string_view(), each),
                other => unreachable!("checked before: dictionary of {other}"),
            }
        }
        other => unreachable!("checked before: {other}"),
    }
}

/// Calls `each(topic)` for every key of a dictionary in order: the key's value, `None` where
/// the key or its value is null.
fn by_key<'a, V>(
    (keys, indices): (&dyn Array, Vec<usize>),
    values: &V,
    mut each: impl FnMut(Option<&'a str>) -> Result<(), Stop>,
) -> Result<(), Stop>
where
    V: ArrayAccessor<Item = &'a str>,
{
    for (row, index) in indices.into_iter().enumerate() {
        each((keys.is_valid(row) && values.is_valid(index)).then(|| values.value(index)))?;
    }
    Ok(())
}

/// Whether `t` is a string type this reads.
fn is_string(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

/// The text of row `index` of a string array (valid, in range).
fn text(values: &dyn Array, index: usize) -> &str {
    match values.data_type() {
        DataType::Utf8 => values.as_string::<i32>().value(index),
        DataType::LargeUtf8 => values.as_string::<i64>().value(index),
        DataType::Utf8View => values.as_string_view().value(index),
        other => unreachable!("checked before: {other}"),
    }
}

/// Whether a chunk is looked up one value of its dictionary at a time: a dictionary with
/// fewer values than rows (its topics repeat), on an engine that never picks a group's member
/// (see [`Lists::push_dictionary`]).
fn by_value(chunk: &dyn Array, engine: &Engine) -> bool {
    chunk
        .as_any_dictionary_opt()
        .is_some_and(|d| !d.values().is_empty() && d.values().len() < chunk.len())
        && engine.answers_by_topic()
}

/// How many lookups `chunks` take: a row each, or a value each where [`by_value`].
fn lookups(chunks: &[ArrayRef], engine: &Engine) -> usize {
    chunks
        .iter()
        .map(|chunk| match chunk.as_any_dictionary_opt() {
            Some(d) if by_value(chunk.as_ref(), engine) => d.values().len(),
            _ => chunk.len(),
        })
        .sum()
}

/// Whether topics of type `t` are read: strings, or a dictionary of strings.
fn is_topics(t: &DataType) -> bool {
    match t {
        DataType::Dictionary(_, values) => is_string(values),
        t => is_string(t),
    }
}

/// The topics of `lookup_arrow`: an Arrow string array or stream, a table of one string column
/// (a struct array or stream: a `DuckDB` relation, a pyarrow or polars table of one column), or
/// a pandas `Series` or `Index` of strings. Its chunks, each a string array or a dictionary of
/// strings.
fn topic_chunks(topics: &Bound<'_, PyAny>) -> PyResult<Vec<ArrayRef>> {
    let input: AnyArray = match topics.extract() {
        Ok(input) => input,
        // The object's own export failed: its error is the one to see.
        Err(e)
            if topics.hasattr(pyo3::intern!(topics.py(), "__arrow_c_array__"))?
                || topics.hasattr(pyo3::intern!(topics.py(), "__arrow_c_stream__"))? =>
        {
            return Err(e)
        }
        Err(e) => match pyarrow_array(topics)? {
            Some(arrow) => arrow.extract()?,
            None => {
                return Err(PyTypeError::new_err(format!(
                    "topics must be an Arrow string array or a table of one string column \
                     (an object with __arrow_c_array__ or __arrow_c_stream__, such as a \
                     pyarrow, polars or DuckDB one, or a pandas Series of strings), not {}: \
                     {e}",
                    crate::convert::type_name(topics)
                )))
            }
        },
    };
    let field = input.field()?;
    let column = match field.data_type() {
        t if is_topics(t) => false,
        DataType::Struct(columns) if columns.len() == 1 => {
            let column = &columns[0];
            if !is_topics(column.data_type()) {
                return Err(PyTypeError::new_err(format!(
                    "topics must be a string column; column {:?} is {}",
                    column.name(),
                    column.data_type()
                )));
            }
            true
        }
        DataType::Struct(columns) => {
            let names: Vec<&str> = columns.iter().map(|c| c.name().as_str()).collect();
            return Err(PyTypeError::new_err(format!(
                "topics must be one string column; this table has {} columns ({}): select \
                 the topics' column",
                names.len(),
                names.join(", ")
            )));
        }
        other => {
            return Err(PyTypeError::new_err(format!(
                "topics must be an Arrow string, large_string or string_view array (or a \
                 dictionary of one), not {other}"
            )))
        }
    };
    // A stream's chunks are read holding the GIL: its producer may be Python code.
    let chunks: Vec<ArrayRef> = match input {
        AnyArray::Array(array) => vec![array.into_inner().0],
        AnyArray::Stream(stream) => stream
            .into_reader()?
            .collect::<Result<_, _>>()
            .map_err(|e| PyValueError::new_err(format!("reading the topics' stream: {e}")))?,
    };
    if !column {
        return Ok(chunks);
    }
    chunks
        .iter()
        .map(|chunk| only_column(chunk.as_ref()))
        .collect()
}

/// The one column of a table's chunk (a struct array of one string field), null where either
/// the row or its value is.
fn only_column(chunk: &dyn Array) -> PyResult<ArrayRef> {
    let rows = chunk.as_struct();
    let column = rows.column(0);
    if rows.null_count() == 0 {
        return Ok(column.clone());
    }
    let nulls = NullBuffer::union(rows.nulls(), column.nulls());
    let data = column
        .to_data()
        .into_builder()
        .nulls(nulls)
        .build()
        .map_err(|e| PyValueError::new_err(format!("malformed Arrow table of topics: {e}")))?;
    Ok(make_array(data))
}

/// An Arrow array made of an object without the `PyCapsule` interface: a pandas column
/// (before pandas 3.0 a `Series` has none) through `pyarrow.array(obj, from_pandas=True)`,
/// without a copy for an Arrow-backed dtype (a column of Python strings is converted, as
/// pandas 3.0's own interface converts it); any other object with pyarrow's
/// `__arrow_array__`. `None` for anything else.
fn pyarrow_array<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = obj.py();
    let pandas = obj.get_type().module().is_ok_and(|module| {
        module
            .to_str()
            .is_ok_and(|m| m == "pandas" || m.starts_with("pandas."))
    });
    if pandas {
        let pyarrow = py.import("pyarrow").map_err(|e| {
            PyTypeError::new_err(format!(
                "reading a pandas column as Arrow needs pyarrow: {e}"
            ))
        })?;
        let options = PyDict::new(py);
        options.set_item("from_pandas", true)?;
        return pyarrow
            .call_method("array", (obj,), Some(&options))
            .map(Some);
    }
    if obj.hasattr("__arrow_array__")? {
        return obj.call_method0("__arrow_array__").map(Some);
    }
    Ok(None)
}

/// `Matcher.lookup_arrow`, documented there.
pub fn lookup_arrow<'py>(
    py: Python<'py>,
    matcher: &PyMatcher,
    topics: &Bound<'py, PyAny>,
    collect_errors: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let chunks = topic_chunks(topics)?;
    let rows: usize = chunks.iter().map(Array::len).sum();
    let engine = matcher.engine();
    // The work is sized (and timed, per lookup) by the lookups it makes: a dictionary's rows
    // that repeat its values cost a copy each.
    let built = matcher.cost().run(py, lookups(&chunks, engine), || {
        // The C Data Interface trusts its producer; a hand-made array (`from_buffers`) may
        // still break the format: offsets out of order or out of bounds, text that is not
        // UTF-8. One pass over the bytes checks it all before any topic is read.
        // (An empty chunk has nothing to read; its import may size its data buffer to 0 under
        // a non-zero first offset, which a check would refuse.)
        for chunk in chunks.iter().filter(|c| !c.is_empty()) {
            chunk
                .to_data()
                .validate_full()
                .map_err(|e| Stop::Malformed(e.to_string()))?;
        }
        let mut lists = Lists::new(rows, matcher.cost().ids_capacity(rows), collect_errors);
        let size = WINDOW.min(matcher.cost().topics_for_ids(KEPT_IDS / 2));
        let mut window = Vec::with_capacity(size.min(rows));
        let mut first_row = 0;
        with_ids(|ids| {
            let mut scratch = Scratch {
                topics: Vec::new(),
                ids: std::mem::take(ids),
                ends: Vec::new(),
                signals: Signals::new(),
                pin: crossbeam_epoch::pin(),
            };
            let mut look_up = || {
                for chunk in &chunks {
                    if by_value(chunk.as_ref(), engine) {
                        // The rows before it first, then the chunk's, from its values'.
                        lists.push_window(engine, first_row, &window, &mut scratch)?;
                        first_row += window.len();
                        window.clear();
                        if lists.push_dictionary(
                            engine,
                            first_row,
                            chunk.as_ref(),
                            size,
                            &mut scratch,
                        )? {
                            first_row += chunk.len();
                            continue;
                        }
                    }
                    lists.push_rows(
                        engine,
                        &mut first_row,
                        chunk.as_ref(),
                        size,
                        &mut window,
                        &mut scratch,
                    )?;
                }
                lists.push_window(engine, first_row, &window, &mut scratch)
            };
            let done = look_up();
            *ids = scratch.ids;
            done
        })?;
        matcher.cost().record_ids(lists.values.len(), rows);
        Ok(lists.finish())
    })?;
    let (lists, errors) = built.map_err(|stop| match stop {
        Stop::Malformed(why) => {
            PyValueError::new_err(format!("malformed Arrow string array: {why}"))
        }
        Stop::Invalid(row, e) => errors::to_py_context(e, &format!("topic at index {row}")),
        Stop::Overflow => PyValueError::new_err(
            "a batch's result holds more than 2^31 - 1 subscriber indices: split the batch",
        ),
        Stop::Interrupted(raised) => raised,
    })?;
    let lists = Bound::new(py, ArrowArray::new(lists, "subscribers"))?.into_any();
    match errors {
        None => Ok(lists),
        Some(errors) => {
            let errors = Bound::new(py, ArrowArray::new(errors, "error"))?.into_any();
            Ok(PyTuple::new(py, [lists, errors])?.into_any())
        }
    }
}
