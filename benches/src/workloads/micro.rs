//! `hot` and `cold`: the microbenchmarks of "Fast Topic Matching" (subscribe, unsubscribe, one
//! lookup), without its harness's flaws.
//!
//! The article loads 1,000 random 5-word subscriptions ("hot") or none ("cold"), subscribes
//! `foo.*.baz.qux.quux` and looks up `foo.bar.baz.qux.quux`. Its random words never share a
//! prefix with the probe, so its hot lookup never touches the loaded subscriptions; here every
//! level draws from a small vocabulary holding the probe's word, so the walk goes through
//! loaded nodes and some loaded patterns match. Its subscribe loop repeats one item, a no-op
//! after the first; here every measured subscribe is of a pattern not currently held.

use crate::rng::Rng;

/// The one subscription of the article's microbenchmark.
pub const MICRO_PROBE_PATTERN: &str = "foo.*.baz.qux.quux";
/// The topic it looks up.
pub const MICRO_PROBE_TOPIC: &str = "foo.bar.baz.qux.quux";

const VOCABULARY: [[&str; 8]; 5] = [
    [
        "foo", "alpha", "beta", "gamma", "delta", "eps", "zeta", "eta",
    ],
    [
        "bar", "red", "green", "blue", "cyan", "pink", "gray", "teal",
    ],
    ["baz", "one", "two", "three", "four", "five", "six", "seven"],
    [
        "qux", "north", "south", "east", "west", "up", "down", "left",
    ],
    ["quux", "ant", "bee", "cat", "dog", "elk", "fox", "gnu"],
];

/// The microbenchmark's state: what is loaded and what is subscribed while measuring.
pub struct Micro {
    /// `hot` or `cold`.
    pub name: &'static str,
    /// The patterns held before measuring (the probe last; for `cold` only the probe).
    pub loaded: Vec<String>,
    /// Distinct patterns, none of them loaded: each measured subscribe takes the next one.
    pub fresh: Vec<String>,
}

impl Micro {
    /// The hot state: 1,000 random 5-word subscriptions (a fifth of the words `*`) and the probe.
    pub fn hot() -> Self {
        let mut rng = Rng::new(1000);
        let mut loaded: Vec<String> = (0..1000).map(|_| random_pattern(&mut rng)).collect();
        loaded.push(MICRO_PROBE_PATTERN.to_owned());
        Micro {
            name: "hot",
            loaded,
            fresh: fresh_patterns(),
        }
    }

    /// The cold state: the probe only.
    pub fn cold() -> Self {
        Micro {
            name: "cold",
            loaded: vec![MICRO_PROBE_PATTERN.to_owned()],
            fresh: fresh_patterns(),
        }
    }
}

fn random_pattern(rng: &mut Rng) -> String {
    VOCABULARY
        .iter()
        .map(|level| {
            if rng.chance(0.2) {
                "*"
            } else {
                *rng.pick(level)
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// 4,096 distinct patterns whose last word (`n0`, `n1`, ...) no loaded pattern has.
fn fresh_patterns() -> Vec<String> {
    let mut rng = Rng::new(4096);
    (0..4096)
        .map(|i| {
            let prefix: Vec<&str> = VOCABULARY[..4].iter().map(|l| *rng.pick(l)).collect();
            format!("{}.n{i}", prefix.join("."))
        })
        .collect()
}
