//! The relation walk of an index that is a trie of words
//! ([`Matcher::related_into`](crate::Matcher::related_into) of the `trie` and the `cstrie`): the
//! trie and the query's steps ([`Query::steps`]) walked together, depth first over (level,
//! step) states, each visited once. A state at the last step whose level holds subscribers is
//! a candidate: its pattern, spelt from the path (the query's own words, or the children's
//! labels), is decided exactly by [`Query::holds`].
//!
//! - **Covers** walks the query's witness topic, a lookup: only the patterns matching that
//!   topic are visited, as many levels as a lookup of it visits.
//! - **Intersects** walks the query's tokens: where the query takes any word (`*`, `+`, `#`,
//!   `>`) every literal child is followed, so the walk visits the part of the trie the query
//!   can reach, at most levels × (query words + 1) states.
//!
//! A walk that would visit more states than the query's budget ([`Query::walk_budget`]) gives
//! up, appending nothing: AMQP patterns and queries of many `#` over deep tries can make the
//! walk cost far more than deciding the relation for each held pattern (a query of 63 `#`
//! against a thousand patterns of 20 to 120 words: millions of states, against a thousand
//! pairs).
//!
//! The MQTT `$` rule prunes at the root: a query whose topics start with a `$` word skips the
//! root's wildcard children, and a query whose topics never do skips the root's `$` literals.
//! Each trie says how its levels are read ([`Levels`]); the walk is the same.

use std::hash::Hash;

use rustc_hash::FxHashSet;

use crate::dialect::Dialect;
use crate::error::Result;
use crate::matcher::{Related, SubscriberId};
use crate::pattern::Word;
use crate::relation::{Query, Step};

/// The edge into a level: a literal child, named as its trie names it (`L`), or a wildcard's.
#[derive(Clone, Copy)]
pub(crate) enum Hop<L> {
    Literal(L),
    One,
    Multi,
}

/// What the walk reads of a trie, for a query whose words live for `'q`.
pub(crate) trait Levels<'q> {
    /// A level as the walk holds it before visiting it.
    type Level: Copy;
    /// A level being visited: its subscribers and its children.
    type Node;
    /// The name of a literal child, spelt only for a candidate's pattern.
    type Label: Copy;
    /// A level's identity, for the states visited.
    type Id: Eq + Hash;

    fn id(&self, level: Self::Level) -> Self::Id;
    /// Reads `level` for its visit.
    fn open(&self, level: Self::Level) -> Self::Node;
    /// Whether patterns end at `node`.
    fn holds_subscribers(&self, node: &Self::Node) -> bool;
    /// The subscribers of the patterns ending at `node`.
    fn subscribers(&self, node: &Self::Node) -> Vec<SubscriberId>;
    /// The multi-word wildcard child (`#`, NATS `>`).
    fn multi(&self, node: &Self::Node) -> Option<Self::Level>;
    /// The single-word wildcard child (`*`, `+`).
    fn one(&self, node: &Self::Node) -> Option<Self::Level>;
    /// The literal child `word` of `level` (opened as `node`).
    fn child(
        &self,
        level: Self::Level,
        node: &Self::Node,
        word: &'q str,
    ) -> Option<(Self::Level, Self::Label)>;
    /// Calls `f` for every literal child of `node`, those spelt with a leading `$` left out
    /// when `no_dollar`.
    fn for_each_child(
        &self,
        node: &Self::Node,
        no_dollar: bool,
        f: &mut dyn FnMut(Self::Level, Self::Label),
    );
    /// The word a literal child's label spells.
    fn spell(&self, label: Self::Label) -> Box<str>;
}

/// A state of the walk: a level, the query's step, whether the level is a multi-word
/// wildcard's (which takes more words, staying), and its depth and the edge into it.
#[derive(Clone, Copy)]
struct State<V, L> {
    level: V,
    step: u32,
    looping: bool,
    depth: u32,
    hop: Hop<L>,
}

/// Appends to `out` the patterns held in `trie` (from `root`) standing in `query`'s relation
/// to it, and returns `true`; past the query's walk budget returns `false`, and on error
/// fails, appending nothing either way.
pub(crate) fn related<'q, T: Levels<'q>>(
    trie: &T,
    root: T::Level,
    dialect: Dialect,
    query: &Query<'q>,
    out: &mut Vec<Related>,
) -> Result<bool> {
    // What the walk finds, appended to `out` once it has found all without an error.
    let mut found = Vec::new();
    let steps = query.steps();
    let last = steps.len();
    let nats = dialect == Dialect::Nats;
    let wild_root = !query.starts_with_dollar();
    let dollar_root = !query.hides_dollar();
    let mut seen: FxHashSet<(T::Id, u32)> = FxHashSet::default();
    // The edges from the root to the state being visited.
    let mut path: Vec<Hop<T::Label>> = Vec::new();
    let mut stack = vec![State {
        level: root,
        step: 0,
        looping: false,
        depth: 0,
        hop: Hop::One,
    }];
    let budget = query.walk_budget();
    while let Some(state) = stack.pop() {
        if !seen.insert((trie.id(state.level), state.step)) {
            continue;
        }
        if seen.len() > budget {
            return Ok(false);
        }
        // Every state pushed after this one's parent was visited is at this depth or deeper,
        // so the path above it is its parent's.
        path.truncate(state.depth.saturating_sub(1) as usize);
        if state.depth > 0 {
            path.push(state.hop);
        }
        let node = trie.open(state.level);
        let is_root = state.depth == 0;
        let at = state.step as usize;
        if at == last && trie.holds_subscribers(&node) {
            let words = spell(trie, &path);
            if query.holds(&words)? {
                found.push(Related {
                    words,
                    subscribers: trie.subscribers(&node),
                });
            }
        }
        let child = |level: T::Level, step: u32, looping: bool, hop: Hop<T::Label>| State {
            level,
            step,
            looping,
            depth: state.depth + 1,
            hop,
        };
        // An AMQP or MQTT `#` of the held pattern taking no word.
        if let Some(multi) = trie.multi(&node) {
            if !nats && (wild_root || !is_root) {
                stack.push(child(multi, state.step, true, Hop::Multi));
            }
        }
        let Some(&step) = steps.get(at) else {
            continue;
        };
        if step == Step::Star {
            // The query's `#` taking no more word.
            stack.push(State {
                step: state.step + 1,
                ..state
            });
        }
        // One word, read by the query's step and by an edge of the level.
        let next = if step == Step::Star {
            state.step
        } else {
            state.step + 1
        };
        if state.looping && next != state.step {
            stack.push(State {
                step: next,
                ..state
            });
        }
        if wild_root || !is_root {
            if let Some(one) = trie.one(&node) {
                stack.push(child(one, next, false, Hop::One));
            }
            if let (true, Some(multi)) = (nats, trie.multi(&node)) {
                stack.push(child(multi, next, true, Hop::Multi));
            }
        }
        match step {
            Step::Word(word) => {
                if let Some((found, label)) = trie.child(state.level, &node, word) {
                    stack.push(child(found, next, false, Hop::Literal(label)));
                }
            }
            Step::Fresh => {}
            Step::Any | Step::Star => {
                trie.for_each_child(&node, is_root && !dollar_root, &mut |found, label| {
                    stack.push(child(found, next, false, Hop::Literal(label)));
                });
            }
        }
    }
    out.append(&mut found);
    Ok(true)
}

/// The pattern of the edges from the root.
fn spell<'q, T: Levels<'q>>(trie: &T, path: &[Hop<T::Label>]) -> Vec<Word> {
    path.iter()
        .map(|hop| match *hop {
            Hop::Literal(label) => Word::Literal(trie.spell(label)),
            Hop::One => Word::One,
            Hop::Multi => Word::Multi,
        })
        .collect()
}
