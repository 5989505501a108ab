//! Plain `u64` bitmaps: one bit per subscription slot, slot `s` at bit `s % 64` of word `s / 64`.

use smallvec::SmallVec;

/// A lookup's accumulator: inline up to 2,048 slots, so small matchers never allocate.
pub type Acc = SmallVec<[u64; 32]>;

/// Words of a row held in a fixed inline array (256 slots).
pub const HEAD: usize = 4;

/// A stored row: its first [`HEAD`] words inline in a fixed array, so the small walk reads a
/// row with neither a pointer chase nor a spill test nor a bounds check (measured: a
/// `SmallVec` costs ~40 instructions per ftm lookup in spill tests); a row wider
/// than that also lives whole on the heap (`wide`, the head mirroring its first words).
/// As a slice it is `HEAD` words while narrow, the whole row once wide.
#[derive(Debug, Clone, Default)]
pub struct Row {
    head: [u64; HEAD],
    wide: Vec<u64>,
}

impl Row {
    /// A row of `len` zero words (at least [`HEAD`] as a slice).
    pub fn zeros(len: usize) -> Row {
        let mut row = Row::default();
        row.resize(len);
        row
    }

    /// The first [`HEAD`] words.
    #[inline]
    pub fn head(&self) -> &[u64; HEAD] {
        &self.head
    }

    /// Grows the row to `len` words (new words zero); never shrinks.
    pub fn resize(&mut self, len: usize) {
        if len > HEAD {
            if self.wide.is_empty() {
                self.wide.extend_from_slice(&self.head);
            }
            if len > self.wide.len() {
                self.wide.resize(len, 0);
            }
        }
    }

    /// Sets bit `slot`.
    #[inline]
    pub fn set(&mut self, slot: u32) {
        self.update(slot, |w, bit| *w |= bit);
    }

    /// Clears bit `slot`.
    #[inline]
    pub fn clear(&mut self, slot: u32) {
        self.update(slot, |w, bit| *w &= !bit);
    }

    fn update(&mut self, slot: u32, f: impl Fn(&mut u64, u64)) {
        let i = slot as usize / 64;
        let bit = 1 << (slot % 64);
        if self.wide.is_empty() {
            f(&mut self.head[i], bit);
            return;
        }
        f(&mut self.wide[i], bit);
        if let Some(w) = self.head.get_mut(i) {
            f(w, bit);
        }
    }

    /// Words of storage (inline and heap), for memory accounting.
    pub fn capacity(&self) -> usize {
        HEAD + self.wide.capacity()
    }
}

impl std::ops::Deref for Row {
    type Target = [u64];

    #[inline]
    fn deref(&self) -> &[u64] {
        if self.wide.is_empty() {
            &self.head
        } else {
            &self.wide
        }
    }
}

/// A word or topic as a hash key: inline up to 24 bytes, compared without a pointer chase.
pub type Key = SmallVec<[u8; 24]>;

/// Sets bit `slot`.
#[inline]
pub fn set(row: &mut [u64], slot: u32) {
    row[slot as usize / 64] |= 1 << (slot % 64);
}

/// `acc &= !row` over their common length.
#[inline]
pub fn and_not(acc: &mut [u64], row: &[u64]) {
    for (a, r) in acc.iter_mut().zip(row) {
        *a &= !*r;
    }
}

/// The set bits of `row`, lowest first, found with trailing-zero counts.
#[inline]
pub fn ones(row: &[u64]) -> impl Iterator<Item = u32> + '_ {
    row.iter().enumerate().flat_map(|(i, &word)| {
        let base = (i * 64) as u32;
        let mut rest = word;
        std::iter::from_fn(move || {
            if rest == 0 {
                return None;
            }
            let bit = rest.trailing_zeros();
            rest &= rest - 1;
            Some(base + bit)
        })
    })
}
