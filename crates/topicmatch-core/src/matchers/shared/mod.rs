//! Pieces more than one algorithm is built from. Each is a module of its own, below the
//! algorithms that use it: none imports an algorithm.

pub(crate) mod door;
pub(crate) mod level_index;
pub(crate) mod relation_walk;
pub(crate) mod word_trie;
