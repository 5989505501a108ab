//! The `floor` baseline: what no matcher can beat.

use rustc_hash::FxHashMap;
use topicmatch_core::{Engine, SubscriberId};

/// One exact-topic hash-map lookup per topic (the fast hasher the project uses), mapping each
/// distinct topic to its precomputed subscriber ids. No matcher can be cheaper.
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

    /// An empty floor, for the subscribe and unsubscribe rows.
    pub fn empty() -> Self {
        Floor {
            map: FxHashMap::default(),
        }
    }

    /// Copies the subscriber ids of `topic` into `out`, as a matcher would.
    #[inline]
    pub fn lookup_into(&self, topic: &str, out: &mut Vec<SubscriberId>) {
        if let Some(ids) = self.map.get(topic) {
            out.extend_from_slice(ids);
        }
    }

    /// The floor of a subscribe: one hash-map insert of the pattern text.
    #[inline]
    pub fn insert(&mut self, pattern: &str, subscriber: SubscriberId) {
        self.map
            .entry(pattern.to_owned())
            .or_default()
            .push(subscriber);
    }

    /// The floor of an unsubscribe: one hash-map removal of the pattern text.
    #[inline]
    pub fn remove(&mut self, pattern: &str) -> bool {
        self.map.remove(pattern).is_some()
    }
}
