//! A node's children, kept in the order of their words' texts (UTF-8 bytes), so a walk that
//! visits them in turn returns topics in order.
//!
//! Each edge carries a sort key made of its word's first seven bytes and length ([`key_of`]),
//! so ordering two edges reads the interner only when both words are longer than seven bytes
//! and share those seven. Sized by fan-out: no child or one child inline (most nodes), a
//! sorted vector up to [`FEW_MAX`], and past that sorted blocks of at most [`BLOCK_MAX`]
//! edges, so a wide level (device ids under a region) shifts at most one block on an insert.

use std::cmp::Ordering;

use super::words::{WordId, Words};

/// A node of the trie, by its index in the arena.
pub(crate) type NodeId = u32;

/// Most children in the sorted vector; one more moves them to blocks.
const FEW_MAX: usize = 32;
/// Blocks go back to a sorted vector at this many children.
const WIDE_MIN: usize = 16;
/// Most edges in one block; one more splits it in two.
const BLOCK_MAX: usize = 64;

/// The low byte of a key whose word is longer than seven bytes.
const LONG: u64 = 8;

/// The sort key of a word: its first seven bytes (zero-padded, big-endian) and then its
/// length, or [`LONG`] past seven. Keys order as their words do, except that two long words
/// with the same first seven bytes tie and are ordered by their texts.
pub(crate) fn key_of(text: &str) -> u64 {
    let bytes = text.as_bytes();
    let mut key = [0u8; 8];
    let n = bytes.len().min(7);
    key[..n].copy_from_slice(&bytes[..n]);
    key[7] = if bytes.len() > 7 { LONG as u8 } else { n as u8 };
    u64::from_be_bytes(key)
}

/// A link to a child: the word that leads there, its sort key, and the child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Edge {
    pub(crate) key: u64,
    pub(crate) word: WordId,
    pub(crate) node: NodeId,
}

/// A word to find or place: its text and key.
#[derive(Clone, Copy)]
pub(crate) struct Probe<'a> {
    text: &'a str,
    key: u64,
}

impl<'a> Probe<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Probe {
            text,
            key: key_of(text),
        }
    }
}

/// Orders `edge` against the word `probe`.
#[inline]
fn cmp(words: &Words, edge: Edge, probe: Probe<'_>) -> Ordering {
    edge.key.cmp(&probe.key).then_with(|| {
        if probe.key & 0xFF == LONG {
            words.text(edge.word).cmp(probe.text)
        } else {
            Ordering::Equal
        }
    })
}

/// Where `probe` is or would go in the sorted `edges`.
#[inline]
fn search(words: &Words, edges: &[Edge], probe: Probe<'_>) -> Result<usize, usize> {
    edges.binary_search_by(|e| cmp(words, *e, probe))
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
    // Boxed so that `Kids` stays small: most nodes have no child or one.
    #[allow(clippy::box_collection)]
    Few(Box<Vec<Edge>>),
    Wide(Box<Wide>),
}

/// Many children: sorted blocks whose concatenation is sorted, and each block's last edge
/// in one dense vector to find the block without reading the blocks.
#[derive(Debug, Default)]
pub(crate) struct Wide {
    blocks: Vec<Vec<Edge>>,
    lasts: Vec<Edge>,
    len: usize,
}

impl Wide {
    fn new(edges: Vec<Edge>) -> Self {
        Wide {
            len: edges.len(),
            lasts: vec![*edges.last().expect("a wide level has children")],
            blocks: vec![edges],
        }
    }

    /// The block where `probe` is or would go: the first whose last edge is not below it (the
    /// last block for a word past every edge).
    fn block_of(&self, words: &Words, probe: Probe<'_>) -> usize {
        let after = self
            .lasts
            .partition_point(|last| cmp(words, *last, probe).is_lt());
        after.min(self.blocks.len() - 1)
    }

    /// Records block `b`'s last edge again after a change.
    fn refresh(&mut self, b: usize) {
        self.lasts[b] = *self.blocks[b].last().expect("blocks are never empty");
    }

    /// The block and place of `probe`.
    fn find(&self, words: &Words, probe: Probe<'_>) -> (usize, Result<usize, usize>) {
        let b = self.block_of(words, probe);
        (b, search(words, &self.blocks[b], probe))
    }

    fn insert(&mut self, words: &Words, edge: Edge, probe: Probe<'_>) {
        let (b, at) = self.find(words, probe);
        let block = &mut self.blocks[b];
        block.insert(at.unwrap_or_else(|at| at), edge);
        if block.len() > BLOCK_MAX {
            let upper = block.split_off(block.len() / 2);
            self.blocks.insert(b + 1, upper);
            self.lasts.insert(b + 1, edge);
            self.refresh(b + 1);
        }
        self.refresh(b);
        self.len += 1;
    }

    fn remove(&mut self, words: &Words, probe: Probe<'_>) -> Option<NodeId> {
        let (b, at) = self.find(words, probe);
        let block = &mut self.blocks[b];
        let node = block.remove(at.ok()?).node;
        self.len -= 1;
        let len = block.len();
        if len == 0 {
            self.blocks.remove(b);
            self.lasts.remove(b);
            return Some(node);
        }
        if b + 1 < self.blocks.len() && len + self.blocks[b + 1].len() <= BLOCK_MAX / 2 {
            // Neighbours that fit in half a block merge, so removals leave no trail of tiny
            // blocks behind.
            let next = self.blocks.remove(b + 1);
            self.lasts.remove(b + 1);
            self.blocks[b].extend(next);
        }
        self.refresh(b);
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
            Kids::Wide(wide) => wide.len,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        matches!(self, Kids::None)
    }

    /// The child under word `word`.
    #[inline]
    pub(crate) fn find_id(&self, words: &Words, word: WordId) -> Option<NodeId> {
        match self {
            Kids::None => None,
            Kids::One(e) => (e.word == word).then_some(e.node),
            Kids::Few(edges) => edges.iter().find(|e| e.word == word).map(|e| e.node),
            Kids::Wide(wide) => {
                let (b, at) = wide.find(words, Probe::new(words.text(word)));
                at.ok().map(|at| wide.blocks[b][at].node)
            }
        }
    }

    /// The child under the word `probe`.
    #[inline]
    pub(crate) fn find(&self, words: &Words, probe: Probe<'_>) -> Option<NodeId> {
        match self {
            Kids::None => None,
            Kids::One(e) => cmp(words, *e, probe).is_eq().then_some(e.node),
            Kids::Few(edges) => search(words, edges, probe).ok().map(|at| edges[at].node),
            Kids::Wide(wide) => {
                let (b, at) = wide.find(words, probe);
                at.ok().map(|at| wide.blocks[b][at].node)
            }
        }
    }

    /// Adds `edge`, whose word is not among the children yet.
    pub(crate) fn insert(&mut self, words: &Words, edge: Edge) {
        let probe = Probe {
            text: words.text(edge.word),
            key: edge.key,
        };
        match self {
            Kids::None => *self = Kids::One(edge),
            Kids::One(first) => {
                let first = *first;
                let pair = if cmp(words, first, probe).is_lt() {
                    vec![first, edge]
                } else {
                    vec![edge, first]
                };
                *self = Kids::Few(Box::new(pair));
            }
            Kids::Few(edges) => {
                let at = search(words, edges, probe).unwrap_or_else(|at| at);
                edges.insert(at, edge);
                if edges.len() > FEW_MAX {
                    let edges = std::mem::take(&mut **edges);
                    *self = Kids::Wide(Box::new(Wide::new(edges)));
                }
            }
            Kids::Wide(wide) => wide.insert(words, edge, probe),
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
                let node = wide.remove(words, Probe::new(words.text(word)))?;
                if wide.len <= WIDE_MIN {
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

    /// The edge `ahead` places after `pos`, if there is one in `pos`'s block or the next: what
    /// a walk visiting the children in turn will read soon, to fetch early.
    #[inline]
    pub(crate) fn ahead(&self, pos: Pos, ahead: u32) -> Option<Edge> {
        let at = (pos.at + ahead) as usize;
        match self {
            Kids::None | Kids::One(_) => None,
            Kids::Few(edges) => edges.get(at).copied(),
            Kids::Wide(wide) => {
                let block = wide.blocks.get(pos.block as usize)?;
                match block.get(at) {
                    Some(e) => Some(*e),
                    None => wide
                        .blocks
                        .get(pos.block as usize + 1)?
                        .get(at - block.len())
                        .copied(),
                }
            }
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

    /// The position of the first child whose word is not below `text`.
    pub(crate) fn seek(&self, words: &Words, text: &str) -> Pos {
        let probe = Probe::new(text);
        match self {
            Kids::None => Pos::default(),
            Kids::One(e) => Pos {
                block: 0,
                at: u32::from(cmp(words, *e, probe).is_lt()),
            },
            Kids::Few(edges) => Pos {
                block: 0,
                at: search(words, edges, probe).unwrap_or_else(|at| at) as u32,
            },
            Kids::Wide(wide) => {
                let (b, at) = wide.find(words, probe);
                let at = at.unwrap_or_else(|at| at);
                if at == wide.blocks[b].len() {
                    // Past every edge: the end.
                    Pos {
                        block: b as u32 + 1,
                        at: 0,
                    }
                } else {
                    Pos {
                        block: b as u32,
                        at: at as u32,
                    }
                }
            }
        }
    }

    /// Renames every child through `node` and every word through `word` (the order of the
    /// words' texts is unchanged).
    pub(crate) fn rename(
        &mut self,
        node: impl Fn(NodeId) -> NodeId,
        word: impl Fn(WordId) -> WordId,
    ) {
        let edge = |e: &mut Edge| {
            e.node = node(e.node);
            e.word = word(e.word);
        };
        match self {
            Kids::None => {}
            Kids::One(e) => edge(e),
            Kids::Few(edges) => edges.iter_mut().for_each(edge),
            Kids::Wide(wide) => {
                wide.blocks.iter_mut().flatten().for_each(edge);
                wide.lasts.iter_mut().for_each(edge);
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
                    + wide.lasts.capacity() * edge
                    + wide
                        .blocks
                        .iter()
                        .map(|b| b.capacity() * edge)
                        .sum::<usize>()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{key_of, Edge, Kids, Pos, Probe, Words};

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
    fn keys_order_as_their_words() {
        let words = [
            "",
            "\0",
            "a",
            "a\0",
            "a\0b",
            "ab",
            "abcdefg",
            "abcdefg\0",
            "abcdefgh",
            "abcdefgi",
            "abcdefh",
            "b",
            "é",
            "日本",
        ];
        for a in words {
            for b in words {
                let (ka, kb) = (key_of(a), key_of(b));
                if ka == kb {
                    assert!(a == b || (a.len() > 7 && b.len() > 7), "{a:?} {b:?}");
                } else {
                    assert_eq!(ka.cmp(&kb), a.cmp(b), "{a:?} {b:?}");
                }
            }
        }
    }

    #[test]
    fn children_stay_sorted_through_every_size() {
        let mut words = Words::default();
        let mut kids = Kids::None;
        let texts: Vec<String> = (0..500u32)
            .map(|i| format!("word-{}", i.wrapping_mul(7919) % 1000))
            .collect();
        for (n, text) in texts.iter().enumerate() {
            let id = words.acquire(text);
            kids.insert(
                &words,
                Edge {
                    key: key_of(text),
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
            assert_eq!(kids.find(&words, Probe::new(text)), Some(n as u32));
            assert_eq!(
                kids.find_id(&words, words.lookup(text).unwrap()),
                Some(n as u32)
            );
            let pos = kids.seek(&words, text);
            assert_eq!(kids.at(pos).map(|e| e.node), Some(n as u32));
        }
        assert_eq!(kids.at(kids.seek(&words, "x")), None);
        assert_eq!(
            kids.at(kids.seek(&words, "")).map(|e| words.text(e.word)),
            Some("word-0")
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
}
