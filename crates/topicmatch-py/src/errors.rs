//! The exception hierarchy: `TopicMatchError` at the root; `InvalidPattern`, `InvalidTopic`,
//! `InvalidSubscriber` and `LimitExceeded` also subclass `ValueError`, so `except ValueError`
//! keeps working. A value of the wrong type raises `TypeError`, and a bad configuration value
//! (a limit, an algorithm name) plain `ValueError`: those are the caller's bugs, not bad data.

use std::fmt::Write;

use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple, PyType};
use topicmatch_core::error::SHOWN_CHARS;
use topicmatch_core::{Dialect, Error};

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
        "A configured limit (max_topic_bytes, max_levels, max_subscriptions, \
         max_multi_wildcards, a store's max_topics, a relation's max_work) was exceeded.",
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
        Error::InvalidPattern { .. } | Error::InvalidCriteria(_) | Error::InvalidGroup(_) => {
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

/// `InvalidTopic` for a topic that is not valid UTF-8 (a `str` with a lone surrogate), naming
/// the dialect, the text, the word and the character at fault.
pub fn lone_surrogate_topic(text: &Bound<'_, PyString>, dialect: Dialect) -> PyErr {
    invalid_topic(lone_surrogate(text, dialect, "topic"))
}

/// `InvalidPattern` for a pattern that is not valid UTF-8, as [`lone_surrogate_topic`].
pub fn lone_surrogate_pattern(text: &Bound<'_, PyString>, dialect: Dialect) -> PyErr {
    invalid_pattern(lone_surrogate(text, dialect, "pattern"))
}

/// The message for a `kind` ("pattern", "topic") of `dialect` that cannot be UTF-8: the text
/// (escaped as the core's messages show theirs, a lone surrogate as `\u{d800}`), the word
/// holding its first lone surrogate, that character's position and code point.
fn lone_surrogate(text: &Bound<'_, PyString>, dialect: Dialect, kind: &str) -> String {
    // Its code points as CPython holds them: UTF-32 with the surrogates passed through.
    let points: Vec<u32> = text
        .call_method1(
            pyo3::intern!(text.py(), "encode"),
            ("utf-32-le", "surrogatepass"),
        )
        .ok()
        .and_then(|b| b.cast_into::<PyBytes>().ok())
        .map(|b| {
            b.as_bytes()
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        })
        .unwrap_or_default();
    let Some(at) = points.iter().position(|&c| char::from_u32(c).is_none()) else {
        return format!("invalid {dialect} {kind}: not valid UTF-8 (it contains a lone surrogate)");
    };
    let separator = u32::from(dialect.separator());
    let word = points[..at].iter().filter(|&&c| c == separator).count();
    let mut shown = String::new();
    for &c in points.iter().take(SHOWN_CHARS) {
        match char::from_u32(c) {
            Some(c) => shown.extend(c.escape_debug()),
            None => {
                let _ = write!(shown, "\\u{{{c:x}}}");
            }
        }
    }
    if points.len() > SHOWN_CHARS {
        let _ = write!(shown, "... ({} characters)", points.len());
    }
    format!(
        "invalid {dialect} {kind} \"{shown}\": {} {}: not valid UTF-8: character {} is a lone \
         surrogate (U+{:04X})",
        dialect.word_name(),
        word + 1,
        at + 1,
        points[at]
    )
}

/// `InvalidSubscriber` with a message.
pub fn invalid_subscriber(message: &str) -> PyErr {
    raise(&INVALID_SUBSCRIBER, message.to_owned())
}

/// `TopicMatchError` for a failure that is not the caller's (a caught panic).
pub fn internal(message: String) -> PyErr {
    raise(&TOPIC_MATCH_ERROR, message)
}
