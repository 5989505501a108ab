//! The store's trie: a radix tree over words whose nodes sit inline in their parent's sorted
//! children ([`Kids`]), so the nodes of one level lie side by side in memory, in the order a
//! walk visits them, however the topics were inserted. A node stands for a run of words (its
//! label's word, then its `rest`): a chain without branches is one node, so a topic that
//! shares only its first levels with others costs one node below the fork, not one per level.
//! A topic's value sits on the node where its last word ends. Single-threaded; the
//! [`TopicStore`](super::TopicStore) puts it behind its lock.
//!
//! Invariants, kept by every method:
//! - a node other than the root holds a value or has at least two children (an insert splits
//!   a run where a new topic leaves it; a removal prunes or merges what it leaves behind);
//! - every use of a word (a label, a word of a `rest`) holds one reference to it in
//!   [`Words`];
//! - `len` is the number of nodes holding a value, `nodes` the number of nodes.

use smallvec::SmallVec;

use super::kids::{Kids, Loc, Node, Rest};
#[cfg(test)]
use super::label::NO_WORD;
use super::label::{Label, Probe};
use super::words::{WordId, Words};

/// The trie.
#[derive(Debug)]
pub(crate) struct Tree<V> {
    /// The empty word list (the AMQP empty routing key stores its value here).
    pub(crate) root: Node<V>,
    pub(crate) words: Words,
    len: usize,
    nodes: usize,
}

impl<V> Default for Tree<V> {
    fn default() -> Self {
        Tree {
            root: Node::default(),
            words: Words::default(),
            len: 0,
            nodes: 1,
        }
    }
}

impl<V> Drop for Tree<V> {
    /// Takes the trie apart level by level: dropping nested children as they are would recurse
    /// once per level, and topics may be thousands of levels deep.
    fn drop(&mut self) {
        let mut stack = vec![std::mem::take(&mut self.root.kids)];
        while let Some(kids) = stack.pop() {
            let take =
                |mut node: Node<V>| (!node.kids.is_empty()).then(|| std::mem::take(&mut node.kids));
            match kids {
                Kids::None => {}
                Kids::Few(nodes) => stack.extend(nodes.into_iter().filter_map(take)),
                Kids::Wide(wide) => stack.extend(wide.into_nodes().filter_map(take)),
            }
        }
    }
}

/// Whether `rest` spells the first `rest.len()` words of `tail`.
fn rest_matches(words: &Words, rest: &[WordId], tail: &[&str]) -> bool {
    rest.len() <= tail.len() && rest.iter().zip(tail).all(|(&w, t)| words.text(w) == *t)
}

/// Cuts `node`'s run after `keep` of its rest words: a new node below takes the words after,
/// the children and the value, labelled with the first word cut.
fn split<V>(words: &mut Words, node: &mut Node<V>, keep: usize) {
    let word = node.rest[keep];
    let lower = Node {
        label: Label::from_word(words, word),
        rest: node.rest[keep + 1..].iter().copied().collect(),
        kids: std::mem::take(&mut node.kids),
        value: node.value.take(),
    };
    node.rest.truncate(keep);
    if node.rest.spilled() {
        node.rest.shrink_to_fit();
    }
    node.kids = Kids::Few(vec![lower]);
}

/// Joins the valueless `node` with its child if it has exactly one: the child's run, children
/// and value move up (their word references with them). Returns whether it did.
fn merge<V>(words: &mut Words, node: &mut Node<V>) -> bool {
    let Some(lower) = node.kids.take_only() else {
        return false;
    };
    node.rest.push(lower.label.into_word(words));
    node.rest.extend_from_slice(&lower.rest);
    node.kids = lower.kids;
    node.value = lower.value;
    true
}

impl<V> Tree<V> {
    /// How many topics are stored.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The node of `topic`'s words.
    fn find(&self, topic: &[&str]) -> Option<&Node<V>> {
        let mut node = &self.root;
        let mut i = 0;
        while let Some(&word) = topic.get(i) {
            let child = node.kids.find(&self.words, &Probe::new(word))?;
            if !rest_matches(&self.words, &child.rest, &topic[i + 1..]) {
                return None;
            }
            i += 1 + child.rest.len();
            node = child;
        }
        Some(node)
    }

    /// The value stored under `topic`.
    pub(crate) fn get(&self, topic: &[&str]) -> Option<&V> {
        self.find(topic)?.value.as_ref()
    }

    /// Stores `value` under `topic`; returns the value it replaces. One search per node on the
    /// way; only the words of a new node are interned (one hash probe each).
    pub(crate) fn insert(&mut self, topic: &[&str], value: V) -> Option<V> {
        let Tree {
            root,
            words,
            len,
            nodes,
        } = self;
        let mut node = root;
        let mut i = 0;
        while let Some(&word) = topic.get(i) {
            let loc = match node.kids.search(words, &Probe::new(word)) {
                Ok(loc) => loc,
                Err(loc) => {
                    // A new branch: the rest of the topic is one node.
                    let label = Label::new(words, word);
                    let rest: Rest = topic[i + 1..].iter().map(|w| words.acquire(w)).collect();
                    let leaf = Node::leaf(label, rest, Some(value));
                    node.kids.insert(loc, leaf);
                    *len += 1;
                    *nodes += 1;
                    return None;
                }
            };
            let child = node.kids.get_mut(loc);
            let tail = &topic[i + 1..];
            let common = child
                .rest
                .iter()
                .zip(tail)
                .take_while(|(&w, t)| words.text(w) == **t)
                .count();
            if common < child.rest.len() {
                // The topic leaves (or ends inside) the child's run: cut it there.
                split(words, child, common);
                *nodes += 1;
            }
            i += 1 + common;
            node = child;
        }
        let old = node.value.replace(value);
        if old.is_none() {
            *len += 1;
        }
        old
    }

    /// Removes `topic`; returns its value. Prunes or merges the nodes it leaves without a
    /// reason to exist, releasing their words.
    pub(crate) fn remove(&mut self, topic: &[&str]) -> Option<V> {
        // Where each node on the way is among its parent's children.
        let mut path: SmallVec<[Loc; 16]> = SmallVec::new();
        let mut node = &self.root;
        let mut i = 0;
        while let Some(&word) = topic.get(i) {
            let loc = node.kids.search(&self.words, &Probe::new(word)).ok()?;
            let child = node.kids.get(loc);
            if !rest_matches(&self.words, &child.rest, &topic[i + 1..]) {
                return None;
            }
            path.push(loc);
            i += 1 + child.rest.len();
            node = child;
        }
        node.value.as_ref()?;
        let old = match path.split_last() {
            None => self.root.value.take(),
            Some((&loc, above)) => {
                let mut parent = &mut self.root;
                for &l in above {
                    parent = parent.kids.get_mut(l);
                }
                let node = parent.kids.get_mut(loc);
                let old = node.value.take();
                if node.kids.is_empty() {
                    let gone = parent.kids.remove(loc);
                    gone.label.release(&mut self.words);
                    for &w in &gone.rest {
                        self.words.release(w);
                    }
                    self.nodes -= 1;
                    if !above.is_empty() && parent.value.is_none() && merge(&mut self.words, parent)
                    {
                        self.nodes -= 1;
                    }
                } else if merge(&mut self.words, node) {
                    self.nodes -= 1;
                }
                old
            }
        };
        self.len -= 1;
        if self.len == 0 {
            // The last topic went: nothing holds a value, so nothing is dropped here.
            *self = Tree::default();
        } else if self.words.sparse() && self.words.freed() >= self.nodes / 4 {
            // Most word slots are free: renumber, O(nodes), paid for by the quarter of that
            // many words freed since the last time.
            self.renumber_words();
        }
        old
    }

    /// Renumbers the words densely and renames every use.
    fn renumber_words(&mut self) {
        let remap = self.words.renumber();
        let mut stack = vec![&mut self.root];
        while let Some(node) = stack.pop() {
            node.rest.iter_mut().for_each(|w| *w = remap[*w as usize]);
            node.kids.rename_labels(|w| remap[w as usize]);
            stack.extend(node.kids.iter_mut());
        }
    }

    /// Gives back the spare room of every vector, and renumbers the words if most word slots
    /// are free. O(nodes).
    pub(crate) fn compact(&mut self) {
        if self.words.sparse() {
            self.renumber_words();
        }
        let mut stack = vec![&mut self.root];
        while let Some(node) = stack.pop() {
            if node.rest.spilled() {
                node.rest.shrink_to_fit();
            }
            node.kids.shrink();
            stack.extend(node.kids.iter_mut());
        }
    }

    /// Heap bytes of the structure (nodes, children, words), values' own heap not included.
    pub(crate) fn heap_bytes(&self) -> usize {
        let word = std::mem::size_of::<WordId>();
        let mut bytes = self.words.heap_bytes();
        let mut stack = vec![&self.root];
        while let Some(node) = stack.pop() {
            bytes += node.kids.heap_bytes();
            if node.rest.spilled() {
                bytes += node.rest.capacity() * word;
            }
            stack.extend(node.kids.iter());
        }
        bytes
    }

    /// How many nodes are live (the root included).
    pub(crate) fn nodes(&self) -> usize {
        self.nodes
    }

    /// How many distinct words the trie uses.
    pub(crate) fn words(&self) -> usize {
        self.words.len()
    }

    /// Checks the invariants (tests): every non-root node holds a value or two children,
    /// labels spell their words, word references match their uses, children are sorted, and
    /// `len` and `nodes` count.
    #[cfg(test)]
    pub(crate) fn check(&self) {
        let mut uses = std::collections::HashMap::<WordId, u32>::new();
        let (mut values, mut seen) = (0, 0);
        let mut stack = vec![(&self.root, true)];
        while let Some((node, root)) = stack.pop() {
            seen += 1;
            values += usize::from(node.value.is_some());
            assert!(
                root || node.value.is_some() || node.kids.len() >= 2,
                "a node has no reason to exist"
            );
            if root {
                assert!(node.rest.is_empty());
                assert_eq!(node.label, Label::ROOT);
            } else if node.label.is_inline() {
                assert_eq!(node.label.word, NO_WORD);
            } else {
                let text = self.words.text(node.label.word);
                assert!(node.label.cmp(&self.words, &Probe::new(text)).is_eq());
                assert_eq!(node.label.spell(&self.words), text);
                *uses.entry(node.label.word).or_default() += 1;
            }
            for &w in &node.rest {
                *uses.entry(w).or_default() += 1;
            }
            node.kids.check(&self.words);
            stack.extend(node.kids.iter().map(|n| (n, false)));
        }
        assert_eq!(values, self.len);
        assert_eq!(seen, self.nodes);
        assert_eq!(uses.len(), self.words.len());
        for (w, n) in uses {
            assert_eq!(self.words.refs(w), n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Kids, Label, Node, Rest, Tree};

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
    fn removals_give_memory_back_and_compact_renumbers() {
        let mut tree = Tree::default();
        let topics: Vec<String> = (0..5000)
            .map(|i| format!("t/{}/x{}/{}", i % 50, i % 700, i))
            .collect();
        for (i, t) in topics.iter().enumerate() {
            tree.insert(&words(t), i);
        }
        tree.check();
        let full = tree.heap_bytes();
        for t in &topics[..4900] {
            assert!(tree.remove(&words(t)).is_some());
            assert!(tree.remove(&words(t)).is_none());
        }
        tree.check();
        tree.compact();
        tree.check();
        assert!(
            tree.heap_bytes() < full / 10,
            "{} of {full}",
            tree.heap_bytes()
        );
        for (i, t) in topics.iter().enumerate().skip(4900) {
            assert_eq!(tree.get(&words(t)), Some(&i));
        }
    }

    #[test]
    fn a_deep_chain_drops_without_recursing() {
        // 100,000 nested nodes, as 100,000 topics each one level deeper than the last make:
        // dropping them recursively would overflow a thread's stack.
        let mut tree = Tree::default();
        let label = Label::new(&mut tree.words, "w");
        let mut chain = Node::leaf(label, Rest::new(), Some(0));
        for i in 1..100_000 {
            let mut above = Node::leaf(label, Rest::new(), Some(i));
            above.kids = Kids::Few(vec![chain]);
            chain = above;
        }
        tree.root.kids = Kids::Few(vec![chain]);
        drop(tree);
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
        fn the_tree_is_a_map(ops in prop::collection::vec((any::<bool>(), prop::collection::vec(0u8..5, 0..5)), 0..200)) {
            let mut tree = Tree::default();
            let mut model = BTreeMap::new();
            for (i, (insert, words)) in ops.into_iter().enumerate() {
                // Short words are spelled in labels, long ones interned.
                let words: Vec<String> = words.iter().map(|w| ["a", "b", "", "abcdefghi", "abcdefghj"][usize::from(*w)].to_owned()).collect();
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
