//! The trie matcher: a word trie (`matchers::shared::word_trie`) behind
//! one read-write lock, as RabbitMQ and ZeroMQ match.

use parking_lot::RwLock;

use crate::error::Result;
use crate::matcher::{Config, Matcher, Related, SubscriberId};
use crate::matchers::shared::word_trie::WordTrie;
use crate::pattern::Pattern;
use crate::relation::Query;

/// A word trie behind a read-write lock.
pub struct TrieMatcher {
    config: Config,
    inner: RwLock<WordTrie>,
}

impl TrieMatcher {
    /// An empty trie.
    pub fn new(config: Config) -> Self {
        TrieMatcher {
            config,
            inner: RwLock::new(WordTrie::default()),
        }
    }
}

impl Matcher for TrieMatcher {
    fn name(&self) -> &'static str {
        "trie"
    }

    fn insert(&self, pattern: &Pattern, subscriber: SubscriberId) {
        self.inner.write().insert(pattern, subscriber);
    }

    fn remove(&self, pattern: &Pattern, subscriber: SubscriberId) -> bool {
        self.inner.write().remove(pattern, subscriber)
    }

    fn lookup_into(&self, topic: &str, out: &mut Vec<SubscriberId>) -> Result<()> {
        self.inner
            .read()
            .lookup(&self.config, topic, out, false)
            .map(|_| ())
    }

    fn matches_any(&self, topic: &str) -> Result<bool> {
        let mut out = Vec::new();
        self.inner
            .read()
            .lookup(&self.config, topic, &mut out, true)
    }

    fn related_into(&self, query: &Query<'_>, out: &mut Vec<Related>) -> Result<bool> {
        self.inner
            .read()
            .related(self.config.dialect, query, out)
            .map(|()| true)
    }
}
