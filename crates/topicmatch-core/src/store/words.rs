//! The store's word interner: each distinct word text is kept once and named by a `u32`.
//!
//! Texts sit back to back in one buffer and the slots beside each other, so reading a word
//! (comparing children, building a topic) touches two dense arrays rather than one heap
//! allocation per word. Every use of a word in the trie holds one reference; a word whose last
//! reference goes is freed at once (its id reused by the next new word, its bytes reclaimed
//! when the buffer is repacked, once more than half of it is dead).

use std::hash::{BuildHasher, Hasher};

use hashbrown::hash_table::{Entry, HashTable};
use rustc_hash::FxBuildHasher;

/// An interned word.
pub(crate) type WordId = u32;

/// Buffers smaller than this are never repacked.
const REPACK_MIN: usize = 4096;

/// One interned word: where its text is and how many uses it has (0: a free slot).
#[derive(Debug, Clone, Copy)]
struct Slot {
    start: usize,
    len: u32,
    refs: u32,
}

/// The interner.
#[derive(Debug, Default)]
pub(crate) struct Words {
    /// Every live word's text (and the dead bytes of freed ones), back to back.
    texts: String,
    /// Bytes of `texts` that belong to freed words.
    dead: usize,
    slots: Vec<Slot>,
    /// Ids of every live word, hashed by text.
    table: HashTable<WordId>,
    /// Ids of free slots, reused before the slot vector grows.
    free: Vec<WordId>,
    /// Words freed since the last renumbering.
    freed: usize,
}

fn hash(text: &str) -> u64 {
    let mut h = FxBuildHasher.build_hasher();
    h.write(text.as_bytes());
    h.finish()
}

/// The text of `slot` in `texts`.
#[inline]
fn text_of(texts: &str, slot: Slot) -> &str {
    &texts[slot.start..slot.start + slot.len as usize]
}

impl Words {
    /// The text of word `id`.
    #[inline]
    pub(crate) fn text(&self, id: WordId) -> &str {
        text_of(&self.texts, self.slots[id as usize])
    }

    /// The UTF-8 bytes of word `id` (no character boundary to check, as slicing a `str` does).
    #[inline]
    pub(crate) fn bytes(&self, id: WordId) -> &[u8] {
        let slot = self.slots[id as usize];
        &self.texts.as_bytes()[slot.start..slot.start + slot.len as usize]
    }

    /// Where word `id`'s slot is, for a prefetch.
    #[inline]
    pub(crate) fn slot_address(&self, id: WordId) -> *const u8 {
        std::ptr::from_ref(&self.slots[id as usize]).cast()
    }

    /// Where word `id`'s text is, for a prefetch.
    #[inline]
    pub(crate) fn text_address(&self, id: WordId) -> *const u8 {
        self.texts
            .as_ptr()
            .wrapping_add(self.slots[id as usize].start)
    }

    /// The id of `text`, if some use of it is live.
    #[inline]
    pub(crate) fn lookup(&self, text: &str) -> Option<WordId> {
        let (texts, slots) = (&self.texts, &self.slots);
        self.table
            .find(hash(text), |&id| text_of(texts, slots[id as usize]) == text)
            .copied()
    }

    /// Takes one more reference to `text`, interning it if new.
    pub(crate) fn acquire(&mut self, text: &str) -> WordId {
        let (texts, slots) = (&mut self.texts, &mut self.slots);
        match self.table.entry(
            hash(text),
            |&id| text_of(texts, slots[id as usize]) == text,
            |&id| hash(text_of(texts, slots[id as usize])),
        ) {
            Entry::Occupied(entry) => {
                let id = *entry.get();
                slots[id as usize].refs += 1;
                id
            }
            Entry::Vacant(entry) => {
                let slot = Slot {
                    start: texts.len(),
                    len: u32::try_from(text.len()).expect("a word is shorter than 4 GiB"),
                    refs: 1,
                };
                texts.push_str(text);
                let id = if let Some(id) = self.free.pop() {
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
        let freed = *slot;
        if let Ok(entry) = self
            .table
            .find_entry(hash(text_of(&self.texts, freed)), |&other| other == id)
        {
            entry.remove();
        }
        self.free.push(id);
        self.freed += 1;
        self.dead += freed.len as usize;
        if self.texts.len() >= REPACK_MIN && self.dead * 2 > self.texts.len() {
            self.repack();
        }
        if self.table.capacity() > 64 && self.table.len() * 4 < self.table.capacity() {
            let (texts, slots) = (&self.texts, &self.slots);
            self.table.shrink_to(self.table.len() * 2, |&id| {
                hash(text_of(texts, slots[id as usize]))
            });
        }
    }

    /// Rewrites the text buffer with the live words only. Ids do not change.
    fn repack(&mut self) {
        let mut texts = String::with_capacity((self.texts.len() - self.dead) * 2);
        for slot in &mut self.slots {
            if slot.refs > 0 {
                let start = texts.len();
                texts.push_str(text_of(&self.texts, *slot));
                slot.start = start;
            }
        }
        self.texts = texts;
        self.dead = 0;
    }

    /// Whether more than half the slots are free (and there are enough of them to matter):
    /// [`renumber`](Self::renumber) would give memory back.
    pub(crate) fn sparse(&self) -> bool {
        self.slots.len() >= REPACK_MIN / 8 && self.free.len() * 2 > self.slots.len()
    }

    /// How many words were freed since the last renumbering.
    pub(crate) fn freed(&self) -> usize {
        self.freed
    }

    /// Renumbers the live words densely, so the slots of words long gone are given back;
    /// returns each old id's new id. The caller renames every use.
    pub(crate) fn renumber(&mut self) -> Vec<WordId> {
        let mut remap = vec![WordId::MAX; self.slots.len()];
        let mut words = Words::default();
        for (old, slot) in self.slots.iter().enumerate() {
            if slot.refs > 0 {
                let new = words.acquire(text_of(&self.texts, *slot));
                words.slots[new as usize].refs = slot.refs;
                remap[old] = new;
            }
        }
        *self = words;
        remap
    }

    /// How many uses word `id` has (tests).
    #[cfg(test)]
    pub(crate) fn refs(&self, id: WordId) -> u32 {
        self.slots[id as usize].refs
    }

    /// How many distinct words are live.
    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    /// Heap bytes held: texts, slots and the table.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.texts.capacity()
            + self.slots.capacity() * std::mem::size_of::<Slot>()
            + self.table.capacity() * (std::mem::size_of::<WordId>() + 1)
            + self.free.capacity() * std::mem::size_of::<WordId>()
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
        assert_eq!(words.text(2), "");
    }

    #[test]
    fn sparse_slots_are_renumbered() {
        let mut words = Words::default();
        let ids: Vec<u32> = (0..2000).map(|i| words.acquire(&format!("w{i}"))).collect();
        assert!(!words.sparse());
        words.acquire("w1999");
        for &id in &ids[..1500] {
            words.release(id);
        }
        assert!(words.sparse());
        assert_eq!(words.freed(), 1500);
        let remap = words.renumber();
        assert_eq!(words.freed(), 0);
        assert_eq!(words.slots.len(), 500);
        for (i, &old) in ids.iter().enumerate().skip(1500) {
            let new = remap[old as usize];
            assert_eq!(words.text(new), format!("w{i}"));
            assert_eq!(words.lookup(&format!("w{i}")), Some(new));
        }
        // References moved with their words.
        let last = remap[ids[1999] as usize];
        words.release(last);
        assert_eq!(words.lookup("w1999"), Some(last));
        words.release(last);
        assert_eq!(words.lookup("w1999"), None);
    }

    #[test]
    fn freed_text_is_repacked() {
        let mut words = Words::default();
        let ids: Vec<u32> = (0..2000)
            .map(|i| words.acquire(&format!("word-{i}")))
            .collect();
        for &id in &ids[..1500] {
            words.release(id);
        }
        let live: usize = (1500..2000).map(|i| format!("word-{i}").len()).sum();
        assert!(
            words.texts.len() <= 2 * live,
            "{} for {live}",
            words.texts.len()
        );
        for (i, &id) in ids.iter().enumerate().skip(1500) {
            assert_eq!(words.text(id), format!("word-{i}"));
            assert_eq!(words.lookup(&format!("word-{i}")), Some(id));
        }
    }
}
