//! `large` and `scale`: an IoT-shaped subscription set, 90% exact and 10% wildcard, six levels
//! (`tenant.region.device.sensor.metric.stat`) with one high-cardinality level (device ids), and
//! a stream of unique topics, so no result cache can help.

use rustc_hash::FxHashSet;
use topicmatch_core::Dialect;

use crate::rng::Rng;
use crate::workload::Workload;

const REGIONS: [&str; 12] = [
    "us-east",
    "us-west",
    "eu-west",
    "eu-north",
    "ap-south",
    "ap-east",
    "sa-east",
    "af-south",
    "me-central",
    "ca-central",
    "ap-north",
    "eu-south",
];
const SENSORS: [&str; 10] = [
    "temp",
    "humidity",
    "pressure",
    "voltage",
    "current",
    "rpm",
    "vibration",
    "light",
    "co2",
    "noise",
];
const STATS: [&str; 5] = ["raw", "avg", "min", "max", "p99"];

struct Space {
    tenants: Vec<String>,
    devices: usize,
    metrics: Vec<String>,
}

impl Space {
    fn new(subscriptions: usize) -> Self {
        Space {
            tenants: (0..16).map(|i| format!("t{i:02}")).collect(),
            devices: (subscriptions / 4).max(16),
            metrics: (0..8).map(|i| format!("m{i}")).collect(),
        }
    }

    fn words(&self, rng: &mut Rng) -> [String; 6] {
        [
            rng.pick(&self.tenants).clone(),
            (*rng.pick(&REGIONS)).to_owned(),
            format!("d{:07x}", rng.below(self.devices)),
            (*rng.pick(&SENSORS)).to_owned(),
            rng.pick(&self.metrics).clone(),
            (*rng.pick(&STATS)).to_owned(),
        ]
    }
}

/// `subscriptions` subscriptions and `topics` distinct topics, named `name`.
pub fn generate(name: &str, subscriptions: usize, topics: usize, seed: u64) -> Workload {
    let space = Space::new(subscriptions);
    let mut rng = Rng::new(seed);
    let mut exact = Vec::with_capacity(subscriptions);
    let patterns: Vec<(String, i64)> = (0..subscriptions)
        .map(|_| {
            let mut words = space.words(&mut rng);
            if !rng.chance(0.1) {
                let pattern = words.join(".");
                exact.push(pattern.clone());
                return pattern;
            }
            match rng.below(3) {
                // Every device's reading of one sensor in one region.
                0 => words[2] = "*".into(),
                // Everything one device sends.
                1 => return format!("{}.{}.{}.#", words[0], words[1], words[2]),
                // One statistic of one sensor across a tenant.
                _ => {
                    words[1] = "*".into();
                    words[2] = "*".into();
                    words[4] = "*".into();
                }
            }
            words.join(".")
        })
        .zip(0..)
        .collect();
    let mut distinct = FxHashSet::default();
    let mut stream = Vec::with_capacity(topics);
    while stream.len() < topics {
        // Half the topics are some exact subscription's (they match), half are random.
        let topic = if !exact.is_empty() && rng.chance(0.5) {
            rng.pick(&exact).clone()
        } else {
            space.words(&mut rng).join(".")
        };
        if distinct.insert(topic.clone()) {
            stream.push(topic);
        }
    }
    Workload {
        name: name.to_owned(),
        dialect: Dialect::Amqp,
        subscriptions: patterns,
        topics: stream,
    }
}

/// `count` distinct concrete topics of the same shape (a device id level of `count / 4`
/// devices), in a random order: the stored topics of the retained-message benchmarks.
pub fn stored_topics(count: usize, seed: u64) -> Vec<String> {
    let space = Space::new(count);
    let mut rng = Rng::new(seed);
    let mut distinct = FxHashSet::default();
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let topic = space.words(&mut rng).join(".");
        if distinct.insert(topic.clone()) {
            out.push(topic);
        }
    }
    out
}

/// The `large` workload: `subscriptions` (1M under `cargo bench`) and 10,000 unique topics.
pub fn large(subscriptions: usize) -> Workload {
    generate("large", subscriptions, 10_000, 1_000_000)
}

/// One point of the `scale` series: the same shape at `subscriptions`, named by its size.
pub fn scale(subscriptions: usize) -> Workload {
    generate(&size_label(subscriptions), subscriptions, 10_000, 1_000_000)
}

/// `1k`, `10k`, `1M`: how sizes print in benchmark ids.
pub fn size_label(n: usize) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else if n >= 1000 && n.is_multiple_of(1000) {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}
