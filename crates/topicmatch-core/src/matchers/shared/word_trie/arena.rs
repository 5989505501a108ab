//! The trie's storage: nodes in one arena addressed by `u32`, and the word interner.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::matcher::{shrink_if_sparse, SubscriberId};

/// Index of a node in the arena.
pub type NodeId = u32;
/// Interned word.
pub type WordId = u32;

/// Marks an absent child.
pub const NONE: NodeId = NodeId::MAX;
/// The root's id.
pub const ROOT: NodeId = 0;

/// One trie node: the subscribers whose pattern ends here and the children by next word.
#[derive(Debug, Default)]
pub struct Node {
    /// Children by literal word.
    pub children: FxHashMap<WordId, NodeId>,
    /// The one-word wildcard child, or [`NONE`].
    pub one: NodeId,
    /// The multi-word wildcard child, or [`NONE`].
    pub multi: NodeId,
    /// Subscribers whose pattern ends at this node.
    pub subs: Vec<SubscriberId>,
}

impl Node {
    fn fresh() -> Self {
        Node {
            children: FxHashMap::default(),
            one: NONE,
            multi: NONE,
            subs: Vec::new(),
        }
    }

    /// Whether the node holds nothing and can be pruned.
    pub fn is_empty(&self) -> bool {
        self.subs.is_empty() && self.children.is_empty() && self.one == NONE && self.multi == NONE
    }
}

/// Which edge leads from a parent to a child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    /// A literal word.
    Word(WordId),
    /// The one-word wildcard.
    One,
    /// The multi-word wildcard.
    Multi,
}

/// Nodes with a free list, so removed nodes are reused and the arena does not grow under churn.
#[derive(Debug)]
pub struct Arena {
    nodes: Vec<Node>,
    free: Vec<NodeId>,
}

impl Default for Arena {
    fn default() -> Self {
        Arena {
            nodes: vec![Node::fresh()],
            free: Vec::new(),
        }
    }
}

impl Arena {
    /// The node `id`.
    pub fn get(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    /// The node `id`, mutably.
    pub fn get_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id as usize]
    }

    /// The child of `parent` along `edge`, if any.
    pub fn child(&self, parent: NodeId, edge: Edge) -> NodeId {
        let node = self.get(parent);
        match edge {
            Edge::Word(w) => node.children.get(&w).copied().unwrap_or(NONE),
            Edge::One => node.one,
            Edge::Multi => node.multi,
        }
    }

    /// The child of `parent` along `edge`, created if missing. Returns it and whether it is new.
    pub fn child_or_insert(&mut self, parent: NodeId, edge: Edge) -> (NodeId, bool) {
        let existing = self.child(parent, edge);
        if existing != NONE {
            return (existing, false);
        }
        let id = if let Some(id) = self.free.pop() {
            self.nodes[id as usize] = Node::fresh();
            id
        } else {
            let id = NodeId::try_from(self.nodes.len()).expect("fewer than 2^32 trie nodes");
            self.nodes.push(Node::fresh());
            id
        };
        let node = self.get_mut(parent);
        match edge {
            Edge::Word(w) => {
                node.children.insert(w, id);
            }
            Edge::One => node.one = id,
            Edge::Multi => node.multi = id,
        }
        (id, true)
    }

    /// Detaches the empty `child` from `parent` along `edge` and frees it.
    pub fn unlink(&mut self, parent: NodeId, edge: Edge, child: NodeId) {
        let node = self.get_mut(parent);
        match edge {
            Edge::Word(w) => {
                node.children.remove(&w);
                shrink_if_sparse(&mut node.children);
            }
            Edge::One => node.one = NONE,
            Edge::Multi => node.multi = NONE,
        }
        self.nodes[child as usize] = Node::fresh();
        self.free.push(child);
    }

    /// Renumbers the live nodes densely, breadth first from the root, once at most a quarter
    /// of the arena is in use, so subscribe/unsubscribe churn gives memory back. Amortised
    /// O(1) per removal: it runs only after three quarters of the nodes were freed. Node ids
    /// change, so callers must hold no id across it (it runs at the end of a removal, under the
    /// write lock).
    pub fn compact_if_sparse(&mut self) {
        const MIN_NODES: usize = 1024;
        let live = self.nodes.len() - self.free.len();
        if self.nodes.len() <= MIN_NODES || live * 4 >= self.nodes.len() {
            return;
        }
        let mut old = std::mem::take(&mut self.nodes);
        let mut nodes = Vec::with_capacity(live * 2);
        nodes.push(std::mem::take(&mut old[ROOT as usize]));
        let mut moved: Vec<NodeId> = Vec::new();
        let mut i = 0;
        while i < nodes.len() {
            let first = NodeId::try_from(nodes.len()).expect("fewer than 2^32 trie nodes");
            let node = &mut nodes[i];
            let children = node
                .children
                .values_mut()
                .chain([&mut node.one, &mut node.multi])
                .filter(|c| **c != NONE);
            for (new_id, child) in (first..).zip(children) {
                moved.push(*child);
                *child = new_id;
            }
            for id in moved.drain(..) {
                nodes.push(std::mem::take(&mut old[id as usize]));
            }
            i += 1;
        }
        self.nodes = nodes;
        self.free = Vec::new();
    }
}

/// Interns words to small integers, counting the trie edges that use each word so that words
/// no pattern uses any longer are forgotten; spells an id back (for the relation walks, which
/// rebuild the patterns they find).
#[derive(Debug, Default)]
pub struct Interner {
    ids: FxHashMap<Arc<str>, (WordId, u32)>,
    /// The word of each id in use, by id.
    names: Vec<Option<Arc<str>>>,
    free: Vec<WordId>,
    next: WordId,
}

impl Interner {
    /// The id of `word`, if some pattern uses it.
    #[inline]
    pub fn get(&self, word: &str) -> Option<WordId> {
        self.ids.get(word).map(|(id, _)| *id)
    }

    /// The word of the id `id`, which an edge uses.
    pub fn name(&self, id: WordId) -> &str {
        self.names[id as usize]
            .as_deref()
            .expect("an id in use has a word")
    }

    /// The id of `word`, interning it, plus one reference.
    pub fn acquire(&mut self, word: &str) -> WordId {
        if let Some((id, refs)) = self.ids.get_mut(word) {
            *refs += 1;
            return *id;
        }
        let id = self.free.pop().unwrap_or_else(|| {
            let id = self.next;
            self.next += 1;
            id
        });
        let word: Arc<str> = word.into();
        if self.names.len() <= id as usize {
            self.names.resize(id as usize + 1, None);
        }
        self.names[id as usize] = Some(word.clone());
        self.ids.insert(word, (id, 1));
        id
    }

    /// Drops one reference to `word`.
    pub fn release(&mut self, word: &str) {
        if let Some((id, refs)) = self.ids.get_mut(word) {
            *refs -= 1;
            if *refs == 0 {
                let id = *id;
                self.free.push(id);
                self.names[id as usize] = None;
                self.ids.remove(word);
                shrink_if_sparse(&mut self.ids);
                if self.ids.is_empty() {
                    // No edge uses any id: start numbering afresh.
                    self.free = Vec::new();
                    self.names = Vec::new();
                    self.next = 0;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain root -> w0 -> w1 ... of `len` literal edges; returns the node ids along it.
    fn chain(arena: &mut Arena, from: NodeId, first_word: WordId, len: u32) -> Vec<NodeId> {
        let mut ids = vec![from];
        for w in first_word..first_word + len {
            let (id, _) = arena.child_or_insert(*ids.last().unwrap(), Edge::Word(w));
            ids.push(id);
        }
        ids
    }

    #[test]
    fn compaction_keeps_live_nodes_and_frees_the_rest() {
        let mut arena = Arena::default();
        let kept = chain(&mut arena, ROOT, 0, 10);
        let (one, _) = arena.child_or_insert(kept[3], Edge::One);
        let (multi, _) = arena.child_or_insert(one, Edge::Multi);
        arena.get_mut(multi).subs.push(7);
        let doomed = chain(&mut arena, ROOT, 100, 5000);
        for pair in doomed.windows(2).rev() {
            arena.unlink(pair[0], Edge::Word(100 + pair[1] - doomed[1]), pair[1]);
        }
        assert_eq!(arena.nodes.len(), 5013);
        arena.compact_if_sparse();
        assert_eq!(arena.nodes.len(), 13, "only the live nodes remain");
        assert!(arena.free.is_empty());
        let mut node = ROOT;
        for w in 0..3 {
            node = arena.child(node, Edge::Word(w));
            assert_ne!(node, NONE);
        }
        let multi = arena.child(arena.child(node, Edge::One), Edge::Multi);
        assert_eq!(arena.get(multi).subs, vec![7]);
        let mut tail = node;
        for w in 3..10 {
            tail = arena.child(tail, Edge::Word(w));
            assert_ne!(tail, NONE);
        }
        assert!(arena.get(tail).is_empty());
    }
}
