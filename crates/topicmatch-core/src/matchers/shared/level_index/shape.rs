//! How a wildcard pattern sits in the per-level index.

use crate::dialect::Dialect;
use crate::pattern::{Pattern, Word};

/// Where a pattern's words go in the level rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// No multi-word wildcard: matches topics of exactly `len` words.
    Exact { len: usize },
    /// A multi-word wildcard last, after `prefix` literal or one-word levels.
    Prefix { prefix: usize },
    /// AMQP `#` before the last word, or several `#`: not expressible per level.
    Complex,
}

impl Shape {
    /// The shape of `pattern`.
    pub(crate) fn of(pattern: &Pattern) -> Shape {
        let words = pattern.words();
        match words.iter().position(|w| *w == Word::Multi) {
            None => Shape::Exact { len: words.len() },
            Some(at) if at + 1 == words.len() => Shape::Prefix { prefix: at },
            Some(_) => Shape::Complex,
        }
    }

    /// The fewest topic words a pattern of this shape can match (not meaningful for
    /// `Complex`): NATS `>` needs at least one word, AMQP and MQTT `#` none.
    pub(crate) fn min_len(self, dialect: Dialect) -> usize {
        match self {
            Shape::Exact { len } => len,
            Shape::Prefix { prefix } => prefix + usize::from(dialect == Dialect::Nats),
            Shape::Complex => 0,
        }
    }
}
