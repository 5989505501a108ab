//! The one place the GIL is released.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::prelude::*;

use crate::{errors, handoff};

thread_local! {
    /// When this thread last took the GIL back in [`detach`] (0: never): see `handoff`.
    static TAKEN_AT: Cell<u64> = const { Cell::new(0) };
}

/// Runs `work` with the GIL released, so other Python threads run meanwhile. A panic inside is
/// caught here and becomes `TopicMatchError`: no panic crosses into Python.
pub fn detach<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce() -> T + Send,
{
    let out = py.detach(|| {
        handoff::GIL.released(TAKEN_AT.get());
        let out = catch_unwind(AssertUnwindSafe(work));
        if handoff::spin_enabled() {
            handoff::GIL.wait_for_release();
        }
        out
    });
    TAKEN_AT.set(handoff::GIL.retaken());
    out.map_err(|panic| errors::internal(format!("internal error: {}", panic_message(&panic))))
}

/// Runs `work` holding the GIL, turning a panic into `TopicMatchError`.
pub fn guarded<T>(work: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(work)).unwrap_or_else(|panic| {
        Err(errors::internal(format!(
            "internal error: {}",
            panic_message(&panic)
        )))
    })
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic in the native code".to_owned()
    }
}
