//! Pattern relations: the `covers` and `intersects` functions, and the work behind
//! `Matcher.covering` / `Matcher.intersecting` (kept here so the class stays small).

use pyo3::prelude::*;
use pyo3::types::PyList;
use topicmatch_core::relation::{Relation, DEFAULT_MAX_WORK};
use topicmatch_core::{Dialect, Engine};

use crate::{convert, errors, gil};

/// Whether `general` matches every valid topic that `specific` matches under `dialect`; gives
/// up with `LimitExceeded` once its work passes `max_work` (default: the core's bound).
#[pyfunction]
#[pyo3(signature = (general, specific, dialect, *, max_work = None))]
fn covers(
    py: Python<'_>,
    general: &Bound<'_, PyAny>,
    specific: &Bound<'_, PyAny>,
    dialect: &Bound<'_, PyAny>,
    max_work: Option<&Bound<'_, PyAny>>,
) -> PyResult<bool> {
    let dialect: Dialect = convert::setting(dialect, "dialect")?;
    let general = convert::pattern_text(general, dialect)?;
    let specific = convert::pattern_text(specific, dialect)?;
    let max_work = convert::limit(max_work, "max_work")?.unwrap_or(DEFAULT_MAX_WORK);
    gil::detach(py, || {
        topicmatch_core::covers_within(dialect, general, specific, max_work)
    })?
    .map_err(errors::to_py)
}

/// Whether some valid topic matches both `a` and `b` under `dialect`.
#[pyfunction]
#[pyo3(signature = (a, b, dialect))]
fn intersects(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    dialect: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    let dialect: Dialect = convert::setting(dialect, "dialect")?;
    let a = convert::pattern_text(a, dialect)?;
    let b = convert::pattern_text(b, dialect)?;
    gil::detach(py, || topicmatch_core::intersects(dialect, a, b))?.map_err(errors::to_py)
}

/// Registers the functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(covers, m)?)?;
    m.add_function(wrap_pyfunction!(intersects, m)?)?;
    Ok(())
}

/// The subscriptions of `engine` whose pattern stands in `relation` to `pattern`, as a list of
/// `(id, pattern, subscriber)` like `subscriptions()`, each held pattern decided within
/// `max_work` (default: the core's bound); the walk runs with the GIL released.
pub fn related<'py>(
    py: Python<'py>,
    engine: &Engine,
    relation: Relation,
    pattern: &Bound<'py, PyAny>,
    max_work: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    let text = convert::pattern_text(pattern, engine.dialect())?;
    let max_work = convert::limit(max_work, "max_work")?.unwrap_or(DEFAULT_MAX_WORK);
    let found = gil::detach(py, || engine.related_within(relation, text, max_work))?
        .map_err(errors::to_py)?;
    let list = PyList::empty(py);
    for s in found {
        let sub = convert::subscriber_to_py(py, &s.subscriber)?;
        list.append((s.id, &*s.pattern, sub))?;
    }
    Ok(list)
}
