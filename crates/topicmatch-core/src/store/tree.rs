//! The store's trie: one node per stored topic prefix, in an arena addressed by `u32`, with
//! the topic's value on the node where its last word ends. Single-threaded; the
//! [`TopicStore`](super::TopicStore) puts it behind its lock.
//!
//! Invariants, kept by every method:
//! - every node but the root holds a value or has a child (a removal prunes the emptied path);
//! - every edge holds one reference to its word in [`Words`];
//! - `len` is the number of nodes holding a value.

use smallvec::SmallVec;

use super::kids::{Edge, Kids, NodeId};
use super::words::{WordId, Words};

/// The root: the empty word list (the AMQP empty routing key stores its value here).
pub(crate) const ROOT: NodeId = 0;

/// Arenas smaller than this are never compacted.
const COMPACT_MIN: usize = 1024;

/// One node: its children and, if a topic ends here, that topic's value.
#[derive(Debug)]
pub(crate) struct Node<V> {
    pub(crate) kids: Kids,
    pub(crate) value: Option<V>,
}

impl<V> Default for Node<V> {
    fn default() -> Self {
        Node {
            kids: Kids::None,
            value: None,
        }
    }
}

/// The trie.
#[derive(Debug)]
pub(crate) struct Tree<V> {
    pub(crate) nodes: Vec<Node<V>>,
    /// Free node slots, reused first.
    free: Vec<NodeId>,
    pub(crate) words: Words,
    len: usize,
}

impl<V> Default for Tree<V> {
    fn default() -> Self {
        Tree {
            nodes: vec![Node::default()],
            free: Vec::new(),
            words: Words::default(),
            len: 0,
        }
    }
}

impl<V> Tree<V> {
    /// How many topics are stored.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The node of `topic`'s words, if that path exists.
    fn find(&self, topic: &[&str]) -> Option<NodeId> {
        let mut node = ROOT;
        for word in topic {
            node = self.nodes[node as usize]
                .kids
                .find_text(&self.words, word)?;
        }
        Some(node)
    }

    /// The value stored under `topic`.
    pub(crate) fn get(&self, topic: &[&str]) -> Option<&V> {
        self.nodes[self.find(topic)? as usize].value.as_ref()
    }

    /// Stores `value` under `topic`; returns the value it replaces.
    pub(crate) fn insert(&mut self, topic: &[&str], value: V) -> Option<V> {
        let mut node = ROOT;
        let mut depth = 0;
        while let Some(word) = topic.get(depth) {
            match self.nodes[node as usize].kids.find_text(&self.words, word) {
                Some(child) => node = child,
                None => break,
            }
            depth += 1;
        }
        for word in &topic[depth..] {
            let word = self.words.acquire(word);
            let child = self.alloc();
            self.nodes[node as usize]
                .kids
                .insert(&self.words, Edge { word, node: child });
            node = child;
        }
        let old = self.nodes[node as usize].value.replace(value);
        if old.is_none() {
            self.len += 1;
        }
        old
    }

    /// Removes `topic`; returns its value. Prunes the nodes left empty, and compacts the
    /// arena once most of it is free.
    pub(crate) fn remove(&mut self, topic: &[&str]) -> Option<V> {
        let mut path: SmallVec<[(NodeId, WordId); 16]> = SmallVec::new();
        let mut node = ROOT;
        for word in topic {
            let id = self.words.lookup(word)?;
            let child = self.nodes[node as usize].kids.find_id(id)?;
            path.push((node, id));
            node = child;
        }
        let old = self.nodes[node as usize].value.take()?;
        self.len -= 1;
        while let Some(&(parent, word)) = path.last() {
            let n = &self.nodes[node as usize];
            if n.value.is_some() || !n.kids.is_empty() {
                break;
            }
            self.nodes[parent as usize].kids.remove(&self.words, word);
            self.words.release(word);
            self.free.push(node);
            path.pop();
            node = parent;
        }
        if self.nodes.len() >= COMPACT_MIN && self.free.len() * 2 > self.nodes.len() {
            self.compact();
        }
        Some(old)
    }

    fn alloc(&mut self) -> NodeId {
        if let Some(id) = self.free.pop() {
            return id;
        }
        let id = NodeId::try_from(self.nodes.len()).expect("fewer than 2^32 trie nodes");
        self.nodes.push(Node::default());
        id
    }

    /// Rebuilds the arena and the interner without their free slots, nodes in depth-first
    /// order (so a walk reads them front to back). O(nodes); runs only once more than half
    /// the arena is free, so amortised O(1) per removal.
    fn compact(&mut self) {
        let live = self.nodes.len() - self.free.len();
        let mut old = std::mem::take(&mut self.nodes);
        let mut words = Words::default();
        // New id of each old node, in the order they are placed.
        let mut remap = vec![NodeId::MAX; old.len()];
        let mut order: Vec<NodeId> = Vec::with_capacity(live);
        let mut stack = vec![ROOT];
        while let Some(id) = stack.pop() {
            remap[id as usize] = order.len() as NodeId;
            order.push(id);
            let edges = old[id as usize].kids.edges();
            stack.extend(edges.iter().rev().map(|e| e.node));
        }
        let mut nodes: Vec<Node<V>> = Vec::with_capacity(live);
        for &id in &order {
            let node = std::mem::take(&mut old[id as usize]);
            let mut kids = Kids::None;
            for edge in node.kids.edges() {
                let word = words.acquire(self.words.text(edge.word));
                kids.insert(
                    &words,
                    Edge {
                        word,
                        node: remap[edge.node as usize],
                    },
                );
            }
            nodes.push(Node {
                kids,
                value: node.value,
            });
        }
        self.nodes = nodes;
        self.words = words;
        self.free = Vec::new();
    }

    /// Heap bytes of the structure (nodes, children, words), values' own heap not included.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node<V>>()
            + self.free.capacity() * std::mem::size_of::<NodeId>()
            + self
                .nodes
                .iter()
                .map(|n| n.kids.heap_bytes())
                .sum::<usize>()
            + self.words.heap_bytes()
    }

    /// How many nodes are live (the root included).
    pub(crate) fn nodes(&self) -> usize {
        self.nodes.len() - self.free.len()
    }

    /// How many distinct words the edges use.
    pub(crate) fn words(&self) -> usize {
        self.words.len()
    }

    /// Checks the invariants (tests): every non-root node holds a value or a child, word
    /// references match the edges, children are sorted and `len` counts the values.
    #[cfg(test)]
    pub(crate) fn check(&self) {
        let mut refs = std::collections::HashMap::<WordId, u32>::new();
        let mut values = 0;
        let mut stack = vec![ROOT];
        let mut seen = 0;
        while let Some(id) = stack.pop() {
            seen += 1;
            let node = &self.nodes[id as usize];
            values += usize::from(node.value.is_some());
            assert!(
                id == ROOT || node.value.is_some() || !node.kids.is_empty(),
                "node {id} is empty"
            );
            let edges = node.kids.edges();
            assert_eq!(edges.len(), node.kids.len());
            for pair in edges.windows(2) {
                assert!(self.words.text(pair[0].word) < self.words.text(pair[1].word));
            }
            for e in edges {
                *refs.entry(e.word).or_default() += 1;
                stack.push(e.node);
            }
        }
        assert_eq!(values, self.len);
        assert_eq!(seen, self.nodes());
        assert_eq!(refs.len(), self.words.len());
    }
}

#[cfg(test)]
mod tests {
    use super::Tree;

    fn words(topic: &str) -> Vec<&str> {
        topic.split('/').collect()
    }

    #[test]
    fn insert_get_remove_prune() {
        let mut tree = Tree::default();
        assert_eq!(tree.insert(&words("a/b/c"), 1), None);
        assert_eq!(tree.insert(&words("a/b"), 2), None);
        assert_eq!(tree.insert(&words("a/b"), 3), Some(2));
        assert_eq!(tree.len(), 2);
        assert_eq!(tree.get(&words("a/b")), Some(&3));
        assert_eq!(tree.get(&words("a")), None);
        assert_eq!(tree.get(&words("a/b/c/d")), None);
        tree.check();
        assert_eq!(tree.remove(&words("a")), None);
        assert_eq!(tree.remove(&words("a/b/c")), Some(1));
        tree.check();
        assert_eq!(tree.nodes(), 3);
        assert_eq!(tree.remove(&words("a/b")), Some(3));
        tree.check();
        assert_eq!(tree.nodes(), 1);
        assert_eq!(tree.words(), 0);
        assert_eq!(tree.insert(&[], 9), None);
        assert_eq!(tree.get(&[]), Some(&9));
        assert_eq!(tree.remove(&[]), Some(9));
        assert_eq!(tree.len(), 0);
    }

    #[test]
    fn removals_compact_the_arena() {
        let mut tree = Tree::default();
        let topics: Vec<String> = (0..5000).map(|i| format!("t/{}/x{}", i % 50, i)).collect();
        for (i, t) in topics.iter().enumerate() {
            tree.insert(&words(t), i);
        }
        let full = tree.nodes.len();
        for t in &topics[..4900] {
            assert!(tree.remove(&words(t)).is_some());
        }
        tree.check();
        assert!(
            tree.nodes.len() < full / 4,
            "{} of {full}",
            tree.nodes.len()
        );
        for (i, t) in topics.iter().enumerate().skip(4900) {
            assert_eq!(tree.get(&words(t)), Some(&i));
        }
    }
}
