//! Direct (wildcard-free) subscriptions: one hash table keyed by the topic they name, hashed
//! from the topic's word keys ([`topic_hash`]) so a lookup that already keyed its words for the
//! level rows does not hash the topic's bytes again.

use hashbrown::hash_table::{Entry, HashTable};
use smallvec::SmallVec;

use super::bits::Key;
use super::keys::{topic_hash, Keys, WordKey};
use crate::dialect::Dialect;
use crate::matcher::SubscriberId;
use crate::topic::split_words;

#[derive(Debug)]
struct Topic {
    text: Key,
    hash: u64,
    subs: SmallVec<[SubscriberId; 2]>,
}

/// The direct subscriptions of one matcher.
#[derive(Debug)]
pub(crate) struct Direct {
    dialect: Dialect,
    table: HashTable<Topic>,
}

impl Direct {
    pub(crate) fn new(dialect: Dialect) -> Self {
        Direct {
            dialect,
            table: HashTable::new(),
        }
    }

    /// The hash [`get`](Self::get) takes for `topic`, from its words.
    pub(crate) fn hash_of(&self, topic: &str) -> u64 {
        let keys: Keys = split_words(self.dialect, topic).map(WordKey::of).collect();
        topic_hash(&keys)
    }

    /// The subscribers of `topic`, whose [`hash_of`](Self::hash_of) is `hash`.
    #[inline]
    pub(crate) fn get(&self, topic: &str, hash: u64) -> Option<&[SubscriberId]> {
        if self.table.is_empty() {
            return None;
        }
        self.table
            .find(hash, |t| {
                t.hash == hash && t.text.as_slice() == topic.as_bytes()
            })
            .map(|t| t.subs.as_slice())
    }

    /// The subscribers of `topic`, hashing it.
    pub(crate) fn get_text(&self, topic: &str) -> Option<&[SubscriberId]> {
        if self.table.is_empty() {
            return None;
        }
        self.get(topic, self.hash_of(topic))
    }

    /// Adds `subscriber` under `topic`.
    pub(crate) fn push(&mut self, topic: &str, subscriber: SubscriberId) {
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
        self.table
            .iter()
            .map(|t| t.text.len() + 48 + t.subs.capacity() * 8)
            .sum()
    }
}
