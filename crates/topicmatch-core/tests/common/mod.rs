//! Helpers shared by the integration tests: the case table and engine builders.
#![allow(dead_code)]

use serde_json::Value;
use topicmatch_core::{Algorithm, Config, Dialect, Engine, Limits, Subscriber};

/// The shared case table, also read by pytest.
pub fn cases() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/cases/conformance.json"
    );
    let text = std::fs::read_to_string(path).expect("case table exists");
    serde_json::from_str(&text).expect("case table is JSON")
}

pub fn dialect(v: &Value) -> Dialect {
    v.as_str().unwrap().parse().unwrap()
}

/// The config of `dialect` with `limits`.
pub fn config(dialect: Dialect, limits: Limits) -> Config {
    let mut config = Config::new(dialect);
    config.limits = limits;
    config
}

pub fn engine(dialect: Dialect, algorithm: Algorithm) -> Engine {
    Engine::new(dialect, algorithm, Limits::for_dialect(dialect)).unwrap()
}

pub fn sorted(mut subs: Vec<Subscriber>) -> Vec<Subscriber> {
    subs.sort();
    subs
}
