//! The word trie's relation walk (what the trie algorithm's
//! [`Matcher::related_into`](crate::Matcher::related_into) runs): the walk of
//! [`crate::matchers::shared::relation_walk`] over the trie's nodes.

use super::arena::{Edge, Node, NodeId, WordId, NONE, ROOT};
use super::WordTrie as Inner;
use crate::dialect::Dialect;
use crate::error::Result;
use crate::matcher::{Related, SubscriberId};
use crate::matchers::shared::relation_walk::{related, Levels};
use crate::relation::Query;

impl Inner {
    /// Appends the held patterns standing in `query`'s relation to it and returns `true`;
    /// past the query's walk budget returns `false`, and on error fails, appending nothing
    /// either way.
    pub(crate) fn related(
        &self,
        dialect: Dialect,
        query: &Query<'_>,
        out: &mut Vec<Related>,
    ) -> Result<bool> {
        related(&self, ROOT, dialect, query, out)
    }
}

/// A child id, `None` for [`NONE`].
fn present(id: NodeId) -> Option<NodeId> {
    (id != NONE).then_some(id)
}

impl<'t> Levels<'_> for &'t Inner {
    type Level = NodeId;
    type Node = &'t Node;
    type Label = WordId;
    type Id = NodeId;

    fn id(&self, level: NodeId) -> NodeId {
        level
    }

    fn open(&self, level: NodeId) -> &'t Node {
        self.arena.get(level)
    }

    fn holds_subscribers(&self, node: &&'t Node) -> bool {
        !node.subs.is_empty()
    }

    fn subscribers(&self, node: &&'t Node) -> Vec<SubscriberId> {
        node.subs.clone()
    }

    fn multi(&self, node: &&'t Node) -> Option<NodeId> {
        present(node.multi)
    }

    fn one(&self, node: &&'t Node) -> Option<NodeId> {
        present(node.one)
    }

    fn child(&self, level: NodeId, _: &&'t Node, word: &str) -> Option<(NodeId, WordId)> {
        let id = self.words.get(word)?;
        Some((present(self.arena.child(level, Edge::Word(id)))?, id))
    }

    fn for_each_child(&self, node: &&'t Node, no_dollar: bool, f: &mut dyn FnMut(NodeId, WordId)) {
        for (&id, &found) in &node.children {
            if no_dollar && self.words.name(id).starts_with('$') {
                continue;
            }
            f(found, id);
        }
    }

    fn spell(&self, label: WordId) -> Box<str> {
        self.words.name(label).into()
    }
}
