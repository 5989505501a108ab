//! The word trie's relation walk (what the trie algorithm's
//! [`Matcher::related_into`](crate::Matcher::related_into) runs): the trie and the query's steps ([`Query::steps`]) walked together, depth first over (node,
//! step) states, each visited once. A state at the last step whose node holds subscribers is
//! a candidate: its pattern, spelt from the path, is decided exactly by [`Query::holds`].
//!
//! - **Covers** walks the query's witness topic, a lookup: only the patterns matching that
//!   topic are visited, as many nodes as a lookup of it visits.
//! - **Intersects** walks the query's tokens: where the query takes any word (`*`, `+`, `#`,
//!   `>`) every literal child is followed, so the walk visits the part of the trie the query
//!   can reach, at most nodes × (query words + 1) states.
//!
//! The MQTT `$` rule prunes at the root: a query whose topics start with a `$` word skips the
//! root's wildcard children, and a query whose topics never do skips the root's `$` literals.

use rustc_hash::FxHashSet;

use super::arena::{Edge, NodeId, NONE, ROOT};
use super::WordTrie as Inner;
use crate::dialect::Dialect;
use crate::error::Result;
use crate::matcher::Related;
use crate::pattern::Word;
use crate::relation::{Query, Step};

/// A state of the walk: a node, the query's step, whether the node is a multi-word
/// wildcard's (which takes more words, staying), and the node's depth and the edge into it.
#[derive(Clone, Copy)]
struct State {
    node: NodeId,
    step: u32,
    looping: bool,
    depth: u32,
    edge: Edge,
}

impl Inner {
    /// Appends the held patterns standing in `query`'s relation to it; on error appends
    /// nothing.
    pub(crate) fn related(
        &self,
        dialect: Dialect,
        query: &Query<'_>,
        out: &mut Vec<Related>,
    ) -> Result<()> {
        let start = out.len();
        let result = walk(dialect, self, query, out);
        if result.is_err() {
            out.truncate(start);
        }
        result
    }
}

fn walk(dialect: Dialect, trie: &Inner, query: &Query<'_>, out: &mut Vec<Related>) -> Result<()> {
    let steps = query.steps();
    let last = steps.len();
    let nats = dialect == Dialect::Nats;
    let wild_root = !query.starts_with_dollar();
    let dollar_root = !query.hides_dollar();
    let mut seen: FxHashSet<(NodeId, u32)> = FxHashSet::default();
    // The edges from the root to the state being visited.
    let mut path: Vec<Edge> = Vec::new();
    let mut stack = vec![State {
        node: ROOT,
        step: 0,
        looping: false,
        depth: 0,
        edge: Edge::One,
    }];
    while let Some(state) = stack.pop() {
        if !seen.insert((state.node, state.step)) {
            continue;
        }
        // Every state pushed after this one's parent was visited is at this depth or deeper,
        // so the path above it is its parent's.
        path.truncate(state.depth.saturating_sub(1) as usize);
        if state.depth > 0 {
            path.push(state.edge);
        }
        let node = trie.arena.get(state.node);
        let root = state.node == ROOT;
        let at = state.step as usize;
        if at == last && !node.subs.is_empty() {
            let words = spell(trie, &path);
            if query.holds(&words)? {
                out.push(Related {
                    words,
                    subscribers: node.subs.clone(),
                });
            }
        }
        let child = |node: NodeId, step: u32, looping: bool, edge: Edge| State {
            node,
            step,
            looping,
            depth: state.depth + 1,
            edge,
        };
        // An AMQP or MQTT `#` of the held pattern taking no word.
        if node.multi != NONE && !nats && (wild_root || !root) {
            stack.push(child(node.multi, state.step, true, Edge::Multi));
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
        // One word, read by the query's step and by an edge of the node.
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
        if wild_root || !root {
            if node.one != NONE {
                stack.push(child(node.one, next, false, Edge::One));
            }
            if nats && node.multi != NONE {
                stack.push(child(node.multi, next, true, Edge::Multi));
            }
        }
        match step {
            Step::Word(word) => {
                if let Some(id) = trie.words.get(word) {
                    let found = trie.arena.child(state.node, Edge::Word(id));
                    if found != NONE {
                        stack.push(child(found, next, false, Edge::Word(id)));
                    }
                }
            }
            Step::Fresh => {}
            Step::Any | Step::Star => {
                for (&id, &found) in &node.children {
                    if root && !dollar_root && trie.words.name(id).starts_with('$') {
                        continue;
                    }
                    stack.push(child(found, next, false, Edge::Word(id)));
                }
            }
        }
    }
    Ok(())
}

/// The pattern of the edges from the root.
fn spell(trie: &Inner, path: &[Edge]) -> Vec<Word> {
    path.iter()
        .map(|edge| match edge {
            Edge::Word(id) => Word::Literal(trie.words.name(*id).into()),
            Edge::One => Word::One,
            Edge::Multi => Word::Multi,
        })
        .collect()
}
