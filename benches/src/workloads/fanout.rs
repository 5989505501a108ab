//! The high fan-out sets of the Python boundary benchmark (`topicmatch.bench.fanout`), for the
//! core alone: deep path-like topics that match hundreds of subscribers each, in MQTT syntax as
//! there, or written in AMQP or NATS syntax (the same matches: every filter ends in a
//! multi-word wildcard above a topic's last level, where the three dialects agree).
//!
//! - `cuts`: every node of an 8-level name tree cut into filters, each level of the prefix kept
//!   or replaced by `+`, then `#`: 255 filters match each topic, one subscriber each (a trie of
//!   about 200,000 nodes, larger than a cache);
//! - `crowds`: a 5-level tree, a `#` filter at every node and, from the fourth level down, its
//!   variants with one level replaced by `+`, each filter held by 32 subscribers: 384 per topic;
//! - `broadcast`: 20,000 clients, each subscribed to `fleet/#`, to its region's
//!   `fleet/<region>/#` (8 regions, every 8th client) and to its own `fleet/<region>/<client>/#`:
//!   a topic of one client matches 22,501 subscriptions, two of the three filters held by
//!   thousands (a broker's broadcast and group channels), and reaches every client once.
//!
//! The names are drawn by this crate's generator, so the trees match the Python ones in shape
//! and counts, not word for word.

use std::collections::BTreeSet;

use topicmatch_core::Dialect;

use crate::rng::Rng;
use crate::workload::Workload;

const NAMES: [&str; 16] = [
    "plant", "line", "cell", "robot", "axis", "motor", "drive", "sensor", "gauge", "valve", "pump",
    "tank", "belt", "arm", "joint", "camera",
];

/// The two shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Filters cut at every depth, every mix of `+`: 255 per topic.
    Cuts,
    /// Few filters, 32 subscribers each: 384 per topic.
    Crowds,
    /// Two filters held by thousands and one of one subscriber, the same 20,000 clients: 20,000
    /// per topic (22,501 matching subscriptions).
    Broadcast,
}

/// The `broadcast` shape's clients, regions and topics.
const CLIENTS: i64 = 20_000;
const REGIONS: i64 = 8;
const BROADCAST_TOPICS: usize = 256;

/// The `broadcast` shape in MQTT syntax: every client's three filters, client by client (so a
/// client's subscriber id is its number), and the status topics of some clients.
fn broadcast() -> (Vec<(String, i64)>, Vec<String>) {
    let own = |c: i64| format!("fleet/region{}/client{c}", c % REGIONS);
    let subscriptions = (0..CLIENTS)
        .flat_map(|c| {
            [
                ("fleet/#".to_owned(), c),
                (format!("fleet/region{}/#", c % REGIONS), c),
                (format!("{}/#", own(c)), c),
            ]
        })
        .collect();
    let mut rng = Rng::new(11);
    let topics = (0..BROADCAST_TOPICS)
        .map(|_| {
            let client = i64::try_from(rng.below(CLIENTS as usize)).expect("a client number");
            format!("{}/status", own(client))
        })
        .collect();
    (subscriptions, topics)
}

/// A name tree's nodes by depth (depth 0: the root, an empty path), `branching[d]` distinct
/// children under each node of depth `d`.
fn tree(branching: &[usize], seed: u64) -> Vec<Vec<Vec<String>>> {
    let mut rng = Rng::new(seed);
    let mut levels = vec![vec![Vec::new()]];
    for (depth, &children) in branching.iter().enumerate() {
        let mut level = Vec::new();
        for parent in &levels[depth] {
            // The first `children` names of a partial shuffle: distinct siblings.
            let mut names = NAMES;
            for i in 0..children {
                names.swap(i, i + rng.below(NAMES.len() - i));
            }
            for name in &names[..children] {
                let mut path: Vec<String> = parent.clone();
                path.push(format!("{name}{depth}"));
                level.push(path);
            }
        }
        levels.push(level);
    }
    levels
}

/// `path/#` with every subset of its levels replaced by `+`.
fn masked(path: &[String], out: &mut BTreeSet<String>) {
    for mask in 0..1u32 << path.len() {
        let words: Vec<&str> = path
            .iter()
            .enumerate()
            .map(|(i, w)| if mask >> i & 1 == 1 { "+" } else { w.as_str() })
            .chain(["#"])
            .collect();
        out.insert(words.join("/"));
    }
}

/// The `cuts` shape, or else `crowds`: its filters, each held by its own subscribers, and its
/// topics (every leaf of the tree, shuffled), in MQTT syntax.
fn trees(cuts: bool) -> (Vec<(String, i64)>, Vec<String>) {
    let (levels, per_filter) = if cuts {
        (tree(&[2, 2, 3, 3, 3, 4, 4, 4], 2024), 1)
    } else {
        (tree(&[4, 5, 5, 6, 8], 2025), 32)
    };
    let mut texts = BTreeSet::new();
    for (depth, nodes) in levels[..levels.len() - 1].iter().enumerate() {
        for path in nodes {
            if cuts {
                masked(path, &mut texts);
            } else {
                let filter = |words: &[&str]| [words, &["#"]].concat().join("/");
                let words: Vec<&str> = path.iter().map(String::as_str).collect();
                texts.insert(filter(&words));
                if depth >= 3 {
                    for i in 0..depth {
                        let mut one = words.clone();
                        one[i] = "+";
                        texts.insert(filter(&one));
                    }
                }
            }
        }
    }
    let subscriptions: Vec<(String, i64)> = texts
        .into_iter()
        .zip((0i64..).step_by(per_filter))
        .flat_map(|(text, first)| (first..).take(per_filter).map(move |s| (text.clone(), s)))
        .collect();
    let mut topics: Vec<String> = levels[levels.len() - 1]
        .iter()
        .map(|p| p.join("/"))
        .collect();
    let mut rng = Rng::new(7);
    for i in (1..topics.len()).rev() {
        topics.swap(i, rng.below(i + 1));
    }
    (subscriptions, topics)
}

/// The `shape`'s subscriptions and topics in `dialect`'s syntax.
pub fn fanout(shape: Shape, dialect: Dialect) -> Workload {
    let ((subscriptions, topics), name) = match shape {
        Shape::Cuts => (trees(true), "fanout-cuts"),
        Shape::Crowds => (trees(false), "fanout-crowds"),
        Shape::Broadcast => (broadcast(), "fanout-broadcast"),
    };
    let (name, syntax): (String, fn(&str) -> String) = match dialect {
        Dialect::Mqtt => (name.into(), str::to_owned),
        Dialect::Amqp => (format!("{name}-amqp"), |text| {
            text.replace('/', ".").replace('+', "*")
        }),
        Dialect::Nats => (format!("{name}-nats"), |text| {
            text.replace('/', ".").replace('+', "*").replace('#', ">")
        }),
    };
    Workload {
        name,
        dialect,
        subscriptions: subscriptions
            .into_iter()
            .map(|(text, s)| (syntax(&text), s))
            .collect(),
        topics: topics.iter().map(|t| syntax(t)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use topicmatch_core::{Algorithm, Dialect};

    use super::{fanout, Shape};

    #[test]
    fn every_topic_reaches_as_many_subscribers_as_the_python_sets() {
        let sets = [
            (Shape::Cuts, 255, 6_912),
            (Shape::Crowds, 384, 4_800),
            (Shape::Broadcast, 20_000, 256),
        ];
        for ((shape, per_topic, topics), dialect) in sets
            .into_iter()
            .flat_map(|set| Dialect::ALL.map(|d| (set, d)))
        {
            let w = fanout(shape, dialect);
            assert_eq!(w.topics.len(), topics, "{shape:?}");
            let trie = w.engine(Algorithm::Trie);
            let naive = w.engine(Algorithm::Naive);
            for topic in w.topics.iter().step_by(997) {
                let (mut got, mut expected) = (Vec::new(), Vec::new());
                trie.lookup_into(topic, &mut got).unwrap();
                naive.lookup_into(topic, &mut expected).unwrap();
                got.sort_unstable();
                expected.sort_unstable();
                assert_eq!(got.len(), per_topic, "{shape:?} {dialect:?} {topic}");
                assert_eq!(got, expected, "{shape:?} {dialect:?} {topic}");
            }
        }
    }
}
