//! The trie matcher: a word trie (`matchers::shared::word_trie`) behind
//! one read-write lock, as RabbitMQ and ZeroMQ match.
//!
//! A batch takes the read lock once and keeps it from topic to topic, handing it to a waiting
//! writer between two topics ([`RwLockReadGuard::bump`], one plain load of the lock's word
//! when no writer waits). Threads looking up batches thus only read the lock's word, which
//! stays in every core's cache, where a read lock taken for each topic writes it, and its line
//! moves between the cores on every lookup. A subscribe still waits for one lookup at most.

use parking_lot::{RwLock, RwLockReadGuard};

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

    fn lookup_batch_into(
        &self,
        topics: &[&str],
        out: &mut Vec<SubscriberId>,
        ends: &mut Vec<usize>,
    ) -> Result<()> {
        let mut trie = self.inner.read();
        for topic in topics {
            // A writer waiting for the lock gets it here, before the next topic's walk.
            RwLockReadGuard::bump(&mut trie);
            trie.lookup(&self.config, topic, out, false)?;
            ends.push(out.len());
        }
        Ok(())
    }

    fn matches_any(&self, topic: &str) -> Result<bool> {
        let mut out = Vec::new();
        self.inner
            .read()
            .lookup(&self.config, topic, &mut out, true)
    }

    fn related_into(&self, query: &Query<'_>, out: &mut Vec<Related>) -> Result<bool> {
        self.inner.read().related(self.config.dialect, query, out)
    }
}
