//! The only place the concurrent algorithms get their atomics from: `std` normally,
//! [`loom`](https://docs.rs/loom)'s model-checked versions under `--cfg loom`, so the same code
//! runs in the loom models (`tests/loom_cstrie.rs`, `make loom`).
//!
//! `Arc` is `std`'s in both builds on purpose: its reference counts are trusted library code,
//! and letting loom branch on every count change of a persistent map's path copy would explode
//! the models' state space without checking anything of ours.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

pub(crate) use std::sync::Arc;
