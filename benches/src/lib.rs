//! Workloads and baselines shared by the benchmark groups.
//!
//! Every workload is generated deterministically (or read from the files of the "Fast Topic
//! Matching" benchmark, `ftm`), so two runs measure the same subscriptions and topics.
//! [`test_mode`] shrinks the large ones when the benches run as tests (`cargo test --benches`),
//! which builds without optimisation.

pub mod alloc;
pub mod floor;
pub mod rng;
pub mod rows;
pub mod threads;
pub mod workload;
pub mod workloads;

pub use floor::Floor;
pub use workload::Workload;
pub use workloads::fanout::{fanout, Shape};
pub use workloads::ftm::ftm;
pub use workloads::large::{large, scale, stored_topics};
pub use workloads::micro::{Micro, MICRO_PROBE_PATTERN, MICRO_PROBE_TOPIC};
pub use workloads::seed5::seed5;

/// Whether this process runs the benches as tests: criterion's rule (`cargo bench` passes
/// `--bench`; `cargo test --benches` does not; `cargo bench -- --test` asks for test mode).
pub fn test_mode() -> bool {
    let args: Vec<String> = std::env::args().collect();
    let bench = args.iter().any(|a| a == "--bench");
    let test = args.iter().any(|a| a == "--test");
    !bench || test
}

/// Picks the full size under `cargo bench` and the small one under test mode.
pub fn sized(full: usize, test: usize) -> usize {
    if test_mode() {
        test
    } else {
        full
    }
}

/// An example's command line, `[PASSES] [ALGORITHM...]`: the passes (`passes` if not given)
/// and the algorithms' names (`algorithms` if none is given).
pub fn passes_and_names(passes: usize, algorithms: &[&str]) -> (usize, Vec<String>) {
    let mut args = std::env::args().skip(1).peekable();
    let passes = match args.peek().map(|a| a.parse()) {
        Some(Ok(n)) => {
            args.next();
            n
        }
        _ => passes,
    };
    let mut names: Vec<String> = args.collect();
    if names.is_empty() {
        names = algorithms.iter().map(|&a| a.to_owned()).collect();
    }
    (passes, names)
}
