//! The only place the concurrent algorithms get their atomics and shared pointers from: `std`
//! normally, [`loom`](https://docs.rs/loom)'s model-checked versions under `--cfg loom`, so the
//! same code runs in the loom models (`tests/loom_cstrie.rs`, `make loom`).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicPtr, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Mutex};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicPtr, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::Arc;
