//! The three dialects and the per-matcher limits.

use std::fmt;

/// A topic dialect: its separator, wildcards and validity rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// AMQP 0-9-1 topic exchange (RabbitMQ): `.` words, `*` one word, `#` zero or more words.
    Amqp,
    /// MQTT 3.1.1 / 5.0: `/` levels, `+` one level, `#` the parent and any children, last.
    Mqtt,
    /// NATS subjects: `.` tokens, `*` one token, `>` one or more tokens, last; no whitespace and
    /// no U+0000 anywhere.
    Nats,
}

impl Dialect {
    /// Every dialect, in the order their names are listed.
    pub const ALL: [Dialect; 3] = [Dialect::Amqp, Dialect::Mqtt, Dialect::Nats];

    /// The dialect's name: `amqp`, `mqtt` or `nats`.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Amqp => "amqp",
            Dialect::Mqtt => "mqtt",
            Dialect::Nats => "nats",
        }
    }

    /// The separator between words.
    pub const fn separator(self) -> u8 {
        match self {
            Dialect::Amqp | Dialect::Nats => b'.',
            Dialect::Mqtt => b'/',
        }
    }

    /// The one-word wildcard.
    pub fn one_wildcard(self) -> &'static str {
        match self {
            Dialect::Amqp | Dialect::Nats => "*",
            Dialect::Mqtt => "+",
        }
    }

    /// The multi-word wildcard.
    pub fn multi_wildcard(self) -> &'static str {
        match self {
            Dialect::Amqp | Dialect::Mqtt => "#",
            Dialect::Nats => ">",
        }
    }

    /// What the protocol calls a word.
    pub fn word_name(self) -> &'static str {
        match self {
            Dialect::Amqp => "word",
            Dialect::Mqtt => "level",
            Dialect::Nats => "token",
        }
    }

    /// The default `max_topic_bytes`: 255 for AMQP (a short string), 65,535 otherwise.
    pub fn default_max_topic_bytes(self) -> usize {
        match self {
            Dialect::Amqp => 255,
            Dialect::Mqtt | Dialect::Nats => 65_535,
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Characters that NATS never allows in a subject (they delimit protocol fields).
pub(crate) const NATS_WHITESPACE: [char; 5] = [' ', '\t', '\n', '\r', '\x0c'];

/// Explicit, configurable limits of one matcher. Exceeding one is an error, never truncation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest topic or pattern, in UTF-8 bytes.
    pub max_topic_bytes: usize,
    /// Most words (levels, tokens) in a topic or pattern.
    pub max_levels: usize,
    /// Most subscriptions one matcher holds.
    pub max_subscriptions: usize,
    /// Most multi-word wildcards (whole-word `#`, `>`) in one pattern: a cap only AMQP can
    /// reach, where a pattern may hold any number (RabbitMQ refuses more than two). Topics
    /// hold none.
    pub max_multi_wildcards: usize,
}

impl Limits {
    /// Default `max_levels`: deep enough for any real topic tree, small enough that a hostile
    /// topic cannot make one lookup walk an unbounded stack.
    pub const DEFAULT_MAX_LEVELS: usize = 4096;

    /// The defaults for `dialect`: its protocol's byte limit, [`Self::DEFAULT_MAX_LEVELS`], no
    /// subscription cap and no cap on multi-word wildcards.
    pub fn for_dialect(dialect: Dialect) -> Self {
        Limits {
            max_topic_bytes: dialect.default_max_topic_bytes(),
            max_levels: Self::DEFAULT_MAX_LEVELS,
            max_subscriptions: usize::MAX,
            max_multi_wildcards: usize::MAX,
        }
    }
}
