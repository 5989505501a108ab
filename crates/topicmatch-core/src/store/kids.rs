//! A node's children, kept in the order of their words' texts (UTF-8 bytes), so a walk that
//! visits them in turn returns topics in order.
//!
//! Sized by fan-out: no child or one child inline (most nodes of a topic tree), a sorted
//! vector up to [`FEW_MAX`], and past that sorted blocks of at most [`BLOCK_MAX`] edges with a
//! hash index by word, so a wide level (device ids under a region) neither shifts all its
//! children on an insert nor searches them by text on a lookup.

use std::cmp::Ordering;

use rustc_hash::FxHashMap;

use super::words::{WordId, Words};

/// A node of the trie, by its index in the arena.
pub(crate) type NodeId = u32;

/// Most children in the sorted vector; one more moves them to blocks.
const FEW_MAX: usize = 32;
/// Blocks go back to a sorted vector at this many children.
const WIDE_MIN: usize = 16;
/// Most edges in one block; one more splits it in two.
const BLOCK_MAX: usize = 64;

/// A link to a child: the word that leads there and the child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Edge {
    pub(crate) word: WordId,
    pub(crate) node: NodeId,
}

/// Where a walk is among a node's children: block `block` (0 below [`FEW_MAX`]), edge `at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Pos {
    block: u32,
    at: u32,
}

/// The children of one node.
#[derive(Debug, Default)]
pub(crate) enum Kids {
    #[default]
    None,
    One(Edge),
    // Boxed so that `Kids` stays 16 bytes: most nodes have no child or one.
    #[allow(clippy::box_collection)]
    Few(Box<Vec<Edge>>),
    Wide(Box<Wide>),
}

/// Many children: sorted blocks (their concatenation sorted) and an index by word.
#[derive(Debug, Default)]
pub(crate) struct Wide {
    blocks: Vec<Vec<Edge>>,
    index: FxHashMap<WordId, NodeId>,
}

/// Orders `edge` against `text` by its word's text.
#[inline]
fn cmp(words: &Words, edge: Edge, text: &str) -> Ordering {
    words.text(edge.word).cmp(text)
}

/// Where `text` is or would go in the sorted `edges`.
#[inline]
fn search(words: &Words, edges: &[Edge], text: &str) -> Result<usize, usize> {
    edges.binary_search_by(|e| cmp(words, *e, text))
}

impl Wide {
    fn len(&self) -> usize {
        self.index.len()
    }

    /// The block where `text` is or would go: the first whose last edge is not below it (the
    /// last block for a text past every edge).
    fn block_of(&self, words: &Words, text: &str) -> usize {
        let after = self.blocks.partition_point(|b| {
            cmp(words, *b.last().expect("blocks are never empty"), text).is_lt()
        });
        after.min(self.blocks.len() - 1)
    }

    fn insert(&mut self, words: &Words, edge: Edge) {
        let text = words.text(edge.word);
        let b = self.block_of(words, text);
        let block = &mut self.blocks[b];
        let at = search(words, block, text).unwrap_err();
        block.insert(at, edge);
        if block.len() > BLOCK_MAX {
            let upper = block.split_off(block.len() / 2);
            self.blocks.insert(b + 1, upper);
        }
        self.index.insert(edge.word, edge.node);
    }

    fn remove(&mut self, words: &Words, word: WordId) -> Option<NodeId> {
        let node = self.index.remove(&word)?;
        let text = words.text(word);
        let b = self.block_of(words, text);
        let block = &mut self.blocks[b];
        let at = search(words, block, text).expect("an indexed word is in its block");
        block.remove(at);
        let len = block.len();
        if len == 0 {
            self.blocks.remove(b);
        } else if b + 1 < self.blocks.len() && len + self.blocks[b + 1].len() <= BLOCK_MAX / 2 {
            // Neighbours that fit in half a block merge, so removals leave no trail of tiny
            // blocks behind.
            let next = self.blocks.remove(b + 1);
            self.blocks[b].extend(next);
        }
        crate::matcher::shrink_if_sparse(&mut self.index);
        Some(node)
    }

    fn flatten(&self) -> Vec<Edge> {
        self.blocks.iter().flatten().copied().collect()
    }
}

impl Kids {
    /// How many children.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        match self {
            Kids::None => 0,
            Kids::One(_) => 1,
            Kids::Few(edges) => edges.len(),
            Kids::Wide(wide) => wide.len(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        matches!(self, Kids::None)
    }

    /// The child under word `word`.
    #[inline]
    pub(crate) fn find_id(&self, word: WordId) -> Option<NodeId> {
        match self {
            Kids::None => None,
            Kids::One(e) => (e.word == word).then_some(e.node),
            Kids::Few(edges) => edges.iter().find(|e| e.word == word).map(|e| e.node),
            Kids::Wide(wide) => wide.index.get(&word).copied(),
        }
    }

    /// The child under the word with text `text`.
    #[inline]
    pub(crate) fn find_text(&self, words: &Words, text: &str) -> Option<NodeId> {
        match self {
            Kids::None => None,
            Kids::One(e) => (words.text(e.word) == text).then_some(e.node),
            Kids::Few(edges) => search(words, edges, text).ok().map(|at| edges[at].node),
            Kids::Wide(wide) => wide.index.get(&words.lookup(text)?).copied(),
        }
    }

    /// Adds `edge`, whose word is not among the children yet.
    pub(crate) fn insert(&mut self, words: &Words, edge: Edge) {
        match self {
            Kids::None => *self = Kids::One(edge),
            Kids::One(first) => {
                let first = *first;
                let pair = if cmp(words, first, words.text(edge.word)).is_lt() {
                    vec![first, edge]
                } else {
                    vec![edge, first]
                };
                *self = Kids::Few(Box::new(pair));
            }
            Kids::Few(edges) => {
                let at = search(words, edges, words.text(edge.word)).unwrap_err();
                edges.insert(at, edge);
                if edges.len() > FEW_MAX {
                    let edges = std::mem::take(&mut **edges);
                    let index = edges.iter().map(|e| (e.word, e.node)).collect();
                    *self = Kids::Wide(Box::new(Wide {
                        blocks: vec![edges],
                        index,
                    }));
                }
            }
            Kids::Wide(wide) => wide.insert(words, edge),
        }
    }

    /// Removes the child under word `word`; returns it.
    pub(crate) fn remove(&mut self, words: &Words, word: WordId) -> Option<NodeId> {
        match self {
            Kids::None => None,
            Kids::One(e) => {
                let node = (e.word == word).then_some(e.node)?;
                *self = Kids::None;
                Some(node)
            }
            Kids::Few(edges) => {
                let at = edges.iter().position(|e| e.word == word)?;
                let node = edges.remove(at).node;
                if edges.len() == 1 {
                    *self = Kids::One(edges[0]);
                } else if edges.len() * 4 <= edges.capacity() {
                    edges.shrink_to(edges.len() * 2);
                }
                Some(node)
            }
            Kids::Wide(wide) => {
                let node = wide.remove(words, word)?;
                if wide.len() <= WIDE_MIN {
                    *self = Kids::Few(Box::new(wide.flatten()));
                }
                Some(node)
            }
        }
    }

    /// The edge at `pos`, or `None` past the last.
    #[inline]
    pub(crate) fn at(&self, pos: Pos) -> Option<Edge> {
        match self {
            Kids::None => None,
            Kids::One(e) => (pos.at == 0).then_some(*e),
            Kids::Few(edges) => edges.get(pos.at as usize).copied(),
            Kids::Wide(wide) => wide
                .blocks
                .get(pos.block as usize)
                .map(|b| b[pos.at as usize]),
        }
    }

    /// The position after `pos` (which holds an edge).
    #[inline]
    pub(crate) fn next(&self, pos: Pos) -> Pos {
        if let Kids::Wide(wide) = self {
            if pos.at as usize + 1 == wide.blocks[pos.block as usize].len() {
                return Pos {
                    block: pos.block + 1,
                    at: 0,
                };
            }
        }
        Pos {
            block: pos.block,
            at: pos.at + 1,
        }
    }

    /// The position of the first child whose word's text is not below `text`.
    pub(crate) fn seek(&self, words: &Words, text: &str) -> Pos {
        match self {
            Kids::None => Pos::default(),
            Kids::One(e) => Pos {
                block: 0,
                at: u32::from(cmp(words, *e, text).is_lt()),
            },
            Kids::Few(edges) => Pos {
                block: 0,
                at: edges.partition_point(|e| cmp(words, *e, text).is_lt()) as u32,
            },
            Kids::Wide(wide) => {
                let b = wide.block_of(words, text);
                let at = wide.blocks[b].partition_point(|e| cmp(words, *e, text).is_lt());
                let pos = Pos {
                    block: b as u32,
                    at: at as u32,
                };
                if at == wide.blocks[b].len() {
                    // Past every edge: the end.
                    Pos {
                        block: pos.block + 1,
                        at: 0,
                    }
                } else {
                    pos
                }
            }
        }
    }

    /// Every edge, in order.
    pub(crate) fn edges(&self) -> Vec<Edge> {
        match self {
            Kids::None => Vec::new(),
            Kids::One(e) => vec![*e],
            Kids::Few(edges) => edges.to_vec(),
            Kids::Wide(wide) => wide.flatten(),
        }
    }

    /// Heap bytes held by this node's children (not the children themselves).
    pub(crate) fn heap_bytes(&self) -> usize {
        let edge = std::mem::size_of::<Edge>();
        match self {
            Kids::None | Kids::One(_) => 0,
            Kids::Few(edges) => std::mem::size_of::<Vec<Edge>>() + edges.capacity() * edge,
            Kids::Wide(wide) => {
                std::mem::size_of::<Wide>()
                    + wide.blocks.capacity() * std::mem::size_of::<Vec<Edge>>()
                    + wide
                        .blocks
                        .iter()
                        .map(|b| b.capacity() * edge)
                        .sum::<usize>()
                    + wide.index.capacity() * (edge + 1)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Edge, Kids, Pos, Words};

    fn collect(kids: &Kids) -> Vec<Edge> {
        let mut out = Vec::new();
        let mut pos = Pos::default();
        while let Some(e) = kids.at(pos) {
            out.push(e);
            pos = kids.next(pos);
        }
        out
    }

    #[test]
    fn children_stay_sorted_through_every_size() {
        let mut words = Words::default();
        let mut kids = Kids::None;
        let texts: Vec<String> = (0..500u32)
            .map(|i| format!("w{}", i.wrapping_mul(7919) % 1000))
            .collect();
        for (n, text) in texts.iter().enumerate() {
            let id = words.acquire(text);
            kids.insert(
                &words,
                Edge {
                    word: id,
                    node: n as u32,
                },
            );
            let got: Vec<&str> = collect(&kids).iter().map(|e| words.text(e.word)).collect();
            let mut want: Vec<&str> = texts[..=n].iter().map(String::as_str).collect();
            want.sort_unstable();
            assert_eq!(got, want);
            assert_eq!(kids.len(), n + 1);
        }
        for (n, text) in texts.iter().enumerate() {
            assert_eq!(kids.find_text(&words, text), Some(n as u32));
            assert_eq!(kids.find_id(words.lookup(text).unwrap()), Some(n as u32));
            let pos = kids.seek(&words, text);
            assert_eq!(kids.at(pos).map(|e| e.node), Some(n as u32));
        }
        assert_eq!(kids.at(kids.seek(&words, "x")), None);
        assert_eq!(
            kids.at(kids.seek(&words, "")).map(|e| words.text(e.word)),
            Some("w0")
        );
        for (n, text) in texts.iter().enumerate().rev() {
            let id = words.lookup(text).unwrap();
            assert_eq!(kids.remove(&words, id), Some(n as u32));
            assert_eq!(kids.remove(&words, id), None);
            let got: Vec<&str> = collect(&kids).iter().map(|e| words.text(e.word)).collect();
            let mut want: Vec<&str> = texts[..n].iter().map(String::as_str).collect();
            want.sort_unstable();
            assert_eq!(got, want);
        }
        assert!(kids.is_empty());
    }

    #[test]
    fn kids_fit_in_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<Kids>(), 16);
    }
}
