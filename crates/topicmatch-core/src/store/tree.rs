//! The store's trie: a radix tree over words, in an arena addressed by `u32`. A node stands for
//! a run of words (the word on its parent's edge, then its `rest`): a chain without branches
//! is one node, so a topic that shares only its first levels with others costs one node below
//! the fork, not one per level. A topic's value sits on the node where its last word ends.
//! Single-threaded; the [`TopicStore`](super::TopicStore) puts it behind its lock.
//!
//! Invariants, kept by every method:
//! - a node other than the root holds a value or has at least two children (an insert splits
//!   a run where a new topic leaves it; a removal prunes or merges what it leaves behind);
//! - every use of a word (an edge's word, a word of a `rest`) holds one reference to it in
//!   [`Words`];
//! - `len` is the number of nodes holding a value.

use smallvec::SmallVec;

use super::kids::{key_of, Edge, Kids, NodeId, Probe};
use super::words::{WordId, Words};

/// The root: the empty word list (the AMQP empty routing key stores its value here).
pub(crate) const ROOT: NodeId = 0;

/// Arenas smaller than this are never compacted.
const COMPACT_MIN: usize = 1024;

/// The words of a node after its edge's word; a few inline.
pub(crate) type Rest = SmallVec<[WordId; 4]>;

/// One node: its children, its run of words and, if a topic ends here, that topic's value.
#[derive(Debug)]
pub(crate) struct Node<V> {
    pub(crate) kids: Kids,
    pub(crate) rest: Rest,
    pub(crate) value: Option<V>,
}

impl<V> Default for Node<V> {
    fn default() -> Self {
        Node {
            kids: Kids::None,
            rest: Rest::new(),
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

    /// Whether `rest` spells the first `rest.len()` words of `tail`.
    fn rest_matches(&self, rest: &[WordId], tail: &[&str]) -> bool {
        rest.len() <= tail.len()
            && rest
                .iter()
                .zip(tail)
                .all(|(&w, t)| self.words.text(w) == *t)
    }

    /// The node of `topic`'s words and the path to it (each node's parent and edge word).
    fn find(&self, topic: &[&str], path: &mut SmallVec<[(NodeId, WordId); 16]>) -> Option<NodeId> {
        let mut node = ROOT;
        let mut i = 0;
        while let Some(word) = topic.get(i) {
            let id = self.words.lookup(word)?;
            let child = self.nodes[node as usize].kids.find_id(&self.words, id)?;
            let rest = &self.nodes[child as usize].rest;
            if !self.rest_matches(rest, &topic[i + 1..]) {
                return None;
            }
            path.push((node, id));
            i += 1 + rest.len();
            node = child;
        }
        Some(node)
    }

    /// The value stored under `topic`.
    pub(crate) fn get(&self, topic: &[&str]) -> Option<&V> {
        let node = self.find(topic, &mut SmallVec::new())?;
        self.nodes[node as usize].value.as_ref()
    }

    /// Stores `value` under `topic`; returns the value it replaces.
    pub(crate) fn insert(&mut self, topic: &[&str], value: V) -> Option<V> {
        let mut node = ROOT;
        let mut i = 0;
        while let Some(word) = topic.get(i) {
            let probe = Probe::new(word);
            let Some(child) = self.nodes[node as usize].kids.find(&self.words, probe) else {
                // A new branch: the rest of the topic is one node.
                let key = key_of(word);
                let word = self.words.acquire(word);
                let rest = topic[i + 1..]
                    .iter()
                    .map(|w| self.words.acquire(w))
                    .collect();
                let child = self.alloc(Node {
                    kids: Kids::None,
                    rest,
                    value: Some(value),
                });
                self.nodes[node as usize].kids.insert(
                    &self.words,
                    Edge {
                        key,
                        word,
                        node: child,
                    },
                );
                self.len += 1;
                return None;
            };
            let rest = &self.nodes[child as usize].rest;
            let tail = &topic[i + 1..];
            let common = rest
                .iter()
                .zip(tail)
                .take_while(|(&w, t)| self.words.text(w) == **t)
                .count();
            if common < rest.len() {
                // The topic leaves (or ends inside) the child's run: cut it there.
                self.split(child, common);
            }
            i += 1 + common;
            node = child;
        }
        let old = self.nodes[node as usize].value.replace(value);
        if old.is_none() {
            self.len += 1;
        }
        old
    }

    /// Cuts `node`'s run after `keep` of its rest words: a new node below takes the words
    /// after, the children and the value, under the edge of the first word cut.
    fn split(&mut self, node: NodeId, keep: usize) {
        let n = &mut self.nodes[node as usize];
        let word = n.rest[keep];
        let lower = Node {
            kids: std::mem::take(&mut n.kids),
            rest: n.rest[keep + 1..].iter().copied().collect(),
            value: n.value.take(),
        };
        n.rest.truncate(keep);
        let lower = self.alloc(lower);
        let key = key_of(self.words.text(word));
        self.nodes[node as usize].kids = Kids::One(Edge {
            key,
            word,
            node: lower,
        });
    }

    /// Removes `topic`; returns its value. Prunes or merges the nodes it leaves without a
    /// reason to exist, and compacts the arena once most of it is free.
    pub(crate) fn remove(&mut self, topic: &[&str]) -> Option<V> {
        let mut path = SmallVec::new();
        let node = self.find(topic, &mut path)?;
        let old = self.nodes[node as usize].value.take()?;
        self.len -= 1;
        if let Some(&(parent, word)) = path.last() {
            match self.nodes[node as usize].kids {
                Kids::None => {
                    self.unlink(parent, word, node);
                    if parent != ROOT && self.nodes[parent as usize].value.is_none() {
                        self.merge(parent);
                    }
                }
                Kids::One(_) => self.merge(node),
                Kids::Few(_) | Kids::Wide(_) => {}
            }
        }
        if self.len == 0 {
            // The last topic went: nothing holds a value, so nothing is dropped here.
            *self = Tree::default();
        } else if self.nodes.len() >= COMPACT_MIN && self.free.len() * 2 > self.nodes.len() {
            self.compact();
        }
        Some(old)
    }

    /// Removes the childless, valueless `node` (under `word` of `parent`), releasing its words.
    fn unlink(&mut self, parent: NodeId, word: WordId, node: NodeId) {
        self.nodes[parent as usize].kids.remove(&self.words, word);
        self.words.release(word);
        let gone = std::mem::take(&mut self.nodes[node as usize]);
        for w in gone.rest {
            self.words.release(w);
        }
        self.free.push(node);
    }

    /// Joins the valueless `node` with its child if it has exactly one: the child's run,
    /// children and value move up (their word references with them).
    fn merge(&mut self, node: NodeId) {
        let Kids::One(Edge {
            word, node: child, ..
        }) = self.nodes[node as usize].kids
        else {
            return;
        };
        let lower = std::mem::take(&mut self.nodes[child as usize]);
        self.free.push(child);
        let n = &mut self.nodes[node as usize];
        n.rest.push(word);
        n.rest.extend(lower.rest);
        n.kids = lower.kids;
        n.value = lower.value;
    }

    fn alloc(&mut self, node: Node<V>) -> NodeId {
        if let Some(id) = self.free.pop() {
            self.nodes[id as usize] = node;
            return id;
        }
        let id = NodeId::try_from(self.nodes.len()).expect("fewer than 2^32 trie nodes");
        self.nodes.push(node);
        id
    }

    /// Rebuilds the arena without its free slots, nodes in depth-first order (so a walk
    /// reads them front to back), and renumbers the words if most word slots are free.
    /// O(nodes); removals run it only once more than half the arena is free, so amortised
    /// O(1) per removal.
    pub(crate) fn compact(&mut self) {
        let words = self.words.compact();
        let word = |w: WordId| words.as_ref().map_or(w, |remap| remap[w as usize]);
        let live = self.nodes.len() - self.free.len();
        let mut remap = vec![NodeId::MAX; self.nodes.len()];
        let mut order: Vec<NodeId> = Vec::with_capacity(live);
        let mut stack = vec![ROOT];
        while let Some(id) = stack.pop() {
            remap[id as usize] = order.len() as NodeId;
            order.push(id);
            let edges = self.nodes[id as usize].kids.edges();
            stack.extend(edges.iter().rev().map(|e| e.node));
        }
        let mut nodes: Vec<Node<V>> = Vec::with_capacity(live);
        for &id in &order {
            let mut node = std::mem::take(&mut self.nodes[id as usize]);
            node.kids.rename(|child| remap[child as usize], word);
            node.rest.iter_mut().for_each(|w| *w = word(*w));
            nodes.push(node);
        }
        self.nodes = nodes;
        self.free = Vec::new();
    }

    /// Heap bytes of the structure (nodes, children, words), values' own heap not included.
    pub(crate) fn heap_bytes(&self) -> usize {
        let word = std::mem::size_of::<WordId>();
        self.nodes.capacity() * std::mem::size_of::<Node<V>>()
            + self.free.capacity() * std::mem::size_of::<NodeId>()
            + self
                .nodes
                .iter()
                .map(|n| {
                    n.kids.heap_bytes()
                        + if n.rest.spilled() {
                            n.rest.capacity() * word
                        } else {
                            0
                        }
                })
                .sum::<usize>()
            + self.words.heap_bytes()
    }

    /// How many nodes are live (the root included).
    pub(crate) fn nodes(&self) -> usize {
        self.nodes.len() - self.free.len()
    }

    /// How many distinct words the trie uses.
    pub(crate) fn words(&self) -> usize {
        self.words.len()
    }

    /// Checks the invariants (tests): every non-root node holds a value or two children, word
    /// references match their uses, children are sorted and `len` counts the values.
    #[cfg(test)]
    pub(crate) fn check(&self) {
        let mut uses = std::collections::HashMap::<WordId, u32>::new();
        let mut values = 0;
        let mut stack = vec![ROOT];
        let mut seen = 0;
        while let Some(id) = stack.pop() {
            seen += 1;
            let node = &self.nodes[id as usize];
            values += usize::from(node.value.is_some());
            assert!(
                id == ROOT || node.value.is_some() || node.kids.len() >= 2,
                "node {id} has no reason to exist"
            );
            assert!(id != ROOT || node.rest.is_empty());
            let edges = node.kids.edges();
            assert_eq!(edges.len(), node.kids.len());
            for pair in edges.windows(2) {
                assert!(self.words.text(pair[0].word) < self.words.text(pair[1].word));
            }
            for &w in &node.rest {
                *uses.entry(w).or_default() += 1;
            }
            for e in edges {
                *uses.entry(e.word).or_default() += 1;
                stack.push(e.node);
            }
        }
        assert_eq!(values, self.len);
        assert_eq!(seen, self.nodes());
        assert_eq!(uses.len(), self.words.len());
    }
}

#[cfg(test)]
mod tests {
    use super::Tree;

    fn words(topic: &str) -> Vec<&str> {
        topic.split('/').collect()
    }

    #[test]
    fn insert_get_remove_split_merge() {
        let mut tree = Tree::default();
        assert_eq!(tree.insert(&words("a/b/c"), 1), None);
        assert_eq!(tree.nodes(), 2);
        assert_eq!(tree.insert(&words("a/b"), 2), None);
        assert_eq!(tree.nodes(), 3);
        assert_eq!(tree.insert(&words("a/b"), 3), Some(2));
        assert_eq!(tree.insert(&words("a/x/y"), 4), None);
        tree.check();
        assert_eq!(tree.len(), 3);
        assert_eq!(tree.get(&words("a/b")), Some(&3));
        assert_eq!(tree.get(&words("a")), None);
        assert_eq!(tree.get(&words("a/b/c/d")), None);
        assert_eq!(tree.get(&words("a/x")), None);
        assert_eq!(tree.remove(&words("a")), None);
        assert_eq!(tree.remove(&words("a/x")), None);
        assert_eq!(tree.remove(&words("a/b/c")), Some(1));
        tree.check();
        assert_eq!(tree.remove(&words("a/b")), Some(3));
        tree.check();
        // `a/x/y` alone again: one node under the root.
        assert_eq!(tree.nodes(), 2);
        assert_eq!(tree.get(&words("a/x/y")), Some(&4));
        assert_eq!(tree.remove(&words("a/x/y")), Some(4));
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
        let topics: Vec<String> = (0..5000)
            .map(|i| format!("t/{}/x{}/{}", i % 50, i % 700, i))
            .collect();
        for (i, t) in topics.iter().enumerate() {
            tree.insert(&words(t), i);
        }
        tree.check();
        let full = tree.nodes.len();
        for t in &topics[..4900] {
            assert!(tree.remove(&words(t)).is_some());
            assert!(tree.remove(&words(t)).is_none());
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

#[cfg(test)]
mod props {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::Tree;

    proptest! {
        /// Random inserts and removals keep the invariants and the contents of a map.
        #[test]
        fn the_tree_is_a_map(ops in prop::collection::vec((any::<bool>(), prop::collection::vec(0u8..3, 0..5)), 0..200)) {
            let mut tree = Tree::default();
            let mut model = BTreeMap::new();
            for (i, (insert, words)) in ops.into_iter().enumerate() {
                let words: Vec<String> = words.iter().map(|w| ["a", "b", ""][usize::from(*w)].to_owned()).collect();
                let refs: Vec<&str> = words.iter().map(String::as_str).collect();
                if insert {
                    prop_assert_eq!(tree.insert(&refs, i), model.insert(words.clone(), i));
                } else {
                    prop_assert_eq!(tree.remove(&refs), model.remove(&words));
                }
                tree.check();
                prop_assert_eq!(tree.len(), model.len());
            }
            for (words, v) in &model {
                let refs: Vec<&str> = words.iter().map(String::as_str).collect();
                prop_assert_eq!(tree.get(&refs), Some(v));
            }
        }
    }
}
