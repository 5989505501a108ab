//! Word keys computed once per lookup: each word's hash and, for words of at most seven bytes,
//! the word packed into one `u64`, so the per-level tables compare one integer instead of
//! calling `memcmp`, and the direct map's topic hash is folded from the word hashes instead of
//! hashing the topic's bytes a second time.

use std::hash::Hasher;

use rustc_hash::FxHasher;
use smallvec::SmallVec;

use crate::topic::INLINE_WORDS;

/// Longest word that packs into a [`WordKey`].
pub(crate) const PACKED_BYTES: usize = 7;

/// A multiplier with well-spread bits (the golden ratio in 64 bits).
const K: u64 = 0x9e37_79b9_7f4a_7c15;

/// Both halves of the 128-bit product: every output bit depends on every input bit, so
/// hashbrown's low bits (bucket) and high bits (tag) are both usable.
#[inline]
fn fold_mul(a: u64, b: u64) -> u64 {
    let full = u128::from(a) * u128::from(b);
    (full as u64) ^ ((full >> 64) as u64)
}

/// The hash of a word whose key is `packed` (nonzero): what [`WordKey::packed`] computes.
#[inline]
pub(crate) fn hash_packed(packed: u64) -> u64 {
    fold_mul(packed, K)
}

/// One word's key: `packed` is nonzero exactly for words of at most [`PACKED_BYTES`] bytes
/// (their bytes, little-endian, with the length plus one in the top byte), and then equal
/// packed values mean equal words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WordKey {
    pub(crate) packed: u64,
    pub(crate) hash: u64,
}

impl WordKey {
    /// The key of `word`.
    #[inline]
    pub(crate) fn of(word: &str) -> WordKey {
        let bytes = word.as_bytes();
        if bytes.len() <= PACKED_BYTES {
            let mut packed = 0;
            for (i, &b) in bytes.iter().enumerate() {
                packed |= u64::from(b) << (8 * i);
            }
            WordKey::packed(packed, bytes.len())
        } else {
            WordKey::long(word)
        }
    }

    /// The key of a word of `len` (at most [`PACKED_BYTES`]) bytes, given its bytes packed
    /// little-endian into `bytes`.
    #[inline]
    pub(crate) fn packed(bytes: u64, len: usize) -> WordKey {
        debug_assert!(len <= PACKED_BYTES);
        let packed = bytes | (len as u64 + 1) << 56;
        WordKey {
            packed,
            hash: hash_packed(packed),
        }
    }

    /// The key of a word longer than [`PACKED_BYTES`].
    #[inline]
    pub(crate) fn long(word: &str) -> WordKey {
        let mut h = FxHasher::default();
        h.write(word.as_bytes());
        WordKey {
            packed: 0,
            hash: fold_mul(h.finish(), K),
        }
    }

    /// Whether `word` (with this key) equals `stored` (with key `stored_packed`).
    #[inline]
    pub(crate) fn same(&self, word: &str, stored_packed: u64, stored: &[u8]) -> bool {
        if self.packed != 0 {
            self.packed == stored_packed
        } else {
            stored_packed == 0 && stored == word.as_bytes()
        }
    }
}

/// The keys of a topic's words, inline up to [`INLINE_WORDS`].
pub(crate) type Keys = SmallVec<[WordKey; INLINE_WORDS]>;

/// The keys of `words`.
pub(crate) fn keys_of(words: &[&str], keys: &mut Keys) {
    keys.clear();
    keys.extend(words.iter().map(|w| WordKey::of(w)));
}

/// The hash of a whole topic from its words' keys (what the direct map is keyed by).
#[inline]
pub(crate) fn topic_hash(keys: &[WordKey]) -> u64 {
    let mut h = TopicHash::default();
    for k in keys {
        h.push(k);
    }
    h.finish(keys.len())
}

/// [`topic_hash`] computed a word at a time, for a pass that does not keep the words.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TopicHash(u64);

impl TopicHash {
    #[inline]
    pub(crate) fn push(&mut self, key: &WordKey) {
        self.0 = fold_mul(self.0 ^ key.hash, K);
    }

    /// The hash of the `words` words pushed.
    #[inline]
    pub(crate) fn finish(self, words: usize) -> u64 {
        fold_mul(self.0 ^ words as u64, K)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn packed_keys_are_equal_exactly_for_equal_words(a in "[a-c\\x00é]{0,9}", b in "[a-c\\x00é]{0,9}") {
            let (ka, kb) = (WordKey::of(&a), WordKey::of(&b));
            prop_assert_eq!(ka.same(&a, kb.packed, b.as_bytes()), a == b);
            if a == b {
                prop_assert_eq!(ka, kb);
            }
        }
    }

    #[test]
    fn topic_hash_depends_on_order_and_count() {
        let k = |ws: &[&str]| {
            let mut keys = Keys::new();
            keys_of(ws, &mut keys);
            topic_hash(&keys)
        };
        assert_ne!(k(&["a", "b"]), k(&["b", "a"]));
        assert_ne!(k(&["a"]), k(&["a", ""]));
        assert_eq!(k(&["abcdefghij", "x"]), k(&["abcdefghij", "x"]));
    }
}
