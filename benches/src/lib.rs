//! Workloads and baselines shared by the benchmark groups.

use std::path::PathBuf;

use rustc_hash::FxHashMap;
use topicmatch_core::{Algorithm, Dialect, Engine, Limits, Subscriber, SubscriberId};

/// A set of subscriptions and a stream of topics to look up.
pub struct Workload {
    /// The workload's name, as benchmark ids print it.
    pub name: &'static str,
    /// The dialect of every pattern and topic.
    pub dialect: Dialect,
    /// (pattern, subscriber) pairs.
    pub subscriptions: Vec<(String, i64)>,
    /// Topics, in lookup order.
    pub topics: Vec<String>,
}

fn ftm_dir() -> PathBuf {
    std::env::var_os("TOPICMATCH_FTM_DIR").map_or_else(
        || {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../shared/workloads/ftm"
            ))
        },
        PathBuf::from,
    )
}

/// The seed benchmark's exact throughput workload (`shared/workloads/ftm`): 1,000
/// subscriptions (subscriber = line number) and 100,000 topics.
pub fn ftm() -> Workload {
    let read = |file: &str| -> Vec<String> {
        let path = ftm_dir().join(file);
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .lines()
            .map(str::to_owned)
            .collect()
    };
    Workload {
        name: "ftm",
        dialect: Dialect::Amqp,
        subscriptions: read("ftm_subs.txt").into_iter().zip(0..).collect(),
        topics: read("ftm_msgs.txt"),
    }
}

impl Workload {
    /// An engine of `algorithm` holding every subscription.
    pub fn engine(&self, algorithm: Algorithm) -> Engine {
        let engine = Engine::new(self.dialect, algorithm, Limits::for_dialect(self.dialect))
            .expect("valid limits");
        for (pattern, subscriber) in &self.subscriptions {
            engine
                .subscribe(pattern, &Subscriber::Int(*subscriber))
                .expect("workload patterns are valid");
        }
        engine
    }
}

/// The floor: one exact-topic hash-map lookup per topic (the fast hasher the project uses),
/// mapping each distinct topic to its precomputed subscriber ids. No matcher can be cheaper.
pub struct Floor {
    map: FxHashMap<String, Vec<SubscriberId>>,
}

impl Floor {
    /// Precomputes every distinct topic's answer with `engine`.
    pub fn new(engine: &Engine, topics: &[String]) -> Self {
        let mut map = FxHashMap::default();
        for topic in topics {
            map.entry(topic.clone()).or_insert_with(|| {
                let mut ids = Vec::new();
                engine.lookup_into(topic, &mut ids).expect("valid topic");
                ids
            });
        }
        Floor { map }
    }

    /// Copies the subscriber ids of `topic` into `out`, as a matcher would.
    #[inline]
    pub fn lookup_into(&self, topic: &str, out: &mut Vec<SubscriberId>) {
        if let Some(ids) = self.map.get(topic) {
            out.extend_from_slice(ids);
        }
    }
}
