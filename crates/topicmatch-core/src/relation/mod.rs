//! Relations between two patterns of one dialect, exact under the dialect's rules.
//!
//! - [`covers`]`(general, specific)`: every valid topic that `specific` matches, `general`
//!   matches too ("is this subscribe allowed by this ACL filter?").
//! - [`intersects`]`(a, b)`: some valid topic matches both ("do these overlap?").
//!
//! *Valid topic* is the dialect's: an MQTT topic name is not empty and holds no `+`, `#` or
//! U+0000; a NATS subject has no empty token and no whole-token `*` or `>`; an AMQP routing
//! key is any word list, the empty key included. The relations quantify over topics of any
//! length (a matcher's `max_topic_bytes` and `max_levels` bound what it accepts, not what a
//! pattern means). The MQTT `$` rule holds: `#` does not cover `$SYS/x`, and `+/#` and
//! `$SYS/#` do not intersect. An MQTT shared subscription `$share/{name}/{filter}` is its
//! filter.
//!
//! # How
//! Both patterns become word automata ([`shape`]): literal, one word, zero or more words.
//! Words outside the two patterns' literals behave alike, so one *fresh* word stands for all
//! of them. [`intersects`] searches the product of the two automata; [`covers`] searches for a
//! topic of `specific` that `general` rejects, running `general` as a set of positions. Both
//! are exact: the property tests compare them with the definition on every topic up to a
//! length that provably suffices (`tests/relations.rs`).
//!
//! # Cost
//! - `intersects`: O(|a| · |b|) time and memory; O(|a| + |b|) for MQTT and NATS, whose
//!   multi-word wildcard is last.
//! - `covers` with at most one multi-word wildcard in `specific` (every MQTT and NATS
//!   pattern; AMQP with one `#` run): O(|s| · k · |g|) for k one-word wildcards in `general`,
//!   O((|s| + k) · |g|) when the wildcard is last, O(|s| · |g|) without one.
//! - `covers` with several AMQP `#` in `specific`: the containment of such word patterns can
//!   take many sets of positions; the search prunes sets that contain one already seen, counts
//!   its work and raises [`LimitExceeded`](crate::Error::LimitExceeded) (`max_work`) past
//!   [`DEFAULT_MAX_WORK`] or the bound given to [`covers_within`]. It never runs unbounded.

mod cover;
mod intersect;
mod shape;

use smallvec::SmallVec;

use crate::dialect::Dialect;
use crate::error::{Error, Result};
use crate::matcher::SubscriberId;
use crate::pattern::{Pattern, Word};
use shape::{Phase, Shape, Sym, Tok};

/// The work [`covers`] may do before it gives up with `LimitExceeded`: far beyond any pair
/// with at most one `#` run in `specific` (a few milliseconds of work).
pub const DEFAULT_MAX_WORK: usize = 1 << 22;

/// A relation between a held pattern and a query pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Relation {
    /// The held pattern covers the query: it matches every valid topic the query matches.
    Covers,
    /// The held pattern and the query match some valid topic in common.
    Intersects,
}

impl Relation {
    /// Whether `held` stands in this relation to `query`.
    pub fn holds(self, held: &Pattern, query: &Pattern) -> Result<bool> {
        match self {
            Relation::Covers => covers(held, query),
            Relation::Intersects => intersects(held, query),
        }
    }
}

/// Whether `general` matches every valid topic that `specific` matches; see the module docs.
/// Both must be of one dialect. Gives up with `LimitExceeded` past [`DEFAULT_MAX_WORK`].
pub fn covers(general: &Pattern, specific: &Pattern) -> Result<bool> {
    covers_within(general, specific, DEFAULT_MAX_WORK)
}

/// [`covers`], giving up with `LimitExceeded` once its work passes `max_work`.
pub fn covers_within(general: &Pattern, specific: &Pattern, max_work: usize) -> Result<bool> {
    let dialect = same_dialect(general, specific)?;
    let query = Query::new(Relation::Covers, specific, max_work);
    query.holds(dialect, general.words())
}

/// Whether some valid topic matches both `a` and `b`; see the module docs. Both must be of one
/// dialect.
pub fn intersects(a: &Pattern, b: &Pattern) -> Result<bool> {
    let dialect = same_dialect(a, b)?;
    Query::new(Relation::Intersects, b, DEFAULT_MAX_WORK).holds(dialect, a.words())
}

fn same_dialect(a: &Pattern, b: &Pattern) -> Result<Dialect> {
    if a.dialect() != b.dialect() {
        return Err(Error::InvalidArgument(format!(
            "patterns of different dialects cannot be related: {} and {}",
            a.dialect(),
            b.dialect()
        )));
    }
    Ok(a.dialect())
}

/// A held pattern an algorithm found in relation to a query, with its subscribers (the words
/// of its matched text: an MQTT shared subscription's filter).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The pattern's words.
    pub words: Vec<Word>,
    /// The subscribers held under it.
    pub subscribers: Vec<SubscriberId>,
}

/// A query pattern prepared once for many held patterns.
#[derive(Debug, Clone)]
pub struct Query<'p> {
    relation: Relation,
    dialect: Dialect,
    shape: Shape<'p>,
    max_work: usize,
}

impl<'p> Query<'p> {
    /// The query `pattern` for `relation`, `covers` bounded by `max_work`.
    pub fn new(relation: Relation, pattern: &'p Pattern, max_work: usize) -> Self {
        Query {
            relation,
            dialect: pattern.dialect(),
            shape: Shape::of(pattern.dialect(), pattern.words()),
            max_work,
        }
    }

    /// The relation asked.
    pub fn relation(&self) -> Relation {
        self.relation
    }

    /// Whether the held pattern of `words` (of `dialect`, the query's) stands in the relation
    /// to the query.
    pub fn holds(&self, dialect: Dialect, words: &[Word]) -> Result<bool> {
        debug_assert_eq!(dialect, self.dialect);
        let held = Shape::of(dialect, words);
        match self.relation {
            Relation::Covers => cover::covers(dialect, &held, &self.shape, self.max_work),
            Relation::Intersects => Ok(intersect::intersects(dialect, &held, &self.shape)),
        }
    }

    /// One valid topic the query matches, its wildcards' words fresh (`None`): every held
    /// pattern that covers the query matches it, so an index walks only the patterns matching
    /// it. Its `#` take no word unless the topic would be invalid without one.
    pub fn witness(&self) -> SmallVec<[Option<&'p str>; 16]> {
        let mut words: SmallVec<[Option<&'p str>; 16]> = SmallVec::new();
        let mut phase = Phase::Start;
        for tok in &self.shape.toks {
            let word = match tok {
                Tok::Lit(w) => Sym::Lit(w),
                Tok::Any => Sym::Fresh,
                Tok::Star => continue,
            };
            phase = phase.after(word);
            words.push(match word {
                Sym::Lit(w) => Some(w),
                Sym::Fresh => None,
            });
        }
        if !phase.valid(self.dialect) {
            // Only a pattern whose `#` is all that makes it non-empty gets here: a fresh word
            // is one of the words that `#` takes.
            words.push(None);
        }
        words
    }

    /// Whether the query's topics never start with a `$` word (MQTT, a wildcard first).
    pub fn hides_dollar(&self) -> bool {
        self.shape.hides_dollar
    }

    /// How many `#`/`>` runs the query has.
    pub fn stars(&self) -> usize {
        self.shape.stars()
    }
}
