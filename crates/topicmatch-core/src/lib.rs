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
mod hint;
pub mod matcher;
pub mod matchers;
pub mod pattern;
pub mod registry;
pub mod relation;
pub mod store;
mod sync;
mod synthetic;
pub mod topic;

pub use dialect::{Dialect, Limits};
pub use engine::{Engine, GroupMatch, GroupPolicy, Subscription, SubscriptionId};
pub use error::{Error, Limit, Result};
pub use matcher::{Config, Matcher, Related, SubscriberId};
pub use matchers::Algorithm;
pub use pattern::{Pattern, Word};
pub use registry::{Registry, Subscriber};
pub use relation::Relation;
pub use store::{Filter, Found, Reader, StoreLimits, StoreStats, TopicStore};
pub use topic::parse_topic;

/// Whether `pattern` matches `topic` under `dialect` with its default limits: one pattern
/// against one topic, without building a matcher.
pub fn matches(dialect: Dialect, pattern: &str, topic: &str) -> Result<bool> {
    pattern::matches_text(dialect, &Limits::for_dialect(dialect), pattern, topic)
}

/// Whether the pattern `general` matches every valid topic that the pattern `specific` matches,
/// under `dialect` with its default limits (see [`relation`]). Either text may be a topic
/// (a pattern without wildcards). Gives up with `LimitExceeded` past
/// [`relation::DEFAULT_MAX_WORK`].
pub fn covers(dialect: Dialect, general: &str, specific: &str) -> Result<bool> {
    covers_within(dialect, general, specific, relation::DEFAULT_MAX_WORK)
}

/// [`covers`], giving up with `LimitExceeded` once its work passes `max_work`.
pub fn covers_within(
    dialect: Dialect,
    general: &str,
    specific: &str,
    max_work: usize,
) -> Result<bool> {
    let limits = Limits::for_dialect(dialect);
    let general = Pattern::parse(dialect, &limits, general)?;
    let specific = Pattern::parse(dialect, &limits, specific)?;
    relation::covers_within(&general, &specific, max_work)
}

/// Whether some valid topic matches both patterns `a` and `b` under `dialect` with its default
/// limits (see [`relation`]).
pub fn intersects(dialect: Dialect, a: &str, b: &str) -> Result<bool> {
    let limits = Limits::for_dialect(dialect);
    let a = Pattern::parse(dialect, &limits, a)?;
    let b = Pattern::parse(dialect, &limits, b)?;
    relation::intersects(&a, &b)
}
