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
//! The topic text is one buffer that follows the walk: entering a node truncates it to its
//! parent's length and appends the node's words, so each topic returned costs the bytes of
//! the words that differ from the previous one's, and no allocation. A node's children lie
//! side by side in their blocks: visiting them reads memory in order.
//!
//! Order: pre-order with children in the order of their words' bytes, so topics come sorted
//! by their word lists (a topic before those that extend it). A *bound* (the last topic a
//! previous page returned) skips everything up to and including it, seeking to the first
//! child not below the bound's word on each level of the bound's path.

use std::cmp::Ordering;

use super::kids::{Cursor, Loc, Node};
use super::label::Probe;
use super::query::{Query, Step, Token};
use super::tree::Tree;
use super::words::Words;
use crate::hint::prefetch;

/// How many children ahead a subtree walk asks the memory system for a child (and, half and a
/// quarter as far ahead, for the text of a word too long to be inline in its label: the
/// interner's slot, then the bytes), so that those misses overlap.
const PREFETCH_AHEAD: usize = 8;

/// Asks for the memory of the children ahead before a walk gets there (blocks are separate
/// allocations; a node may straddle two cache lines), without reading it yet; then, with
/// `texts` (every child's text will be read), the text of a long word of a child asked for
/// before.
#[inline(always)]
#[allow(clippy::inline_always)] // once per child visited: a call would cost as much as its body
fn look_ahead<V>(words: &Words, kids: &Cursor<'_, V>, texts: bool) {
    if let Some(far) = kids.ahead(PREFETCH_AHEAD) {
        let at: *const u8 = std::ptr::from_ref(far).cast();
        prefetch(at);
        prefetch(at.wrapping_add(std::mem::size_of::<Node<V>>() - 1));
    }
    if !texts {
        return;
    }
    if let Some(near) = kids.ahead(PREFETCH_AHEAD / 2) {
        if !near.label.is_inline() {
            prefetch(words.slot_address(near.label.word));
        }
    }
    if let Some(next) = kids.ahead(PREFETCH_AHEAD / 4) {
        if !next.label.is_inline() {
            prefetch(words.text_address(next.label.word));
        }
    }
}

/// The topic text of the walk's buffer.
#[inline]
fn topic(text: &[u8]) -> &str {
    debug_assert!(std::str::from_utf8(text).is_ok());
    // SAFETY: the buffer only ever holds whole words (the bytes of a `&str`, or a label's
    // inline bytes, which are a whole word's when the label is inline) joined by the ASCII
    // separator, and is only cut back to a length it had between two words: valid UTF-8.
    unsafe { std::str::from_utf8_unchecked(text) }
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

/// A node whose children are being visited.
struct Frame<'t, V> {
    /// The children left to visit.
    kids: Cursor<'t, V>,
    /// Words and text bytes of the node's topic.
    depth: u32,
    text_len: u32,
    bound: Bound,
    /// `states[start..end]`: the node's states; unused for a subtree frame.
    start: u32,
    end: u32,
    subtree: bool,
}

/// What to visit: the matches of a query, or every stored topic.
#[derive(Clone, Copy)]
pub(crate) enum Target<'q> {
    Query(&'q Query<'q>),
    All,
}

/// One walk over `tree`.
pub(crate) struct Walk<'t, 'q, V> {
    tree: &'t Tree<V>,
    query: Option<&'q Query<'q>>,
    sep: u8,
    /// Only what comes after these words (a topic returned before).
    after: Option<&'q [&'q str]>,
    /// Whether to build topic texts (not when counting).
    texts: bool,
    text: Vec<u8>,
    frames: Vec<Frame<'t, V>>,
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
            sep,
            after,
            texts,
            text: Vec::new(),
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
        let root = &self.tree.root;
        let go_on = match self.query {
            None => self.enter_subtree(root, 0, bound, emit),
            Some(q) => {
                q.close_into(0, &mut self.states);
                let end = self.states.len() as u32;
                self.enter(root, 0, bound, 0, end, emit)
            }
        };
        go_on && self.drain(emit)
    }

    /// Where a child is against the bound, from its parent's `bound` and `order`, which
    /// orders the child's word against a word of the bound; `None`: at or before the bound,
    /// skipped whole.
    #[inline]
    fn child_bound(&self, bound: Bound, order: impl FnOnce(&str) -> Ordering) -> Option<Bound> {
        let Bound::Prefix(d) = bound else {
            return Some(Bound::Free);
        };
        let after = self.after.expect("a prefix bound has words");
        match order(after[d as usize]) {
            Ordering::Less => None,
            Ordering::Equal if d as usize + 1 == after.len() => Some(Bound::Exact),
            Ordering::Equal => Some(Bound::Prefix(d + 1)),
            Ordering::Greater => Some(Bound::Free),
        }
    }

    /// [`child_bound`](Self::child_bound) for the word of `node`'s label.
    #[inline]
    fn label_bound(&self, bound: Bound, node: &Node<V>) -> Option<Bound> {
        let words = &self.tree.words;
        self.child_bound(bound, |word| node.label.cmp(words, &Probe::new(word)))
    }

    /// Cuts the topic text back to `text_len` bytes (`depth` words) and appends `node`'s
    /// label's word.
    #[inline]
    fn push_label(&mut self, text_len: u32, depth: u32, node: &Node<V>) {
        if self.texts {
            self.text.truncate(text_len as usize);
            if depth > 0 {
                self.text.push(self.sep);
            }
            node.label.push_to(&self.tree.words, &mut self.text);
        }
    }

    /// Emits `node`'s value if it has one and the bound allows.
    #[inline]
    fn emit_node(
        &self,
        node: &Node<V>,
        bound: Bound,
        emit: &mut impl FnMut(&str, &V) -> bool,
    ) -> bool {
        match &node.value {
            Some(v) if bound == Bound::Free => emit(topic(&self.text), v),
            _ => true,
        }
    }

    /// Enters `node` matched whole: its value, then (through the stack) its descendants.
    fn enter_subtree(
        &mut self,
        node: &'t Node<V>,
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

    /// Pushes a frame to visit `node`'s children (from the first not at or before the bound).
    fn push_frame(
        &mut self,
        node: &'t Node<V>,
        depth: u32,
        bound: Bound,
        start: u32,
        end: u32,
        subtree: bool,
    ) {
        if node.kids.is_empty() {
            return;
        }
        let loc = match bound {
            Bound::Prefix(d) => {
                let after = self.after.expect("a prefix bound has words");
                node.kids.seek(&self.tree.words, after[d as usize])
            }
            Bound::Free | Bound::Exact => Loc::default(),
        };
        self.frames.push(Frame {
            kids: node.kids.cursor(loc),
            depth,
            text_len: self.text.len() as u32,
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
        query.step_into(
            &mut self.states,
            start as usize,
            end as usize,
            Token::Word(word),
        );
        let stepped = self.states.len() - end as usize;
        self.states.copy_within(end as usize.., start as usize);
        self.states.truncate(start as usize + stepped);
        start + stepped as u32
    }

    /// Steps the states `states[start..end]` by the rest of `node`'s run (the words after its
    /// label's); returns their new end, or `None` if the run leaves the filter. Reads word ids
    /// only: a child the filter rejects costs no text.
    #[inline]
    fn step_rest(
        &mut self,
        query: &Query,
        node: &Node<V>,
        start: u32,
        mut end: u32,
    ) -> Option<u32> {
        for &word in &node.rest {
            end = self.advance(query, start, end, word);
            if end == start {
                return None;
            }
        }
        Some(end)
    }

    /// Takes the words of `node`'s run after its label's (the label's word taken, `depth`
    /// words in all): the text and the bound. Returns the depth and bound at the node, or
    /// `None` if the run is at or before the bound.
    #[inline]
    fn take_rest(
        &mut self,
        node: &Node<V>,
        mut depth: u32,
        mut bound: Bound,
    ) -> Option<(u32, Bound)> {
        let words = &self.tree.words;
        for &word in &node.rest {
            let text = words.text(word);
            bound = self.child_bound(bound, |w| text.cmp(w))?;
            if self.texts {
                self.text.push(self.sep);
                self.text.extend_from_slice(text.as_bytes());
            }
            depth += 1;
        }
        Some((depth, bound))
    }

    /// Enters `node` in the states `states[start..end]` (the top of the state stack), following
    /// lone literal words down directly, and pushes a frame for what is left to visit.
    fn enter(
        &mut self,
        mut node: &'t Node<V>,
        mut depth: u32,
        mut bound: Bound,
        start: u32,
        mut end: u32,
        emit: &mut impl FnMut(&str, &V) -> bool,
    ) -> bool {
        let query = self.query.expect("a query walk");
        let accept = query.end();
        let tree = self.tree;
        loop {
            let states = &self.states[start as usize..end as usize];
            let last = *states.last().expect("a node is entered with states");
            let trailing = query.trailing.is_some_and(|t| {
                last == t || (last == accept && states.len() > 1 && states[states.len() - 2] == t)
            });
            let lone = if states.len() == 1 {
                Some(query.steps.get(last as usize).copied())
            } else {
                None
            };
            if last == accept && !self.emit_node(node, bound, emit) {
                return false;
            }
            if trailing {
                // A last `#`/`>` is among the states: everything below matches.
                self.push_frame(node, depth, bound, 0, 0, true);
                return true;
            }
            match lone {
                // Only the accepting state, or a literal no stored topic has: nothing below.
                Some(None) => return true,
                Some(Some(Step::Word(lit, _))) if lit.is_absent() => return true,
                Some(Some(Step::Word(_, text))) => {
                    let Some(child) = node.kids.find(&tree.words, &Probe::new(text)) else {
                        return true;
                    };
                    self.states.truncate(start as usize);
                    query.close_into(last + 1, &mut self.states);
                    let stepped = self.states.len() as u32;
                    let Some(e) = self.step_rest(query, child, start, stepped) else {
                        return true;
                    };
                    let Some(child_bound) = self.child_bound(bound, |w| text.cmp(w)) else {
                        return true;
                    };
                    let text_len = self.text.len() as u32;
                    self.push_label(text_len, depth, child);
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

    /// Visits the children left to the top frame, a subtree frame past the bound (the bulk of
    /// a big answer: every topic below is returned), in one tight loop: until a child has
    /// children of its own (its frame pushed) or none is left (the frame popped). Returns
    /// `false` if `emit` asked to stop.
    fn drain_subtree(&mut self, emit: &mut impl FnMut(&str, &V) -> bool) -> bool {
        let words = &self.tree.words;
        let top = self.frames.last_mut().expect("a frame to visit");
        let (depth, text_len) = (top.depth, top.text_len);
        let mut kids = std::mem::take(&mut top.kids);
        let hide = depth == 0 && self.query.is_some_and(|q| q.hides_dollar);
        while let Some(node) = kids.next() {
            look_ahead(words, &kids, self.texts);
            if hide && node.label.starts_with(b'$') {
                continue;
            }
            if self.texts {
                self.text.truncate(text_len as usize);
                if depth > 0 {
                    self.text.push(self.sep);
                }
                node.label.push_to(words, &mut self.text);
                for &w in &node.rest {
                    self.text.push(self.sep);
                    self.text.extend_from_slice(words.bytes(w));
                }
            }
            if let Some(v) = &node.value {
                if !emit(topic(&self.text), v) {
                    return false;
                }
            }
            if !node.kids.is_empty() {
                self.frames.last_mut().expect("this frame").kids = kids;
                self.frames.push(Frame {
                    kids: node.kids.cursor(Loc::default()),
                    depth: depth + 1 + node.rest.len() as u32,
                    text_len: self.text.len() as u32,
                    bound: Bound::Free,
                    start: 0,
                    end: 0,
                    subtree: true,
                });
                return true;
            }
        }
        self.frames.pop();
        true
    }

    /// Visits what the frames on the stack have left, in order.
    fn drain(&mut self, emit: &mut impl FnMut(&str, &V) -> bool) -> bool {
        let tree = self.tree;
        let words = &tree.words;
        let hides_dollar = self.query.is_some_and(|q| q.hides_dollar);
        while let Some(top) = self.frames.last_mut() {
            if top.subtree && top.bound == Bound::Free {
                if !self.drain_subtree(emit) {
                    return false;
                }
                continue;
            }
            let Some(node) = top.kids.next() else {
                self.frames.pop();
                continue;
            };
            let (depth, text_len, bound) = (top.depth, top.text_len, top.bound);
            let (start, end, subtree) = (top.start, top.end, top.subtree);
            look_ahead(words, &top.kids, subtree && self.texts);
            if depth == 0 && hides_dollar && node.label.starts_with(b'$') {
                continue;
            }
            if subtree {
                let Some(bound) = self.label_bound(bound, node) else {
                    continue;
                };
                self.push_label(text_len, depth, node);
                let Some((depth, bound)) = self.take_rest(node, depth + 1, bound) else {
                    continue;
                };
                if !self.enter_subtree(node, depth, bound, emit) {
                    return false;
                }
                continue;
            }
            // The filter first, on word ids: most children of a `+` level fail it.
            let query = self.query.expect("a state frame belongs to a query walk");
            self.states.truncate(end as usize);
            query.step_into(
                &mut self.states,
                start as usize,
                end as usize,
                Token::Label(node.label),
            );
            let stepped = self.states.len() as u32;
            if stepped == end {
                continue;
            }
            let Some(new_end) = self.step_rest(query, node, end, stepped) else {
                continue;
            };
            let Some(bound) = self.label_bound(bound, node) else {
                continue;
            };
            self.push_label(text_len, depth, node);
            let Some((depth, bound)) = self.take_rest(node, depth + 1, bound) else {
                continue;
            };
            if !self.enter(node, depth, bound, end, new_end, emit) {
                return false;
            }
        }
        true
    }
}
