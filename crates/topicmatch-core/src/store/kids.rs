//! A node of the trie ([`Node`]: its label, the run of words after it, its children and, if a
//! topic ends there, that topic's value), and a node's children ([`Kids`]), held inline (the
//! child nodes themselves, not links to them) in the order of their words' bytes, so that a
//! walk visiting them in turn returns topics in order and reads memory front to back.
//!
//! Sized by fan-out: none, one sorted vector up to [`FEW_MAX`] children, and past that sorted
//! blocks of at most [`BLOCK_MAX`] children with the head of each block's last word in one
//! dense vector. A wide level (device ids under a region) finds a child by a binary search of
//! those `u64`s and a count in the block; an insert moves at most one block's tail.
//!
//! Within a vector or block, a child is found by counting the children whose head (a label's
//! first eight bytes as a number) is below the word's: the loads of a count are independent,
//! so they overlap instead of each waiting on the last as a binary search's do, and no branch
//! depends on them. Children with the same head as the word (long words sharing eight bytes)
//! are then ordered by their labels.

use std::slice;

use smallvec::SmallVec;

use super::label::{Label, Probe};
use super::words::{WordId, Words};

/// The words of a node after its label's word; a few inline.
pub(crate) type Rest = SmallVec<[WordId; 4]>;

/// One node.
#[derive(Debug)]
pub(crate) struct Node<V> {
    pub(crate) label: Label,
    pub(crate) rest: Rest,
    pub(crate) kids: Kids<V>,
    pub(crate) value: Option<V>,
}

impl<V> Node<V> {
    /// A node with no children.
    pub(crate) fn leaf(label: Label, rest: Rest, value: Option<V>) -> Self {
        Node {
            label,
            rest,
            kids: Kids::None,
            value,
        }
    }
}

impl<V> Default for Node<V> {
    fn default() -> Self {
        Node::leaf(Label::ROOT, Rest::new(), None)
    }
}

/// Most children in the single vector; one more moves them to blocks.
const FEW_MAX: usize = 32;
/// Blocks go back to a single vector at this many children.
const WIDE_MIN: usize = 16;
/// Most children in one block; one more splits it in two.
const BLOCK_MAX: usize = 32;

/// Where a child is (or would go) among a node's children: block `block` (0 for a single
/// vector), place `at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Loc {
    pub(crate) block: usize,
    pub(crate) at: usize,
}

/// The children of one node.
#[derive(Debug, Default)]
pub(crate) enum Kids<V> {
    #[default]
    None,
    Few(Vec<Node<V>>),
    Wide(Box<Wide<V>>),
}

/// Many children: sorted blocks whose concatenation is sorted, and the head of each block's
/// last word in one dense vector to find the block without reading the blocks.
#[derive(Debug)]
pub(crate) struct Wide<V> {
    blocks: Vec<Vec<Node<V>>>,
    heads: Vec<u64>,
    len: usize,
}

/// A walk's place among a node's children: what is left of the current block, then the
/// blocks after it.
pub(crate) struct Cursor<'t, V> {
    nodes: slice::Iter<'t, Node<V>>,
    blocks: slice::Iter<'t, Vec<Node<V>>>,
}

impl<V> Default for Cursor<'_, V> {
    /// No child.
    fn default() -> Self {
        Cursor {
            nodes: [].iter(),
            blocks: [].iter(),
        }
    }
}

impl<'t, V> Cursor<'t, V> {
    /// The next child.
    #[inline]
    pub(crate) fn next(&mut self) -> Option<&'t Node<V>> {
        loop {
            if let Some(node) = self.nodes.next() {
                return Some(node);
            }
            self.nodes = self.blocks.next()?.iter();
        }
    }

    /// The child `k` places after the next one, if it is in this block or the next.
    #[inline]
    pub(crate) fn ahead(&self, k: usize) -> Option<&'t Node<V>> {
        let here = self.nodes.as_slice();
        match here.get(k) {
            Some(node) => Some(node),
            None => self.blocks.as_slice().first()?.get(k - here.len()),
        }
    }
}

/// Where `probe` is or would go in the sorted `nodes`: the heads below its head counted,
/// then the labels with its head, if any, searched.
#[inline]
fn search<V>(words: &Words, nodes: &[Node<V>], probe: &Probe<'_>) -> Result<usize, usize> {
    let head = probe.head();
    let below = nodes.iter().filter(|n| n.label.head() < head).count();
    let same = nodes[below..]
        .iter()
        .take_while(|n| n.label.head() == head)
        .count();
    match nodes[below..below + same].binary_search_by(|n| n.label.cmp(words, probe)) {
        Ok(at) => Ok(below + at),
        Err(at) => Err(below + at),
    }
}

/// Gives back most of a vector's spare room once three quarters of it is unused.
fn trim<T>(items: &mut Vec<T>) {
    if items.len() * 4 <= items.capacity() {
        items.shrink_to(items.len() * 2);
    }
}

/// The head of a block's last word; blocks are never empty.
fn last_head<V>(block: &[Node<V>]) -> u64 {
    block.last().expect("blocks are never empty").label.head()
}

impl<V> Wide<V> {
    /// Blocks of half the most a block holds, so the next inserts do not split them at once.
    fn new(mut nodes: Vec<Node<V>>) -> Self {
        let len = nodes.len();
        let mut blocks = Vec::new();
        while !nodes.is_empty() {
            let rest = nodes.split_off(nodes.len().min(BLOCK_MAX / 2));
            blocks.push(std::mem::replace(&mut nodes, rest));
        }
        let heads = blocks.iter().map(|b| last_head(b)).collect();
        Wide { blocks, heads, len }
    }

    /// Every child, in order, to take apart.
    pub(crate) fn into_nodes(self) -> impl Iterator<Item = Node<V>> {
        self.blocks.into_iter().flatten()
    }

    /// The block where `probe` is or would go: the first whose last word is not below it
    /// (the last block for a word past every child).
    #[inline]
    fn block_of(&self, words: &Words, probe: &Probe<'_>) -> usize {
        let head = probe.head();
        let mut b = self.heads.partition_point(|&h| h < head);
        // Blocks whose last word has the same head may still end below the word.
        while b < self.blocks.len()
            && self.heads[b] == head
            && self.blocks[b]
                .last()
                .is_some_and(|n| n.label.cmp(words, probe).is_lt())
        {
            b += 1;
        }
        b.min(self.blocks.len() - 1)
    }

    fn search(&self, words: &Words, probe: &Probe<'_>) -> Result<Loc, Loc> {
        let block = self.block_of(words, probe);
        match search(words, &self.blocks[block], probe) {
            Ok(at) => Ok(Loc { block, at }),
            Err(at) => Err(Loc { block, at }),
        }
    }

    fn insert(&mut self, loc: Loc, node: Node<V>) {
        let Loc { mut block, mut at } = loc;
        if self.blocks[block].len() == BLOCK_MAX {
            // Full: split it first, and place the node in the half it belongs to.
            let upper = self.blocks[block].split_off(BLOCK_MAX / 2);
            self.heads.insert(block + 1, last_head(&upper));
            self.blocks.insert(block + 1, upper);
            self.heads[block] = last_head(&self.blocks[block]);
            if at > BLOCK_MAX / 2 {
                block += 1;
                at -= BLOCK_MAX / 2;
            }
        }
        let nodes = &mut self.blocks[block];
        if nodes.len() == nodes.capacity() {
            // Grow by a quarter block, so a block wastes at most that much room.
            nodes.reserve_exact((BLOCK_MAX / 4).min(BLOCK_MAX - nodes.len()));
        }
        nodes.insert(at, node);
        if at + 1 == nodes.len() {
            self.heads[block] = last_head(nodes);
        }
        self.len += 1;
    }

    fn remove(&mut self, loc: Loc) -> Node<V> {
        let b = loc.block;
        let node = self.blocks[b].remove(loc.at);
        self.len -= 1;
        let len = self.blocks[b].len();
        if len == 0 {
            self.blocks.remove(b);
            self.heads.remove(b);
            return node;
        }
        if b + 1 < self.blocks.len() && len + self.blocks[b + 1].len() <= BLOCK_MAX / 2 {
            // Neighbours that fit in half a block merge, so removals leave no trail of tiny
            // blocks behind.
            let next = self.blocks.remove(b + 1);
            self.heads.remove(b + 1);
            self.blocks[b].extend(next);
        }
        trim(&mut self.blocks[b]);
        self.heads[b] = last_head(&self.blocks[b]);
        node
    }
}

impl<V> Kids<V> {
    /// A cursor at the child at `loc` (past the last child if `loc` is past the last block).
    #[inline]
    pub(crate) fn cursor(&self, loc: Loc) -> Cursor<'_, V> {
        match self {
            Kids::None => Cursor::default(),
            Kids::Few(nodes) => Cursor {
                nodes: nodes[loc.at..].iter(),
                blocks: [].iter(),
            },
            Kids::Wide(wide) => match wide.blocks.get(loc.block) {
                Some(block) => Cursor {
                    nodes: block[loc.at..].iter(),
                    blocks: wide.blocks[loc.block + 1..].iter(),
                },
                None => Cursor::default(),
            },
        }
    }

    /// Every child, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Node<V>> {
        let (few, wide): (&[Node<V>], &[Vec<Node<V>>]) = match self {
            Kids::None => (&[], &[]),
            Kids::Few(nodes) => (nodes, &[]),
            Kids::Wide(wide) => (&[], &wide.blocks),
        };
        few.iter().chain(wide.iter().flatten())
    }

    /// Every child, in order, to change (neither its label nor the order).
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut Node<V>> {
        let (few, wide): (&mut [Node<V>], &mut [Vec<Node<V>>]) = match self {
            Kids::None => (&mut [], &mut []),
            Kids::Few(nodes) => (nodes, &mut []),
            Kids::Wide(wide) => (&mut [], &mut wide.blocks),
        };
        few.iter_mut().chain(wide.iter_mut().flatten())
    }

    /// How many children.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        match self {
            Kids::None => 0,
            Kids::Few(nodes) => nodes.len(),
            Kids::Wide(wide) => wide.len,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        matches!(self, Kids::None)
    }

    /// Where the child under the word `probe` is, or would go.
    #[inline]
    pub(crate) fn search(&self, words: &Words, probe: &Probe<'_>) -> Result<Loc, Loc> {
        match self {
            Kids::None => Err(Loc::default()),
            Kids::Few(nodes) => search(words, nodes, probe)
                .map(|at| Loc { block: 0, at })
                .map_err(|at| Loc { block: 0, at }),
            Kids::Wide(wide) => wide.search(words, probe),
        }
    }

    /// The child under the word `probe`.
    #[inline]
    pub(crate) fn find(&self, words: &Words, probe: &Probe<'_>) -> Option<&Node<V>> {
        let loc = self.search(words, probe).ok()?;
        Some(self.get(loc))
    }

    /// The child at `loc`, which holds one.
    #[inline]
    pub(crate) fn get(&self, loc: Loc) -> &Node<V> {
        match self {
            Kids::None => unreachable!("a leaf has no child"),
            Kids::Few(nodes) => &nodes[loc.at],
            Kids::Wide(wide) => &wide.blocks[loc.block][loc.at],
        }
    }

    /// The child at `loc`, which holds one, to change (neither its label nor the order).
    #[inline]
    pub(crate) fn get_mut(&mut self, loc: Loc) -> &mut Node<V> {
        match self {
            Kids::None => unreachable!("a leaf has no child"),
            Kids::Few(nodes) => &mut nodes[loc.at],
            Kids::Wide(wide) => &mut wide.blocks[loc.block][loc.at],
        }
    }

    /// Places `node` at `loc`, where a search for its word found nothing.
    pub(crate) fn insert(&mut self, loc: Loc, node: Node<V>) {
        match self {
            Kids::None => *self = Kids::Few(vec![node]),
            Kids::Few(nodes) => {
                nodes.insert(loc.at, node);
                if nodes.len() > FEW_MAX {
                    let nodes = std::mem::take(nodes);
                    *self = Kids::Wide(Box::new(Wide::new(nodes)));
                }
            }
            Kids::Wide(wide) => wide.insert(loc, node),
        }
    }

    /// Removes the child at `loc` and returns it.
    pub(crate) fn remove(&mut self, loc: Loc) -> Node<V> {
        match self {
            Kids::None => unreachable!("a leaf has no child to remove"),
            Kids::Few(nodes) => {
                let node = nodes.remove(loc.at);
                if nodes.is_empty() {
                    *self = Kids::None;
                } else {
                    trim(nodes);
                }
                node
            }
            Kids::Wide(wide) => {
                let node = wide.remove(loc);
                if wide.len <= WIDE_MIN {
                    let nodes = std::mem::take(&mut wide.blocks)
                        .into_iter()
                        .flatten()
                        .collect();
                    *self = Kids::Few(nodes);
                }
                node
            }
        }
    }

    /// Takes the only child, if there is exactly one.
    pub(crate) fn take_only(&mut self) -> Option<Node<V>> {
        match self {
            Kids::Few(nodes) if nodes.len() == 1 => {
                let node = nodes.pop();
                *self = Kids::None;
                node
            }
            _ => None,
        }
    }

    /// Where the first child whose word is not below `text` is (past the last block if none).
    pub(crate) fn seek(&self, words: &Words, text: &str) -> Loc {
        match self.search(words, &Probe::new(text)) {
            Ok(loc) | Err(loc) => loc,
        }
    }

    /// Gives back the spare room of the vectors (not the children's own).
    pub(crate) fn shrink(&mut self) {
        match self {
            Kids::None => {}
            Kids::Few(nodes) => nodes.shrink_to_fit(),
            Kids::Wide(wide) => {
                wide.blocks.iter_mut().for_each(Vec::shrink_to_fit);
                wide.blocks.shrink_to_fit();
                wide.heads.shrink_to_fit();
            }
        }
    }

    /// Renames every child's interned word through `word` (the order of the words is
    /// unchanged).
    pub(crate) fn rename_labels(&mut self, word: impl Fn(u32) -> u32) {
        for node in self.iter_mut() {
            if !node.label.is_inline() {
                node.label.word = word(node.label.word);
            }
        }
    }

    /// Heap bytes held by the vectors of these children (the children included, not what
    /// they hold in turn).
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            Kids::None => 0,
            Kids::Few(nodes) => nodes.capacity() * std::mem::size_of::<Node<V>>(),
            Kids::Wide(wide) => {
                std::mem::size_of::<Wide<V>>()
                    + wide.blocks.capacity() * std::mem::size_of::<Vec<Node<V>>>()
                    + wide.heads.capacity() * std::mem::size_of::<u64>()
                    + wide
                        .blocks
                        .iter()
                        .map(|b| b.capacity() * std::mem::size_of::<Node<V>>())
                        .sum::<usize>()
            }
        }
    }

    /// Checks the invariants (tests): sorted, no empty block, the index right.
    #[cfg(test)]
    pub(crate) fn check(&self, words: &Words) {
        let all: Vec<&Node<V>> = self.iter().collect();
        assert_eq!(all.len(), self.len());
        for pair in all.windows(2) {
            assert!(pair[0].label.spell(words) < pair[1].label.spell(words));
        }
        match self {
            Kids::None => {}
            Kids::Few(nodes) => assert!(!nodes.is_empty() && nodes.len() <= FEW_MAX),
            Kids::Wide(wide) => {
                assert!(wide.len > WIDE_MIN);
                assert_eq!(wide.heads.len(), wide.blocks.len());
                for (block, &head) in wide.blocks.iter().zip(&wide.heads) {
                    assert!(!block.is_empty() && block.len() <= BLOCK_MAX);
                    assert_eq!(last_head(block), head);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::label::{Label, Probe};
    use super::{Kids, Node, Rest, Words};

    fn texts(kids: &Kids<usize>, words: &Words) -> Vec<String> {
        kids.iter().map(|n| n.label.spell(words)).collect()
    }

    #[test]
    fn children_stay_sorted_through_every_size() {
        let mut words = Words::default();
        let mut kids = Kids::None;
        // Short words, and long ones that share their first eight bytes (`word-lon`): those
        // are told apart by their labels, across blocks.
        let all: Vec<String> = (0..500u32)
            .map(|i| match i.wrapping_mul(7919) % 1000 {
                k if k % 2 == 0 => format!("word-{k}"),
                k => format!("word-long-{k}"),
            })
            .collect();
        for (n, text) in all.iter().enumerate() {
            let loc = kids
                .search(&words, &Probe::new(text))
                .expect_err("a new word");
            let label = Label::new(&mut words, text);
            kids.insert(loc, Node::leaf(label, Rest::new(), Some(n)));
            kids.check(&words);
            let mut want: Vec<String> = all[..=n].to_vec();
            want.sort_unstable();
            assert_eq!(texts(&kids, &words), want);
        }
        for (n, text) in all.iter().enumerate() {
            assert_eq!(kids.find(&words, &Probe::new(text)).unwrap().value, Some(n));
            let loc = kids.seek(&words, text);
            assert_eq!(kids.get(loc).value, Some(n));
        }
        assert!(kids.cursor(kids.seek(&words, "x")).next().is_none());
        let first = kids.seek(&words, "");
        assert_eq!(kids.get(first).label.spell(&words), "word-0");
        for (n, text) in all.iter().enumerate().rev() {
            let loc = kids.search(&words, &Probe::new(text)).expect("stored");
            assert_eq!(kids.remove(loc).value, Some(n));
            assert!(kids.search(&words, &Probe::new(text)).is_err());
            kids.check(&words);
            let mut want: Vec<String> = all[..n].to_vec();
            want.sort_unstable();
            assert_eq!(texts(&kids, &words), want);
        }
        assert!(kids.is_empty());
    }
}
