//! Direct (wildcard-free) subscriptions: one hash table keyed by the topic they name, hashed
//! from the topic's word keys ([`topic_hash`]) so a lookup that already keyed its words for the
//! level rows does not hash the topic's bytes again. Topics of at most [`PACKED_BYTES`] bytes
//! sit apart, keyed by their bytes packed into one integer ([`PackedTable`]): one compare, no
//! byte comparison.

use hashbrown::hash_table::{Entry, HashTable};
use smallvec::SmallVec;

use super::bits::Key;
use super::keys::{hash_packed, topic_hash, Keys, TopicHash, WordKey, PACKED_BYTES};
use super::packed::PackedTable;
use crate::dialect::Dialect;
use crate::matcher::SubscriberId;
use crate::topic::split_words;

#[derive(Debug)]
struct Topic {
    text: Key,
    hash: u64,
    subs: SmallVec<[SubscriberId; 2]>,
}

/// `a == b`, without a `memcmp` call for the short keys topics usually are: at most two
/// (overlapping) loads per side.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let u32_at = |s: &[u8], i: usize| u32::from_le_bytes([s[i], s[i + 1], s[i + 2], s[i + 3]]);
    let u64_at = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().expect("8"));
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=8 => u32_at(a, 0) == u32_at(b, 0) && u32_at(a, n - 4) == u32_at(b, n - 4),
        9..=16 => u64_at(a, 0) == u64_at(b, 0) && u64_at(a, n - 8) == u64_at(b, n - 8),
        _ => a == b,
    }
}

/// Subscribers of one topic.
type Subs = SmallVec<[SubscriberId; 2]>;

/// `topic`'s bytes packed with its length (as a short word's key), if it has at most
/// [`PACKED_BYTES`] bytes.
#[inline]
fn pack(topic: &[u8]) -> Option<u64> {
    if topic.len() > PACKED_BYTES {
        return None;
    }
    let n = topic.len();
    let u32_at = |i: usize| {
        u64::from(u32::from_le_bytes([
            topic[i],
            topic[i + 1],
            topic[i + 2],
            topic[i + 3],
        ]))
    };
    let packed = if n >= 4 {
        // Two overlapping loads: bytes `n - 4 ..` shifted over the first four.
        u32_at(0) | u32_at(n - 4) << (8 * (n - 4))
    } else {
        let mut packed = 0;
        for (i, &b) in topic.iter().enumerate() {
            packed |= u64::from(b) << (8 * i);
        }
        packed
    };
    Some(WordKey::packed(packed, n).packed)
}

/// The direct subscriptions of one matcher.
#[derive(Debug)]
pub(crate) struct Direct {
    dialect: Dialect,
    /// Topics longer than [`PACKED_BYTES`].
    table: HashTable<Topic>,
    /// The other topics, by packed bytes.
    short: PackedTable<Subs>,
}

impl Direct {
    pub(crate) fn new(dialect: Dialect) -> Self {
        Direct {
            dialect,
            table: HashTable::new(),
            short: PackedTable::new(),
        }
    }

    /// The hash [`get`](Self::get) takes for `topic`, from its words.
    pub(crate) fn hash_of(&self, topic: &str) -> u64 {
        let keys: Keys = split_words(self.dialect, topic).map(WordKey::of).collect();
        topic_hash(&keys)
    }

    /// Whether `topic` is a direct key, hashed in one pass over its bytes without validating
    /// it: every key is a valid topic, so a hit needs no validation (and a miss decides
    /// nothing about validity).
    #[inline]
    pub(crate) fn contains_unchecked(&self, topic: &str) -> bool {
        let bytes = topic.as_bytes();
        if let Some(packed) = pack(bytes) {
            return self.short.get(packed, hash_packed(packed)).is_some();
        }
        if self.table.is_empty() {
            return false;
        }
        let sep = self.dialect.separator();
        let mut hash = TopicHash::default();
        let mut words = 0;
        if !bytes.is_empty() {
            let mut start = 0;
            let mut packed = 0u64;
            let mut end_word = |start: usize, end: usize, packed: u64| {
                hash.push(&if end - start <= PACKED_BYTES {
                    WordKey::packed(packed, end - start)
                } else {
                    WordKey::long(&topic[start..end])
                });
            };
            for (i, &b) in bytes.iter().enumerate() {
                if b == sep {
                    end_word(start, i, packed);
                    words += 1;
                    start = i + 1;
                    packed = 0;
                } else if i - start < PACKED_BYTES {
                    packed |= u64::from(b) << (8 * (i - start));
                }
            }
            end_word(start, bytes.len(), packed);
            words += 1;
        }
        self.get(topic, hash.finish(words)).is_some()
    }

    /// The subscribers of `topic`, whose [`hash_of`](Self::hash_of) is `hash` (only read for
    /// topics longer than [`PACKED_BYTES`]).
    #[allow(clippy::inline_always)] // measured: out of line, a call per lookup
    #[inline(always)]
    pub(crate) fn get(&self, topic: &str, hash: u64) -> Option<&[SubscriberId]> {
        if let Some(packed) = pack(topic.as_bytes()) {
            return self
                .short
                .get(packed, hash_packed(packed))
                .map(SmallVec::as_slice);
        }
        self.get_long(topic, hash)
    }

    /// [`get`](Self::get) of a topic longer than [`PACKED_BYTES`].
    fn get_long(&self, topic: &str, hash: u64) -> Option<&[SubscriberId]> {
        if self.table.is_empty() {
            return None;
        }
        self.table
            .find(hash, |t| {
                t.hash == hash && same_bytes(&t.text, topic.as_bytes())
            })
            .map(|t| t.subs.as_slice())
    }

    /// The subscribers of `topic`, hashing it.
    pub(crate) fn get_text(&self, topic: &str) -> Option<&[SubscriberId]> {
        if pack(topic.as_bytes()).is_some() {
            return self.get(topic, 0);
        }
        if self.table.is_empty() {
            return None;
        }
        self.get(topic, self.hash_of(topic))
    }

    /// Adds `subscriber` under `topic`.
    pub(crate) fn push(&mut self, topic: &str, subscriber: SubscriberId) {
        if let Some(packed) = pack(topic.as_bytes()) {
            self.short
                .get_or_insert_with(packed, hash_packed(packed), SmallVec::new)
                .push(subscriber);
            return;
        }
        let hash = self.hash_of(topic);
        let entry = self.table.entry(
            hash,
            |t| t.hash == hash && t.text.as_slice() == topic.as_bytes(),
            |t| t.hash,
        );
        match entry {
            Entry::Occupied(mut e) => e.get_mut().subs.push(subscriber),
            Entry::Vacant(v) => {
                v.insert(Topic {
                    text: Key::from_slice(topic.as_bytes()),
                    hash,
                    subs: smallvec::smallvec![subscriber],
                });
            }
        }
    }

    /// Removes `subscriber` from `topic`; returns whether it was there.
    pub(crate) fn remove(&mut self, topic: &str, subscriber: SubscriberId) -> bool {
        if let Some(packed) = pack(topic.as_bytes()) {
            let hash = hash_packed(packed);
            let Some(subs) = self.short.get_mut(packed, hash) else {
                return false;
            };
            let Some(pos) = subs.iter().position(|s| *s == subscriber) else {
                return false;
            };
            subs.swap_remove(pos);
            if subs.is_empty() {
                self.short.remove(packed, hash);
            }
            return true;
        }
        let hash = self.hash_of(topic);
        let Ok(mut entry) = self.table.find_entry(hash, |t| {
            t.hash == hash && t.text.as_slice() == topic.as_bytes()
        }) else {
            return false;
        };
        let subs = &mut entry.get_mut().subs;
        let Some(pos) = subs.iter().position(|s| *s == subscriber) else {
            return false;
        };
        subs.swap_remove(pos);
        if subs.is_empty() {
            entry.remove();
            if self.table.capacity() > 64 && self.table.len() * 4 < self.table.capacity() {
                self.table.shrink_to(self.table.len() * 2, |t| t.hash);
            }
        }
        true
    }

    /// Approximate heap bytes.
    pub(crate) fn heap_bytes(&self) -> usize {
        let long: usize = self
            .table
            .iter()
            .map(|t| t.text.len() + 48 + t.subs.capacity() * 8)
            .sum();
        let spilled = |s: &Subs| if s.spilled() { s.capacity() * 8 } else { 0 };
        long + self.short.capacity() * (8 + std::mem::size_of::<Subs>())
            + self.short.values().map(spilled).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn same_bytes_is_equality(a in "[ab]{0,20}", b in "[ab]{0,20}") {
            prop_assert_eq!(same_bytes(a.as_bytes(), b.as_bytes()), a == b);
        }

        /// The one-pass hash finds exactly the keys the word-by-word hash stored.
        #[test]
        fn contains_unchecked_agrees_with_get_text(
            keys in prop::collection::vec("[ab./é]{0,10}", 1..6),
            probes in prop::collection::vec("[ab./é]{0,10}", 1..6),
        ) {
            for dialect in Dialect::ALL {
                let mut direct = Direct::new(dialect);
                for k in &keys {
                    direct.push(k, 1);
                }
                for t in keys.iter().chain(&probes) {
                    prop_assert_eq!(direct.contains_unchecked(t), direct.get_text(t).is_some());
                }
            }
        }
    }
}
