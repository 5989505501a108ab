//! The thin PyO3 layer over topicmatch-core, built by maturin as `topicmatch._native`.
//!
//! Inputs are read from their Python objects, the matching runs in the core (with the GIL
//! released in exactly one place, `gil`, and only where the work pays for the hand-over),
//! and results are built back. Subscribers are interned in the core's registry under dense
//! ids; the only Python objects stored in Rust are each held subscriber's `int`/`str`, in an
//! array indexed by that id (`objects`), so results are built by reference counting.

mod arrow;
mod batch;
mod convert;
mod criteria;
mod errors;
mod fields;
mod gil;
mod groups;
mod matcher;
mod objects;
mod relations;
mod rows;
mod store;
mod topics;

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use topicmatch_core::{Algorithm, Dialect};

/// Whether `pattern` matches `topic` under `dialect`, without building a matcher.
#[pyfunction]
#[pyo3(signature = (pattern, topic, dialect))]
fn matches(
    py: Python<'_>,
    pattern: &Bound<'_, PyAny>,
    topic: &Bound<'_, PyAny>,
    dialect: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    let dialect: Dialect = convert::setting(dialect, "dialect")?;
    let pattern = convert::pattern_text(pattern, dialect)?;
    let topic = convert::topic_str(topic, dialect)?;
    // The match is polynomial in the two word counts: only long texts pay for a hand-over.
    let long = pattern.len().saturating_mul(topic.len()) >= LONG_MATCH;
    gil::run_if(py, long, || {
        topicmatch_core::matches(dialect, pattern, topic)
    })?
    .map_err(errors::to_py)
}

/// `matches` releases the GIL when the product of the pattern's and the topic's lengths in
/// bytes reaches this (a 256-byte pattern against a 256-byte topic, some tens of
/// microseconds of matching at worst).
const LONG_MATCH: usize = 1 << 16;

/// Internal, for the test suite only: panics inside the native code, with the GIL released
/// (`detach`) or held (`guarded`), to prove that a panic reaches Python as `TopicMatchError`.
/// Not part of the API; it changes no state.
#[pyfunction]
#[pyo3(name = "_panic_for_tests")]
fn panic_for_tests(py: Python<'_>, release_gil: bool) -> PyResult<()> {
    if release_gil {
        gil::detach(py, || panic!("deliberate panic (detached)"))
    } else {
        gil::guarded(|| panic!("deliberate panic (guarded)"))
    }
}

#[pymodule(gil_used = false)]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    errors::register(m)?;
    m.add_class::<matcher::PyMatcher>()?;
    m.add_function(wrap_pyfunction!(matches, m)?)?;
    relations::register(m)?;
    m.add_function(wrap_pyfunction!(matcher::restore_matcher, m)?)?;
    m.add_class::<fields::PyFieldMatcher>()?;
    m.add_class::<criteria::PyComparison>()?;
    m.add_class::<criteria::PyPresent>()?;
    m.add("PRESENT", criteria::present(py)?)?;
    for f in [
        wrap_pyfunction!(criteria::lt, m)?,
        wrap_pyfunction!(criteria::le, m)?,
        wrap_pyfunction!(criteria::gt, m)?,
        wrap_pyfunction!(criteria::ge, m)?,
        wrap_pyfunction!(fields::restore_field_matcher, m)?,
    ] {
        m.add_function(f)?;
    }
    m.add_function(wrap_pyfunction!(panic_for_tests, m)?)?;
    store::register(m)?;
    m.add_class::<arrow::ArrowArray>()?;
    let names: Vec<&str> = Algorithm::ALL.iter().map(|a| a.name()).collect();
    m.add("ALGORITHMS", PyTuple::new(py, names)?)?;
    let dialects: Vec<&str> = Dialect::ALL.iter().map(|d| d.name()).collect();
    m.add("DIALECTS", PyTuple::new(py, dialects)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
