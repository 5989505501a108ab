//! The hit path without a lock: a copy of the cached rows whose topic and subscribers fit in
//! one cache line, read under a per-entry sequence lock.
//!
//! Each [`Entry`] is 64 bytes of atomics: a sequence number, a meta word (tag of the topic's
//! hash, its length, how many ids follow) and six payload words holding the topic's bytes and
//! then its subscriber ids, one to a word or, when that would not fit, two 32-bit ids to a
//! word (a row whose ids fit neither way is marked overflow; its lookups take the locked path). A lookup hashes the topic (its bytes loaded as whole words, no
//! `memcmp`), scans the [`WAYS`] entries of its bucket, copies the matching entry out and
//! checks that the sequence number did not move: no atomic read-modify-write, no validation
//! (only validated topics are ever cached and the limits never change).
//!
//! Invariants:
//! - Only one writer at a time: every writing method is called under the matcher's `rows`
//!   write lock. A writer makes the sequence number odd, writes, then makes it even again.
//! - An entry present here equals its row in the [`RowTable`](super::table::RowTable) (the
//!   authority): a row's change is written here before the lock is released, a row that stops
//!   fitting or is evicted is removed. A reader that finds nothing, or sees a write in
//!   progress, takes the locked path, so an absent entry only costs time.
//! - Tables grow (doubling) as rows are cached; a retired table is emptied (readers still
//!   holding it then miss) and kept until the matcher drops, so a reader's pointer stays valid
//!   without epochs. Retired tables together are smaller than the current one.

use std::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::matcher::SubscriberId;

/// Payload words per entry: topic words first, then ids.
const PAYLOAD: usize = 6;
/// Entries probed per lookup (one bucket).
const WAYS: usize = 4;
/// Entries of the first table.
const INITIAL: usize = 64;
/// Most entries of a table (256 MiB), whatever the row capacity asked for.
const MAX_LEN: usize = 1 << 22;
/// Most reference bits; rows past it share them (they are hints).
const MAX_USED: usize = 1 << 20;

const PRESENT: u64 = 1 << 14;
/// The topic is here but its ids are not: `matches_any` can answer, lookups cannot.
const OVERFLOW: u64 = 1 << 15;
/// The ids are 32-bit, two to a word (set only when they would not fit one to a word).
const NARROW: u64 = 1 << 47;
/// The meta bits of the row position (a hint, so 31 bits are plenty).
const ROW: u64 = 0x7fff_ffff << 16;
const NIDS: u64 = 0xff;
const TAG: u64 = 0xffff << 48;
/// The meta bits that name a topic: tag, presence and length.
const SAME: u64 = TAG | PRESENT | 0x3f00;

/// One cache line.
#[repr(C, align(64))]
#[derive(Default)]
struct Entry {
    seq: AtomicU64,
    /// 0 when empty; else the hash's top 16 bits (48..64), the [`NARROW`] flag (47), the
    /// row's position in the row table (16..47), flags (14, 15), the topic's length (8..14)
    /// and the id count (0..8).
    meta: AtomicU64,
    payload: [AtomicU64; PAYLOAD],
}

struct Table {
    entries: Box<[Entry]>,
    mask: usize,
}

impl Table {
    fn new(len: usize) -> Self {
        Table {
            entries: (0..len).map(|_| Entry::default()).collect(),
            mask: len - 1,
        }
    }

    /// The entries a topic of hash `hash` may occupy: its bucket of [`WAYS`], starting at the
    /// way the hash prefers, so most topics sit in the first line probed.
    #[inline]
    fn bucket(&self, hash: u64) -> impl Iterator<Item = usize> {
        let home = (hash as usize) & self.mask;
        let base = home & !(WAYS - 1);
        (0..WAYS).map(move |i| base + ((home + i) & (WAYS - 1)))
    }
}

/// A topic loaded as whole words: what entries store and compare.
struct Loaded {
    words: [u64; PAYLOAD],
    count: usize,
    len: usize,
    hash: u64,
}

/// The last `1..8` bytes of a topic as one word. Not the bytes zero-padded but a function of
/// them that is injective for a fixed length (which the meta word also compares), built from
/// at most two loads.
#[allow(clippy::inline_always)] // measured: a call here costs the hit path a stall
#[inline(always)]
fn tail_word(b: &[u8]) -> u64 {
    let n = b.len();
    if n >= 4 {
        let lo = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let hi = u32::from_le_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]]);
        u64::from(lo) | u64::from(hi) << 32
    } else {
        u64::from(b[0]) | u64::from(b[n / 2]) << 8 | u64::from(b[n - 1]) << 16
    }
}

#[inline]
fn fold_mul(a: u64, b: u64) -> u64 {
    let full = u128::from(a) * u128::from(b);
    (full as u64) ^ ((full >> 64) as u64)
}

/// The words and hash of a topic of `N` words (`bytes.len().div_ceil(8) == N`), as
/// [`Loaded::of`] computes them, with the words in registers rather than an array sized for
/// the longest topic.
#[allow(clippy::inline_always)] // the hit path: see `Front::get`
#[inline(always)]
fn load<const N: usize>(bytes: &[u8]) -> ([u64; N], u64) {
    let mut words = [0u64; N];
    let hash = load_into(bytes, &mut words);
    (words, hash)
}

/// Fills `words` with the words of `bytes` (`words.len() == bytes.len().div_ceil(8)`): whole
/// little-endian words, then [`tail_word`] of the rest; returns the topic hash over them.
#[allow(clippy::inline_always)] // the hit path: see `Front::get`
#[inline(always)]
fn load_into(bytes: &[u8], words: &mut [u64]) -> u64 {
    let len = bytes.len();
    let mut hash = len as u64;
    for (i, w) in words.iter_mut().enumerate() {
        *w = if i * 8 + 8 <= len {
            u64::from_le_bytes(bytes[i * 8..i * 8 + 8].try_into().expect("eight bytes"))
        } else {
            tail_word(&bytes[i * 8..])
        };
        hash = fold_mul(hash ^ *w, K);
    }
    hash
}

/// What the [`SAME`] bits of the meta word of the entry of a topic of `len` bytes and hash
/// `hash` hold.
#[inline]
fn same_bits(hash: u64, len: usize) -> u64 {
    (hash & TAG) | PRESENT | (len as u64) << 8
}

/// The multiplier of the topic hash.
const K: u64 = 0x9e37_79b9_7f4a_7c15;

impl Loaded {
    /// `topic`'s words, or `None` if it is longer than a payload. Always inlined: returned
    /// through memory, its words would be re-read across a store-forwarding stall.
    #[allow(clippy::inline_always)] // see above: measured
    #[inline(always)]
    fn of(topic: &str) -> Option<Loaded> {
        let bytes = topic.as_bytes();
        let len = bytes.len();
        if len > PAYLOAD * 8 {
            return None;
        }
        let mut words = [0u64; PAYLOAD];
        let count = len.div_ceil(8);
        let hash = load_into(bytes, &mut words[..count]);
        Some(Loaded {
            words,
            count,
            len,
            hash,
        })
    }

    /// The meta word of this topic, cached at row `row`, with `nids` ids and `flags`.
    fn meta(&self, row: u32, nids: usize, flags: u64) -> u64 {
        (self.hash & TAG)
            | (u64::from(row) << 16 & ROW)
            | PRESENT
            | flags
            | (self.len as u64) << 8
            | nids as u64
    }

    /// Whether `meta` names this topic (tag and length).
    #[inline]
    fn same(&self, meta: u64) -> bool {
        meta & SAME == same_bits(self.hash, self.len)
    }
}

/// The lock-free copy of the fitting rows.
pub(crate) struct Front {
    current: AtomicPtr<Table>,
    /// Every table ever current, the last is current: what keeps `current` valid.
    tables: Mutex<Vec<Arc<Table>>>,
    /// Largest table: twice the row capacity, rounded up.
    max_len: usize,
    live: AtomicU64,
    /// CLOCK reference bits of hits here, by row position (the row table's own bits count
    /// hits on the locked path).
    used: Box<[AtomicBool]>,
}

impl Front {
    /// A front for a row table of `capacity` rows.
    pub(crate) fn new(capacity: usize) -> Self {
        let used = (0..capacity.clamp(1, MAX_USED).next_power_of_two())
            .map(|_| AtomicBool::new(false))
            .collect();
        let max_len = capacity
            .min(MAX_LEN / 2)
            .saturating_mul(2)
            .next_power_of_two()
            .max(INITIAL);
        let first = Arc::new(Table::new(INITIAL.min(max_len)));
        Front {
            current: AtomicPtr::new(Arc::as_ptr(&first).cast_mut()),
            tables: Mutex::new(vec![first]),
            max_len,
            live: AtomicU64::new(0),
            used,
        }
    }

    #[inline]
    fn table(&self) -> &Table {
        // Acquire: pairs with the Release store in `grow`, so the new table's entries are seen
        // initialised.
        let ptr = self.current.load(Ordering::Acquire);
        // SAFETY: `current` only ever holds `Arc::as_ptr` of a table that `tables` keeps alive
        // until `self` drops (none is ever removed), and tables are only accessed through
        // shared references and atomics; the returned borrow cannot outlive `self`.
        unsafe { &*ptr }
    }

    /// Whether `topic` has subscribers, when its entry is here and settled, having appended
    /// them to `out` if given; `None` sends the caller to the locked path (and leaves `out` as
    /// it was). Without `out` (`matches_any`) an entry whose ids did not fit also answers.
    /// Always inlined: out of line, the call and its register saves cost a sixth of a hit's
    /// instructions (callgrind). One [`probe`](Self::probe) per topic length in words, so a
    /// topic's words stay in registers.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn get(&self, topic: &str, out: Option<&mut Vec<SubscriberId>>) -> Option<bool> {
        let bytes = topic.as_bytes();
        match bytes.len().div_ceil(8) {
            0 => self.probe::<0>(bytes, out),
            1 => self.probe::<1>(bytes, out),
            2 => self.probe::<2>(bytes, out),
            3 => self.probe::<3>(bytes, out),
            4 => self.probe::<4>(bytes, out),
            5 => self.probe::<5>(bytes, out),
            6 => self.probe::<6>(bytes, out),
            _ => None,
        }
    }

    /// [`get`](Self::get) for a topic of `N` words.
    ///
    /// The entry is read in place, not copied out first: its topic words are compared and its
    /// ids appended straight from the atomics, then the sequence number is checked once; a
    /// torn read only ever costs a miss (the appended ids are taken back).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn probe<const N: usize>(
        &self,
        bytes: &[u8],
        mut out: Option<&mut Vec<SubscriberId>>,
    ) -> Option<bool> {
        let (words, hash) = load::<N>(bytes);
        let table = self.table();
        let want = same_bits(hash, bytes.len());
        for at in table.bucket(hash) {
            let entry = &table.entries[at];
            // Acquire: pairs with the writer's final Release store of `seq`, so the payload
            // read below is at least as new as this number.
            let before = entry.seq.load(Ordering::Acquire);
            let meta = entry.meta.load(Ordering::Relaxed);
            if before & 1 == 1 || meta & SAME != want {
                continue;
            }
            // A torn read may fail this comparison for the topic itself: a miss, since a
            // topic has at most one entry.
            if !(0..N).all(|j| entry.payload[j].load(Ordering::Relaxed) == words[j]) {
                continue;
            }
            let overflow = meta & OVERFLOW != 0;
            let nids = (meta & NIDS) as usize;
            let mut start = 0;
            if let Some(out) = out.as_deref_mut() {
                if overflow {
                    return None;
                }
                start = out.len();
                // A torn meta word may name more ids than an entry holds: a miss.
                if meta & NARROW == 0 {
                    let ids = entry.payload.get(N..N + nids)?;
                    // Written into the spare capacity, not `extend`ed (an out-of-line call, a
                    // quarter of a hit's instructions) nor pushed (a capacity check per id).
                    out.reserve(nids);
                    for (slot, w) in out.spare_capacity_mut().iter_mut().zip(ids) {
                        slot.write(w.load(Ordering::Relaxed));
                    }
                    // SAFETY: `reserve` left at least `nids` spare slots and the loop above
                    // initialised the first `nids` of them (`ids` has exactly `nids` words).
                    unsafe { out.set_len(start + nids) };
                } else {
                    let ids = entry.payload.get(N..N + nids.div_ceil(2))?;
                    for w in &ids[..nids / 2] {
                        let w = w.load(Ordering::Relaxed);
                        out.extend([w & 0xffff_ffff, w >> 32]);
                    }
                    if nids % 2 == 1 {
                        out.push(ids[nids / 2].load(Ordering::Relaxed) & 0xffff_ffff);
                    }
                }
            }
            // Acquire fence: orders the payload loads before the second `seq` load; pairs with
            // the writer's Release fence after it made `seq` odd.
            fence(Ordering::Acquire);
            if entry.seq.load(Ordering::Relaxed) != before {
                if let Some(out) = out.as_deref_mut() {
                    out.truncate(start);
                }
                return None;
            }
            // Relaxed: a usage hint for the CLOCK sweep, which runs under the write lock.
            // The position is only a hint too: a stale one marks some other row.
            let used = self.used_bit(((meta & ROW) >> 16) as usize);
            if !used.load(Ordering::Relaxed) {
                used.store(true, Ordering::Relaxed);
            }
            return Some(overflow || nids > 0);
        }
        None
    }

    /// Writes `meta` and `payload` into entry `at` of `table` under its sequence lock.
    fn write(table: &Table, at: usize, meta: u64, payload: &[u64; PAYLOAD]) {
        let entry = &table.entries[at];
        let seq = entry.seq.load(Ordering::Relaxed);
        entry.seq.store(seq + 1, Ordering::Relaxed);
        // Release fence: the odd number is visible before any payload store; pairs with the
        // reader's Acquire fence.
        fence(Ordering::Release);
        entry.meta.store(meta, Ordering::Relaxed);
        for (w, p) in entry.payload.iter().zip(payload) {
            w.store(*p, Ordering::Relaxed);
        }
        // Release: pairs with the reader's Acquire load of `seq`.
        entry.seq.store(seq + 2, Ordering::Release);
    }

    /// The entry of `key` in `table`, if any.
    fn find(table: &Table, key: &Loaded) -> Option<usize> {
        table.bucket(key.hash).find(|&at| {
            let entry = &table.entries[at];
            key.same(entry.meta.load(Ordering::Relaxed))
                && entry
                    .payload
                    .iter()
                    .zip(&key.words[..key.count])
                    .all(|(w, k)| w.load(Ordering::Relaxed) == *k)
        })
    }

    /// Makes `topic`'s entry (cached at position `row` of the row table) hold `ids`, or an
    /// overflow mark if they do not fit. Writer only (under the `rows` write lock).
    pub(crate) fn set(&self, topic: &str, row: u32, ids: &[SubscriberId]) {
        let Some(key) = Loaded::of(topic) else {
            return;
        };
        let table = self.table();
        let at = Self::find(table, &key).unwrap_or_else(|| {
            let empty = table
                .bucket(key.hash)
                .find(|&at| table.entries[at].meta.load(Ordering::Relaxed) == 0);
            if let Some(at) = empty {
                self.live.fetch_add(1, Ordering::Relaxed);
                at
            } else {
                // A full bucket: displace the entry of a row not hit lately (the first if
                // all were); its row stays cached, served by the locked path.
                let first = (key.hash as usize) & table.mask;
                table
                    .bucket(key.hash)
                    .find(|&at| {
                        let meta = table.entries[at].meta.load(Ordering::Relaxed);
                        !self
                            .used_bit(((meta & ROW) >> 16) as usize)
                            .load(Ordering::Relaxed)
                    })
                    .unwrap_or(first)
            }
        });
        let mut payload = [0u64; PAYLOAD];
        payload[..key.count].copy_from_slice(&key.words[..key.count]);
        let meta = if key.count + ids.len() <= PAYLOAD {
            payload[key.count..key.count + ids.len()].copy_from_slice(ids);
            key.meta(row, ids.len(), 0)
        } else if key.count + ids.len().div_ceil(2) <= PAYLOAD
            && ids.iter().all(|&id| u32::try_from(id).is_ok())
        {
            for (w, pair) in payload[key.count..].iter_mut().zip(ids.chunks(2)) {
                *w = pair[0] | pair.get(1).map_or(0, |&id| id << 32);
            }
            key.meta(row, ids.len(), NARROW)
        } else {
            key.meta(row, 0, OVERFLOW)
        };
        Self::write(table, at, meta, &payload);
    }

    /// Drops `topic`'s entry. Writer only.
    pub(crate) fn remove(&self, topic: &str) {
        let Some(key) = Loaded::of(topic) else {
            return;
        };
        let table = self.table();
        if let Some(at) = Self::find(table, &key) {
            Self::write(table, at, 0, &[0; PAYLOAD]);
            self.live.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Whether the entry of the row at `row` was hit since the last call, clearing the mark.
    /// Writer only.
    pub(crate) fn take_used(&self, row: usize) -> bool {
        self.used_bit(row).swap(false, Ordering::Relaxed)
    }

    /// The reference bit of the row at `row`.
    #[inline]
    fn used_bit(&self, row: usize) -> &AtomicBool {
        // The length is a power of two.
        &self.used[row & (self.used.len() - 1)]
    }

    /// Grows the table when more than a quarter full (a fuller table overflows more 4-way buckets, whose
    /// displaced rows take the locked path), refilled from `rows` (topic, ids), and
    /// retires the old one emptied. Writer only.
    pub(crate) fn maybe_grow<'a>(&self, rows: impl Iterator<Item = (&'a str, &'a [SubscriberId])>) {
        let old = self.table();
        let len = old.entries.len();
        if (self.live.load(Ordering::Relaxed) as usize) * 4 <= len || len >= self.max_len {
            return;
        }
        let next = Arc::new(Table::new(len * 2));
        let mut tables = self.tables.lock();
        let ptr = Arc::as_ptr(&next).cast_mut();
        tables.push(next);
        // Release: pairs with the Acquire load in `table`. Readers still on `old` miss once
        // its entries are cleared below, then take the locked path.
        self.current.store(ptr, Ordering::Release);
        for at in 0..len {
            if old.entries[at].meta.load(Ordering::Relaxed) != 0 {
                Self::write(old, at, 0, &[0; PAYLOAD]);
            }
        }
        drop(tables);
        self.live.store(0, Ordering::Relaxed);
        for (row, (topic, ids)) in (0..).zip(rows) {
            self.set(topic, row, ids);
        }
    }

    /// Entries held now.
    #[cfg(test)]
    pub(crate) fn live(&self) -> usize {
        self.live.load(Ordering::Relaxed) as usize
    }

    /// Heap bytes of every table, current and retired.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.tables
            .lock()
            .iter()
            .map(|t| t.entries.len() * std::mem::size_of::<Entry>())
            .sum::<usize>()
            + self.used.len()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Ids that do not fit one to a word are packed two to a word when 32-bit, and the hit
    /// path still answers; a wider id sends lookups (not `matches_any`) to the locked path.
    #[test]
    fn narrow_ids_are_served_and_wide_ones_overflow() {
        let front = Front::new(64);
        let ids: Vec<u64> = (1..=9).map(|i| i * 0x0f0f_0f0f).collect();
        front.set("a.b", 0, &ids);
        let mut out = vec![7];
        assert_eq!(front.get("a.b", Some(&mut out)), Some(true));
        assert_eq!(out[1..], ids[..]);
        let wide = [1, u64::from(u32::MAX) + 1, 3, 4, 5, 6];
        front.set("a.c", 1, &wide);
        let mut out = vec![7];
        assert_eq!(front.get("a.c", Some(&mut out)), None);
        assert_eq!(out, [7]);
        assert_eq!(front.get("a.c", None), Some(true));
        front.set("a.c", 1, &wide[..5]);
        assert_eq!(front.get("a.c", Some(&mut out)), Some(true));
        assert_eq!(out[1..], wide[..5]);
    }

    proptest! {
        /// Two topics load to the same words and length exactly when they are equal.
        #[test]
        fn loading_is_injective(a in "[ab\\x00é]{0,20}", b in "[ab\\x00é]{0,20}") {
            let (ka, kb) = (Loaded::of(&a).unwrap(), Loaded::of(&b).unwrap());
            let same = ka.len == kb.len && ka.words[..ka.count] == kb.words[..kb.count];
            prop_assert_eq!(same, a == b);
        }

        /// The hit path's per-length loading computes what the writer's does.
        #[test]
        fn loads_agree(t in "[ab\\x00é.]{0,24}") {
            let k = Loaded::of(&t).unwrap();
            let b = t.as_bytes();
            let (words, hash): (Vec<u64>, u64) = match k.count {
                0 => { let (w, h) = load::<0>(b); (w.to_vec(), h) }
                1 => { let (w, h) = load::<1>(b); (w.to_vec(), h) }
                2 => { let (w, h) = load::<2>(b); (w.to_vec(), h) }
                3 => { let (w, h) = load::<3>(b); (w.to_vec(), h) }
                4 => { let (w, h) = load::<4>(b); (w.to_vec(), h) }
                5 => { let (w, h) = load::<5>(b); (w.to_vec(), h) }
                _ => { let (w, h) = load::<6>(b); (w.to_vec(), h) }
            };
            prop_assert_eq!(&words[..], &k.words[..k.count]);
            prop_assert_eq!(hash, k.hash);
        }

        /// Set, overwrite and remove agree with a plain map, with enough topics to fill
        /// buckets and grow.
        #[test]
        fn front_agrees_with_a_map(ops in prop::collection::vec((0..300usize, 0..12usize, any::<bool>(), 0..8u8), 1..400)) {
            let front = Front::new(256);
            let mut model = std::collections::HashMap::new();
            for (t, n, keep, wide) in ops {
                let topic = format!("t.{}", "x".repeat(t % 37) + &t.to_string());
                if keep {
                    // Now and then an id past 32 bits (which does not fit an entry).
                    let ids: Vec<u64> = (0..n as u64)
                        .map(|i| if wide == 0 && i == 1 { u64::MAX - i } else { i * 0x0101_0101 })
                        .collect();
                    front.set(&topic, 0, &ids);
                    model.insert(topic.clone(), ids);
                } else {
                    front.remove(&topic);
                    model.remove(&topic);
                }
                let rows: Vec<(String, Vec<u64>)> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                front.maybe_grow(rows.iter().map(|(k, v)| (k.as_str(), v.as_slice())));
                let mut out = vec![99];
                match (front.get(&topic, Some(&mut out)), model.get(&topic)) {
                    (Some(any), Some(ids)) => {
                        prop_assert_eq!(&out[1..], ids.as_slice());
                        prop_assert_eq!(any, !ids.is_empty());
                    }
                    (None, _) => prop_assert_eq!(out.len(), 1),
                    (Some(_), None) => prop_assert!(false, "{} was removed", topic),
                }
                match (front.get(&topic, None), model.get(&topic)) {
                    (Some(any), Some(ids)) => prop_assert_eq!(any, !ids.is_empty()),
                    (Some(_), None) => prop_assert!(false, "{} was removed", topic),
                    (None, _) => {}
                }
            }
            prop_assert!(front.live() <= model.len());
        }
    }
}
