//! `seed5`: the five-level demo topics of "Fast topic matching" (iMatix, OpenAMQ) with a
//! wildcard mix.

use topicmatch_core::Dialect;

use crate::rng::Rng;
use crate::workload::Workload;

/// Product, market, currency, side, timing: that document's demo topic space (7,560 topics).
pub const LEVELS: [&[&str]; 5] = [
    &["gold", "oil", "pork", "chips", "bonds", "debt"],
    &["lon", "ny", "hk", "jo", "tk", "sg", "mo"],
    &["usd", "eur", "gbp", "jpy", "chy", "aud"],
    &["buy", "sell", "hold", "short", "long"],
    &["spot", "early", "late", "open", "close", "future"],
];

/// `subscriptions` patterns (a quarter of the words `*`; one pattern in twenty is a random
/// prefix then `#`) and `topics` topics drawn uniformly from the space.
pub fn seed5(subscriptions: usize, topics: usize) -> Workload {
    let mut rng = Rng::new(55);
    let patterns = (0..subscriptions)
        .map(|_| {
            let mut words: Vec<&str> = LEVELS
                .iter()
                .map(|level| {
                    if rng.chance(0.25) {
                        "*"
                    } else {
                        *rng.pick(level)
                    }
                })
                .collect();
            if rng.chance(0.05) {
                words.truncate(1 + rng.below(4));
                words.push("#");
            }
            words.join(".")
        })
        .zip(0..)
        .collect();
    let mut rng = Rng::new(5);
    let topics = (0..topics)
        .map(|_| {
            LEVELS
                .iter()
                .map(|level| *rng.pick(level))
                .collect::<Vec<_>>()
                .join(".")
        })
        .collect();
    Workload {
        name: "seed5".into(),
        dialect: Dialect::Amqp,
        subscriptions: patterns,
        topics,
    }
}
