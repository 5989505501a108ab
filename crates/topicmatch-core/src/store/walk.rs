//! The walk that answers a filter: a depth-first pass over the trie that visits only nodes
//! some prefix of the filter can reach.
//!
//! Each node is entered with the set of filter positions (states) its path can be in, as in
//! [`Pattern::matches_words`](crate::Pattern::matches_words)'s simulation, and:
//! - a literal word as the only state goes straight to that one child (a lookup);
//! - a set with a last `#`/`>` among it matches the node's whole subtree, walked without
//!   states;
//! - anything else visits the children in order, each with the states its word leads to,
//!   skipping those left with none.
//!
//! So a filter with a literal prefix costs one lookup per literal word, a `+` the children of
//! the nodes it reaches, and `#` the subtree it takes. Each node is entered at most once and
//! its state set has at most one state per filter word: any number of AMQP `#` stays
//! polynomial. The stack is a vector (no recursion), as deep as the deepest topic.
//!
//! Order: pre-order with children in the order of their words' bytes, so topics come sorted
//! by their word lists (a topic before those that extend it). A *bound* (the last topic a
//! previous page returned) skips everything up to and including it, seeking to the first
//! child not below the bound's word on each level of the bound's path.

use std::cmp::Ordering;

use super::kids::{NodeId, Pos};
use super::query::{Query, Step};
use super::tree::{Tree, ROOT};

/// How many children ahead a walk asks the memory system for: nodes of a big store sit in
/// the arena in insertion order, so siblings are scattered; asking early lets several misses
/// overlap instead of taking one at a time.
const PREFETCH_AHEAD: u32 = 6;

/// Asks for the cache line at `address` without waiting for it.
#[inline(always)]
#[allow(clippy::inline_always)] // a single instruction
fn prefetch(address: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it never faults, whatever the address, and reads
    // nothing the program sees; SSE, which it needs, is part of the x86-64 baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(address.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// Where a node stands against the bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    /// After the bound: everything here is returned.
    Free,
    /// On the bound's path, `d` words in: nothing here is returned but what follows word `d`.
    Prefix(u32),
    /// The bound itself: its value was returned, its descendants were not.
    Exact,
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    node: NodeId,
    depth: u32,
    text_len: u32,
    pos: Pos,
    bound: Bound,
    /// `states[start..end]`: the node's states; unused for a subtree frame.
    start: u32,
    end: u32,
    subtree: bool,
}

/// What to visit: the matches of a query, or every stored topic.
#[derive(Clone, Copy)]
pub(crate) enum Target<'q> {
    Query(&'q Query),
    All,
}

/// One walk over `tree`.
pub(crate) struct Walk<'t, 'q, V> {
    tree: &'t Tree<V>,
    query: Option<&'q Query>,
    sep: char,
    /// Only what comes after these words (a topic returned before).
    after: Option<&'q [&'q str]>,
    /// Whether to build topic texts (not when counting).
    texts: bool,
    text: String,
    frames: Vec<Frame>,
    states: Vec<u32>,
}

impl<'t, 'q, V> Walk<'t, 'q, V> {
    pub(crate) fn new(
        tree: &'t Tree<V>,
        target: Target<'q>,
        sep: u8,
        after: Option<&'q [&'q str]>,
        texts: bool,
    ) -> Self {
        Walk {
            tree,
            query: match target {
                Target::Query(q) => Some(q),
                Target::All => None,
            },
            sep: char::from(sep),
            after,
            texts,
            text: String::new(),
            frames: Vec::new(),
            states: Vec::new(),
        }
    }

    /// Calls `emit(topic, value)` for each match in order (with `""` for the topic when not
    /// building texts) until it returns `false`. Returns whether the walk finished.
    pub(crate) fn run(&mut self, emit: &mut impl FnMut(&str, &V) -> bool) -> bool {
        let bound = match self.after {
            None => Bound::Free,
            Some([]) => Bound::Exact,
            Some(_) => Bound::Prefix(0),
        };
        let go_on = match self.query {
            None => self.enter_subtree(ROOT, 0, bound, emit),
            Some(q) => {
                q.close_into(0, &mut self.states);
                let end = self.states.len() as u32;
                self.enter(ROOT, 0, bound, 0, end, emit)
            }
        };
        go_on && self.drain(emit)
    }

    /// Where `child`'s word `text` puts it against the bound, from its parent's `bound`;
    /// `None`: at or before the bound, skipped whole.
    #[inline]
    fn child_bound(&self, bound: Bound, text: &str) -> Option<Bound> {
        let Bound::Prefix(d) = bound else {
            return Some(Bound::Free);
        };
        let after = self.after.expect("a prefix bound has words");
        match text.cmp(after[d as usize]) {
            Ordering::Less => None,
            Ordering::Equal if d as usize + 1 == after.len() => Some(Bound::Exact),
            Ordering::Equal => Some(Bound::Prefix(d + 1)),
            Ordering::Greater => Some(Bound::Free),
        }
    }

    /// The first child position to visit under `bound`.
    #[inline]
    fn first_pos(&self, node: NodeId, bound: Bound) -> Pos {
        match bound {
            Bound::Prefix(d) => {
                let after = self.after.expect("a prefix bound has words");
                self.tree.nodes[node as usize]
                    .kids
                    .seek(&self.tree.words, after[d as usize])
            }
            Bound::Free | Bound::Exact => Pos::default(),
        }
    }

    /// Extends the current topic text (`text_len` bytes long at the parent, `depth` words)
    /// with `word`.
    #[inline]
    fn push_word(&mut self, text_len: u32, depth: u32, word: &str) {
        if self.texts {
            self.text.truncate(text_len as usize);
            if depth > 0 {
                self.text.push(self.sep);
            }
            self.text.push_str(word);
        }
    }

    /// Emits `node`'s value if it has one and the bound allows.
    #[inline]
    fn emit_node(
        &self,
        node: NodeId,
        bound: Bound,
        emit: &mut impl FnMut(&str, &V) -> bool,
    ) -> bool {
        match &self.tree.nodes[node as usize].value {
            Some(v) if bound == Bound::Free => emit(&self.text, v),
            _ => true,
        }
    }

    /// Enters `node` matched whole: its value, then (through the stack) its descendants.
    fn enter_subtree(
        &mut self,
        node: NodeId,
        depth: u32,
        bound: Bound,
        emit: &mut impl FnMut(&str, &V) -> bool,
    ) -> bool {
        if !self.emit_node(node, bound, emit) {
            return false;
        }
        self.push_frame(node, depth, bound, 0, 0, true);
        true
    }

    fn push_frame(
        &mut self,
        node: NodeId,
        depth: u32,
        bound: Bound,
        start: u32,
        end: u32,
        subtree: bool,
    ) {
        if self.tree.nodes[node as usize].kids.is_empty() {
            return;
        }
        let pos = self.first_pos(node, bound);
        self.frames.push(Frame {
            node,
            depth,
            text_len: self.text.len() as u32,
            pos,
            bound,
            start,
            end,
            subtree,
        });
    }

    /// Steps the states `states[start..end]` (the top of the state stack) by `word`, in
    /// place; returns their new end (`start`: none left).
    #[inline]
    fn advance(&mut self, query: &Query, start: u32, end: u32, word: u32) -> u32 {
        query.step_into(&mut self.states, start as usize, end as usize, word);
        let stepped = self.states.len() - end as usize;
        self.states.copy_within(end as usize.., start as usize);
        self.states.truncate(start as usize + stepped);
        start + stepped as u32
    }

    /// Steps the states `states[start..end]` by the rest of `node`'s run (the words after its
    /// edge's); returns their new end, or `None` if the run leaves the filter. Reads word ids
    /// only: a child the filter rejects costs no text.
    #[inline]
    fn step_rest(&mut self, query: &Query, node: NodeId, start: u32, mut end: u32) -> Option<u32> {
        let tree = self.tree;
        for &word in &tree.nodes[node as usize].rest {
            end = self.advance(query, start, end, word);
            if end == start {
                return None;
            }
        }
        Some(end)
    }

    /// Takes the words of `node`'s run after its edge's (the edge's word taken at `depth`):
    /// the text and the bound. Returns the depth and bound at the node, or `None` if the run
    /// is at or before the bound.
    #[inline]
    fn take_rest(
        &mut self,
        node: NodeId,
        mut depth: u32,
        mut bound: Bound,
    ) -> Option<(u32, Bound)> {
        let tree = self.tree;
        for &word in &tree.nodes[node as usize].rest {
            let text = tree.words.text(word);
            bound = self.child_bound(bound, text)?;
            let text_len = self.text.len() as u32;
            self.push_word(text_len, depth, text);
            depth += 1;
        }
        Some((depth, bound))
    }

    /// Enters `node` in the states `states[start..end]` (the top of the state stack), following
    /// lone literal words down directly, and pushes a frame for what is left to visit.
    fn enter(
        &mut self,
        mut node: NodeId,
        mut depth: u32,
        mut bound: Bound,
        start: u32,
        mut end: u32,
        emit: &mut impl FnMut(&str, &V) -> bool,
    ) -> bool {
        let query = self.query.expect("a query walk");
        let accept = query.end();
        loop {
            let states = &self.states[start as usize..end as usize];
            let last = *states.last().expect("a node is entered with states");
            let trailing = query.trailing.is_some_and(|t| {
                last == t || (last == accept && states.len() > 1 && states[states.len() - 2] == t)
            });
            if last == accept && !self.emit_node(node, bound, emit) {
                return false;
            }
            if trailing {
                // A last `#`/`>` is among the states: everything below matches.
                self.push_frame(node, depth, bound, 0, 0, true);
                return true;
            }
            let lone = if states.len() == 1 {
                query.steps.get(last as usize).copied()
            } else {
                None
            };
            match lone {
                // Only the accepting state, or a literal no stored topic has: nothing below.
                None if states.len() == 1 => return true,
                Some(Step::Word(None)) => return true,
                Some(Step::Word(Some(word))) => {
                    let tree = self.tree;
                    let Some(child) = tree.nodes[node as usize].kids.find_id(&tree.words, word)
                    else {
                        return true;
                    };
                    self.states.truncate(start as usize);
                    query.close_into(last + 1, &mut self.states);
                    let stepped = self.states.len() as u32;
                    let Some(e) = self.step_rest(query, child, start, stepped) else {
                        return true;
                    };
                    let text = tree.words.text(word);
                    let Some(child_bound) = self.child_bound(bound, text) else {
                        return true;
                    };
                    let text_len = self.text.len() as u32;
                    self.push_word(text_len, depth, text);
                    let Some((d, b)) = self.take_rest(child, depth + 1, child_bound) else {
                        return true;
                    };
                    (node, depth, bound, end) = (child, d, b, e);
                }
                _ => {
                    self.push_frame(node, depth, bound, start, end, false);
                    return true;
                }
            }
        }
    }

    /// Visits what the frames on the stack have left, in order.
    fn drain(&mut self, emit: &mut impl FnMut(&str, &V) -> bool) -> bool {
        let tree = self.tree;
        while let Some(top) = self.frames.last_mut() {
            let kids = &tree.nodes[top.node as usize].kids;
            let Some(edge) = kids.at(top.pos) else {
                self.frames.pop();
                continue;
            };
            if let Some(soon) = kids.ahead(top.pos, PREFETCH_AHEAD) {
                prefetch(std::ptr::from_ref(&tree.nodes[soon.node as usize]).cast());
                if top.subtree {
                    // Every child of a subtree is returned: its word's text will be read.
                    prefetch(tree.words.slot_address(soon.word));
                }
            }
            if top.subtree {
                if let Some(sooner) = kids.ahead(top.pos, PREFETCH_AHEAD / 2) {
                    // Its slot was asked for earlier: now its text.
                    prefetch(tree.words.text_address(sooner.word));
                }
            }
            top.pos = kids.next(top.pos);
            let top = *top;
            if top.subtree {
                let text = tree.words.text(edge.word);
                let Some(bound) = self.child_bound(top.bound, text) else {
                    continue;
                };
                if top.depth == 0
                    && self.query.is_some_and(|q| q.hides_dollar)
                    && text.starts_with('$')
                {
                    continue;
                }
                self.push_word(top.text_len, top.depth, text);
                let Some((depth, bound)) = self.take_rest(edge.node, top.depth + 1, bound) else {
                    continue;
                };
                if !self.enter_subtree(edge.node, depth, bound, emit) {
                    return false;
                }
                continue;
            }
            // The filter first, on word ids: most children of a `+` level fail it.
            let query = self.query.expect("a state frame belongs to a query walk");
            self.states.truncate(top.end as usize);
            query.step_into(
                &mut self.states,
                top.start as usize,
                top.end as usize,
                edge.word,
            );
            let stepped = self.states.len() as u32;
            if stepped == top.end {
                continue;
            }
            let Some(end) = self.step_rest(query, edge.node, top.end, stepped) else {
                continue;
            };
            let text = tree.words.text(edge.word);
            let Some(bound) = self.child_bound(top.bound, text) else {
                continue;
            };
            if top.depth == 0 && query.hides_dollar && text.starts_with('$') {
                continue;
            }
            self.push_word(top.text_len, top.depth, text);
            let Some((depth, bound)) = self.take_rest(edge.node, top.depth + 1, bound) else {
                continue;
            };
            if !self.enter(edge.node, depth, bound, top.end, end, emit) {
                return false;
            }
        }
        true
    }
}
