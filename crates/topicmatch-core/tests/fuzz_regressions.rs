//! Replays the fuzz inputs committed under `fuzz/regressions/<target>/` through the very
//! harness the fuzzer runs, so plain `cargo test` keeps every input found interesting.

#[path = "../../../fuzz/src/lib.rs"]
mod harness;

use std::fs;
use std::path::PathBuf;

fn replay(target: &str, check: fn(&[u8])) {
    let dir: PathBuf = [env!("CARGO_MANIFEST_DIR"), "../../fuzz/regressions", target]
        .iter()
        .collect();
    let mut count = 0;
    for entry in fs::read_dir(&dir).expect("regression folder") {
        let path = entry.expect("readable folder").path();
        let data = fs::read(&path).expect("readable input");
        check(&data);
        count += 1;
    }
    assert!(count > 0, "no inputs in {}", dir.display());
}

#[test]
fn parse_regressions() {
    replay("parse", harness::parse);
}

#[test]
fn differential_regressions() {
    replay("differential", harness::differential);
}

#[test]
fn filtered_regressions() {
    replay("filtered", harness::filtered);
}
