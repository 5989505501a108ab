//! The trie's storage: nodes in one arena addressed by `u32`, and the word interner.

use rustc_hash::FxHashMap;

use crate::matcher::SubscriberId;

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
            }
            Edge::One => node.one = NONE,
            Edge::Multi => node.multi = NONE,
        }
        self.nodes[child as usize] = Node::fresh();
        self.free.push(child);
    }
}

/// Interns words to small integers, counting the trie edges that use each word so that words
/// no pattern uses any longer are forgotten.
#[derive(Debug, Default)]
pub struct Interner {
    ids: FxHashMap<Box<str>, (WordId, u32)>,
    free: Vec<WordId>,
    next: WordId,
}

impl Interner {
    /// The id of `word`, if some pattern uses it.
    #[inline]
    pub fn get(&self, word: &str) -> Option<WordId> {
        self.ids.get(word).map(|(id, _)| *id)
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
        self.ids.insert(word.into(), (id, 1));
        id
    }

    /// Drops one reference to `word`.
    pub fn release(&mut self, word: &str) {
        if let Some((id, refs)) = self.ids.get_mut(word) {
            *refs -= 1;
            if *refs == 0 {
                self.free.push(*id);
                self.ids.remove(word);
            }
        }
    }
}
