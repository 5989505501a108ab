//! The CS-trie's relation walk ([`Matcher::related_into`](crate::Matcher::related_into)), under
//! one epoch pin and taking no lock: the trie and the query's steps ([`Query::steps`]) walked
//! together, depth first over (I-node, step) states, each visited once. A state at the last
//! step whose level holds subscribers is a candidate: its pattern, spelt from the path (the
//! query's own words, or the children's labels), is decided exactly by [`Query::holds`].
//!
//! - **Covers** walks the query's witness topic: a lookup of it, visiting what a lookup visits.
//! - **Intersects** walks the query's tokens: where the query takes any word every literal
//!   child is followed, at most I-nodes × (query words + 1) states.
//!
//! As a lookup does, the walk reads each I-node once per state and sees every change that
//! completed before it started. The MQTT `$` rule prunes at the root as in the `trie`'s walk.

use std::ptr;

use rustc_hash::FxHashSet;

use super::kids::{Key, Spelling};
use super::nodes::{Child, INode};
use super::raw::Pin;
use super::CsTrieMatcher;
use crate::dialect::Dialect;
use crate::error::Result;
use crate::matcher::Related;
use crate::pattern::Word;
use crate::relation::{Query, Step};

/// The edge into a state's level.
#[derive(Clone, Copy)]
enum Hop<'q> {
    /// A literal child found by the query's own word.
    Query(&'q str),
    /// A literal child found by listing the level's children.
    Label(Spelling),
    One,
    Multi,
}

/// A state of the walk: a level, the query's step, whether the level is a multi-word
/// wildcard's (which takes more words, staying), and its depth and the edge into it.
#[derive(Clone, Copy)]
struct State<'g, 'q> {
    inode: &'g INode,
    step: u32,
    looping: bool,
    depth: u32,
    hop: Hop<'q>,
}

/// Appends the held patterns standing in `query`'s relation to it; on error appends nothing.
impl CsTrieMatcher {
    /// Appends the held patterns standing in `query`'s relation to it (under one epoch pin);
    /// on error appends nothing.
    pub(super) fn related(&self, query: &Query<'_>, out: &mut Vec<Related>) -> Result<()> {
        let pin = self.reclaim.pin();
        let start = out.len();
        let result = walk(self.config.dialect, &self.root, &pin, query, out);
        if result.is_err() {
            out.truncate(start);
        }
        result
    }
}

fn walk<'g, 'q>(
    dialect: Dialect,
    root: &'g INode,
    pin: &'g Pin<'_>,
    query: &Query<'q>,
    out: &mut Vec<Related>,
) -> Result<()> {
    let steps = query.steps();
    let last = steps.len();
    let nats = dialect == Dialect::Nats;
    let wild_root = !query.starts_with_dollar();
    let dollar_root = !query.hides_dollar();
    // I-node addresses are stable identities while the walk stays pinned.
    let mut seen: FxHashSet<(usize, u32)> = FxHashSet::default();
    let mut path: Vec<Hop<'q>> = Vec::new();
    let mut stack = vec![State {
        inode: root,
        step: 0,
        looping: false,
        depth: 0,
        hop: Hop::One,
    }];
    while let Some(state) = stack.pop() {
        if !seen.insert((ptr::from_ref(state.inode) as usize, state.step)) {
            continue;
        }
        // Every state pushed after this one's parent was visited is at this depth or deeper,
        // so the path above it is its parent's.
        path.truncate(state.depth.saturating_sub(1) as usize);
        if state.depth > 0 {
            path.push(state.hop);
        }
        let node = state.inode.load(pin);
        let is_root = state.depth == 0;
        let at = state.step as usize;
        if at == last && !node.subs.is_empty() {
            let words = spell(&path);
            if query.holds(&words)? {
                let mut subscribers = Vec::new();
                node.collect(&mut subscribers);
                out.push(Related { words, subscribers });
            }
        }
        let child = |link: &'g Child, step: u32, looping: bool, hop: Hop<'q>| State {
            inode: link.get(pin),
            step,
            looping,
            depth: state.depth + 1,
            hop,
        };
        // An AMQP or MQTT `#` of the held pattern taking no word.
        if let Some(multi) = &node.multi {
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
            if let Some(one) = &node.one {
                stack.push(child(one, next, false, Hop::One));
            }
            if let (true, Some(multi)) = (nats, &node.multi) {
                stack.push(child(multi, next, true, Hop::Multi));
            }
        }
        match step {
            Step::Word(word) => {
                if let Some(found) = node.words.get(word, Key::of(word)) {
                    stack.push(child(found, next, false, Hop::Query(word)));
                }
            }
            Step::Fresh => {}
            Step::Any | Step::Star => node.words.for_each_spelt(&mut |spelling, link| {
                if is_root && !dollar_root && spelling.with(|w| w.starts_with('$')) {
                    return;
                }
                stack.push(child(link, next, false, Hop::Label(spelling)));
            }),
        }
    }
    Ok(())
}

/// The pattern of the edges from the root.
fn spell(path: &[Hop<'_>]) -> Vec<Word> {
    path.iter()
        .map(|hop| match hop {
            Hop::Query(word) => Word::Literal((*word).into()),
            Hop::Label(spelling) => Word::Literal(spelling.with(|w| w.into())),
            Hop::One => Word::One,
            Hop::Multi => Word::Multi,
        })
        .collect()
}
