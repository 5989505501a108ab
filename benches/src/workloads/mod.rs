//! The workloads, one module each: the exact files of the "Fast Topic Matching" benchmark
//! (`ftm`), the five-level demo space of "Fast topic matching" (`seed5`), the hot/cold
//! microbenchmarks of "Fast Topic Matching", a large IoT-shaped set at several sizes, and the
//! high fan-out sets of the Python boundary benchmark.

pub mod fanout;
pub mod ftm;
pub mod large;
pub mod micro;
pub mod seed5;
