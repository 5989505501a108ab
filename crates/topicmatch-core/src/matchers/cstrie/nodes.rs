//! The CS-trie's nodes: immutable main nodes (C-nodes and tombstones) and the edges between
//! levels.

use super::kids::{Key, Kids};
use super::raw::{self, Array, Delta, Node};
use super::subs::Subs;
use crate::matcher::SubscriberId;
use crate::pattern::Word;

/// An I-node of this trie.
pub(super) type INode = raw::INode<Main>;
/// A link to a child I-node.
pub(super) type Child = raw::Child<Main>;
/// A new I-node, not linked into the trie yet.
pub(super) type Fresh = raw::Fresh<Main>;

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
/// ends here) or, with [`Kids::Tomb`] as its children, a tombstone: an empty node being
/// unlinked, which never changes again. A copy shares the children and the subscriber set, so building the next
/// version costs O(1) plus what the update itself rebuilds (a narrow level's array or a HAMT
/// path).
///
/// `repr(C)`, in the order a lookup reads them: a last level's subscribers and multi-word
/// wildcard link lead (in an I-node's own first main node they share the cache line of its
/// pointer), then the one-word wildcard link and the children.
#[derive(Default)]
#[repr(C)]
pub(super) struct Main {
    /// Subscribers whose pattern ends here.
    pub subs: Subs,
    /// The multi-word wildcard child.
    pub multi: Option<Child>,
    /// The one-word wildcard child.
    pub one: Option<Child>,
    /// Children by literal word.
    pub words: Kids<Child>,
}

impl Main {
    /// A copy with `words` and `subs` replaced where given: the parts it keeps are shared (a
    /// narrow array's reference count, or a HAMT's root pointer).
    fn copy(&self, words: Option<Kids<Child>>, subs: Option<Subs>) -> Main {
        Main {
            // A tombstone never changes, so its copies are never tombstones.
            words: words.unwrap_or_else(|| {
                if self.is_tomb() {
                    Kids::default()
                } else {
                    self.words.clone()
                }
            }),
            one: self.one,
            multi: self.multi,
            subs: subs.unwrap_or_else(|| self.subs.clone()),
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

    /// A leaf holding `sub` only (inline: no shared array).
    pub(super) fn leaf(sub: SubscriberId) -> Main {
        let mut delta = Delta::default();
        let leaf = Main::default().with_sub(sub, &mut delta);
        delta.keep();
        leaf
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
    pub(super) fn child(&self, edge: Edge<'_>) -> Option<&Child> {
        match edge {
            Edge::Word(word, key) => self.words.get(word, key),
            Edge::One => self.one.as_ref(),
            Edge::Multi => self.multi.as_ref(),
        }
    }

    /// A copy with `child` along `edge`, which has no child here (an insert adds only missing
    /// levels); `delta` records the shared arrays it changed.
    pub(super) fn with_child(&self, edge: Edge<'_>, child: Child, delta: &mut Delta) -> Main {
        match edge {
            Edge::Word(word, key) => {
                self.copy(Some(self.words.with(word, key, child, delta)), None)
            }
            Edge::One => Main {
                one: Some(child),
                ..self.copy(None, None)
            },
            Edge::Multi => Main {
                multi: Some(child),
                ..self.copy(None, None)
            },
        }
    }

    /// A copy without the child along `edge`; `delta` records the shared arrays it changed.
    pub(super) fn without_child(&self, edge: Edge<'_>, delta: &mut Delta) -> Main {
        match edge {
            Edge::Word(word, key) => self.copy(self.words.without(word, key, delta), None),
            Edge::One => Main {
                one: None,
                ..self.copy(None, None)
            },
            Edge::Multi => Main {
                multi: None,
                ..self.copy(None, None)
            },
        }
    }

    /// A copy with `sub` added; `delta` records the shared arrays it changed.
    pub(super) fn with_sub(&self, sub: SubscriberId, delta: &mut Delta) -> Main {
        self.copy(None, Some(self.subs.with(sub, delta)))
    }

    /// A copy without `sub`, or `None` if it is not here; `delta` records the shared arrays it
    /// changed.
    pub(super) fn without_sub(&self, sub: SubscriberId, delta: &mut Delta) -> Option<Main> {
        Some(self.copy(None, Some(self.subs.without(sub, delta)?)))
    }

    /// Calls `f` on every shared array of this version (its wide levels' HAMT nodes).
    pub(super) fn for_each_array(&self, f: &mut impl FnMut(Array)) {
        self.words.for_each_array(f);
        self.subs.for_each_array(f);
    }

    /// Appends the subscribers to `out`.
    #[inline]
    pub(super) fn collect(&self, out: &mut Vec<SubscriberId>) {
        self.subs.collect(out);
    }

    /// Calls `f` on every child link.
    pub(super) fn for_each_child(&self, mut f: impl FnMut(Child)) {
        self.words.for_each(&mut f);
        self.one.into_iter().chain(self.multi).for_each(f);
    }
}

impl Node for Main {
    type Edge<'a> = Edge<'a>;

    #[inline]
    fn is_tomb(&self) -> bool {
        Main::is_tomb(self)
    }

    #[inline]
    fn child(&self, edge: Edge<'_>) -> Option<&Child> {
        Main::child(self, edge)
    }

    fn for_each_child(&self, f: impl FnMut(Child)) {
        Main::for_each_child(self, f);
    }

    fn for_each_array(&self, f: &mut impl FnMut(Array)) {
        Main::for_each_array(self, f);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::super::kids::WideLabel;
    use super::{Child, Main};

    #[test]
    fn a_main_node_stays_88_bytes_and_a_wide_entry_is_a_label_and_a_pointer() {
        // 88 since a wide level's map holds its root's array as a fat pointer (one allocation
        // per HAMT node): Kids is then 40 bytes.
        assert!(std::mem::size_of::<Main>() <= 88);
        // What `hamt`'s slot size test stands in for.
        assert_eq!(std::mem::size_of::<WideLabel>(), 16);
        assert_eq!(std::mem::size_of::<Child>(), 8);
        assert_eq!(std::mem::size_of::<Option<Child>>(), 8);
    }
}
