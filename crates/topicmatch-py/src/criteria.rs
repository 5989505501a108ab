//! Field criteria in Python: `tm.PRESENT`, `tm.lt/le/gt/ge`, and the conversions of criteria
//! dicts, modes and messages into the core's owned data (and back, for pickling).
//!
//! Decisions: a criterion value is str, int (from -2^63 to 2^64 - 1), float (not NaN) or
//! bool, a tuple, list, set or frozenset of those ("in"), `PRESENT` or a comparison; anything
//! else is `InvalidPattern`. A message is a mapping with str keys (else `TypeError`); a field
//! whose value is of another kind (None, bytes, a list, an int outside that range, NaN...)
//! counts as present but equals nothing and compares with nothing.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{
    PyBool, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PyMapping, PyMappingMethods, PySet,
    PyString, PyTuple,
};
use topicmatch_core::fields::{Comparison, Criterion, Filter, Message, Mode, Number, Value};

use crate::{convert, errors};

/// The marker of a presence criterion: `tm.PRESENT`.
#[pyclass(frozen, name = "Present", module = "topicmatch._native")]
pub struct PyPresent;

#[pymethods]
#[allow(clippy::unused_self)] // Python calls these as methods.
impl PyPresent {
    fn __repr__(&self) -> &'static str {
        "PRESENT"
    }

    fn __reduce__(&self) -> &'static str {
        "PRESENT"
    }
}

static PRESENT: PyOnceLock<Py<PyPresent>> = PyOnceLock::new();

/// The one `PRESENT` object.
pub fn present(py: Python<'_>) -> PyResult<Bound<'_, PyPresent>> {
    let present = PRESENT.get_or_try_init(py, || Py::new(py, PyPresent))?;
    Ok(present.bind(py).clone())
}

/// A numeric comparison criterion, made by `tm.lt`, `tm.le`, `tm.gt` or `tm.ge`.
#[pyclass(frozen, name = "Comparison", module = "topicmatch._native")]
pub struct PyComparison {
    op: Comparison,
    value: Number,
}

#[pymethods]
impl PyComparison {
    /// The operator's name: "lt", "le", "gt" or "ge".
    #[getter]
    fn op(&self) -> &'static str {
        self.op.name()
    }

    /// The threshold.
    #[getter]
    fn value<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        number_to_py(py, self.value)
    }

    fn __repr__(&self) -> String {
        format!("{}({})", self.op.name(), self.value)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyComparison>()
            .is_ok_and(|o| o.get().op == self.op && o.get().value == self.value)
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (self.op, self.value).hash(&mut h);
        h.finish()
    }

    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        let make = convert::native(py, self.op.name())?;
        Ok((make, (number_to_py(py, self.value)?,)))
    }
}

fn comparison(op: Comparison, value: &Bound<'_, PyAny>) -> PyResult<PyComparison> {
    let value = scalar(value)?.map_err(|why| invalid(&format!("{}: {why}", op.name())))?;
    let Some(number) = value.number() else {
        return Err(invalid(&format!(
            "{} needs a number, not the {} {value:?}",
            op.name(),
            value.kind()
        )));
    };
    Ok(PyComparison { op, value: number })
}

fn invalid(why: &str) -> PyErr {
    errors::invalid_pattern(format!("invalid criteria: {why}"))
}

/// The criterion "field < value".
#[pyfunction]
pub fn lt(value: &Bound<'_, PyAny>) -> PyResult<PyComparison> {
    comparison(Comparison::Lt, value)
}

/// The criterion "field <= value".
#[pyfunction]
pub fn le(value: &Bound<'_, PyAny>) -> PyResult<PyComparison> {
    comparison(Comparison::Le, value)
}

/// The criterion "field > value".
#[pyfunction]
pub fn gt(value: &Bound<'_, PyAny>) -> PyResult<PyComparison> {
    comparison(Comparison::Gt, value)
}

/// The criterion "field >= value".
#[pyfunction]
pub fn ge(value: &Bound<'_, PyAny>) -> PyResult<PyComparison> {
    comparison(Comparison::Ge, value)
}

/// An `int` from -2^63 to 2^64 - 1 as a number, else `None`.
fn integer(obj: &Bound<'_, PyAny>) -> Option<Number> {
    obj.extract::<i64>()
        .map(Number::int)
        .or_else(|_| obj.extract::<u64>().map(Number::uint))
        .ok()
}

/// An object that is an integer by Python's protocol (`__index__`, as `operator.index` reads
/// it) without being an `int`: numpy's and other libraries' integer scalars. Its `int`, or
/// `None` when it has no `__index__` or that refuses with `TypeError` (a numpy `bool`); any
/// other exception its `__index__` raises (`KeyboardInterrupt`, `MemoryError`, a bug of its
/// own) is the caller's.
fn index_int<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    // SAFETY: `obj` is a live object and the GIL (or the attached thread state) is held; a
    // null result is an exception, which `from_owned_ptr_or_err` takes.
    let index = unsafe {
        if pyo3::ffi::PyIndex_Check(obj.as_ptr()) == 0 {
            return Ok(None);
        }
        Bound::from_owned_ptr_or_err(obj.py(), pyo3::ffi::PyNumber_Index(obj.as_ptr()))
    };
    match index {
        Ok(i) => Ok(Some(i)),
        Err(e) if e.is_instance_of::<PyTypeError>(obj.py()) => Ok(None),
        Err(e) => Err(e),
    }
}

/// A message value, or `None` for a kind no criterion can name; an error only from an
/// integer-like object's own `__index__` ([`index_int`]).
fn message_value(obj: &Bound<'_, PyAny>) -> PyResult<Option<Value>> {
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Some(Value::Bool(b.is_true())));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(integer(obj).map(Value::Num));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Number::float(f.value()).map(Value::Num));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(s.to_str().ok().map(Value::from));
    }
    Ok(index_int(obj)?.and_then(|i| integer(&i)).map(Value::Num))
}

/// A criterion's scalar value: str, int, float or bool, else the reason it is not (an
/// exception an integer-like object's `__index__` raises, other than `TypeError`, propagates).
fn scalar(obj: &Bound<'_, PyAny>) -> PyResult<Result<Value, String>> {
    if let Some(value) = builtin_scalar(obj) {
        return Ok(value);
    }
    Ok(match index_int(obj)? {
        Some(i) => integer(&i).map(Value::Num).ok_or_else(|| out_of_range(&i)),
        None => Err(format!(
            "a value must be str, int, float or bool (or a tuple, list or set of them, PRESENT, \
             or tm.lt/le/gt/ge), not {}",
            convert::type_name(obj)
        )),
    })
}

/// Why integer `i` is not a value.
fn out_of_range(i: &Bound<'_, PyAny>) -> String {
    format!("the integer {i} is outside -2**63 to 2**64 - 1 (a 64-bit integer)")
}

/// [`scalar`] of a `bool`, `int`, `float` or `str` (subclasses included); `None` for others.
fn builtin_scalar(obj: &Bound<'_, PyAny>) -> Option<Result<Value, String>> {
    if let Ok(b) = obj.cast::<PyBool>() {
        return Some(Ok(Value::Bool(b.is_true())));
    }
    if obj.is_instance_of::<PyInt>() {
        return Some(
            integer(obj)
                .map(Value::Num)
                .ok_or_else(|| out_of_range(obj)),
        );
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Some(
            Number::float(f.value())
                .map(Value::Num)
                .ok_or_else(|| "NaN is not a value: it equals nothing".to_owned()),
        );
    }
    let s = obj.cast::<PyString>().ok()?;
    Some(
        s.to_str()
            .map(Value::from)
            .map_err(|_| "a str value is not valid UTF-8 (a lone surrogate)".to_owned()),
    )
}

/// One criterion from its Python form.
fn criterion(field: &str, obj: &Bound<'_, PyAny>) -> PyResult<Criterion> {
    if obj.is_instance_of::<PyPresent>() {
        return Ok(Criterion::Present);
    }
    if let Ok(c) = obj.cast::<PyComparison>() {
        let c = c.get();
        return Ok(Criterion::compare(c.op, c.value));
    }
    let is_set = obj.is_instance_of::<PyTuple>()
        || obj.is_instance_of::<PyList>()
        || obj.is_instance_of::<PySet>()
        || obj.is_instance_of::<PyFrozenSet>();
    if is_set {
        obj.try_iter()?
            .map(|v| scalar(&v?)?.map_err(|why| invalid(&format!("field {field:?}: {why}"))))
            .collect::<PyResult<Vec<_>>>()
            .map(Criterion::In)
    } else {
        scalar(obj)?
            .map(Criterion::Eq)
            .map_err(|why| invalid(&format!("field {field:?}: {why}")))
    }
}

/// A mode of `n` criteria: "all", "any" or an int k.
fn mode(obj: &Bound<'_, PyAny>, n: usize) -> PyResult<Mode> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Mode::parse(&s.to_string_lossy()).map_err(errors::to_py);
    }
    if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>() {
        // A k in range of usize but not of 1..=n is refused by `Filter::new`, one past it
        // (negative, huge) here, in the same words.
        return obj.extract::<usize>().map(Mode::AtLeast).map_err(|_| {
            invalid(&format!(
                "mode asks for at least {} of {n} criteria: k must be between 1 and {n}",
                obj.str().map_or_else(|_| "?".to_owned(), |r| r.to_string())
            ))
        });
    }
    Err(invalid(&format!(
        "unknown mode {}: expected \"all\", \"any\" or an int",
        obj.repr()
            .map_or_else(|_| "?".to_owned(), |r| r.to_string())
    )))
}

/// The items of a mapping with str keys, else `TypeError` naming `what`.
fn str_items<'py>(
    obj: &Bound<'py, PyAny>,
    what: &str,
) -> PyResult<Vec<(Bound<'py, PyString>, Bound<'py, PyAny>)>> {
    let pairs: Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)> = if let Ok(d) = obj.cast::<PyDict>() {
        d.iter().collect()
    } else if let Ok(m) = obj.cast::<PyMapping>() {
        m.items()?
            .iter()
            .map(|kv| kv.extract())
            .collect::<PyResult<_>>()?
    } else {
        return Err(PyTypeError::new_err(format!(
            "{what} must be a mapping of str keys, not {}",
            convert::type_name(obj)
        )));
    };
    pairs
        .into_iter()
        .map(|(k, v)| {
            let k = k
                .cast_into::<PyString>()
                .map_err(|e| not_str_key(what, e))?;
            Ok((k, v))
        })
        .collect()
}

/// The error for a key of `what` that is not a `str`.
fn not_str_key(what: &str, e: pyo3::CastIntoError<'_>) -> PyErr {
    PyTypeError::new_err(format!(
        "the keys of {what} must be str, not {}",
        convert::type_name(e.into_inner().as_any())
    ))
}

/// A filter from a criteria mapping and a mode.
pub fn filter(criteria: &Bound<'_, PyAny>, mode_obj: &Bound<'_, PyAny>) -> PyResult<Filter> {
    let mut out = Vec::new();
    for (k, v) in str_items(criteria, "criteria")? {
        let field = k
            .to_str()
            .map_err(|_| invalid("a field name is not valid UTF-8 (a lone surrogate)"))?;
        out.push((field.into(), criterion(field, &v)?));
    }
    let mode = mode(mode_obj, out.len())?;
    Filter::new(out, mode).map_err(errors::to_py)
}

/// A message from a mapping of str keys. Keys that are not valid UTF-8 cannot be named by any
/// criterion, so they are left out.
pub fn message(obj: &Bound<'_, PyAny>) -> PyResult<Message> {
    if let Ok(d) = obj.cast_exact::<PyDict>() {
        // The common case, read in place: a dict's exact `str` keys are distinct texts, so
        // each is added without a search. A `str` subclass may hash apart from an equal text:
        // from the first one on, each field is set (the last value of a text wins), as for
        // other mappings; keys that are not `str` are refused as below.
        // The items are taken before any value is read: reading one can run its `__index__`,
        // which may change the dict, and a dict must not change while it is iterated.
        let items: Vec<_> = d.iter().collect();
        let mut out = Message::with_capacity(items.len());
        let mut distinct = true;
        for (k, v) in items {
            distinct &= k.is_exact_instance_of::<PyString>();
            let k = k
                .cast_into::<PyString>()
                .map_err(|e| not_str_key("a message", e))?;
            if let Ok(field) = k.to_str() {
                if distinct {
                    out.push_new(field, message_value(&v)?);
                } else {
                    out.set(field, message_value(&v)?);
                }
            }
        }
        return Ok(out);
    }
    let mut out = Message::new();
    for (k, v) in str_items(obj, "a message")? {
        if let Ok(field) = k.to_str() {
            out.set(field, message_value(&v)?);
        }
    }
    Ok(out)
}

/// Every message of an iterable of mappings.
pub fn messages(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Message>> {
    if obj.cast::<PyMapping>().is_ok() {
        return Err(PyTypeError::new_err(
            "messages must be an iterable of mappings, not a single mapping",
        ));
    }
    let mut out = Vec::with_capacity(obj.len().unwrap_or(0));
    for item in obj.try_iter()? {
        out.push(message(&item?)?);
    }
    Ok(out)
}

fn number_to_py(py: Python<'_>, n: Number) -> PyResult<Bound<'_, PyAny>> {
    Ok(match (n.as_i64(), n.as_u64()) {
        (Some(i), _) => i.into_pyobject(py)?.into_any(),
        (None, Some(u)) => u.into_pyobject(py)?.into_any(),
        (None, None) => PyFloat::new(py, n.as_f64()).into_any(),
    })
}

fn value_to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Num(n) => number_to_py(py, *n)?,
        Value::Str(s) => PyString::new(py, s).into_any(),
    })
}

fn criterion_to_py<'py>(py: Python<'py>, c: &Criterion) -> PyResult<Bound<'py, PyAny>> {
    if let Some((op, value)) = c.comparison() {
        return Ok(Bound::new(py, PyComparison { op, value })?.into_any());
    }
    match c {
        Criterion::Eq(v) => value_to_py(py, v),
        Criterion::In(vs) => {
            let items = vs
                .iter()
                .map(|v| value_to_py(py, v))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(PyTuple::new(py, items)?.into_any())
        }
        _ => Ok(present(py)?.into_any()),
    }
}

/// A filter's criteria as a dict of their Python forms.
pub fn criteria_to_py<'py>(py: Python<'py>, f: &Filter) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (field, c) in f.criteria() {
        d.set_item(&**field, criterion_to_py(py, c)?)?;
    }
    Ok(d)
}

/// A filter's mode in its Python form: "all", "any" or k.
pub fn mode_to_py<'py>(py: Python<'py>, f: &Filter) -> PyResult<Bound<'py, PyAny>> {
    Ok(match f.mode() {
        Mode::All => PyString::new(py, "all").into_any(),
        Mode::Any => PyString::new(py, "any").into_any(),
        Mode::AtLeast(k) => k.into_pyobject(py)?.into_any(),
    })
}
