//! topicmatch-core: matching message topics against wildcard subscriptions.
//!
//! Three dialects ([`Dialect`]): AMQP 0-9-1 topic exchanges, MQTT 3.1.1/5 and NATS, each with
//! its broker's exact rules. Several interchangeable algorithms implement one [`Matcher`]
//! trait; the [`Engine`] adds what all share: validation, limits, subscription ids, idempotent
//! subscribe and the subscriber [`Registry`]. The `naive` algorithm is the executable
//! specification every other one is tested against.
//!
//! ```
//! use topicmatch_core::{Algorithm, Dialect, Engine, Limits, Subscriber};
//!
//! let engine = Engine::new(Dialect::Amqp, Algorithm::Trie, Limits::for_dialect(Dialect::Amqp))?;
//! engine.subscribe("stock.*.ibm", &Subscriber::from("alice"))?;
//! assert_eq!(engine.lookup("stock.nyse.ibm")?, vec![Subscriber::from("alice")]);
//! # Ok::<(), topicmatch_core::Error>(())
//! ```
#![warn(missing_docs)]

mod bytes;
pub mod dialect;
pub mod engine;
pub mod error;
pub mod fields;
pub mod matcher;
pub mod matchers;
pub mod pattern;
pub mod registry;
mod sync;
pub mod topic;

pub use dialect::{Dialect, Limits};
pub use engine::{Engine, Subscription, SubscriptionId};
pub use error::{Error, Limit, Result};
pub use matcher::{Config, Matcher, SubscriberId};
pub use matchers::Algorithm;
pub use pattern::{Pattern, Word};
pub use registry::{Registry, Subscriber};
pub use topic::parse_topic;

/// Whether `pattern` matches `topic` under `dialect` with its default limits: one pattern
/// against one topic, without building a matcher.
pub fn matches(dialect: Dialect, pattern: &str, topic: &str) -> Result<bool> {
    let limits = Limits::for_dialect(dialect);
    let pattern = Pattern::parse(dialect, &limits, pattern)?;
    let words = parse_topic(dialect, &limits, topic)?;
    Ok(pattern.matches_words(&words))
}
