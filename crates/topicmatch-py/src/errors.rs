//! The exception hierarchy: `TopicMatchError` at the root; `InvalidPattern`, `InvalidTopic`,
//! `InvalidSubscriber` and `LimitExceeded` also subclass `ValueError`, so `except ValueError`
//! keeps working. A value of the wrong type raises `TypeError`, and a bad configuration value
//! (a limit, an algorithm name) plain `ValueError`: those are the caller's bugs, not bad data.

use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use topicmatch_core::Error;

static TOPIC_MATCH_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static INVALID_PATTERN: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static INVALID_TOPIC: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static LIMIT_EXCEEDED: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static INVALID_SUBSCRIBER: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Creates `name` as a subclass of `bases` with `builtins.type`, which (unlike
/// `create_exception!`) allows several bases.
fn new_class<'py>(
    py: Python<'py>,
    name: &str,
    doc: &str,
    bases: &[Bound<'py, PyAny>],
) -> PyResult<Bound<'py, PyType>> {
    let dict = PyDict::new(py);
    dict.set_item("__doc__", doc)?;
    dict.set_item("__module__", "topicmatch")?;
    let bases = PyTuple::new(py, bases)?;
    let class = py
        .get_type::<PyType>()
        .call1((name, bases, dict))?
        .cast_into::<PyType>()?;
    Ok(class)
}

/// Creates the classes and adds them to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let root = new_class(
        py,
        "TopicMatchError",
        "Base class of every error topicmatch raises.",
        &[py.get_type::<PyException>().into_any()],
    )?;
    let value_error = py.get_type::<PyValueError>().into_any();
    let sub = |name: &str, doc: &str| {
        new_class(
            py,
            name,
            doc,
            &[root.clone().into_any(), value_error.clone()],
        )
    };
    let pattern = sub(
        "InvalidPattern",
        "A subscription pattern breaks its dialect's rules.",
    )?;
    let topic = sub(
        "InvalidTopic",
        "A published topic breaks its dialect's rules.",
    )?;
    let subscriber = sub(
        "InvalidSubscriber",
        "A subscriber cannot be stored: a str that is not valid UTF-8 (a lone surrogate) or an \
         int outside the signed 64-bit range.",
    )?;
    let limit = sub(
        "LimitExceeded",
        "A configured limit (max_topic_bytes, max_levels, max_subscriptions) was exceeded.",
    )?;
    for (cell, class) in [
        (&TOPIC_MATCH_ERROR, &root),
        (&INVALID_PATTERN, &pattern),
        (&INVALID_TOPIC, &topic),
        (&INVALID_SUBSCRIBER, &subscriber),
        (&LIMIT_EXCEEDED, &limit),
    ] {
        let _ = cell.set(py, class.clone().unbind());
        m.add(class.name()?, class)?;
    }
    Ok(())
}

fn class(py: Python<'_>, cell: &PyOnceLock<Py<PyType>>) -> Py<PyType> {
    cell.get(py)
        .expect("exception classes are created when the module loads")
        .clone_ref(py)
}

/// A `PyErr` of class `cell` with `message`.
fn raise(cell: &PyOnceLock<Py<PyType>>, message: String) -> PyErr {
    Python::attach(|py| PyErr::from_type(class(py, cell).into_bound(py), message))
}

/// Maps a core error to its exception.
#[allow(clippy::needless_pass_by_value)] // Taken by value to serve as `map_err(to_py)`.
pub fn to_py(err: Error) -> PyErr {
    with_message(&err, err.to_string())
}

/// [`to_py`] with `context` before the message (`"{context}: {message}"`).
#[allow(clippy::needless_pass_by_value)] // As `to_py`.
pub fn to_py_context(err: Error, context: &str) -> PyErr {
    with_message(&err, format!("{context}: {err}"))
}

/// `err`'s exception class with `message`.
fn with_message(err: &Error, message: String) -> PyErr {
    match err {
        Error::InvalidPattern { .. } | Error::InvalidCriteria(_) => {
            raise(&INVALID_PATTERN, message)
        }
        Error::InvalidTopic { .. } => raise(&INVALID_TOPIC, message),
        Error::LimitExceeded { .. } => raise(&LIMIT_EXCEEDED, message),
        Error::InvalidArgument(_) => PyValueError::new_err(message),
    }
}

/// `InvalidPattern` with a message (input errors found in the binding layer).
pub fn invalid_pattern(message: String) -> PyErr {
    raise(&INVALID_PATTERN, message)
}

/// `InvalidTopic` with a message (input errors found in the binding layer).
pub fn invalid_topic(message: String) -> PyErr {
    raise(&INVALID_TOPIC, message)
}

/// `InvalidTopic` for a topic that is not valid UTF-8 (a `str` with a lone surrogate).
pub fn lone_surrogate_topic(dialect: topicmatch_core::Dialect) -> PyErr {
    invalid_topic(format!(
        "invalid {dialect} topic: not valid UTF-8 (it contains a lone surrogate)"
    ))
}

/// `InvalidSubscriber` with a message.
pub fn invalid_subscriber(message: &str) -> PyErr {
    raise(&INVALID_SUBSCRIBER, message.to_owned())
}

/// `TopicMatchError` for a failure that is not the caller's (a caught panic).
pub fn internal(message: String) -> PyErr {
    raise(&TOPIC_MATCH_ERROR, message)
}
