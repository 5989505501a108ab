//! The bounded table of compiled rows, one per topic, evicted with CLOCK.
//!
//! Each row keeps the bitmap of matching wildcard slots (what subscribe/unsubscribe update)
//! and the distinct subscribers it resolves to (what a hit copies). A hit sets the row's
//! reference bit with a relaxed store (only when clear, so hot rows are not written); an insert
//! into a full table sweeps the hand, clearing reference bits until it meets a row not used
//! since the last sweep, and replaces that row in place. Eviction is O(1) amortised and the
//! table never holds more than `capacity` rows.

use std::sync::atomic::{AtomicBool, Ordering};

use roaring::RoaringBitmap;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use super::front::Front;
use crate::matcher::SubscriberId;

/// A row's resolved subscribers, inline up to four.
pub(crate) type Ids = SmallVec<[SubscriberId; 4]>;

/// A topic as the index key: inline up to 24 bytes.
type Key = SmallVec<[u8; 24]>;

/// One compiled topic.
#[derive(Debug)]
pub(crate) struct Row {
    pub(crate) topic: Box<str>,
    pub(crate) slots: RoaringBitmap,
    pub(crate) ids: Ids,
    referenced: AtomicBool,
}

/// Words of a topic whose hash its [`TopicShape`] keeps.
pub(crate) const SHAPE_WORDS: usize = 4;

/// What a subscribe checks before matching a cached topic in full: its number of words and
/// the hashes of its first [`SHAPE_WORDS`] words (0 past its end). Kept in a dense array
/// beside the rows, so a subscribe scans 40 bytes per cached row, not the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TopicShape {
    pub(crate) words: usize,
    pub(crate) keys: [u64; SHAPE_WORDS],
}

impl TopicShape {
    /// The shape of a topic of `words` words whose word hashes are `hashes`.
    pub(crate) fn new(words: usize, hashes: impl Iterator<Item = u64>) -> Self {
        let mut keys = [0; SHAPE_WORDS];
        for (k, h) in keys.iter_mut().zip(hashes) {
            *k = h;
        }
        TopicShape { words, keys }
    }
}

impl Row {
    pub(crate) fn new(topic: &str, slots: RoaringBitmap, ids: Ids) -> Self {
        Row {
            topic: topic.into(),
            slots,
            ids,
            referenced: AtomicBool::new(false),
        }
    }

    /// Adds `subscriber` to the resolved ids unless present.
    pub(crate) fn add_id(&mut self, subscriber: SubscriberId) {
        if !self.ids.contains(&subscriber) {
            self.ids.push(subscriber);
        }
    }

    fn heap_bytes(&self) -> usize {
        2 * self.topic.len()
            + self.slots.serialized_size()
            + if self.ids.spilled() {
                self.ids.capacity() * 8
            } else {
                0
            }
            + std::mem::size_of::<Row>()
            + std::mem::size_of::<TopicShape>()
            + 16
    }
}

/// Rows by topic, at most `capacity` of them.
#[derive(Debug)]
pub(crate) struct RowTable {
    capacity: usize,
    index: FxHashMap<Key, u32>,
    rows: Vec<Row>,
    /// `shapes[i]`: the shape of `rows[i]`'s topic.
    shapes: Vec<TopicShape>,
    hand: usize,
}

impl RowTable {
    pub(crate) fn new(capacity: usize) -> Self {
        RowTable {
            capacity: capacity.max(1),
            index: FxHashMap::default(),
            rows: Vec::new(),
            shapes: Vec::new(),
            hand: 0,
        }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    /// The row of `topic`, marked as recently used.
    #[inline]
    pub(crate) fn get(&self, topic: &str) -> Option<&Row> {
        let row = &self.rows[*self.index.get(topic.as_bytes())? as usize];
        // Relaxed: the bit is a usage hint read by the next sweep under the write lock; no
        // other memory is published through it.
        if !row.referenced.load(Ordering::Relaxed) {
            row.referenced.store(true, Ordering::Relaxed);
        }
        Some(row)
    }

    /// The row of `topic` with its position.
    pub(crate) fn get_mut(&mut self, topic: &str) -> Option<(u32, &mut Row)> {
        let at = *self.index.get(topic.as_bytes())?;
        Some((at, &mut self.rows[at as usize]))
    }

    /// The rows whose topic's shape passes `keep`, with their positions (what [`Front::set`]
    /// takes).
    pub(crate) fn rows_shaped(
        &mut self,
        keep: impl Fn(&TopicShape) -> bool,
    ) -> impl Iterator<Item = (u32, &mut Row)> {
        (0..)
            .zip(self.shapes.iter().zip(self.rows.iter_mut()))
            .filter_map(move |(at, (shape, row))| keep(shape).then_some((at, row)))
    }

    /// Adds `row` unless its topic is already there, evicting one row if full, and mirrors
    /// the change into `front`.
    pub(crate) fn insert(&mut self, row: Row, shape: TopicShape, front: &Front) {
        if self.index.contains_key(row.topic.as_bytes()) {
            return;
        }
        let at = if self.rows.len() < self.capacity {
            self.rows.push(row);
            self.shapes.push(shape);
            self.rows.len() - 1
        } else {
            let at = self.victim(front);
            self.shapes[at] = shape;
            let old = std::mem::replace(&mut self.rows[at], row);
            self.index.remove(old.topic.as_bytes());
            front.remove(&old.topic);
            at
        };
        let row = &self.rows[at];
        self.index
            .insert(Key::from_slice(row.topic.as_bytes()), at as u32);
        front.set(&row.topic, at as u32, &row.ids);
        front.maybe_grow(self.rows.iter().map(|r| (&*r.topic, r.ids.as_slice())));
    }

    /// CLOCK: the first row from the hand whose reference bits (here and in `front`) are
    /// clear; clears bits on the way.
    fn victim(&mut self, front: &Front) -> usize {
        loop {
            let at = self.hand;
            self.hand = (self.hand + 1) % self.rows.len();
            let here = self.rows[at].referenced.swap(false, Ordering::Relaxed);
            if !(front.take_used(at) || here) {
                return at;
            }
        }
    }

    /// Approximate heap bytes of every row and the topic index.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.rows.iter().map(Row::heap_bytes).sum::<usize>() + self.index.capacity() * 40
    }
}
