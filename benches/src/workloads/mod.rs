//! The workloads, one module each: the seed's exact files, the seeds' five-level demo space,
//! the seed's hot/cold microbenchmarks, and a large IoT-shaped set at several sizes.

pub mod ftm;
pub mod large;
pub mod micro;
pub mod seed5;
