//! The one error type of the core. No Python here: the binding crate maps each variant to its
//! exception class.

use std::fmt;
use std::str::FromStr;

use crate::dialect::Dialect;

/// Texts longer than this many characters are shortened in error messages.
pub const SHOWN_CHARS: usize = 60;

/// Which configurable limit was exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// `max_topic_bytes`: the UTF-8 length of a topic or pattern.
    TopicBytes,
    /// `max_levels`: the number of words, levels or tokens.
    Levels,
    /// `max_subscriptions`: the number of subscriptions held by one matcher.
    Subscriptions,
    /// `max_topics`: the number of topics held by one [`TopicStore`](crate::TopicStore).
    Topics,
    /// `max_work`: the work one [`covers`](crate::relation::covers) decision may do.
    RelationWork,
    /// `max_multi_wildcards`: the number of multi-word wildcards in one pattern.
    MultiWildcards,
}

impl Limit {
    /// The limit's name as the Python keyword argument spells it.
    pub fn name(self) -> &'static str {
        match self {
            Limit::TopicBytes => "max_topic_bytes",
            Limit::Levels => "max_levels",
            Limit::Subscriptions => "max_subscriptions",
            Limit::Topics => "max_topics",
            Limit::RelationWork => "max_work",
            Limit::MultiWildcards => "max_multi_wildcards",
        }
    }
}

/// Everything that can go wrong in the core.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A subscription pattern breaks a rule of its dialect.
    InvalidPattern {
        /// The dialect whose rule was broken.
        dialect: Dialect,
        /// The pattern, shortened if long.
        text: String,
        /// The index of the word (level, token) at fault, from 0; messages count from 1.
        word: usize,
        /// The rule broken, as a short sentence.
        rule: &'static str,
    },
    /// A published topic breaks a rule of its dialect.
    InvalidTopic {
        /// The dialect whose rule was broken.
        dialect: Dialect,
        /// The topic, shortened if long.
        text: String,
        /// The index of the word (level, token) at fault, from 0; messages count from 1.
        word: usize,
        /// The rule broken, as a short sentence.
        rule: &'static str,
    },
    /// A configured limit was exceeded.
    LimitExceeded {
        /// Which limit.
        limit: Limit,
        /// Its configured value.
        max: usize,
        /// The size that exceeded it.
        actual: usize,
        /// What exceeded it, as a message names it (`mqtt topic "a/b"`, the text shortened if
        /// long); `None` where no one text did (a batch of topics, a relation's work).
        about: Option<String>,
    },
    /// Invalid configuration or argument (unknown algorithm, bad option value).
    InvalidArgument(String),
    /// Field criteria that cannot be matched (an unknown mode, `k` out of range, a comparison
    /// with a non-number, an empty `in` set, NaN); Python raises it as `InvalidPattern`.
    InvalidCriteria(String),
    /// A group name that breaks its dialect's rules (an MQTT share name, a NATS queue name), or
    /// that differs from the share name of the pattern it comes with: data from a client, as a
    /// pattern is; Python raises it as `InvalidPattern`.
    InvalidGroup(String),
}

impl Error {
    pub(crate) fn pattern(dialect: Dialect, text: &str, word: usize, rule: &'static str) -> Self {
        Error::InvalidPattern {
            dialect,
            text: shorten(text),
            word,
            rule,
        }
    }

    pub(crate) fn topic(dialect: Dialect, text: &str, word: usize, rule: &'static str) -> Self {
        Error::InvalidTopic {
            dialect,
            text: shorten(text),
            word,
            rule,
        }
    }

    pub(crate) fn limit(limit: Limit, max: usize, actual: usize) -> Self {
        Error::LimitExceeded {
            limit,
            max,
            actual,
            about: None,
        }
    }

    /// A limit exceeded by `text`, a `kind` ("topic", "pattern") of `dialect`.
    pub(crate) fn limit_of(
        limit: Limit,
        max: usize,
        actual: usize,
        (dialect, kind, text): (Dialect, &str, &str),
    ) -> Self {
        Error::LimitExceeded {
            limit,
            max,
            actual,
            about: Some(format!("{dialect} {kind} {:?}", shorten(text))),
        }
    }
}

/// Shortens `text` to at most [`SHOWN_CHARS`] characters, marking the cut.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}... ({} bytes)", &text[..cut], text.len()),
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidPattern {
                dialect,
                text,
                word,
                rule,
            } => write!(
                f,
                "invalid {dialect} pattern {text:?}: {} {}: {rule}",
                dialect.word_name(),
                word + 1
            ),
            Error::InvalidTopic {
                dialect,
                text,
                word,
                rule,
            } => write!(
                f,
                "invalid {dialect} topic {text:?}: {} {}: {rule}",
                dialect.word_name(),
                word + 1
            ),
            Error::LimitExceeded {
                limit,
                max,
                actual,
                about,
            } => {
                f.write_str("limit exceeded")?;
                if let Some(about) = about {
                    write!(f, " by {about}")?;
                }
                write!(f, ": {} is {max}, got {actual}", limit.name())
            }
            Error::InvalidArgument(msg) | Error::InvalidGroup(msg) => f.write_str(msg),
            Error::InvalidCriteria(msg) => write!(f, "invalid criteria: {msg}"),
        }
    }
}

impl std::error::Error for Error {}

/// A dialect's name parses to its [`Dialect`]; an unknown name is an [`Error`]. (Here, not in
/// `dialect`, which needs nothing from this module.)
impl FromStr for Dialect {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Dialect::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "unknown dialect {s:?}: expected one of \"amqp\", \"mqtt\", \"nats\""
                ))
            })
    }
}

/// The core's result type.
pub type Result<T> = std::result::Result<T, Error>;
