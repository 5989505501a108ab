//! The optimized inverted bitmap: one set of rows per topic level instead of one row per
//! topic, so the index is sized by the words subscriptions use, not by the topics published
//! ("Fast Topic Matching Algorithm Implementation For WSO2 Message Broker").
//!
//! The rows are the level index (`matchers::shared::level_index`), which looks topics
//! up; this matcher adds, for `matches_any`, a separate, lazily rebuilt filter (`filter`).
//!
//! One read-write lock guards the index; lookups share it, each thread through its own shard
//! (`crate::sync::ReadMostly`).

mod filter;

use crate::error::Result;
use crate::matcher::{Config, Matcher, SubscriberId};
use crate::matchers::shared::level_index::{topic_hash, with_keys, Index};
use crate::pattern::Pattern;
use crate::sync::{ReadMostly, READ_BATCH};
use filter::Filter;

pub use crate::matchers::shared::level_index::simd;

/// Per-level inverted bitmaps behind a read-write lock.
pub struct OptimizedBitmapMatcher {
    config: Config,
    inner: ReadMostly<Index>,
    filter: ReadMostly<Option<Filter>>,
}

impl OptimizedBitmapMatcher {
    /// An empty matcher.
    pub fn new(config: Config) -> Self {
        OptimizedBitmapMatcher {
            config,
            inner: ReadMostly::new(Index::new(config)),
            filter: ReadMostly::new(None),
        }
    }

    /// Bitmap width in bits: the most wildcard patterns live at once, rounded up.
    pub fn bitmap_width(&self) -> usize {
        self.inner.read().levels.width() * 64
    }

    /// Distinct wildcard patterns held.
    pub fn wildcard_patterns(&self) -> usize {
        self.inner.read().wildcard_patterns()
    }

    /// Approximate heap bytes of the index (rows, slots, direct map).
    pub fn heap_bytes(&self) -> usize {
        self.inner.read().heap_bytes()
    }

    /// How many wildcard patterns `matches_any` consults (the rest are subsumed), building the
    /// filter if needed.
    pub fn filter_patterns(&self) -> usize {
        let index = self.inner.read();
        self.with_filter(&index, Filter::kept)
    }

    /// `topic`'s subscribers in `index` (read under the caller's lock): the one-pass walk, or
    /// the general lookup where it does not apply.
    #[inline]
    fn lookup_in(&self, index: &Index, topic: &str, out: &mut Vec<SubscriberId>) -> Result<()> {
        if index.lookup_small(topic, out) {
            return Ok(());
        }
        self.lookup_general(index, topic, out)
    }

    /// The lookup of an index or topic the one-pass walk does not take. Out of line: inlined,
    /// its stack frame and spills were paid by every small lookup too (measured).
    #[inline(never)]
    fn lookup_general(
        &self,
        index: &Index,
        topic: &str,
        out: &mut Vec<SubscriberId>,
    ) -> Result<()> {
        with_keys(&self.config, topic, |words, keys| {
            index.lookup(topic, words, keys, out);
        })
    }

    fn with_filter<R>(&self, index: &Index, f: impl FnOnce(&Filter) -> R) -> R {
        {
            let filter = self.filter.read();
            if let Some(current) = filter.as_ref().filter(|x| x.generation == index.generation) {
                return f(current);
            }
        }
        let mut filter = self.filter.write();
        let stale = match filter.as_ref() {
            Some(current) => current.generation != index.generation,
            None => true,
        };
        if stale {
            *filter = Some(Filter::build(index));
        }
        f(filter.as_ref().expect("just built"))
    }
}

impl Matcher for OptimizedBitmapMatcher {
    fn name(&self) -> &'static str {
        "optimized_bitmap"
    }

    fn insert(&self, pattern: &Pattern, subscriber: SubscriberId) {
        self.inner.write().insert(pattern, subscriber);
    }

    fn remove(&self, pattern: &Pattern, subscriber: SubscriberId) -> bool {
        self.inner.write().remove(pattern, subscriber).is_some()
    }

    fn lookup_into(&self, topic: &str, out: &mut Vec<SubscriberId>) -> Result<()> {
        self.lookup_in(&self.inner.read(), topic, out)
    }

    /// `READ_BATCH` topics under one read of the index's lock.
    fn lookup_batch_into(
        &self,
        topics: &[&str],
        out: &mut Vec<SubscriberId>,
        ends: &mut Vec<usize>,
    ) -> Result<()> {
        for part in topics.chunks(READ_BATCH) {
            let index = self.inner.read();
            for topic in part {
                self.lookup_in(&index, topic, out)?;
                ends.push(out.len());
            }
        }
        Ok(())
    }

    fn matches_any(&self, topic: &str) -> Result<bool> {
        let index = self.inner.read();
        // A direct key is a valid pattern without wildcards, and every such text within the
        // byte limit is a valid topic of the same dialect and limits: a hit needs no parse.
        if topic.len() <= self.config.limits.max_topic_bytes
            && index.direct.contains_unchecked(topic)
        {
            return Ok(true);
        }
        // Past the check above `topic` is no direct key whenever the one pass applies (it
        // only does within the byte limit), so only the wildcard rows are left to ask.
        if let Some(any) = index.any_wildcard_small(topic) {
            return Ok(any);
        }
        with_keys(&self.config, topic, |words, keys| {
            if index.direct.get(topic, topic_hash(keys)).is_some() {
                return true;
            }
            let dollar = index.dollar(words);
            self.with_filter(&index, |f| f.any(words, dollar)) || index.complex_matches(topic)
        })
    }
}
