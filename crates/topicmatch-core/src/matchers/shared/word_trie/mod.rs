//! A word trie: the subscriptions' patterns as paths of words, with the subscribers at each
//! pattern's last node, and its lookup ([`walk`]). The trie algorithm is this structure behind a
//! read-write lock; the level index keeps the patterns its rows cannot express in one.
//!
//! Words are interned to integers; each node has a child map by word plus dedicated children
//! for the one-word and multi-word wildcards. Lookup is an iterative walk over
//! (node, word position) states with an explicit stack.
//!
//! AMQP `#` with patterns continuing after it is the only case where one state can be reached
//! along several paths (the `#` node may absorb any number of words); those states are memoised
//! in a per-thread set, which bounds a lookup by nodes × words, so `#.#.#...` stays polynomial.
//! A trailing `#` (and every MQTT `#`, NATS `>`) has no children: its subscribers are collected
//! directly, no memo needed.

mod arena;
mod relate;
mod walk;

use crate::matcher::SubscriberId;
use crate::pattern::{Pattern, Word};
use arena::{Arena, Edge, Interner, NodeId, NONE, ROOT};

/// The trie and its interner.
#[derive(Debug, Default)]
pub(crate) struct WordTrie {
    arena: Arena,
    words: Interner,
}

impl WordTrie {
    /// Adds `subscriber` at the end of `pattern`'s path.
    pub(crate) fn insert(&mut self, pattern: &Pattern, subscriber: SubscriberId) {
        let mut node = ROOT;
        for word in pattern.words() {
            let edge = match word {
                Word::Literal(w) => {
                    let known = self.words.get(w);
                    let existing = known.map_or(NONE, |id| self.arena.child(node, Edge::Word(id)));
                    if existing != NONE {
                        node = existing;
                        continue;
                    }
                    Edge::Word(self.words.acquire(w))
                }
                Word::One => Edge::One,
                Word::Multi => Edge::Multi,
            };
            node = self.arena.child_or_insert(node, edge).0;
        }
        self.arena.get_mut(node).subs.push(subscriber);
    }

    /// Removes `subscriber` from the end of `pattern`'s path, pruning the nodes left empty;
    /// whether it was there.
    pub(crate) fn remove(&mut self, pattern: &Pattern, subscriber: SubscriberId) -> bool {
        // The path of (parent, edge, child) from the root down to the pattern's node.
        let mut path: Vec<(NodeId, Edge, NodeId)> = Vec::with_capacity(pattern.words().len());
        let mut node = ROOT;
        for word in pattern.words() {
            let edge = match word {
                Word::Literal(w) => match self.words.get(w) {
                    Some(id) => Edge::Word(id),
                    None => return false,
                },
                Word::One => Edge::One,
                Word::Multi => Edge::Multi,
            };
            let child = self.arena.child(node, edge);
            if child == NONE {
                return false;
            }
            path.push((node, edge, child));
            node = child;
        }
        let subs = &mut self.arena.get_mut(node).subs;
        let Some(pos) = subs.iter().position(|s| *s == subscriber) else {
            return false;
        };
        subs.swap_remove(pos);
        if subs.capacity() > 64 && subs.len() * 4 < subs.capacity() {
            subs.shrink_to(subs.len() * 2);
        }
        // Prune the nodes left empty, deepest first.
        for ((parent, edge, child), word) in path.into_iter().zip(pattern.words()).rev() {
            if !self.arena.get(child).is_empty() {
                break;
            }
            self.arena.unlink(parent, edge, child);
            if let Word::Literal(w) = word {
                self.words.release(w);
            }
        }
        self.arena.compact_if_sparse();
        true
    }
}
