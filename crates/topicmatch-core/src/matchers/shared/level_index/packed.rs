//! Rows of short words (at most [`PACKED_BYTES`](super::keys::PACKED_BYTES) bytes) keyed by
//! their packed bytes in an open-addressed table with linear probing: a lookup is usually one
//! load and one integer compare, where a general hash table compares a group of tags first and
//! then the stored key (measured: in a general hash table the per-level probe is the largest
//! cost of an uncached lookup).
//!
//! Keys and values sit in two parallel arrays: a probe reads only keys, eight to a cache line,
//! so the array a miss walks is a quarter of the size of one of 32-byte `(key, value)`
//! entries (the direct map of ftm's 586 short topics: 8 KiB of keys instead of 64 KiB of
//! entries), and a hit's value load does not wait for the compare (its address is the home
//! place, which a predicted hit already knows).
//!
//! Invariants: `keys.len() == values.len()`, zero or a power of two; a key of 0 marks an empty
//! place (a packed key is never 0, it holds the word's length plus one in its top byte); at
//! most three quarters of the places are used, so every probe meets an empty place; every key
//! sits at or after (cyclically) its home place `hash & mask`, with no empty place in between.
//! Removal shifts the following keys back (no tombstones), which keeps the last invariant.

use super::keys::hash_packed;

/// An open-addressed map from packed word keys to `V`.
#[derive(Debug)]
pub(crate) struct PackedTable<V> {
    /// Key per place (0: empty).
    keys: Vec<u64>,
    /// Value per place (`V::default()` where the key is 0).
    values: Vec<V>,
    len: usize,
}

impl<V: Default> PackedTable<V> {
    /// An empty table (no allocation).
    pub(crate) fn new() -> Self {
        PackedTable {
            keys: Vec::new(),
            values: Vec::new(),
            len: 0,
        }
    }

    fn mask(&self) -> usize {
        self.keys.len().wrapping_sub(1)
    }

    /// The place of `packed` (hash `hash`), if present.
    #[inline]
    fn position(&self, packed: u64, hash: u64) -> Option<usize> {
        // Tested on the slice itself (not `len`): with its length known nonzero, the masked
        // index below provably stays in bounds and needs no check.
        let keys = self.keys.as_slice();
        if keys.is_empty() {
            return None;
        }
        let mask = keys.len() - 1;
        #[allow(clippy::cast_possible_truncation)] // only the low bits are wanted
        let mut i = hash as usize & mask;
        loop {
            let k = keys[i];
            if k == packed {
                return Some(i);
            }
            if k == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// The value of `packed`, whose hash is `hash` (`hash_packed(packed)`).
    #[inline]
    pub(crate) fn get(&self, packed: u64, hash: u64) -> Option<&V> {
        self.position(packed, hash).map(|i| &self.values[i])
    }

    /// The value of `packed`, mutably.
    pub(crate) fn get_mut(&mut self, packed: u64, hash: u64) -> Option<&mut V> {
        self.position(packed, hash).map(|i| &mut self.values[i])
    }

    /// The value of `packed`, inserted from `make` if absent.
    pub(crate) fn get_or_insert_with(
        &mut self,
        packed: u64,
        hash: u64,
        make: impl FnOnce() -> V,
    ) -> &mut V {
        debug_assert_ne!(packed, 0);
        if let Some(i) = self.position(packed, hash) {
            return &mut self.values[i];
        }
        if (self.len + 1) * 4 > self.keys.len() * 3 {
            self.rehash((self.keys.len() * 2).max(8));
        }
        let i = self.place(packed, hash, make());
        &mut self.values[i]
    }

    /// Puts `packed` (absent, with room left) at the first empty place from its home.
    fn place(&mut self, packed: u64, hash: u64, value: V) -> usize {
        let mask = self.mask();
        #[allow(clippy::cast_possible_truncation)] // only the low bits are wanted
        let mut i = hash as usize & mask;
        while self.keys[i] != 0 {
            i = (i + 1) & mask;
        }
        self.keys[i] = packed;
        self.values[i] = value;
        self.len += 1;
        i
    }

    /// Moves every entry into a table of `capacity` places (a power of two, with room for the
    /// entries at most three quarters full).
    fn rehash(&mut self, capacity: usize) {
        debug_assert!(capacity.is_power_of_two() && capacity * 3 >= self.len * 4);
        let keys = std::mem::replace(&mut self.keys, vec![0; capacity]);
        let values = std::mem::replace(
            &mut self.values,
            std::iter::repeat_with(V::default).take(capacity).collect(),
        );
        self.len = 0;
        for (k, v) in keys.into_iter().zip(values) {
            if k != 0 {
                self.place(k, hash_packed(k), v);
            }
        }
    }

    /// Removes `packed` and returns its value, if present; shrinks a mostly empty table.
    pub(crate) fn remove(&mut self, packed: u64, hash: u64) -> Option<V> {
        let mut hole = self.position(packed, hash)?;
        let value = std::mem::take(&mut self.values[hole]);
        self.keys[hole] = 0;
        self.len -= 1;
        let mask = self.mask();
        let mut j = (hole + 1) & mask;
        while self.keys[j] != 0 {
            #[allow(clippy::cast_possible_truncation)] // only the low bits are wanted
            let start = hash_packed(self.keys[j]) as usize & mask;
            // The key at `j` (home place `start`) may fill the hole unless `start` lies after
            // the hole (cyclically, in `hole + 1 ..= j`): moving it would put it before `start`.
            if (j.wrapping_sub(start) & mask) >= (j.wrapping_sub(hole) & mask) {
                self.keys.swap(hole, j);
                self.values.swap(hole, j);
                hole = j;
            }
            j = (j + 1) & mask;
        }
        if self.keys.len() > 64 && self.len * 8 < self.keys.len() {
            self.rehash(self.keys.len() / 2);
        }
        Some(value)
    }

    /// Every value, mutably.
    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.keys
            .iter()
            .zip(&mut self.values)
            .filter_map(|(k, v)| (*k != 0).then_some(v))
    }

    /// Every value.
    pub(crate) fn values(&self) -> impl Iterator<Item = &V> {
        self.keys
            .iter()
            .zip(&self.values)
            .filter_map(|(k, v)| (*k != 0).then_some(v))
    }

    /// Places allocated (used or not).
    pub(crate) fn capacity(&self) -> usize {
        self.keys.len()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::super::keys::WordKey;
    use super::*;

    proptest! {
        /// Inserts, removes and lookups agree with a `HashMap` through growth, collisions,
        /// back-shifting removals and shrinking.
        #[test]
        fn agrees_with_a_hash_map(ops in prop::collection::vec((any::<bool>(), "[a-d]{0,3}"), 0..400)) {
            let mut table: PackedTable<u32> = PackedTable::new();
            let mut model: HashMap<String, u32> = HashMap::new();
            for (n, (insert, word)) in ops.iter().enumerate() {
                let key = WordKey::of(word);
                let n = u32::try_from(n).unwrap();
                if *insert {
                    *table.get_or_insert_with(key.packed, key.hash, || n) += 0;
                    model.entry(word.clone()).or_insert(n);
                } else {
                    prop_assert_eq!(table.remove(key.packed, key.hash), model.remove(word));
                }
                prop_assert!(table.capacity() == 0 || table.capacity() * 3 >= 4 * model.len());
            }
            for word in ["", "a", "b", "ab", "abc", "dd", "ddd", "cab"] {
                let key = WordKey::of(word);
                prop_assert_eq!(table.get(key.packed, key.hash), model.get(word));
            }
            let mut values: Vec<u32> = table.values().copied().collect();
            let mut expected: Vec<u32> = model.values().copied().collect();
            values.sort_unstable();
            expected.sort_unstable();
            prop_assert_eq!(values, expected);
        }
    }

    #[test]
    fn many_words_grow_and_shrink() {
        let mut table: PackedTable<usize> = PackedTable::new();
        let words: Vec<String> = (0..2_000).map(|i| format!("w{i}")).collect();
        for (i, w) in words.iter().enumerate() {
            let key = WordKey::of(w);
            *table.get_or_insert_with(key.packed, key.hash, || 0) = i;
        }
        let grown = table.capacity();
        assert!(grown * 3 >= 2_000 * 4);
        for (i, w) in words.iter().enumerate().skip(10) {
            let key = WordKey::of(w);
            assert_eq!(table.remove(key.packed, key.hash), Some(i));
        }
        assert!(table.capacity() < grown / 8);
        for (i, w) in words.iter().enumerate() {
            let key = WordKey::of(w);
            assert_eq!(table.get(key.packed, key.hash), (i < 10).then_some(&i));
        }
    }
}
