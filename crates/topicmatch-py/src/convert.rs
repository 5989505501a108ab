//! Conversions between Python values and the core's owned data.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyString};
use topicmatch_core::{Dialect, Subscriber};

use crate::errors;

/// A setting given by name (`dialect`, `algorithm`, `group_policy`): a `str` (else a
/// `TypeError` naming the argument) that the core reads (else its `ValueError`, which lists
/// the names it knows).
pub fn setting<T>(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<T>
where
    T: std::str::FromStr<Err = topicmatch_core::Error>,
{
    let s = obj
        .cast::<PyString>()
        .map_err(|_| PyTypeError::new_err(format!("{name} must be str, not {}", type_name(obj))))?;
    // A lone surrogate, read as U+FFFD, is no name the core knows.
    s.to_string_lossy().parse().map_err(errors::to_py)
}

/// A Python `str`, or `None` if it is not valid UTF-8 (a lone surrogate).
fn utf8(s: &Bound<'_, PyString>) -> Option<String> {
    s.to_str().ok().map(str::to_owned)
}

/// Borrows a pattern: a `str` (else `TypeError`) of valid UTF-8 (else `InvalidPattern`),
/// without copying it (as [`topic_str`]).
pub fn pattern_text<'a>(obj: &'a Bound<'_, PyAny>, dialect: Dialect) -> PyResult<&'a str> {
    let s = obj.cast::<PyString>().map_err(|_| {
        PyTypeError::new_err(format!("pattern must be str, not {}", type_name(obj)))
    })?;
    s.to_str()
        .map_err(|_| errors::lone_surrogate_pattern(s, dialect))
}

/// Borrows a topic: a `str` (else `TypeError`) of valid UTF-8 (else `InvalidTopic`), without
/// copying it (CPython keeps a `str`'s UTF-8 form alive as long as the object).
pub fn topic_str<'a>(obj: &'a Bound<'_, PyAny>, dialect: Dialect) -> PyResult<&'a str> {
    let s = obj
        .cast::<PyString>()
        .map_err(|_| PyTypeError::new_err(format!("topic must be str, not {}", type_name(obj))))?;
    s.to_str()
        .map_err(|_| errors::lone_surrogate_topic(s, dialect))
}

/// Extracts a subscriber: an `int` in the 64-bit range or a `str` of valid UTF-8 (else
/// `InvalidSubscriber`; any other type: `TypeError`).
pub fn subscriber(obj: &Bound<'_, PyAny>) -> PyResult<Subscriber> {
    if let Ok(s) = obj.cast::<PyString>() {
        return utf8(s)
            .map(|s| Subscriber::Str(s.into_boxed_str()))
            .ok_or_else(|| {
                errors::invalid_subscriber(
                    "subscriber is not valid UTF-8 (it contains a lone surrogate)",
                )
            });
    }
    if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>() {
        return obj.extract::<i64>().map(Subscriber::Int).map_err(|_| {
            errors::invalid_subscriber("an int subscriber must fit in 64 bits (signed)")
        });
    }
    Err(PyTypeError::new_err(format!(
        "subscriber must be str or int, not {}",
        type_name(obj)
    )))
}

/// Extracts an optional limit keyword: `None`, or an `int` of at least 1 (else `ValueError`;
/// a non-int is a `TypeError`). Never `OverflowError`: any int out of range is a `ValueError`.
pub fn limit(obj: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<usize>> {
    at_least(obj, name, 1, "a positive")
}

/// A limit as Python shows it: `None` where it is unbounded (`usize::MAX`).
pub fn limit_or_none(limit: usize) -> Option<usize> {
    (limit != usize::MAX).then_some(limit)
}

/// Extracts an optional cap keyword, as [`limit`] does, where 0 is a cap too (none allowed).
pub fn cap(obj: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<usize>> {
    at_least(obj, name, 0, "a non-negative")
}

/// `None`, or an `int` of at least `least`, described as `what` integer in the error.
fn at_least(
    obj: Option<&Bound<'_, PyAny>>,
    name: &str,
    least: usize,
    what: &str,
) -> PyResult<Option<usize>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    if !obj.is_instance_of::<PyInt>() || obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "{name} must be int or None, not {}",
            type_name(obj)
        )));
    }
    match obj.extract::<usize>() {
        Ok(v) if v >= least => Ok(Some(v)),
        _ => Err(PyValueError::new_err(format!(
            "{name} must be {what} integer (at most {}), got {obj}",
            usize::MAX
        ))),
    }
}

/// Extracts a subscription id: an `int` (else `TypeError`); `None` if no id can have this value
/// (negative or past 64 bits), which simply names no subscription.
pub fn subscription_id(obj: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
    if !obj.is_instance_of::<PyInt>() || obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "subscription_id must be int, not {}",
            type_name(obj)
        )));
    }
    Ok(obj.extract::<u64>().ok())
}

/// A subscriber's canonical object, the one its matcher's object table keeps: the caller's
/// own if it is an exact `str` or `int`, else an exact one of the same value (a subclass
/// instance is not kept: it may carry state).
pub fn canonical(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    value: &Subscriber,
) -> PyResult<Py<PyAny>> {
    if obj.is_exact_instance_of::<PyString>() || obj.is_exact_instance_of::<PyInt>() {
        return Ok(obj.clone().unbind());
    }
    Ok(subscriber_to_py(py, value)?.unbind())
}

/// A subscriber as a Python object.
pub fn subscriber_to_py<'py>(py: Python<'py>, s: &Subscriber) -> PyResult<Bound<'py, PyAny>> {
    Ok(match s {
        Subscriber::Int(i) => i.into_pyobject(py)?.into_any(),
        Subscriber::Str(s) => PyString::new(py, s).into_any(),
    })
}

/// The name of `obj`'s type as an error message gives it: `int`, `numpy.bool`, `module.Class`.
pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    let ty = obj.get_type();
    let name = ty.name().map_or_else(|_| "?".to_owned(), |n| n.to_string());
    // A type of another module by its module too: numpy's `bool` is not Python's.
    match ty.module() {
        Ok(module) if module.to_str().is_ok_and(|m| m != "builtins") => {
            format!("{module}.{name}")
        }
        _ => name,
    }
}

/// The module's attribute `name`, by the path pickle finds it at: what a `__reduce__` names
/// to rebuild its object.
pub fn native<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("topicmatch._native")?.getattr(name)
}
