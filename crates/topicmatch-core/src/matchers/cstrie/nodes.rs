//! The CS-trie's nodes: immutable main nodes (C-nodes and tombstones) and the edges between
//! levels.

use super::kids::{Key, Kids};
use super::raw::INode;
use super::subs::Subs;
use crate::matcher::SubscriberId;
use crate::pattern::Word;
use crate::sync::Arc;

/// The edge from a node to one of its children.
#[derive(Debug, Clone, Copy)]
pub(super) enum Edge<'a> {
    /// A literal word and its [`Key`].
    Word(&'a str, Key),
    /// The one-word wildcard.
    One,
    /// The multi-word wildcard.
    Multi,
}

impl<'a> Edge<'a> {
    /// The edge a pattern word follows.
    pub(super) fn of(word: &'a Word) -> Self {
        match word {
            Word::Literal(w) => Edge::Word(w, Key::of(w)),
            Word::One => Edge::One,
            Word::Multi => Edge::Multi,
        }
    }
}

/// An immutable main node: a C-node (one trie level: children and the subscribers whose pattern
/// ends here) or, with [`Kids::Tomb`] as its children, a tombstone: an empty node being unlinked, which never
/// changes again. A copy shares the children and the subscriber set, so building the next
/// version costs O(1) plus what the update itself rebuilds (a narrow level's array or a HAMT
/// path).
#[derive(Default)]
pub(super) struct Main {
    /// Children by literal word.
    pub words: Kids,
    /// The one-word wildcard child.
    pub one: Option<Arc<INode>>,
    /// The multi-word wildcard child.
    pub multi: Option<Arc<INode>>,
    /// Subscribers whose pattern ends here.
    pub subs: Subs,
}

impl Main {
    fn copy(&self) -> Main {
        Main {
            // A tombstone never changes, so its copies are never tombstones.
            words: if self.is_tomb() {
                Kids::default()
            } else {
                self.words.clone()
            },
            one: self.one.clone(),
            multi: self.multi.clone(),
            subs: self.subs.clone(),
        }
    }

    /// A tombstone.
    pub(super) fn tomb() -> Main {
        Main {
            words: Kids::Tomb,
            one: None,
            multi: None,
            subs: Subs::default(),
        }
    }

    /// Whether this is a tombstone.
    #[inline]
    pub(super) fn is_tomb(&self) -> bool {
        self.words.is_tomb()
    }

    /// A leaf holding `sub` only.
    pub(super) fn leaf(sub: SubscriberId) -> Main {
        Main::default().with_sub(sub)
    }

    /// Whether the node holds no child and no subscriber.
    pub(super) fn is_empty(&self) -> bool {
        self.words.is_empty() && self.one.is_none() && self.multi.is_none() && self.subs.is_empty()
    }

    /// Whether the node has no children (its subscribers may be collected without walking on).
    pub(super) fn is_childless(&self) -> bool {
        self.words.is_empty() && self.one.is_none() && self.multi.is_none()
    }

    /// The child along `edge`.
    #[inline]
    pub(super) fn child(&self, edge: Edge<'_>) -> Option<&Arc<INode>> {
        match edge {
            Edge::Word(word, key) => self.words.get(word, key),
            Edge::One => self.one.as_ref(),
            Edge::Multi => self.multi.as_ref(),
        }
    }

    /// A copy with `child` along `edge`.
    pub(super) fn with_child(&self, edge: Edge<'_>, child: Arc<INode>) -> Main {
        let mut next = self.copy();
        match edge {
            Edge::Word(word, key) => next.words = self.words.with(word, key, child),
            Edge::One => next.one = Some(child),
            Edge::Multi => next.multi = Some(child),
        }
        next
    }

    /// A copy without the child along `edge`.
    pub(super) fn without_child(&self, edge: Edge<'_>) -> Main {
        let mut next = self.copy();
        match edge {
            Edge::Word(word, key) => {
                if let Some(words) = self.words.without(word, key) {
                    next.words = words;
                }
            }
            Edge::One => next.one = None,
            Edge::Multi => next.multi = None,
        }
        next
    }

    /// A copy with `sub` added.
    pub(super) fn with_sub(&self, sub: SubscriberId) -> Main {
        let mut next = self.copy();
        next.subs = self.subs.with(sub);
        next
    }

    /// A copy without `sub`, or `None` if it is not here.
    pub(super) fn without_sub(&self, sub: SubscriberId) -> Option<Main> {
        let subs = self.subs.without(sub)?;
        let mut next = self.copy();
        next.subs = subs;
        Some(next)
    }

    /// Appends the subscribers to `out`.
    #[inline]
    pub(super) fn collect(&self, out: &mut Vec<SubscriberId>) {
        self.subs.collect(out);
    }

    /// Moves the children only this node refers to into `out`; releases the shared ones.
    fn take_children(&mut self, out: &mut Vec<Arc<INode>>) {
        let mut children = Vec::new();
        self.words.drain_unique(&mut children);
        children.extend(self.one.take());
        children.extend(self.multi.take());
        // A count of 1 cannot rise: nobody else holds a reference to clone. (The drained
        // references are all this node's: `drain_unique` has released the rest.)
        out.extend(
            children
                .into_iter()
                .filter(|child| Arc::strong_count(child) == 1),
        );
    }
}

impl Drop for Main {
    /// Dismantles the subtree this node alone owns with a loop, not recursion: a pattern may be
    /// thousands of levels deep, deeper than a thread's stack allows recursive drops.
    fn drop(&mut self) {
        let mut pending = Vec::new();
        self.take_children(&mut pending);
        while let Some(child) = pending.pop() {
            // Shared children are only released; another main node still refers to them.
            if let Ok(inode) = Arc::try_unwrap(child) {
                inode.into_main().take_children(&mut pending);
            }
        }
    }
}
