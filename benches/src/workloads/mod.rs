//! The workloads, one module each: the exact files of the "Fast Topic Matching" benchmark
//! (`ftm`), the five-level demo space of "Fast topic matching" (`seed5`), the hot/cold
//! microbenchmarks of "Fast Topic Matching", and a large IoT-shaped set at several sizes.

pub mod ftm;
pub mod large;
pub mod micro;
pub mod seed5;
