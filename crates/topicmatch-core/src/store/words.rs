//! The store's word interner: each distinct word text is kept once and named by a `u32`.
//!
//! Every edge of the trie holds one reference to its word; a word whose last edge goes is
//! freed at once (its text given back, its id put on a free list for the next new word).

use std::hash::{BuildHasher, Hasher};

use hashbrown::hash_table::{Entry, HashTable};
use rustc_hash::FxBuildHasher;

/// An interned word.
pub(crate) type WordId = u32;

/// One interned word: its text and how many edges use it (0: a free slot).
#[derive(Debug)]
struct Slot {
    text: Box<str>,
    refs: u32,
}

/// The interner: texts by id, and a hash table of ids by text.
#[derive(Debug, Default)]
pub(crate) struct Words {
    slots: Vec<Slot>,
    /// Ids of every live word, hashed by text.
    table: HashTable<WordId>,
    /// Ids of free slots, reused before the slot vector grows.
    free: Vec<WordId>,
}

fn hash(text: &str) -> u64 {
    let mut h = FxBuildHasher.build_hasher();
    h.write(text.as_bytes());
    h.finish()
}

impl Words {
    /// The text of word `id`.
    #[inline]
    pub(crate) fn text(&self, id: WordId) -> &str {
        &self.slots[id as usize].text
    }

    /// The id of `text`, if some edge uses it.
    #[inline]
    pub(crate) fn lookup(&self, text: &str) -> Option<WordId> {
        let slots = &self.slots;
        self.table
            .find(hash(text), |&id| *slots[id as usize].text == *text)
            .copied()
    }

    /// Takes one more reference to `text`, interning it if new.
    pub(crate) fn acquire(&mut self, text: &str) -> WordId {
        let slots = &mut self.slots;
        let free = &mut self.free;
        match self.table.entry(
            hash(text),
            |&id| *slots[id as usize].text == *text,
            |&id| hash(&slots[id as usize].text),
        ) {
            Entry::Occupied(entry) => {
                let id = *entry.get();
                slots[id as usize].refs += 1;
                id
            }
            Entry::Vacant(entry) => {
                let slot = Slot {
                    text: text.into(),
                    refs: 1,
                };
                let id = if let Some(id) = free.pop() {
                    slots[id as usize] = slot;
                    id
                } else {
                    let id = WordId::try_from(slots.len()).expect("fewer than 2^32 words");
                    slots.push(slot);
                    id
                };
                entry.insert(id);
                id
            }
        }
    }

    /// Drops one reference to word `id`, freeing the word with its last.
    pub(crate) fn release(&mut self, id: WordId) {
        let slot = &mut self.slots[id as usize];
        slot.refs -= 1;
        if slot.refs > 0 {
            return;
        }
        let text = std::mem::take(&mut slot.text);
        if let Ok(entry) = self.table.find_entry(hash(&text), |&other| other == id) {
            entry.remove();
        }
        self.free.push(id);
        if self.table.len() * 4 < self.table.capacity() && self.table.capacity() > 64 {
            let slots = &self.slots;
            self.table
                .shrink_to(self.table.len() * 2, |&id| hash(&slots[id as usize].text));
        }
    }

    /// How many distinct words are live.
    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    /// Heap bytes held: slots, the table and the texts.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Slot>()
            + self.table.capacity() * (std::mem::size_of::<WordId>() + 1)
            + self.free.capacity() * std::mem::size_of::<WordId>()
            + self.slots.iter().map(|s| s.text.len()).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::Words;

    #[test]
    fn words_are_shared_and_freed_with_their_last_reference() {
        let mut words = Words::default();
        let a = words.acquire("a");
        let b = words.acquire("b");
        assert_eq!(words.acquire("a"), a);
        assert_eq!(words.lookup("a"), Some(a));
        assert_eq!(words.text(b), "b");
        assert_eq!(words.len(), 2);
        words.release(a);
        assert_eq!(words.lookup("a"), Some(a));
        words.release(a);
        assert_eq!(words.lookup("a"), None);
        assert_eq!(words.len(), 1);
        // The freed slot is reused.
        assert_eq!(words.acquire("c"), a);
        assert_eq!(words.lookup("c"), Some(a));
        assert_eq!(words.acquire(""), 2);
        assert_eq!(words.lookup(""), Some(2));
    }
}
