//! The CS-trie's relation walk ([`Matcher::related_into`](crate::Matcher::related_into)):
//! the walk of [`crate::matchers::shared::relation_walk`] over the trie's levels, under one
//! epoch pin and taking no lock. As a lookup does, it reads each I-node once per state and
//! sees every change that completed before it started.

use std::ptr;

use super::kids::{Key, Spelling};
use super::nodes::{Child, INode, Main};
use super::raw::Pin;
use super::CsTrieMatcher;
use crate::error::Result;
use crate::matcher::{Related, SubscriberId};
use crate::matchers::shared::relation_walk::{related, Levels};
use crate::relation::Query;

impl CsTrieMatcher {
    /// Appends the held patterns standing in `query`'s relation to it (under one epoch pin)
    /// and returns `true`; past the query's walk budget returns `false`, and on error fails,
    /// appending nothing either way.
    pub(super) fn related(&self, query: &Query<'_>, out: &mut Vec<Related>) -> Result<bool> {
        let pin = self.reclaim.pin();
        related(
            &Trie { pin: &pin },
            &self.root,
            self.config.dialect,
            query,
            out,
        )
    }
}

/// The trie's levels as the relation walk reads them, under `pin`.
struct Trie<'g, 'p> {
    pin: &'g Pin<'p>,
}

/// A literal child's name: the query's own word, or the label listed at its level.
#[derive(Clone, Copy)]
enum Label<'q> {
    Query(&'q str),
    Listed(Spelling),
}

impl<'g, 'q> Levels<'q> for Trie<'g, '_> {
    type Level = &'g INode;
    type Node = &'g Main;
    type Label = Label<'q>;
    /// An I-node's address: a stable identity while the walk stays pinned.
    type Id = usize;

    fn id(&self, level: &'g INode) -> usize {
        ptr::from_ref(level) as usize
    }

    fn open(&self, level: &'g INode) -> &'g Main {
        level.load(self.pin)
    }

    fn holds_subscribers(&self, node: &&'g Main) -> bool {
        !node.subs.is_empty()
    }

    fn subscribers(&self, node: &&'g Main) -> Vec<SubscriberId> {
        let mut subscribers = Vec::new();
        node.collect(&mut subscribers);
        subscribers
    }

    fn multi(&self, node: &&'g Main) -> Option<&'g INode> {
        node.multi.as_ref().map(|link| self.link(link))
    }

    fn one(&self, node: &&'g Main) -> Option<&'g INode> {
        node.one.as_ref().map(|link| self.link(link))
    }

    fn child(
        &self,
        _: &'g INode,
        node: &&'g Main,
        word: &'q str,
    ) -> Option<(&'g INode, Label<'q>)> {
        let link = node.words.get(word, Key::of(word))?;
        Some((self.link(link), Label::Query(word)))
    }

    fn for_each_child(
        &self,
        node: &&'g Main,
        no_dollar: bool,
        f: &mut dyn FnMut(&'g INode, Label<'q>),
    ) {
        node.words.for_each_spelt(&mut |spelling, link| {
            if no_dollar && spelling.with(|w| w.starts_with('$')) {
                return;
            }
            f(self.link(link), Label::Listed(spelling));
        });
    }

    fn spell(&self, label: Label<'q>) -> Box<str> {
        match label {
            Label::Query(word) => word.into(),
            Label::Listed(spelling) => spelling.with(|word| word.into()),
        }
    }
}

impl<'g> Trie<'g, '_> {
    fn link(&self, link: &'g Child) -> &'g INode {
        link.get(self.pin)
    }
}
