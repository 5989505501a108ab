//! A persistent hash array mapped trie (Bagwell's HAMT): the wide-node structure of the CS-trie.
//!
//! Every update returns a new version and leaves the old one intact; the two share every node
//! off the updated path, so an update copies at most `64 / 4 = 16` nodes of at most 16
//! slots, never the whole map. Nodes link each other by plain pointers ([`Shared`]), with no
//! reference count: an update lists the nodes it allocated and the old path nodes it replaced
//! in a [`Delta`], and the CS-trie's CAS frees the ones that lost (see [`super::raw`]). So a path
//! copy copies pointers, and retiring a version touches no shared node. The CS-trie keeps a
//! node's word children and its subscriber set in these, so adding the 100,000th child or
//! subscriber costs the same as adding the first.
//!
//! Keys are placed by a 64-bit hash ([`Placed`]), 4 bits per level, low bits first; keys with
//! equal hashes share one collision node (a node with an empty bitmap). Nodes are immutable
//! once built, so readers need no synchronisation beyond having obtained the root safely.
//! Recursion depth is bounded by the 16 levels a 64-bit hash allows.
//!
//! Keys and values are `Copy` (a long word's text is epoch-owned too), so a path copy is a
//! `memcpy` and freeing a node drops nothing.
//!
//! Layout, for the cost of a path copy (the update's whole cost): a slot is a key and value, or
//! a link to a sub-node (a thin pointer, a 32-bit length and the node's bitmap: 16 bytes), with
//! no stored hash and no separate tag, so a word child's slot is 24 bytes (its key 16, a long
//! word's copy packed in the key's free bits, and the child 8) and a subscriber's 16; and a
//! node is one allocation (its shared slot array), its bitmap living in the parent's slot. A
//! copied full level is then one allocation of at most 384 bytes (no reference-count header),
//! within the allocator's per-thread cache sizes. (Against 32-byte slots, a fat pointer and a
//! bitmap linking a node and a 24-byte word label, measured with callgrind's cache model on
//! the one-thread 90/10 mix: 18% fewer L1 lines written and 7% fewer read per insert, for 0.7%
//! fewer instructions.)
//!
//! 16 slots per level, not 32: an insert writes the whole copied path into fresh memory, and
//! that traffic, not the instructions, is its cost. For the 48 children of a typical wide
//! level, a 32-slot root holds ~25 slots (800 bytes copied per insert), a 16-slot root 16
//! (512 bytes) plus a few-slot inner node either way: measured with callgrind's cache model
//! on the 90/10 mix, 21% fewer written and 8% fewer read L1 misses per insert for as many
//! instructions; a lookup in a level of 100,000 children follows 5 nodes instead of 4.
//! Not 8 either (8 slots against 16, both of 24 bytes): 15% fewer written and 8% fewer read L1
//! misses per insert, but 7% more instructions, and no wall-clock difference in paired runs.

use super::raw::{Array, Delta, Shared};

const BITS: u32 = 4;
const MASK: u64 = (1 << BITS) - 1;

/// A key's 64-bit placement in the map.
pub(super) trait Placed {
    /// The hash the key is placed by.
    fn place(&self) -> u64;
}

#[derive(Clone, Copy)]
enum Slot<K, V> {
    /// One key, inline: a lookup reaches it without another pointer.
    Entry(K, V),
    /// The next level, or a collision node.
    Branch(Node<K, V>),
}

/// One level: a bitmap of the occupied 5-bit indices and their slots, densely packed. A node
/// with an empty bitmap is a collision node: two or more entries with one hash, in any order.
/// The bitmap is the array's tag ([`Shared::tag`]), so that a link to a node is 16 bytes.
struct Node<K, V> {
    slots: Shared<Slot<K, V>>,
}

impl<K, V> Clone for Node<K, V> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K, V> Copy for Node<K, V> {}

/// A persistent map from keys (placed by their [`Placed`] hash) to values: a handle to one
/// version, copied freely (the CS-trie's protocol, not the handle, decides when nodes die).
/// The root node's slots are `None` when the map is empty; the map is 24 bytes.
pub(super) struct Hamt<K, V> {
    len: u32,
    slots: Option<Shared<Slot<K, V>>>,
}

impl<K, V> Default for Hamt<K, V> {
    fn default() -> Self {
        Hamt {
            len: 0,
            slots: None,
        }
    }
}

impl<K, V> Clone for Hamt<K, V> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K, V> Copy for Hamt<K, V> {}

impl<K, V> Hamt<K, V> {
    /// The map of `root` (a level, never a collision node) holding `len` keys.
    fn of(root: Option<Node<K, V>>, len: u32) -> Self {
        match root {
            None => Hamt::default(),
            Some(Node { slots }) => Hamt {
                len,
                slots: Some(slots),
            },
        }
    }

    /// The root node.
    fn root(&self) -> Option<Node<K, V>> {
        self.slots.map(|slots| Node { slots })
    }
}

/// The bitmap bit of `hash` at the level starting at bit `shift`.
#[inline]
fn bit_of(hash: u64, shift: u32) -> u32 {
    debug_assert!(
        shift < 64,
        "two distinct 64-bit hashes part within 16 levels"
    );
    1u32 << ((hash >> shift) & MASK)
}

impl<K: Placed, V> Slot<K, V> {
    /// The hash of an entry or a collision node (never asked of a level).
    fn hash(&self) -> u64 {
        match self {
            Slot::Entry(k, _) => k.place(),
            Slot::Branch(node) => {
                debug_assert!(
                    node.is_collision(),
                    "only entries and collisions are placed"
                );
                node.slots.get()[0].hash()
            }
        }
    }

    /// Whether this slot may stand in for a node holding only it (an entry or a collision).
    fn is_placed(&self) -> bool {
        !matches!(self, Slot::Branch(node) if !node.is_collision())
    }
}

impl<K, V> Node<K, V> {
    /// The bitmap of the occupied indices (empty for a collision node).
    #[inline]
    fn bitmap(&self) -> u32 {
        self.slots.tag()
    }

    /// Whether this is a collision node.
    #[inline]
    fn is_collision(&self) -> bool {
        self.bitmap() == 0
    }

    /// The slot position for `bit` and whether it is occupied.
    #[inline]
    fn position(&self, bit: u32) -> (usize, bool) {
        (
            (self.bitmap() & (bit - 1)).count_ones() as usize,
            self.bitmap() & bit != 0,
        )
    }
}

/// A new node of the slots of `parts` in turn, listed as fresh in `delta`.
fn alloc<K: Copy + Send + Sync, V: Copy + Send + Sync>(
    bitmap: u32,
    parts: &[&[Slot<K, V>]],
    delta: &mut Delta,
) -> Node<K, V> {
    let slots = Shared::concat(parts, bitmap);
    delta.fresh(Array::of(slots));
    Node { slots }
}

impl<K: Copy + Send + Sync, V: Copy + Send + Sync> Node<K, V> {
    /// A copy with `slot` at `pos` (replacing the slot there if `occupied`), replacing this node
    /// (listed as stale).
    fn with_slot(
        &self,
        (bit, pos, occupied): (u32, usize, bool),
        slot: Slot<K, V>,
        delta: &mut Delta,
    ) -> Node<K, V> {
        let old = self.slots.get();
        let rest = if occupied { pos + 1 } else { pos };
        // Two copies around the new slot, straight into the new node.
        delta.stale(Array::of(self.slots));
        alloc(
            self.bitmap() | bit,
            &[&old[..pos], &[slot], &old[rest..]],
            delta,
        )
    }

    /// A copy without the slot at `pos`, replacing this node (listed as stale).
    fn without_slot(&self, bit: u32, pos: usize, delta: &mut Delta) -> Node<K, V> {
        let old = self.slots.get();
        delta.stale(Array::of(self.slots));
        alloc(self.bitmap() & !bit, &[&old[..pos], &old[pos + 1..]], delta)
    }
}

/// A node holding two slots (entries or collision nodes, with their hashes), splitting as deep
/// as their hashes agree; a collision node if the hashes are equal (then both are entries).
fn two_slots<K: Copy + Send + Sync, V: Copy + Send + Sync>(
    shift: u32,
    a: (u64, Slot<K, V>),
    b: (u64, Slot<K, V>),
    delta: &mut Delta,
) -> Node<K, V> {
    if a.0 == b.0 {
        return alloc(0, &[&[a.1, b.1]], delta);
    }
    let bit_a = bit_of(a.0, shift);
    let bit_b = bit_of(b.0, shift);
    if bit_a == bit_b {
        let inner = two_slots(shift + BITS, a, b, delta);
        return alloc(bit_a, &[&[Slot::Branch(inner)]], delta);
    }
    let slots = if bit_a < bit_b {
        [a.1, b.1]
    } else {
        [b.1, a.1]
    };
    alloc(bit_a | bit_b, &[&slots], delta)
}

/// What replaces a node after a removal below it.
enum Rest<K, V> {
    Empty,
    Slot(Slot<K, V>),
}

impl<K: Copy + Placed + Send + Sync, V: Copy + Send + Sync> Hamt<K, V> {
    /// Number of keys.
    pub(super) fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether the map is empty.
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The value of the key with `hash` for which `is_key` holds.
    #[inline]
    pub(super) fn get(&self, hash: u64, is_key: impl Fn(&K) -> bool) -> Option<&V> {
        let root = self.slots.as_ref()?;
        let (mut bitmap, mut slots) = (root.tag(), root.get());
        let mut shift = 0;
        loop {
            if bitmap == 0 {
                // A collision node.
                return slots.iter().find_map(|slot| match slot {
                    Slot::Entry(k, v) if is_key(k) => Some(v),
                    Slot::Entry(..) | Slot::Branch(_) => None,
                });
            }
            let bit = bit_of(hash, shift);
            if bitmap & bit == 0 {
                return None;
            }
            match &slots[(bitmap & (bit - 1)).count_ones() as usize] {
                Slot::Entry(k, v) => return is_key(k).then_some(v),
                Slot::Branch(inner) => {
                    (bitmap, slots) = (inner.bitmap(), inner.slots.get());
                    shift += BITS;
                }
            }
        }
    }

    /// Calls `f` on every entry, in no particular order, without allocating.
    pub(super) fn for_each<'a>(&'a self, mut f: impl FnMut(&'a K, &'a V)) {
        fn walk<'a, K, V>(slots: &'a [Slot<K, V>], f: &mut impl FnMut(&'a K, &'a V)) {
            for slot in slots {
                match slot {
                    Slot::Entry(k, v) => f(k, v),
                    Slot::Branch(inner) => walk(inner.slots.get(), f),
                }
            }
        }
        if let Some(slots) = &self.slots {
            walk(slots.get(), &mut f);
        }
    }

    /// Calls `f` on every node of this version (children before their parent).
    pub(super) fn for_each_array(&self, f: &mut impl FnMut(Array)) {
        fn walk<K: Send + Sync, V: Send + Sync>(
            slots: Shared<Slot<K, V>>,
            f: &mut impl FnMut(Array),
        ) {
            for slot in slots.get() {
                if let Slot::Branch(inner) = slot {
                    walk(inner.slots, f);
                }
            }
            f(Array::of(slots));
        }
        if let Some(slots) = self.slots {
            walk(slots, f);
        }
    }

    /// A version with `key` mapped to `value` (replacing the key `is_key` finds, if any).
    pub(super) fn insert(
        &self,
        key: K,
        value: V,
        is_key: impl Fn(&K) -> bool,
        delta: &mut Delta,
    ) -> Self {
        fn go<K: Copy + Placed + Send + Sync, V: Copy + Send + Sync>(
            node: &Node<K, V>,
            shift: u32,
            new: (u64, K, V),
            is_key: &impl Fn(&K) -> bool,
            delta: &mut Delta,
        ) -> (Node<K, V>, bool) {
            let (hash, key, value) = new;
            let slots = node.slots.get();
            if node.is_collision() {
                let here = slots[0].hash();
                if here != hash {
                    // Push the collision down beside the new entry (it is reused, not copied).
                    let split = two_slots(
                        shift,
                        (here, Slot::Branch(*node)),
                        (hash, Slot::Entry(key, value)),
                        delta,
                    );
                    return (split, true);
                }
                let at = slots
                    .iter()
                    .position(|slot| matches!(slot, Slot::Entry(k, _) if is_key(k)));
                let mut slots = slots.to_vec();
                match at {
                    Some(at) => slots[at] = Slot::Entry(key, value),
                    None => slots.push(Slot::Entry(key, value)),
                }
                delta.stale(Array::of(node.slots));
                return (alloc(0, &[&slots], delta), at.is_none());
            }
            let bit = bit_of(hash, shift);
            let (pos, occupied) = node.position(bit);
            if !occupied {
                let slot = Slot::Entry(key, value);
                return (node.with_slot((bit, pos, false), slot, delta), true);
            }
            let (slot, added) = match &slots[pos] {
                Slot::Entry(k, _) if is_key(k) => (Slot::Entry(key, value), false),
                old @ Slot::Entry(k, _) => {
                    let split = two_slots(
                        shift + BITS,
                        (k.place(), *old),
                        (hash, Slot::Entry(key, value)),
                        delta,
                    );
                    (Slot::Branch(split), true)
                }
                Slot::Branch(inner) => {
                    let (inner, added) = go(inner, shift + BITS, (hash, key, value), is_key, delta);
                    (Slot::Branch(inner), added)
                }
            };
            (node.with_slot((bit, pos, true), slot, delta), added)
        }
        let hash = key.place();
        match &self.root() {
            None => {
                let root = alloc(bit_of(hash, 0), &[&[Slot::Entry(key, value)]], delta);
                Hamt::of(Some(root), 1)
            }
            Some(root) => {
                let (root, added) = go(root, 0, (hash, key, value), &is_key, delta);
                Hamt::of(Some(root), self.len + u32::from(added))
            }
        }
    }

    /// A version without the key `is_key` finds under `hash`, or `None` if there is none (then
    /// nothing was allocated).
    pub(super) fn remove(
        &self,
        hash: u64,
        is_key: impl Fn(&K) -> bool,
        delta: &mut Delta,
    ) -> Option<Self> {
        fn go<K: Copy + Placed + Send + Sync, V: Copy + Send + Sync>(
            node: &Node<K, V>,
            shift: u32,
            hash: u64,
            is_key: &impl Fn(&K) -> bool,
            delta: &mut Delta,
        ) -> Option<Rest<K, V>> {
            let slots = node.slots.get();
            if node.is_collision() {
                let at = slots
                    .iter()
                    .position(|slot| matches!(slot, Slot::Entry(k, _) if is_key(k)))?;
                delta.stale(Array::of(node.slots));
                let mut slots = slots.to_vec();
                slots.remove(at);
                return Some(Rest::Slot(if slots.len() == 1 {
                    slots.pop().expect("one left")
                } else {
                    Slot::Branch(alloc(0, &[&slots], delta))
                }));
            }
            let bit = bit_of(hash, shift);
            let (pos, occupied) = node.position(bit);
            if !occupied {
                return None;
            }
            let replacement = match &slots[pos] {
                Slot::Entry(k, _) => {
                    if !is_key(k) {
                        return None;
                    }
                    Rest::Empty
                }
                Slot::Branch(inner) => go(inner, shift + BITS, hash, is_key, delta)?,
            };
            // Compression: a level left with one entry or collision is replaced by it (below
            // the root), and one left with nothing by nothing.
            Some(match replacement {
                Rest::Empty if slots.len() == 1 => {
                    delta.stale(Array::of(node.slots));
                    Rest::Empty
                }
                Rest::Empty if slots.len() == 2 && shift > 0 && slots[1 - pos].is_placed() => {
                    delta.stale(Array::of(node.slots));
                    Rest::Slot(slots[1 - pos])
                }
                Rest::Empty => Rest::Slot(Slot::Branch(node.without_slot(bit, pos, delta))),
                Rest::Slot(slot) if slots.len() == 1 && shift > 0 && slot.is_placed() => {
                    delta.stale(Array::of(node.slots));
                    Rest::Slot(slot)
                }
                Rest::Slot(slot) => {
                    Rest::Slot(Slot::Branch(node.with_slot((bit, pos, true), slot, delta)))
                }
            })
        }
        let root = self.root()?;
        let root = match go(&root, 0, hash, &is_key, delta)? {
            Rest::Empty => None,
            Rest::Slot(Slot::Branch(node)) if !node.is_collision() => Some(node),
            Rest::Slot(slot) => Some(alloc(bit_of(slot.hash(), 0), &[&[slot]], delta)),
        };
        Some(Hamt::of(root, self.len - 1))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::super::raw::Delta;
    use super::{Hamt, Placed};

    /// A key placed by a good hash or, if `bad`, by one with few distinct values (forcing
    /// collision nodes, deep splits and collisions pushed down beside other keys).
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    struct Key {
        id: u64,
        bad: bool,
    }

    impl Placed for Key {
        fn place(&self) -> u64 {
            let k = self.id;
            if self.bad {
                (k % 7) << 58 | (k % 3)
            } else {
                k.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            }
        }
    }

    #[test]
    fn a_word_childs_slot_is_24_bytes_and_a_subscribers_16() {
        // A word child: a 16-byte label (`kids::WideLabel`) and a link (`raw::Child`, a
        // non-null pointer), whose sizes `nodes` checks.
        type Label = [u64; 2];
        type Link = std::ptr::NonNull<u8>;
        assert_eq!(std::mem::size_of::<super::Slot<Label, Link>>(), 24);
        assert_eq!(std::mem::size_of::<super::Slot<u64, ()>>(), 16);
    }

    #[test]
    fn insert_get_remove_against_a_btreemap() {
        for bad in [true, false] {
            let key = |id| Key { id, bad };
            // One delta for every update: every node allocated is in it, freed at the end.
            let mut delta = Delta::default();
            let mut map: Hamt<Key, u64> = Hamt::default();
            let mut model = std::collections::BTreeMap::new();
            let mut versions = Vec::new();
            for k in 0..300u64 {
                map = map.insert(key(k), k * 10, |x| *x == key(k), &mut delta);
                model.insert(k, k * 10);
                versions.push((map, model.clone()));
            }
            for k in (0..300u64).step_by(3) {
                // Replacing a value keeps the length.
                map = map.insert(key(k), k * 100, |x| *x == key(k), &mut delta);
                model.insert(k, k * 100);
            }
            for k in (0..300u64).step_by(2) {
                map = map
                    .remove(key(k).place(), |x| *x == key(k), &mut delta)
                    .expect("present");
                model.remove(&k);
                assert!(map
                    .remove(key(k).place(), |x| *x == key(k), &mut delta)
                    .is_none());
            }
            versions.push((map, model.clone()));
            for k in (1..300u64).step_by(2) {
                map = map
                    .remove(key(k).place(), |x| *x == key(k), &mut delta)
                    .expect("present");
            }
            assert!(map.is_empty());
            assert!(map.get(key(1).place(), |x| *x == key(1)).is_none());
            for (version, model) in &versions {
                assert_eq!(version.len(), model.len());
                for k in 0..300u64 {
                    assert_eq!(version.get(key(k).place(), |x| *x == key(k)), model.get(&k));
                }
                let mut seen = Vec::new();
                version.for_each(|k, v| seen.push((k.id, *v)));
                seen.sort_unstable();
                assert_eq!(
                    seen,
                    model.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>()
                );
            }
            delta.free_all_versions();
        }
    }
}
