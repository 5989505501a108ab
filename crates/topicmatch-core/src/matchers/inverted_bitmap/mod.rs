//! The classic inverted bitmap of "Fast topic matching" (iMatix's design for OpenAMQ): one row
//! per topic, the bitmap of the subscriptions matching it.
//!
//! Topics are not known in advance, so a topic's row is compiled when it is published (with
//! the level index, `matchers::shared::level_index`) and cached with the distinct subscribers
//! it resolves to, so a repeated topic costs one hash lookup and a copy. Subscribe and
//! unsubscribe update the cached rows in place: a new pattern sets its bit in every cached
//! row whose topic it matches, a removed one clears it, and only the rows touched re-resolve
//! their subscribers; nothing is rebuilt. The row table is bounded ([`DEFAULT_CAPACITY`] rows
//! unless configured) and evicts with CLOCK (`table`); once it is full a topic is admitted
//! on its second sighting (`shared::door`), so a stream of unique topics costs one uncached
//! level-index lookup each, neither evicting useful rows nor exhausting memory (while the table
//! has room every topic is admitted on its first: nothing is evicted).
//!
//! The hit path takes no lock: every row whose topic and subscribers fit in a cache line is
//! mirrored in `front`, a table of 64-byte entries read under per-entry sequence numbers, so
//! a hit costs one hash of the topic's words, usually one cache line and a copy, and no
//! validation (only validated topics are cached and the limits are fixed). Every change to a
//! row is written to its entry before `rows`' write lock is released.
//!
//! Locks: `index` then `rows`, always in that order. A hit the front cannot answer takes only
//! `rows` for reading. A miss compiles under `index` read and inserts under `rows` write while
//! still holding `index`, so no subscribe can slip between compiling a row and caching it;
//! subscribe and unsubscribe hold both for writing.

mod front;
mod table;

use roaring::RoaringBitmap;
use smallvec::SmallVec;

use crate::error::Result;
use crate::matcher::{Config, Matcher, SubscriberId};
use crate::matchers::shared::door::Doorkeeper;
use crate::matchers::shared::level_index::{
    ones, topic_hash, with_keys, Acc, Change, Index, WordKey,
};
use crate::pattern::{Pattern, Word};
use crate::sync::ReadMostly;
use crate::topic::parse_topic;
use front::Front;
use table::{Ids, Row, RowTable, TopicShape, SHAPE_WORDS};

/// Default bound on cached rows.
pub const DEFAULT_CAPACITY: usize = 16_384;

/// One cached bitmap row per topic, bounded.
pub struct InvertedBitmapMatcher {
    config: Config,
    index: ReadMostly<Index>,
    rows: ReadMostly<RowTable>,
    /// The rows that fit a cache line, readable without `rows`' lock: the hit path.
    front: Front,
    door: Doorkeeper,
}

impl InvertedBitmapMatcher {
    /// An empty matcher caching at most `config.cache_capacity` topics ([`DEFAULT_CAPACITY`]
    /// if `None`).
    pub fn new(config: Config) -> Self {
        Self::with_capacity(config, config.cache_capacity.unwrap_or(DEFAULT_CAPACITY))
    }

    /// An empty matcher caching at most `capacity` topics (at least one).
    pub fn with_capacity(config: Config, capacity: usize) -> Self {
        InvertedBitmapMatcher {
            config,
            index: ReadMostly::new(Index::new(config)),
            rows: ReadMostly::new(RowTable::new(capacity)),
            front: Front::new(capacity),
            door: Doorkeeper::new(capacity),
        }
    }

    /// The most rows kept.
    pub fn capacity(&self) -> usize {
        self.rows.read().capacity()
    }

    /// Rows cached now.
    pub fn cached_rows(&self) -> usize {
        self.rows.read().len()
    }

    /// Approximate heap bytes: compiler index plus cached rows.
    pub fn heap_bytes(&self) -> usize {
        self.index.read().heap_bytes() + self.rows.read().heap_bytes() + self.front.heap_bytes()
    }

    /// What a lookup the front cannot answer does: the row of `topic` under `rows`' read
    /// lock, else [`compile`](Self::compile). Out of line, so the hit path saves no registers
    /// for it.
    #[inline(never)]
    fn locked_lookup(&self, topic: &str, out: &mut Vec<SubscriberId>) -> Result<()> {
        // A topic past the byte limit is never hashed.
        if topic.len() <= self.config.limits.max_topic_bytes {
            if let Some(row) = self.rows.read().get(topic) {
                out.extend_from_slice(&row.ids);
                return Ok(());
            }
        }
        self.compile(topic, out)
    }

    /// The locked path: the row of `topic` if cached; else its subscribers found by the level
    /// index, and its row compiled and cached while the table has room, then only on a second
    /// sighting (`shared::door`): the doorkeeper guards the rows a newcomer would evict, and
    /// while the table has room there are none.
    fn compile(&self, topic: &str, out: &mut Vec<SubscriberId>) -> Result<()> {
        let index = self.index.read();
        let mut admit = {
            let rows = self.rows.read();
            if let Some(row) = rows.get(topic) {
                out.extend_from_slice(&row.ids);
                return Ok(());
            }
            rows.len() < rows.capacity()
        };
        if !admit {
            let start = out.len();
            if index.lookup_small(topic, out) {
                if !self.door.seen_before(topic) {
                    return Ok(());
                }
                out.truncate(start);
                admit = true;
            }
        }
        with_keys(&self.config, topic, |words, keys| {
            if admit || self.door.seen_before(topic) {
                self.admit(&index, topic, words, keys, out);
            } else {
                index.lookup(topic, words, keys, out);
            }
        })
    }

    /// Compiles the row of the validated `topic` (`words`, `keys`), appends its subscribers
    /// and caches it. Called holding `index` for reading, so no subscribe slips in between.
    fn admit(
        &self,
        index: &Index,
        topic: &str,
        words: &[&str],
        keys: &[WordKey],
        out: &mut Vec<SubscriberId>,
    ) {
        let mut acc = Acc::new();
        if !index.matching_slots(topic, words, keys, &mut acc) {
            acc.clear();
        }
        let mut resolved = Vec::new();
        index.resolve(topic, topic_hash(keys), &acc, &mut resolved);
        out.extend_from_slice(&resolved);
        let ids = Ids::from_vec(resolved);
        let slots: RoaringBitmap = ones(&acc).collect();
        let shape = TopicShape::new(words.len(), keys.iter().map(|k| k.hash));
        self.rows
            .write()
            .insert(Row::new(topic, slots, ids), shape, &self.front);
    }
}

/// A necessary condition for `pattern` to match a topic of some shape, cheap enough to skip
/// most cached rows on a subscribe: as many words as its non-`#` words (exactly as many
/// without `#`), and the hash of each literal word before the first `#` at its position
/// (those positions are fixed in every topic the pattern matches) among the first
/// [`SHAPE_WORDS`].
fn could_match(pattern: &Pattern) -> impl Fn(&TopicShape) -> bool {
    let words = pattern.words();
    let fixed = words.iter().filter(|w| **w != Word::Multi).count();
    let exact = fixed == words.len();
    let literals: SmallVec<[(usize, u64); 4]> = words
        .iter()
        .take_while(|w| **w != Word::Multi)
        .enumerate()
        .take(SHAPE_WORDS)
        .filter_map(|(i, w)| w.literal().map(|text| (i, WordKey::of(text).hash)))
        .collect();
    move |shape| {
        let n = shape.words;
        (if exact { n == fixed } else { n >= fixed })
            && literals.iter().all(|&(i, h)| shape.keys[i] == h)
    }
}

/// Recomputes `row`'s subscribers from its slots and the direct map.
fn resolve_row(index: &Index, row: &mut Row) {
    row.ids.clear();
    if let Some(subs) = index.direct.get_text(&row.topic) {
        row.ids.extend_from_slice(subs);
    }
    for slot in &row.slots {
        row.ids.extend_from_slice(index.slots.subs(slot));
    }
    row.ids.sort_unstable();
    row.ids.dedup();
}

impl Matcher for InvertedBitmapMatcher {
    fn name(&self) -> &'static str {
        "inverted_bitmap"
    }

    fn insert(&self, pattern: &Pattern, subscriber: SubscriberId) {
        let mut index = self.index.write();
        let change = index.insert(pattern, subscriber);
        let mut rows = self.rows.write();
        match change {
            Change::Direct(topic) => {
                if let Some((at, row)) = rows.get_mut(&topic) {
                    row.add_id(subscriber);
                    self.front.set(&row.topic, at, &row.ids);
                }
            }
            Change::Slot { slot, edge: true } => {
                let could = could_match(pattern);
                for (at, row) in rows.rows_shaped(&could) {
                    let words = parse_topic(self.config.dialect, &self.config.limits, &row.topic)
                        .expect("cached topics are valid");
                    let hit = pattern.matches(&words);
                    drop(words);
                    if hit {
                        row.slots.insert(slot);
                        row.add_id(subscriber);
                        self.front.set(&row.topic, at, &row.ids);
                    }
                }
            }
            Change::Slot { slot, edge: false } => {
                // Only rows `pattern` matches hold its slot: the shape check skips the rest.
                let could = could_match(pattern);
                for (at, row) in rows
                    .rows_shaped(&could)
                    .filter(|(_, r)| r.slots.contains(slot))
                {
                    row.add_id(subscriber);
                    self.front.set(&row.topic, at, &row.ids);
                }
            }
        }
    }

    fn remove(&self, pattern: &Pattern, subscriber: SubscriberId) -> bool {
        let mut index = self.index.write();
        let Some(change) = index.remove(pattern, subscriber) else {
            return false;
        };
        let mut rows = self.rows.write();
        match change {
            Change::Direct(topic) => {
                if let Some((at, row)) = rows.get_mut(&topic) {
                    resolve_row(&index, row);
                    self.front.set(&row.topic, at, &row.ids);
                }
            }
            Change::Slot { slot, edge } => {
                let could = could_match(pattern);
                for (at, row) in rows
                    .rows_shaped(&could)
                    .filter(|(_, r)| r.slots.contains(slot))
                {
                    if edge {
                        row.slots.remove(slot);
                    }
                    resolve_row(&index, row);
                    self.front.set(&row.topic, at, &row.ids);
                }
            }
        }
        true
    }

    #[inline]
    fn lookup_into(&self, topic: &str, out: &mut Vec<SubscriberId>) -> Result<()> {
        // Only validated topics are cached and the limits never change, so a cached topic is
        // valid: a hit needs no validation.
        if self.front.get(topic, Some(&mut *out)).is_some() {
            return Ok(());
        }
        self.locked_lookup(topic, out)
    }

    fn matches_any(&self, topic: &str) -> Result<bool> {
        if let Some(any) = self.front.get(topic, None) {
            return Ok(any);
        }
        if topic.len() <= self.config.limits.max_topic_bytes {
            if let Some(row) = self.rows.read().get(topic) {
                return Ok(!row.ids.is_empty());
            }
        }
        let mut out = Vec::new();
        self.compile(topic, &mut out)?;
        Ok(!out.is_empty())
    }
}

#[cfg(test)]
mod admission_tests {
    use super::InvertedBitmapMatcher;
    use crate::dialect::{Dialect, Limits};
    use crate::matcher::{Config, Matcher};
    use crate::pattern::Pattern;

    fn cached(m: &InvertedBitmapMatcher, topic: &str) -> bool {
        m.rows.read().get(topic).is_some()
    }

    fn look(m: &InvertedBitmapMatcher, topic: &str) -> Vec<u64> {
        let mut out = Vec::new();
        m.lookup_into(topic, &mut out).expect("valid topic");
        out
    }

    #[test]
    fn first_sighting_while_room_then_second_sighting_once_full() {
        const CAPACITY: usize = 64;
        let dialect = Dialect::Amqp;
        let m = InvertedBitmapMatcher::with_capacity(Config::new(dialect), CAPACITY);
        let pattern = Pattern::parse(dialect, &Limits::for_dialect(dialect), "a.*").unwrap();
        m.insert(&pattern, 7);
        let hot: Vec<String> = (0..CAPACITY).map(|i| format!("a.h{i}")).collect();
        // Room: each topic is cached the first time it is seen.
        for t in &hot {
            assert_eq!(look(&m, t), vec![7]);
            assert!(cached(&m, t), "{t} cached on first sighting");
        }
        assert_eq!(m.cached_rows(), CAPACITY);
        // Full: a newcomer seen once is not cached, so a stream of unique topics leaves the
        // hot rows alone (the doorkeeper's rare false positive would admit one early: these
        // topics and its hash are fixed, so this test is deterministic); seen again, it is.
        for i in 0..20 {
            let t = format!("a.u{i}");
            assert_eq!(look(&m, &t), vec![7]);
            assert!(
                !cached(&m, &t),
                "{t} cached on its first sighting with the table full"
            );
        }
        assert!(hot.iter().all(|t| cached(&m, t)), "hot rows kept");
        assert_eq!(look(&m, "a.u19"), vec![7]);
        assert!(cached(&m, "a.u19"), "admitted on its second sighting");
        assert_eq!(m.cached_rows(), CAPACITY);
    }
}
