//! The per-level rows of "High-speed message matching" (as "Fast Topic Matching Algorithm
//! Implementation For WSO2 Message Broker" implements them).
//!
//! For level `i`, each word some pattern names at `i` has a row of the slots accepting that word
//! there: the patterns naming it, those with the one-word wildcard at `i` and those whose
//! multi-word wildcard sits at or before `i`. The `other` row (words no pattern names) holds
//! only the last two groups, `multi` only the last. `null[n]` holds the slots that may end
//! after exactly `n` words (the "null" row of "High-speed message matching"; with it the
//! trailing null levels of a short topic need no AND): exact patterns of at most `n` words and multi-word patterns whose
//! wildcard can match the rest (MQTT `a/#` matches `a`, NATS `a.>` does not).
//!
//! A topic's matches are then `null[len] & row(0, w0) & row(1, w1) ...`: one AND per level,
//! stopping as soon as nothing is left; levels deeper than any pattern use the last `multi`.
//! Every row has the same width, grown (doubled) when a slot past it arrives, and holds at
//! least [`SMALL`] words (zeros past the width), so the small walk ANDs a fixed array
//! without a bounds check per word (rows are inline up to [`SMALL`] words anyway).

use hashbrown::hash_table::{Entry, HashTable};
use smallvec::SmallVec;

use super::bits::{self, Acc, Key, Row};
use super::keys::{keys_of, Keys, WordKey};
use super::packed::PackedTable;
use super::shape::Shape;
use super::simd;
use crate::dialect::Dialect;
use crate::pattern::Word;

#[derive(Debug)]
struct WordRow {
    key: Key,
    packed: u64,
    hash: u64,
    row: Row,
    /// How many slots name this word here; the row goes when none does.
    literals: u32,
}

/// The row of a short word (see [`PackedTable`]).
#[derive(Debug, Default)]
struct ShortRow {
    row: Row,
    /// How many slots name this word here; the row goes when none does.
    literals: u32,
}

#[derive(Debug)]
struct Level {
    /// Rows of words longer than [`PACKED_BYTES`](super::keys::PACKED_BYTES).
    words: HashTable<WordRow>,
    /// Rows of the other words, by packed key.
    short: PackedTable<ShortRow>,
    other: Row,
    multi: Row,
}

impl Level {
    /// The row of `word` (key `key`), if some pattern names it here.
    #[allow(clippy::inline_always)] // measured: out of line, a call per level of every lookup
    #[inline(always)]
    fn find(&self, word: &str, key: &WordKey) -> Option<&Row> {
        if key.packed != 0 {
            return self.find_short(key);
        }
        self.words
            .find(key.hash, |w| key.same(word, w.packed, &w.key))
            .map(|w| &w.row)
    }

    #[inline]
    fn row(&self, word: &str) -> &[u64] {
        self.row_keyed(word, &WordKey::of(word))
    }

    /// The row of `word`, whose key is `key`.
    #[allow(clippy::inline_always)] // as `find`
    #[inline(always)]
    fn row_keyed(&self, word: &str, key: &WordKey) -> &Row {
        self.find(word, key).unwrap_or(&self.other)
    }

    /// [`row_keyed`](Self::row_keyed) of a word of at most
    /// [`PACKED_BYTES`](super::keys::PACKED_BYTES) bytes (its key is packed): no test of which
    /// table holds it.
    #[allow(clippy::inline_always)] // as `find`
    #[inline(always)]
    fn row_short(&self, key: &WordKey) -> &Row {
        debug_assert_ne!(key.packed, 0);
        self.find_short(key).unwrap_or(&self.other)
    }

    /// The row of the word of the packed `key`, if a pattern names it.
    #[allow(clippy::inline_always)] // as `find`
    #[inline(always)]
    fn find_short(&self, key: &WordKey) -> Option<&Row> {
        self.short.get(key.packed, key.hash).map(|s| &s.row)
    }

    /// The row of `word` without the wildcard slots (MQTT `$` topics), into `acc`.
    fn and_literal(&self, word: &str, acc: &mut [u64]) -> bool {
        let Some(w) = self.find(word, &WordKey::of(word)) else {
            return false;
        };
        simd::and_into(acc, w);
        bits::and_not(acc, &self.other);
        acc.iter().any(|w| *w != 0)
    }

    fn for_each_row(&mut self, mut f: impl FnMut(&mut Row)) {
        f(&mut self.other);
        for w in &mut self.words {
            f(&mut w.row);
        }
        for s in self.short.values_mut() {
            f(&mut s.row);
        }
    }
}

/// Row width (in 64-bit words) up to which a lookup ANDs in a fixed array on the stack.
pub(crate) const SMALL: usize = bits::HEAD;

/// The first `N` (at most [`SMALL`]) words of `row`, from its inline head.
#[allow(clippy::inline_always)] // as `small_step`
#[inline(always)]
fn small_words<const N: usize>(row: &Row) -> &[u64; N] {
    row.head().first_chunk().expect("N is at most SMALL")
}

/// `acc &= row`; whether anything is left.
#[allow(clippy::inline_always)] // as `small_step`
#[inline(always)]
fn and_small<const N: usize>(acc: &mut [u64; N], row: &Row) -> bool {
    let row = small_words::<N>(row);
    let mut any = 0;
    for (a, r) in acc.iter_mut().zip(row) {
        *a &= r;
        any |= *a;
    }
    any != 0
}

/// The per-level rows of a set of slots.
#[derive(Debug)]
pub(crate) struct Levels {
    dialect: Dialect,
    width: usize,
    per_level: Vec<Level>,
    null: Vec<Row>,
}

impl Levels {
    pub(crate) fn new(dialect: Dialect) -> Self {
        Levels {
            dialect,
            width: 0,
            per_level: Vec::new(),
            null: vec![Row::zeros(SMALL)],
        }
    }

    /// Row width in 64-bit words.
    pub(crate) fn width(&self) -> usize {
        self.width
    }

    /// Words stored per row: the width, at least [`SMALL`].
    fn row_len(&self) -> usize {
        self.width.max(SMALL)
    }

    /// Bytes held by the rows (capacity, not counting map overhead).
    pub(crate) fn heap_bytes(&self) -> usize {
        let rows: usize = self
            .per_level
            .iter()
            .map(|l| {
                l.words
                    .iter()
                    .map(|w| w.key.len() + w.row.capacity() * 8 + 32)
                    .sum::<usize>()
                    + l.short
                        .values()
                        .map(|s| s.row.capacity() * 8)
                        .sum::<usize>()
                    + l.short.capacity() * (8 + std::mem::size_of::<ShortRow>())
                    + (l.other.capacity() + l.multi.capacity()) * 8
            })
            .sum();
        rows + self.null.iter().map(|r| r.capacity() * 8).sum::<usize>()
    }

    /// Makes room for bit `slot` in every row.
    pub(crate) fn grow(&mut self, slot: u32) {
        let need = slot as usize / 64 + 1;
        if need <= self.width {
            return;
        }
        self.width = need.max(self.width * 2);
        let len = self.row_len();
        for level in &mut self.per_level {
            level.for_each_row(|r| r.resize(len));
            level.multi.resize(len);
        }
        for r in &mut self.null {
            r.resize(len);
        }
    }

    fn ensure_levels(&mut self, depth: usize) {
        while self.per_level.len() < depth {
            let multi = self
                .per_level
                .last()
                .map_or_else(|| Row::zeros(self.row_len()), |l| l.multi.clone());
            self.per_level.push(Level {
                words: HashTable::new(),
                short: PackedTable::new(),
                other: multi.clone(),
                multi,
            });
            let last = self.null.last().expect("null[0] always exists").clone();
            self.null.push(last);
        }
    }

    /// Adds `slot`, a pattern of `shape` (not `Complex`) with `words`.
    pub(crate) fn insert(&mut self, slot: u32, words: &[Word], shape: Shape) {
        self.grow(slot);
        let (prefix, multi) = match shape {
            Shape::Exact { len } => (len, false),
            Shape::Prefix { prefix } => (prefix, true),
            Shape::Complex => return,
        };
        self.ensure_levels(prefix + usize::from(multi));
        for (level, word) in self.per_level.iter_mut().zip(&words[..prefix]) {
            match word {
                Word::Literal(text) => {
                    let other = &level.other;
                    let key = WordKey::of(text);
                    if key.packed != 0 {
                        let short =
                            level
                                .short
                                .get_or_insert_with(key.packed, key.hash, || ShortRow {
                                    row: other.clone(),
                                    literals: 0,
                                });
                        short.literals += 1;
                        short.row.set(slot);
                        continue;
                    }
                    let entry = match level.words.entry(
                        key.hash,
                        |w| key.same(text, w.packed, &w.key),
                        |w| w.hash,
                    ) {
                        Entry::Occupied(e) => e.into_mut(),
                        Entry::Vacant(v) => v
                            .insert(WordRow {
                                key: Key::from_slice(text.as_bytes()),
                                packed: key.packed,
                                hash: key.hash,
                                row: other.clone(),
                                literals: 0,
                            })
                            .into_mut(),
                    };
                    entry.literals += 1;
                    entry.row.set(slot);
                }
                Word::One | Word::Multi => level.for_each_row(|r| r.set(slot)),
            }
        }
        if multi {
            for level in &mut self.per_level[prefix..] {
                level.for_each_row(|r| r.set(slot));
                level.multi.set(slot);
            }
        }
        let from = shape.min_len(self.dialect);
        for r in &mut self.null[from..] {
            r.set(slot);
        }
    }

    /// Removes `slot`, inserted with the same `words` and `shape`.
    pub(crate) fn remove(&mut self, slot: u32, words: &[Word], shape: Shape) {
        let (prefix, multi) = match shape {
            Shape::Exact { len } => (len, false),
            Shape::Prefix { prefix } => (prefix, true),
            Shape::Complex => return,
        };
        for (level, word) in self.per_level.iter_mut().zip(&words[..prefix]) {
            match word {
                Word::Literal(text) => {
                    let key = WordKey::of(text);
                    if key.packed != 0 {
                        let Some(short) = level.short.get_mut(key.packed, key.hash) else {
                            unreachable!("inserted word");
                        };
                        short.literals -= 1;
                        if short.literals == 0 {
                            level.short.remove(key.packed, key.hash);
                        } else {
                            short.row.clear(slot);
                        }
                        continue;
                    }
                    let Ok(mut entry) = level
                        .words
                        .find_entry(key.hash, |w| key.same(text, w.packed, &w.key))
                    else {
                        unreachable!("inserted word");
                    };
                    let row = entry.get_mut();
                    row.literals -= 1;
                    if row.literals == 0 {
                        entry.remove();
                        if level.words.capacity() > 64
                            && level.words.len() * 4 < level.words.capacity()
                        {
                            level.words.shrink_to(level.words.len() * 2, |w| w.hash);
                        }
                    } else {
                        row.row.clear(slot);
                    }
                }
                Word::One | Word::Multi => level.for_each_row(|r| r.clear(slot)),
            }
        }
        if multi {
            for level in &mut self.per_level[prefix..] {
                level.for_each_row(|r| r.clear(slot));
                level.multi.clear(slot);
            }
        }
        for r in &mut self.null {
            r.clear(slot);
        }
    }

    /// Leaves in `acc` the slots matching `topic`; returns whether there is any. `dollar`: an
    /// MQTT topic whose first level starts with `$`, which wildcard-first filters never match.
    pub(crate) fn matching(&self, topic: &[&str], dollar: bool, acc: &mut Acc) -> bool {
        let mut keys = Keys::new();
        keys_of(topic, &mut keys);
        self.matching_keyed(topic, &keys, dollar, acc)
    }

    /// [`matching`](Self::matching) with the words' keys already computed.
    pub(crate) fn matching_keyed(
        &self,
        topic: &[&str],
        keys: &[WordKey],
        dollar: bool,
        acc: &mut Acc,
    ) -> bool {
        acc.clear();
        let depth = self.per_level.len();
        if depth == 0 {
            return false;
        }
        acc.extend_from_slice(&self.null[topic.len().min(depth)]);
        let levels = self.per_level.iter().zip(topic).zip(keys);
        for (i, ((level, word), key)) in levels.enumerate() {
            let any = if i == 0 && dollar {
                level.and_literal(word, acc)
            } else {
                simd::and_into(acc, level.row_keyed(word, key))
            };
            if !any {
                return false;
            }
        }
        if topic.len() > depth {
            return simd::and_into(acc, &self.per_level[depth - 1].multi);
        }
        acc.iter().any(|w| *w != 0)
    }

    /// [`matching_keyed`](Self::matching_keyed) for rows of at most [`SMALL`] words, in a
    /// fixed array: no copy into a growable accumulator, and every AND a fixed-length loop.
    #[inline]
    pub(crate) fn matching_small(
        &self,
        topic: &[&str],
        keys: &[WordKey],
        dollar: bool,
        acc: &mut [u64; SMALL],
    ) -> bool {
        debug_assert!(self.width <= SMALL);
        let depth = self.per_level.len();
        if depth == 0 {
            return false;
        }
        *acc = *small_words(&self.null[topic.len().min(depth)]);
        let levels = self.per_level.iter().zip(topic).zip(keys);
        for (i, ((level, word), key)) in levels.enumerate() {
            let any = if i == 0 && dollar {
                level.and_literal(word, acc)
            } else {
                and_small(acc, level.row_keyed(word, key))
            };
            if !any {
                return false;
            }
        }
        if topic.len() > depth {
            return and_small(acc, &self.per_level[depth - 1].multi);
        }
        acc.iter().any(|w| *w != 0)
    }

    /// The start of a one-pass walk ([`small_step`](Self::small_step)) when rows are at most
    /// `N` (at most [`SMALL`]) words wide: every slot, until the levels and the length narrow
    /// it. The walk is compiled for `N` of 2 and of [`SMALL`]: a narrower accumulator leaves
    /// registers free for the walk (measured: fewer spills per level).
    #[inline]
    pub(crate) fn small_start<const N: usize>(&self) -> Option<[u64; N]> {
        debug_assert!(N <= SMALL);
        (self.width <= N && !self.per_level.is_empty()).then_some([u64::MAX; N])
    }

    /// ANDs level `i`'s row of `word` (key `key`) into `acc`; whether anything is left.
    /// `dollar`: `word` is the first level of an MQTT `$` topic. `word` is read only when
    /// `key` is not packed or `dollar` is set (a caller may pass `""` otherwise).
    #[allow(clippy::inline_always)] // measured: out of line, `acc` round-trips memory
    #[inline(always)]
    pub(crate) fn small_step<const N: usize>(
        &self,
        acc: &mut [u64; N],
        i: usize,
        word: &str,
        key: &WordKey,
        dollar: bool,
    ) -> bool {
        let Some(level) = self.per_level.get(i) else {
            return true;
        };
        if dollar {
            // A copy: a slice of `acc` itself would pin it to memory on every path.
            let mut copy = *acc;
            let any = level.and_literal(word, &mut copy);
            *acc = copy;
            any
        } else {
            and_small(acc, level.row_keyed(word, key))
        }
    }

    /// [`small_step`](Self::small_step) of a word of at most
    /// [`PACKED_BYTES`](super::keys::PACKED_BYTES) bytes (`key` packed), not at an MQTT `$`
    /// topic's first level.
    #[allow(clippy::inline_always)] // as `small_step`
    #[inline(always)]
    pub(crate) fn small_step_short<const N: usize>(
        &self,
        acc: &mut [u64; N],
        i: usize,
        key: &WordKey,
    ) -> bool {
        match self.per_level.get(i) {
            Some(level) => and_small(acc, level.row_short(key)),
            None => true,
        }
    }

    /// Ends a walk over a topic of `len` words: its length row and, past the deepest level,
    /// the multi-word wildcards; whether any slot matches.
    #[allow(clippy::inline_always)] // measured: out of line, `acc` round-trips memory
    #[inline(always)]
    pub(crate) fn small_finish<const N: usize>(&self, acc: &mut [u64; N], len: usize) -> bool {
        let depth = self.per_level.len();
        let any = and_small(acc, &self.null[len.min(depth)]);
        if len > depth {
            return and_small(acc, &self.per_level[depth - 1].multi);
        }
        any
    }

    /// Whether any slot matches `topic`, evaluated one 64-slot column at a time from the left
    /// (the lowest slots first), so a match among the leftmost slots ends the work early.
    pub(crate) fn any(&self, topic: &[&str], dollar: bool) -> bool {
        let depth = self.per_level.len();
        if depth == 0 {
            return false;
        }
        if dollar {
            return self.matching(topic, dollar, &mut Acc::new());
        }
        let mut rows: SmallVec<[&[u64]; 18]> = SmallVec::new();
        rows.push(&self.null[topic.len().min(depth)]);
        for (level, word) in self.per_level.iter().zip(topic) {
            rows.push(level.row(word));
        }
        if topic.len() > depth {
            rows.push(&self.per_level[depth - 1].multi);
        }
        (0..self.width).any(|j| {
            let mut v = u64::MAX;
            for r in &rows {
                v &= r[j];
                if v == 0 {
                    return false;
                }
            }
            true
        })
    }

    /// Whether some slot matches every topic `words` (a pattern of `shape`) matches: the
    /// pattern is subsumed. `dollar`: the pattern starts with a literal `$` level (MQTT).
    pub(crate) fn covers(&self, words: &[Word], shape: Shape, dollar: bool) -> bool {
        let depth = self.per_level.len();
        if depth == 0 {
            return false;
        }
        let mut acc = Acc::new();
        let prefix = match shape {
            Shape::Exact { len } => {
                acc.extend_from_slice(&self.null[len.min(depth)]);
                if len > depth && !simd::and_into(&mut acc, &self.per_level[depth - 1].multi) {
                    return false;
                }
                len
            }
            Shape::Prefix { prefix } => {
                acc.extend_from_slice(&self.per_level[prefix.min(depth - 1)].multi);
                prefix
            }
            Shape::Complex => return false,
        };
        for (i, (level, word)) in self.per_level.iter().zip(&words[..prefix]).enumerate() {
            let any = match word {
                Word::Literal(text) if i == 0 && dollar => level.and_literal(text, &mut acc),
                Word::Literal(text) => simd::and_into(&mut acc, level.row(text)),
                Word::One | Word::Multi => simd::and_into(&mut acc, &level.other),
            };
            if !any {
                return false;
            }
        }
        acc.iter().any(|w| *w != 0)
    }
}
