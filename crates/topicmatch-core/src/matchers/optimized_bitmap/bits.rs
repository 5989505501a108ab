//! Plain `u64` bitmaps: one bit per subscription slot, slot `s` at bit `s % 64` of word `s / 64`.

use smallvec::SmallVec;

/// A lookup's accumulator: inline up to 2,048 slots, so small matchers never allocate.
pub type Acc = SmallVec<[u64; 32]>;

/// A stored row: inline up to 256 slots, so small matchers read rows without a pointer chase.
pub type Row = SmallVec<[u64; 4]>;

/// A word or topic as a hash key: inline up to 24 bytes, compared without a pointer chase.
pub type Key = SmallVec<[u8; 24]>;

/// Sets bit `slot`.
#[inline]
pub fn set(row: &mut [u64], slot: u32) {
    row[slot as usize / 64] |= 1 << (slot % 64);
}

/// Clears bit `slot`.
#[inline]
pub fn clear(row: &mut [u64], slot: u32) {
    row[slot as usize / 64] &= !(1 << (slot % 64));
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
