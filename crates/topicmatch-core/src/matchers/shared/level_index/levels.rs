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
//!
//! Rows wider than [`SPARSE_FROM`] words keep a word named by few slots (under one slot in
//! 32 words of the row) sparse ([`Bits::Sparse`]): only the slots naming it, the rest of its
//! row being the level's `other`, read at lookup. A dense row per distinct word would take the
//! slot count's bits for every word: quadratic memory for many wildcard patterns of distinct
//! words (`dev/+/{id}/cmd`). A dense row has at least one slot naming its word for every 64
//! words of the row, so rows that wide take at most 512 bytes for each slot a level names,
//! and a word of many slots keeps the one AND of a dense row.

use hashbrown::hash_table::{Entry, HashTable};
use smallvec::SmallVec;

use super::bits::{self, Acc, Key, Row};
use super::keys::{keys_of, Keys, WordKey};
use super::packed::PackedTable;
use super::shape::Shape;
use super::simd;
use crate::dialect::Dialect;
use crate::pattern::Word;

/// Rows of more than this many words (2,048 slots) may keep a word's slots sparse.
pub(crate) const SPARSE_FROM: usize = 32;

/// The slots accepting a word at a level.
#[derive(Debug)]
enum Bits {
    /// The whole row: the slots naming the word and the level's `other`.
    Dense(Row),
    /// Only the slots naming the word, ascending: the rest of its row is the level's `other`.
    Sparse(Vec<u32>),
}

impl Default for Bits {
    /// An empty sparse row (no allocation), for the packed table's free entries.
    fn default() -> Self {
        Bits::Sparse(Vec::new())
    }
}

impl Bits {
    /// The row of a word no slot names yet, in rows of `len` words (`other`'s).
    fn new(other: &Row, len: usize) -> Bits {
        if len > SPARSE_FROM {
            Bits::Sparse(Vec::new())
        } else {
            Bits::Dense(other.clone())
        }
    }

    /// Adds `slot`, which names the word, now named by `literals` slots.
    fn add(&mut self, slot: u32, literals: u32, other: &Row, len: usize) {
        match self {
            Bits::Dense(row) => row.set(slot),
            Bits::Sparse(own) => {
                if let Err(at) = own.binary_search(&slot) {
                    own.insert(at, slot);
                }
                if !sparse_suits(literals, len) {
                    let mut row = other.clone();
                    for &s in own.iter() {
                        row.set(s);
                    }
                    *self = Bits::Dense(row);
                }
            }
        }
    }

    /// Removes `slot`, which named the word, now named by `literals` (at least one) slots.
    fn remove(&mut self, slot: u32, literals: u32, other: &Row, len: usize) {
        match self {
            Bits::Dense(row) => {
                row.clear(slot);
                // Sparse again under half the count that makes it dense, so that a word at
                // the border does not change form at every subscribe and unsubscribe.
                if sparse_suits(literals.saturating_mul(2), len) {
                    *self = Bits::Sparse(own_of(row, other));
                }
            }
            Bits::Sparse(own) => {
                if let Ok(at) = own.binary_search(&slot) {
                    own.remove(at);
                }
            }
        }
    }

    /// Makes the row `len` words wide (the level's `other` still its old width), sparse if
    /// [`sparse_suits`] says so at that width.
    fn widen(&mut self, literals: u32, other: &Row, len: usize) {
        if let Bits::Dense(row) = self {
            if sparse_suits(literals, len) {
                *self = Bits::Sparse(own_of(row, other));
            } else {
                row.resize(len);
            }
        }
    }

    /// Heap bytes held.
    fn bytes(&self) -> usize {
        match self {
            Bits::Dense(row) => row.capacity() * 8,
            Bits::Sparse(own) => own.capacity() * 4,
        }
    }
}

/// Whether a word named by `literals` slots is kept sparse in rows of `len` words: rows wider
/// than [`SPARSE_FROM`], and fewer slots than one for every 32 words of the row (so that
/// [`and_sparse`] ANDs runs of 32 words on average between them).
fn sparse_suits(literals: u32, len: usize) -> bool {
    len > SPARSE_FROM && (literals as usize).saturating_mul(32) < len
}

/// The slots of a dense word row that name the word: those not in its level's `other`.
fn own_of(row: &[u64], other: &[u64]) -> Vec<u32> {
    debug_assert_eq!(row.len(), other.len());
    let own: Vec<u64> = row.iter().zip(other).map(|(r, o)| r & !o).collect();
    bits::ones(&own).collect()
}

/// `acc &= other | own` (`own` ascending slots): a sparse word's row; whether anything is
/// left. The words of `acc` between those holding `own`'s slots take the AND of `other` at
/// full speed ([`simd::and_into`]). Out of line: rows this wide are looked up seldom (a cached
/// topic is not), and inlined it would weigh on the dense rows' loop.
#[inline(never)]
fn and_sparse(acc: &mut [u64], other: &[u64], own: &[u32]) -> bool {
    let len = acc.len().min(other.len());
    let mut any = false;
    let mut from = 0;
    for (j, mine) in ByWord(own) {
        if j >= len {
            break;
        }
        any |= simd::and_into(&mut acc[from..j], &other[from..j]);
        acc[j] &= other[j] | mine;
        any |= acc[j] != 0;
        from = j + 1;
    }
    any |= simd::and_into(&mut acc[from..len], &other[from..len]);
    any
}

/// `acc &= own` (`own` ascending slots); whether anything is left.
fn keep_only(acc: &mut [u64], own: &[u32]) -> bool {
    let mut groups = ByWord(own).peekable();
    let mut any = 0;
    for (j, a) in acc.iter_mut().enumerate() {
        *a &= groups
            .next_if(|&(at, _)| at == j)
            .map_or(0, |(_, mine)| mine);
        any |= *a;
    }
    any != 0
}

/// Ascending slots grouped by the row word holding them: (word index, their bits in it).
#[derive(Debug)]
struct ByWord<'a>(&'a [u32]);

impl Iterator for ByWord<'_> {
    type Item = (usize, u64);

    fn next(&mut self) -> Option<(usize, u64)> {
        let j = *self.0.first()? as usize / 64;
        let mut mine = 0;
        while let Some((&slot, rest)) = self.0.split_first().filter(|(&s, _)| s as usize / 64 == j)
        {
            mine |= 1 << (slot % 64);
            self.0 = rest;
        }
        Some((j, mine))
    }
}

#[derive(Debug)]
struct WordRow {
    key: Key,
    packed: u64,
    hash: u64,
    row: Bits,
    /// How many slots name this word here; the row goes when none does.
    literals: u32,
}

/// The row of a short word (see [`PackedTable`]).
#[derive(Debug, Default)]
struct ShortRow {
    row: Bits,
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
    /// How many slots `other` holds (each slot sets it at most once): with none, a word no
    /// pattern names here matches nothing, and a sparse word's own slots are its whole row.
    wild: u32,
    /// How many slots `multi` holds.
    multi_slots: u32,
}

impl Level {
    /// The row of `word` (key `key`), if some pattern names it here.
    #[allow(clippy::inline_always)] // measured: out of line, a call per level of every lookup
    #[inline(always)]
    fn find(&self, word: &str, key: &WordKey) -> Option<&Bits> {
        if key.packed != 0 {
            return self.find_short(key);
        }
        self.words
            .find(key.hash, |w| key.same(word, w.packed, &w.key))
            .map(|w| &w.row)
    }

    /// The row of the word of the packed `key`, if a pattern names it.
    #[allow(clippy::inline_always)] // as `find`
    #[inline(always)]
    fn find_short(&self, key: &WordKey) -> Option<&Bits> {
        self.short.get(key.packed, key.hash).map(|s| &s.row)
    }

    /// `acc &=` the row of `word` (key `key`): `other` if no pattern names it; whether
    /// anything is left.
    #[allow(clippy::inline_always)] // as `find`
    #[inline(always)]
    fn and_word(&self, acc: &mut [u64], word: &str, key: &WordKey) -> bool {
        self.and_found(acc, self.find(word, key))
    }

    /// What [`find`](Self::find) found, as a whole row (`other` if no pattern names the
    /// word) or a sparse word's own slots (the rest of its row is `other`).
    #[allow(clippy::inline_always)] // as `find`
    #[inline(always)]
    fn row_of<'a>(&'a self, found: Option<&'a Bits>) -> Result<&'a Row, &'a [u32]> {
        match found {
            None => Ok(&self.other),
            Some(Bits::Dense(row)) => Ok(row),
            Some(Bits::Sparse(own)) => Err(own),
        }
    }

    #[allow(clippy::inline_always)] // as `find`
    #[inline(always)]
    fn and_found(&self, acc: &mut [u64], found: Option<&Bits>) -> bool {
        match self.row_of(found) {
            Ok(row) => simd::and_into(acc, row),
            Err(own) => and_sparse(acc, &self.other, own),
        }
    }

    /// [`and_word`](Self::and_word) for rows of at most `N` words, in a fixed array.
    #[allow(clippy::inline_always)] // as `find`
    #[inline(always)]
    fn and_small_found<const N: usize>(&self, acc: &mut [u64; N], found: Option<&Bits>) -> bool {
        match self.row_of(found) {
            Ok(row) => and_small(acc, row),
            // Rows this narrow are dense (see `SPARSE_FROM`); the sparse case stays right.
            Err(own) => and_sparse(acc, &self.other, own),
        }
    }

    /// The row of `word` without the wildcard slots (MQTT `$` topics), into `acc`.
    fn and_literal(&self, word: &str, acc: &mut [u64]) -> bool {
        match self.find(word, &WordKey::of(word)) {
            None => false,
            Some(Bits::Dense(w)) => {
                simd::and_into(acc, w);
                bits::and_not(acc, &self.other);
                acc.iter().any(|w| *w != 0)
            }
            Some(Bits::Sparse(own)) => keep_only(acc, own),
        }
    }

    /// Sets (`on`) or clears wildcard slot `slot`'s bit in `other` and every dense word row
    /// (a sparse one reads `other` for its rest), and counts it in `wild`.
    fn set_wildcard(&mut self, slot: u32, on: bool) {
        let apply = |row: &mut Row| {
            if on {
                row.set(slot);
            } else {
                row.clear(slot);
            }
        };
        if on {
            self.wild += 1;
        } else {
            self.wild -= 1;
        }
        apply(&mut self.other);
        for w in &mut self.words {
            if let Bits::Dense(row) = &mut w.row {
                apply(row);
            }
        }
        for s in self.short.values_mut() {
            if let Bits::Dense(row) = &mut s.row {
                apply(row);
            }
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

/// Row words [`Levels::any`] ANDs at a time (1,024 slots), in a fixed array; a block's ANDs
/// stop at the first row leaving nothing.
const BLOCK: usize = 16;

/// A row as [`Levels::any`] reads it, a block at a time.
enum BlockRow<'a> {
    /// A whole row.
    Dense(&'a [u64]),
    /// A sparse word's row: its level's `other` and its own slots by row word, those of the
    /// blocks read so far taken.
    Sparse(&'a [u64], std::iter::Peekable<ByWord<'a>>),
}

impl BlockRow<'_> {
    /// `acc &=` the row's words `from..to` (at most [`BLOCK`]); whether anything is left.
    #[inline]
    fn and_block(&mut self, acc: &mut [u64; BLOCK], from: usize, to: usize) -> bool {
        let mut words = [0; BLOCK];
        let words: &[u64; BLOCK] = match self {
            BlockRow::Dense(row) => {
                if let Some(full) = row[from..].first_chunk() {
                    full
                } else {
                    words[..to - from].copy_from_slice(&row[from..to]);
                    &words
                }
            }
            BlockRow::Sparse(other, groups) => {
                words[..to - from].copy_from_slice(&other[from..to]);
                // Slots before `from` were passed by an earlier block's early stop.
                while groups.next_if(|&(at, _)| at < from).is_some() {}
                while let Some((at, mine)) = groups.next_if(|&(at, _)| at < to) {
                    words[at - from] |= mine;
                }
                &words
            }
        };
        let mut any = 0;
        for (a, w) in acc.iter_mut().zip(words) {
            *a &= w;
            any |= *a;
        }
        any != 0
    }
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
                    .map(|w| w.key.len() + w.row.bytes() + 32)
                    .sum::<usize>()
                    + l.short.values().map(|s| s.row.bytes()).sum::<usize>()
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
            let other = &level.other;
            for w in &mut level.words {
                w.row.widen(w.literals, other, len);
            }
            for s in level.short.values_mut() {
                s.row.widen(s.literals, other, len);
            }
            level.other.resize(len);
            level.multi.resize(len);
        }
        for r in &mut self.null {
            r.resize(len);
        }
    }

    fn ensure_levels(&mut self, depth: usize) {
        while self.per_level.len() < depth {
            let (multi, multi_slots) = self.per_level.last().map_or_else(
                || (Row::zeros(self.row_len()), 0),
                |l| (l.multi.clone(), l.multi_slots),
            );
            self.per_level.push(Level {
                words: HashTable::new(),
                short: PackedTable::new(),
                other: multi.clone(),
                multi,
                wild: multi_slots,
                multi_slots,
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
        let len = self.row_len();
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
                                    row: Bits::new(other, len),
                                    literals: 0,
                                });
                        short.literals += 1;
                        short.row.add(slot, short.literals, other, len);
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
                                row: Bits::new(other, len),
                                literals: 0,
                            })
                            .into_mut(),
                    };
                    entry.literals += 1;
                    entry.row.add(slot, entry.literals, other, len);
                }
                Word::One | Word::Multi => level.set_wildcard(slot, true),
            }
        }
        if multi {
            for level in &mut self.per_level[prefix..] {
                level.set_wildcard(slot, true);
                level.multi.set(slot);
                level.multi_slots += 1;
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
        let len = self.row_len();
        for (level, word) in self.per_level.iter_mut().zip(&words[..prefix]) {
            match word {
                Word::Literal(text) => {
                    let other = &level.other;
                    let key = WordKey::of(text);
                    if key.packed != 0 {
                        let Some(short) = level.short.get_mut(key.packed, key.hash) else {
                            unreachable!("inserted word");
                        };
                        short.literals -= 1;
                        if short.literals == 0 {
                            level.short.remove(key.packed, key.hash);
                        } else {
                            short.row.remove(slot, short.literals, other, len);
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
                        row.row.remove(slot, row.literals, other, len);
                    }
                }
                Word::One | Word::Multi => level.set_wildcard(slot, false),
            }
        }
        if multi {
            for level in &mut self.per_level[prefix..] {
                level.set_wildcard(slot, false);
                level.multi.clear(slot);
                level.multi_slots -= 1;
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
                level.and_word(acc, word, key)
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
                level.and_small_found(acc, level.find(word, key))
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
            level.and_small_found(acc, level.find(word, key))
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
            Some(level) => level.and_small_found(acc, level.find_short(key)),
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

    /// Whether any slot matches `topic`, evaluated one [`BLOCK`] of row words at a time from
    /// the left (the lowest slots first), so a match among the leftmost slots ends the work
    /// early. At a level holding no wildcard slot, a word no pattern names there ends it at
    /// once, and only the blocks of the fewest slots a sparse word names there are read.
    pub(crate) fn any<'a>(&'a self, topic: &[&str], dollar: bool) -> bool {
        let depth = self.per_level.len();
        if depth == 0 {
            return false;
        }
        if dollar {
            return self.matching(topic, dollar, &mut Acc::new());
        }
        // A sparse word's own slots at a level of no wildcard slot: no other block matches.
        let mut only: Option<&[u32]> = None;
        // Each level's row of the topic's word, and whether the level holds no wildcard slot.
        let mut found: SmallVec<[(&Level, Option<&Bits>, bool); 16]> = SmallVec::new();
        for (level, word) in self.per_level.iter().zip(topic) {
            let bits = level.find(word, &WordKey::of(word));
            let closed = level.wild == 0;
            if closed {
                match bits {
                    None => return false,
                    Some(Bits::Sparse(own)) if only.map_or(true, |o| own.len() < o.len()) => {
                        only = Some(own);
                    }
                    Some(_) => {}
                }
            }
            found.push((level, bits, closed));
        }
        let block_row =
            |&(level, bits, _): &(&'a Level, Option<&'a Bits>, bool)| match level.row_of(bits) {
                Ok(row) => BlockRow::Dense(row),
                Err(own) => BlockRow::Sparse(&level.other, ByWord(own).peekable()),
            };
        // The rows of levels of no wildcard slot, the deepest first, then the others: a
        // block's ANDs stop at the first zero, and a row of a word's own slots alone is the
        // likeliest to be zero (topics name the general first, the particular last).
        let mut rows: SmallVec<[BlockRow<'_>; 18]> = found
            .iter()
            .rev()
            .filter(|(_, _, closed)| *closed)
            .map(block_row)
            .collect();
        rows.push(BlockRow::Dense(&self.null[topic.len().min(depth)]));
        rows.extend(found.iter().filter(|(_, _, closed)| !closed).map(block_row));
        if topic.len() > depth {
            rows.push(BlockRow::Dense(&self.per_level[depth - 1].multi));
        }
        let width = self.width;
        let mut block = |b: usize| {
            let from = b * BLOCK;
            let to = width.min(from + BLOCK);
            let mut acc = [u64::MAX; BLOCK];
            rows.iter_mut().all(|row| row.and_block(&mut acc, from, to))
        };
        match only {
            Some(own) => {
                let mut last = None;
                ByWord(own).any(|(j, _)| {
                    let b = j / BLOCK;
                    last.replace(b) != Some(b) && block(b)
                })
            }
            None => (0..width.div_ceil(BLOCK)).any(block),
        }
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
                Word::Literal(text) => level.and_word(&mut acc, text, &WordKey::of(text)),
                Word::One | Word::Multi => simd::and_into(&mut acc, &level.other),
            };
            if !any {
                return false;
            }
        }
        acc.iter().any(|w| *w != 0)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::matcher::Config;
    use crate::pattern::Pattern;
    use crate::topic::parse_topic;

    impl Levels {
        /// Word rows kept sparse, and dense, over every level.
        fn kinds(&self) -> (usize, usize) {
            let rows = self.per_level.iter().flat_map(|l| {
                l.words
                    .iter()
                    .map(|w| &w.row)
                    .chain(l.short.values().map(|s| &s.row))
            });
            rows.fold((0, 0), |(sparse, dense), row| match row {
                Bits::Sparse(_) => (sparse + 1, dense),
                Bits::Dense(_) => (sparse, dense + 1),
            })
        }

        /// Asserts that every level counts the slots of its `other` and `multi` rows.
        fn check_counts(&self) -> Result<(), TestCaseError> {
            let ones = |row: &Row| bits::ones(row).count();
            for (i, l) in self.per_level.iter().enumerate() {
                prop_assert_eq!(l.wild as usize, ones(&l.other), "other at level {}", i);
                prop_assert_eq!(
                    l.multi_slots as usize,
                    ones(&l.multi),
                    "multi at level {}",
                    i
                );
            }
            Ok(())
        }

        /// The slots matching `words`, ascending.
        fn slots(&self, words: &[&str], dollar: bool) -> Vec<u32> {
            let mut acc = Acc::new();
            if self.matching(words, dollar, &mut acc) {
                bits::ones(&acc).collect()
            } else {
                Vec::new()
            }
        }
    }

    /// `words` as a pattern of `dialect` (`*`, `#` in the dialect's own spelling), if it is
    /// one the rows hold: valid, with a wildcard (the others are the index's direct map) and
    /// not complex (its word trie).
    fn pattern(dialect: Dialect, words: &[&str]) -> Option<Pattern> {
        let sep = char::from(dialect.separator()).to_string();
        let text = words
            .iter()
            .map(|w| match (dialect, *w) {
                (Dialect::Mqtt, "*") => "+",
                (Dialect::Nats, "#") => ">",
                _ => w,
            })
            .collect::<Vec<_>>()
            .join(&sep);
        let p = Pattern::parse(dialect, &Config::new(dialect).limits, &text).ok()?;
        (p.has_wildcards() && Shape::of(&p) != Shape::Complex).then_some(p)
    }

    fn dollar_pattern(p: &Pattern) -> bool {
        p.dialect() == Dialect::Mqtt
            && matches!(p.words().first(), Some(Word::Literal(w)) if w.starts_with('$'))
    }

    /// Checks `levels` (pattern `i` at slot `at[i]`, live where `live[i]`) against every
    /// pattern's own matching, on `topic`.
    fn check(
        levels: &Levels,
        patterns: &[Pattern],
        at: &[u32],
        live: &[bool],
        dialect: Dialect,
        topic: &str,
    ) -> Result<(), TestCaseError> {
        let Ok(words) = parse_topic(dialect, &Config::new(dialect).limits, topic) else {
            return Ok(());
        };
        let dollar = dialect == Dialect::Mqtt && words.first().is_some_and(|w| w.starts_with('$'));
        let mut expected: Vec<u32> = (0..patterns.len())
            .filter(|&i| live[i] && patterns[i].matches_words(&words))
            .map(|i| at[i])
            .collect();
        expected.sort_unstable();
        prop_assert_eq!(
            levels.slots(&words, dollar),
            expected.clone(),
            "{:?}",
            topic
        );
        prop_assert_eq!(
            levels.any(&words, dollar),
            !expected.is_empty(),
            "{:?}",
            topic
        );
        Ok(())
    }

    const PATTERN_WORDS: &[&str] = &["a", "b", "", "$s", "ninechars", "*", "#"];
    const TOPIC_WORDS: &[&str] = &["a", "b", "", "$s", "ninechars", "c"];

    proptest! {
        /// The same patterns at slots past `SPARSE_FROM` rows (sparse word rows) and at the
        /// first slots (dense ones) match, are found by `any` and cover exactly alike, and
        /// as each pattern's own matching says, before and after removing some.
        #[test]
        fn sparse_rows_answer_as_dense_rows(
            texts in prop::collection::vec(
                prop::collection::vec(prop::sample::select(PATTERN_WORDS), 0..5), 1..24),
            spread in prop::collection::btree_set(0u32..60_000, 24),
            removed in prop::collection::vec(any::<bool>(), 24),
            topics in prop::collection::vec(
                prop::collection::vec(prop::sample::select(TOPIC_WORDS), 0..6), 1..16),
        ) {
            let spread: Vec<u32> = spread.into_iter().collect();
            for dialect in Dialect::ALL {
                let mut patterns: Vec<Pattern> = Vec::new();
                for words in &texts {
                    if let Some(p) = pattern(dialect, words) {
                        if !patterns.contains(&p) {
                            patterns.push(p);
                        }
                    }
                }
                let dense_at: Vec<u32> = (0..patterns.len() as u32).collect();
                let sparse_at = &spread[..patterns.len()];
                let mut dense = Levels::new(dialect);
                let mut sparse = Levels::new(dialect);
                for (i, p) in patterns.iter().enumerate() {
                    dense.insert(dense_at[i], p.words(), Shape::of(p));
                    sparse.insert(sparse_at[i], p.words(), Shape::of(p));
                }
                let mut live = vec![true; patterns.len()];
                for round in 0..2 {
                    dense.check_counts()?;
                    sparse.check_counts()?;
                    let sep = char::from(dialect.separator()).to_string();
                    for topic in &topics {
                        let topic = topic.join(&sep);
                        check(&dense, &patterns, &dense_at, &live, dialect, &topic)?;
                        check(&sparse, &patterns, sparse_at, &live, dialect, &topic)?;
                    }
                    for q in &patterns {
                        let (shape, dollar) = (Shape::of(q), dollar_pattern(q));
                        prop_assert_eq!(
                            dense.covers(q.words(), shape, dollar),
                            sparse.covers(q.words(), shape, dollar),
                            "covers {:?}", q
                        );
                    }
                    if round == 0 {
                        for (i, p) in patterns.iter().enumerate() {
                            if removed[i] {
                                live[i] = false;
                                dense.remove(dense_at[i], p.words(), Shape::of(p));
                                sparse.remove(sparse_at[i], p.words(), Shape::of(p));
                            }
                        }
                    }
                }
                // A word has at most 24 slots: past 32 x 24 row words, every one is sparse.
                if sparse.width > 32 * 24 {
                    prop_assert_eq!(sparse.kinds().1, 0, "a word of few slots kept dense");
                }
            }
        }
    }

    /// A word goes dense from one slot per 32 row words, sparse again under one per 64, and
    /// a dense word of few slots goes sparse when the rows widen past `SPARSE_FROM`; matching
    /// stays exact throughout, on both of a sparse row's paths (few slots and many).
    #[test]
    fn a_word_row_changes_form_with_its_slot_count() {
        let dialect = Dialect::Mqtt;
        let p = pattern(dialect, &["x", "*", "w"]).unwrap();
        let q = pattern(dialect, &["x", "#"]).unwrap();
        let mut levels = Levels::new(dialect);
        let mut p_slots: Vec<u32> = (0..40).collect();
        let expect = |levels: &Levels, p_slots: &[u32]| {
            let all: Vec<u32> = p_slots.iter().copied().chain([200_000]).collect();
            assert_eq!(levels.slots(&["x", "y", "w"], false), all);
            assert_eq!(levels.slots(&["x", "y", "v"], false), vec![200_000]);
            assert_eq!(levels.slots(&["x"], false), vec![200_000]);
            assert!(levels.slots(&["y", "y", "w"], false).is_empty());
        };
        // Narrow rows: every word dense.
        for &slot in &p_slots {
            levels.insert(slot, p.words(), Shape::of(&p));
        }
        assert_eq!(levels.kinds(), (0, 2));
        // Widened to 3,126 words: `x` (41 slots) and `w` (40) go sparse.
        levels.insert(200_000, q.words(), Shape::of(&q));
        assert_eq!(levels.width(), 3_126);
        assert_eq!(levels.kinds(), (2, 0));
        expect(&levels, &p_slots);
        // From 98 slots (3,126 / 32), dense.
        for slot in 40..120 {
            levels.insert(slot, p.words(), Shape::of(&p));
            p_slots.push(slot);
        }
        assert_eq!(levels.kinds(), (0, 2));
        expect(&levels, &p_slots);
        // Under 49 slots (3,126 / 64), sparse again.
        for slot in 0..60 {
            levels.remove(slot, p.words(), Shape::of(&p));
        }
        p_slots.drain(..60);
        assert_eq!(levels.kinds(), (0, 2), "60 slots left");
        for slot in 60..110 {
            levels.remove(slot, p.words(), Shape::of(&p));
        }
        p_slots.drain(..50);
        assert_eq!(levels.kinds(), (2, 0));
        expect(&levels, &p_slots);
        // A few slots: the other path of a sparse row.
        assert_eq!(p_slots.len(), 10);
    }

    /// At a level no wildcard slot reaches, `any` stops at a word no pattern names there and
    /// reads only the columns of a sparse word's own slots; a wildcard slot arriving there,
    /// or a multi-word one before it, makes every word match again, and leaving restores it.
    #[test]
    fn any_at_a_level_of_no_wildcard() {
        let dialect = Dialect::Mqtt;
        let mut levels = Levels::new(dialect);
        for i in 0..20_000u32 {
            let p = pattern(dialect, &["a", "*", &format!("{i}")]).unwrap();
            levels.insert(i, p.words(), Shape::of(&p));
        }
        let hit = |levels: &Levels, words: &[&str]| {
            let any = levels.any(words, false);
            assert_eq!(any, !levels.slots(words, false).is_empty(), "{words:?}");
            any
        };
        assert!(hit(&levels, &["a", "q", "12345"]));
        assert!(hit(&levels, &["a", "q", "0"]));
        assert!(hit(&levels, &["a", "q", "19999"]));
        assert!(!hit(&levels, &["a", "q", "none"]));
        assert!(!hit(&levels, &["b", "q", "12345"]));
        assert_eq!(levels.kinds().1, 1, "only `a` dense");
        for late in [["a", "*", "*"], ["a", "#", ""], ["*", "#", ""]] {
            let words: Vec<&str> = late.iter().copied().filter(|w| !w.is_empty()).collect();
            let p = pattern(dialect, &words).unwrap();
            levels.insert(30_000, p.words(), Shape::of(&p));
            levels.check_counts().unwrap();
            assert!(hit(&levels, &["a", "q", "none"]), "{late:?}");
            assert_eq!(
                hit(&levels, &["b", "q", "none"]),
                late[0] == "*",
                "{late:?}"
            );
            levels.remove(30_000, p.words(), Shape::of(&p));
            levels.check_counts().unwrap();
            assert!(!hit(&levels, &["a", "q", "none"]), "{late:?}");
            assert!(hit(&levels, &["a", "q", "77"]), "{late:?}");
        }
    }

    /// Where every level past the first holds a wildcard slot, `any` reads every block: a
    /// match at either edge of a block, or in the last block of a row whose width is no
    /// multiple of [`BLOCK`], is found, and a topic none matches reads them all.
    #[test]
    fn any_finds_a_slot_in_any_block() {
        let dialect = Dialect::Mqtt;
        let words = |w: &[&str]| pattern(dialect, w).unwrap();
        let per_block = BLOCK as u32 * 64;
        for target in [
            0,
            3,
            63,
            64,
            per_block - 1,
            per_block,
            per_block + 64,
            5_000,
        ] {
            for (own, topic) in [
                (["a", "*", "t"], ["a", "q", "t"]),
                (["a", "t", "*"], ["a", "t", "q"]),
            ] {
                let mut levels = Levels::new(dialect);
                for (slot, filler) in [(1, ["a", "*", "f"]), (2, ["a", "f", "*"])] {
                    let p = words(&filler);
                    levels.insert(slot, p.words(), Shape::of(&p));
                }
                let p = words(&own);
                levels.insert(target, p.words(), Shape::of(&p));
                assert_eq!(levels.slots(&topic, false), [target], "{own:?} at {target}");
                assert!(levels.any(&topic, false), "{own:?} at {target}");
                assert!(
                    !levels.any(&["a", "q", "none"], false),
                    "{own:?} at {target}"
                );
                levels.remove(target, p.words(), Shape::of(&p));
                assert!(!levels.any(&topic, false), "{own:?} removed from {target}");
            }
        }
    }

    /// Many wildcard patterns of distinct words (`a/+/{i}`) take memory in proportion to
    /// their count: a dense row per word would take 20,000 x 20,000 bits (50 MB).
    #[test]
    fn distinct_words_take_linear_memory() {
        let dialect = Dialect::Mqtt;
        let mut levels = Levels::new(dialect);
        for i in 0..20_000u32 {
            let word = format!("{i}");
            let p = pattern(dialect, &["a", "*", &word]).unwrap();
            levels.insert(i, p.words(), Shape::of(&p));
        }
        let bytes = levels.heap_bytes();
        assert!(bytes < 4_000_000, "{bytes} bytes for 20,000 patterns");
        assert_eq!(levels.slots(&["a", "q", "12345"], false), vec![12_345]);
    }
}
