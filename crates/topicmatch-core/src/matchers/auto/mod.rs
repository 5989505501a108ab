//! `auto`: the optimized bitmap while wildcard patterns are few, the trie when they are many.
//!
//! A bitmap lookup costs a few row ANDs whose width grows with the number of wildcard
//! patterns; a trie walk costs per topic word and barely notices the pattern count. On the
//! generated workload of `benches/benches/bitmap.rs` (`auto_crossover`, figures in
//! docs/BENCHMARKS.md, "Inverted bitmaps") the bitmap's lookups are 1.6x the trie's at 10k
//! wildcard patterns and even at 30k; its dense rows, though, take memory growing with
//! distinct words times patterns. [`UP`] = 10k keeps the bitmap where it is clearly faster
//! and its rows small.
//! The count is unknown when a matcher is built, so `auto` adapts: it starts as a bitmap,
//! migrates to a trie once the count exceeds [`UP`], and back once it falls below [`DOWN`]; the
//! gap (hysteresis) keeps a count hovering at the threshold from migrating on every change.
//!
//! A migration rebuilds the other structure from `auto`'s own list of subscriptions while the
//! write lock is held, so a lookup sees either the old structure or the complete new one.

mod migrate;

use crate::error::Result;
use crate::matcher::{Config, Matcher, Related, SubscriberId};
use crate::pattern::Pattern;
use crate::relation::Query;
use crate::sync::{ReadMostly, READ_BATCH};
use migrate::{Active, Book};

/// Distinct wildcard patterns above which `auto` uses the trie.
pub const UP: usize = 10_000;
/// Distinct wildcard patterns below which a trie-backed `auto` returns to the bitmap.
pub const DOWN: usize = 8_000;

struct Inner {
    active: Active,
    book: Book,
}

/// Adaptive choice between `optimized_bitmap` and `trie`.
pub struct AutoMatcher {
    config: Config,
    inner: ReadMostly<Inner>,
}

impl AutoMatcher {
    /// An empty matcher, starting as a bitmap.
    pub fn new(config: Config) -> Self {
        AutoMatcher {
            config,
            inner: ReadMostly::new(Inner {
                active: Active::bitmap(config),
                book: Book::default(),
            }),
        }
    }

    /// The algorithm in use now: `"optimized_bitmap"` or `"trie"`.
    pub fn current(&self) -> &'static str {
        self.inner.read().active.get().name()
    }
}

impl Matcher for AutoMatcher {
    fn name(&self) -> &'static str {
        "auto"
    }

    fn insert(&self, pattern: &Pattern, subscriber: SubscriberId) {
        let mut inner = self.inner.write();
        inner.book.insert(pattern, subscriber);
        inner.active.get().insert(pattern, subscriber);
        if inner.active.is_bitmap() && inner.book.wildcard_patterns() > UP {
            inner.active = Active::trie(self.config, &inner.book);
        }
    }

    fn remove(&self, pattern: &Pattern, subscriber: SubscriberId) -> bool {
        let mut inner = self.inner.write();
        if !inner.book.remove(pattern, subscriber) {
            return false;
        }
        let removed = inner.active.get().remove(pattern, subscriber);
        debug_assert!(removed, "the book and the active matcher agree");
        if !inner.active.is_bitmap() && inner.book.wildcard_patterns() < DOWN {
            inner.active = Active::bitmap_from(self.config, &inner.book);
        }
        true
    }

    fn lookup_into(&self, topic: &str, out: &mut Vec<SubscriberId>) -> Result<()> {
        self.inner.read().active.get().lookup_into(topic, out)
    }

    /// The active matcher's own batch call, `READ_BATCH` topics under one read of `auto`'s
    /// lock (a migration waits for at most that many lookups).
    fn lookup_batch_into(
        &self,
        topics: &[&str],
        out: &mut Vec<SubscriberId>,
        ends: &mut Vec<usize>,
    ) -> Result<()> {
        for part in topics.chunks(READ_BATCH) {
            self.inner
                .read()
                .active
                .get()
                .lookup_batch_into(part, out, ends)?;
        }
        Ok(())
    }

    fn matches_any(&self, topic: &str) -> Result<bool> {
        self.inner.read().active.get().matches_any(topic)
    }

    /// The trie's walk while the trie is active; the bitmap has no walk.
    fn related_into(&self, query: &Query<'_>, out: &mut Vec<Related>) -> Result<bool> {
        self.inner.read().active.get().related_into(query, out)
    }
}
