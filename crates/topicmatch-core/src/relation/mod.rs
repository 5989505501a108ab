//! Relations between two patterns of one dialect, exact under the dialect's rules.
//!
//! - [`covers`]`(general, specific)`: every valid topic that `specific` matches, `general`
//!   matches too ("is this subscribe allowed by this ACL filter?").
//! - [`intersects`]`(a, b)`: some valid topic matches both ("do these overlap?").
//!
//! *Valid topic* is the dialect's: an MQTT topic name is not empty and holds no `+`, `#` or
//! U+0000; a NATS subject has no empty token and no whole-token `*` or `>`; an AMQP routing
//! key is any word list, the empty key included; and no dialect has a topic of one empty word
//! (its text is the empty text). The relations quantify over topics of any length (a matcher's `max_topic_bytes` and `max_levels` bound what it accepts, not what a
//! pattern means). The MQTT `$` rule holds: `#` does not cover `$SYS/x`, and `+/#` and
//! `$SYS/#` do not intersect. An MQTT shared subscription `$share/{name}/{filter}` is its
//! filter.
//!
//! # How
//! Both patterns become word automata (`shape`): literal, one word, zero or more words.
//! Words outside the two patterns' literals behave alike, so one *fresh* word stands for all
//! of them. [`intersects`] searches the product of the two automata; [`covers`] searches for a
//! topic of `specific` that `general` rejects, running `general` as a set of positions. Both
//! are exact: the property tests compare them with the definition on every topic up to a
//! length that provably suffices (`tests/relations.rs`).
//!
//! # Cost
//! - `intersects`: O(|a| · |b|) time and memory; O(|a| + |b|) for MQTT and NATS, whose
//!   multi-word wildcard is last.
//! - `covers` with at most one multi-word wildcard run in `specific` (every MQTT and NATS
//!   pattern; AMQP with one `#` run): O(|s| · (k + 1) · |g|) for k one-word wildcards in
//!   `general`, O((|s| + k) · |g|) when the run is last, O(|s| · |g|) without one.
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
    same_dialect(general, specific)?;
    Query::new(Relation::Covers, specific, max_work).holds(general.words())
}

/// Whether some valid topic matches both `a` and `b`; see the module docs. Both must be of one
/// dialect.
pub fn intersects(a: &Pattern, b: &Pattern) -> Result<bool> {
    same_dialect(a, b)?;
    Query::new(Relation::Intersects, b, DEFAULT_MAX_WORK).holds(a.words())
}

fn same_dialect(a: &Pattern, b: &Pattern) -> Result<()> {
    if a.dialect() != b.dialect() {
        return Err(Error::InvalidArgument(format!(
            "patterns of different dialects cannot be related: {} and {}",
            a.dialect(),
            b.dialect()
        )));
    }
    Ok(())
}

/// One step of an index's walk for a [`Query`] ([`Query::steps`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<'p> {
    /// Read this word.
    Word(&'p str),
    /// Read a fresh word: only the held patterns' wildcards take it.
    Fresh,
    /// Read any one word.
    Any,
    /// Read any number of words, staying at this step, or go on to the next without reading.
    Star,
}

/// A query pattern prepared once for many held patterns.
#[derive(Debug, Clone)]
pub struct Query<'p> {
    relation: Relation,
    dialect: Dialect,
    shape: Shape<'p>,
    max_work: usize,
    /// The most states an index walk of the query may visit ([`Query::walk_budget`]).
    walk_budget: usize,
    /// `Covers`: one topic of the query ([`Query::steps`]), which a covering pattern matches.
    witness: SmallVec<[Step<'p>; 16]>,
}

impl<'p> Query<'p> {
    /// The query `pattern` for `relation`, `covers` bounded by `max_work`.
    pub fn new(relation: Relation, pattern: &'p Pattern, max_work: usize) -> Self {
        let mut query = Query {
            relation,
            dialect: pattern.dialect(),
            shape: Shape::of(pattern.dialect(), pattern.words()),
            max_work,
            walk_budget: usize::MAX,
            witness: SmallVec::new(),
        };
        if relation == Relation::Covers {
            query.witness = query.witness();
        }
        query
    }

    /// The query with an index walk bounded to `states` states: past them the walk gives up
    /// ([`Matcher::related_into`](crate::Matcher::related_into) returns `Ok(false)`), and
    /// the caller decides the relation pattern by pattern instead. Unbounded unless given.
    #[must_use]
    pub fn with_walk_budget(mut self, states: usize) -> Self {
        self.walk_budget = states;
        self
    }

    /// The most states an index walk of the query may visit.
    pub fn walk_budget(&self) -> usize {
        self.walk_budget
    }

    /// The relation asked.
    pub fn relation(&self) -> Relation {
        self.relation
    }

    /// The query's dialect.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Whether the held pattern of `words` (a pattern of the query's dialect) stands in the
    /// relation to the query.
    ///
    /// A pattern that does not match the query's witness topic ([`Query::steps`]) cannot cover
    /// it, so `Covers` settles that first, in one run of the pattern: a scan and an index walk
    /// search containment for the same patterns (and hit the work limit alike).
    pub fn holds(&self, words: &[Word]) -> Result<bool> {
        let held = Shape::of(self.dialect, words);
        match self.relation {
            Relation::Covers => {
                if !matches_witness(&held, &self.witness) {
                    return Ok(false);
                }
                cover::covers(self.dialect, &held, &self.shape, self.max_work)
            }
            Relation::Intersects => Ok(intersect::intersects(self.dialect, &held, &self.shape)),
        }
    }

    /// What an index walks to find the held patterns in relation to the query (a superset,
    /// which [`Query::holds`] then decides):
    /// - `Covers`: one valid topic the query matches, its wildcards' words fresh and its `#`
    ///   taking no word unless the topic would be invalid without one. Every pattern that
    ///   covers the query matches it, so the walk is a lookup.
    /// - `Intersects`: the query's own tokens; a pattern intersecting the query shares a
    ///   topic with it, which a walk of both at once finds.
    pub fn steps(&self) -> SmallVec<[Step<'p>; 16]> {
        match self.relation {
            Relation::Covers => self.witness.clone(),
            Relation::Intersects => self
                .shape
                .toks
                .iter()
                .map(|tok| match *tok {
                    Tok::Lit(w) => Step::Word(w),
                    Tok::Any => Step::Any,
                    Tok::Star => Step::Star,
                })
                .collect(),
        }
    }

    /// The witness topic of [`Query::steps`] for `Covers`.
    fn witness(&self) -> SmallVec<[Step<'p>; 16]> {
        let mut steps: SmallVec<[Step<'p>; 16]> = SmallVec::new();
        let mut phase = Phase::Start;
        // Where the first `#` run is: a word it takes goes there.
        let mut star = None;
        for tok in &self.shape.toks {
            let word = match tok {
                Tok::Lit(w) => Sym::Lit(w),
                Tok::Any => Sym::Fresh,
                Tok::Star => {
                    star.get_or_insert(steps.len());
                    continue;
                }
            };
            phase = phase.after(word);
            steps.push(match word {
                Sym::Lit(w) => Step::Word(w),
                Sym::Fresh => Step::Fresh,
            });
        }
        if !phase.valid(self.dialect) {
            // The words besides the `#` runs make the empty or the lone empty topic, which is
            // no topic, so some `#` takes a word: one fresh word.
            let at = star.expect("a valid pattern matches some topic, so it has a `#`");
            steps.insert(at, Step::Fresh);
        }
        steps
    }

    /// Whether every topic of the query starts with a `$` word, which an MQTT pattern whose
    /// first word is a wildcard never matches.
    pub fn starts_with_dollar(&self) -> bool {
        self.dialect == Dialect::Mqtt
            && matches!(self.shape.toks.first(), Some(Tok::Lit(w)) if w.starts_with('$'))
    }

    /// Whether no topic of the query starts with a `$` word (MQTT, a wildcard first), so no
    /// pattern whose first word is a `$` literal intersects it.
    pub fn hides_dollar(&self) -> bool {
        self.shape.hides_dollar
    }
}

/// Whether `held` matches the witness topic `steps` (literal words, and fresh ones).
fn matches_witness(held: &Shape<'_>, steps: &[Step<'_>]) -> bool {
    let mut set = held.start();
    for (i, step) in steps.iter().enumerate() {
        let word = match step {
            Step::Word(w) => Sym::Lit(w),
            _ => Sym::Fresh,
        };
        set = held.step(&set, word, i == 0);
        if set.is_empty() {
            return false;
        }
    }
    held.accepts(&set)
}
