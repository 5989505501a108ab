//! A persistent hash array mapped trie (Bagwell's HAMT): the wide-node structure of the CS-trie.
//!
//! Every update returns a new version and leaves the old one intact; the two share every node
//! off the updated path through reference counts, so an update copies at most
//! `ceil(64 / 5) = 13` nodes of at most 32 slots, never the whole map. The CS-trie keeps a
//! node's word children and its subscriber set in these, so adding the 100,000th child or
//! subscriber costs the same as adding the first.
//!
//! Keys are placed by a 64-bit hash ([`Placed`]), 5 bits per level, low bits first; keys with
//! equal hashes share one collision node (a node with an empty bitmap). Nodes are immutable
//! once built, so readers need no synchronisation beyond having obtained the root safely.
//! Recursion depth is bounded by the 13 levels a 64-bit hash allows.
//!
//! Layout, for the cost of a path copy (the update's whole cost): a slot is a key and value, or
//! a sub-node's bitmap and slot array inline, with no stored hash and no separate tag, so a
//! word child's slot is 32 bytes; and a node is one allocation (its shared slot array), its
//! bitmap living in the parent's slot. A copied 25-slot level is then one ~800-byte
//! allocation, within the allocator's per-thread cache sizes, where it was two allocations
//! of which one was ~1.2 KB.

use crate::sync::Arc;

const BITS: u32 = 5;
const MASK: u64 = (1 << BITS) - 1;

/// A key's 64-bit placement in the map. Every `hash` a [`Hamt`] method is given for a key must
/// be that key's `place()`.
pub(super) trait Placed {
    /// The hash the key is placed by.
    fn place(&self) -> u64;
}

#[derive(Clone)]
enum Slot<K, V> {
    /// One key, inline: a lookup reaches it without another pointer.
    Entry(K, V),
    /// The next level, or a collision node.
    Branch(Node<K, V>),
}

/// One level: a bitmap of the occupied 5-bit indices and their slots, densely packed. A node
/// with an empty bitmap is a collision node: two or more entries with one hash, in any order.
struct Node<K, V> {
    bitmap: u32,
    slots: Arc<[Slot<K, V>]>,
}

impl<K, V> Clone for Node<K, V> {
    /// O(1): one reference count.
    fn clone(&self) -> Self {
        Node {
            bitmap: self.bitmap,
            slots: Arc::clone(&self.slots),
        }
    }
}

/// A persistent map from keys (placed by their [`Placed`] hash) to values.
/// The root node is kept unpacked (its bitmap beside the length, its slots `None` when empty)
/// so that the map is 24 bytes.
pub(super) struct Hamt<K, V> {
    bitmap: u32,
    /// A `u32`, so that it shares a word with the root's bitmap.
    len: u32,
    slots: Option<Arc<[Slot<K, V>]>>,
}

impl<K, V> Default for Hamt<K, V> {
    fn default() -> Self {
        Hamt {
            bitmap: 0,
            len: 0,
            slots: None,
        }
    }
}

impl<K, V> Clone for Hamt<K, V> {
    /// O(1): the versions share every node.
    fn clone(&self) -> Self {
        Hamt {
            bitmap: self.bitmap,
            len: self.len,
            slots: self.slots.clone(),
        }
    }
}

impl<K, V> Hamt<K, V> {
    /// The map of `root` (a level, never a collision node) holding `len` keys.
    fn of(root: Option<Node<K, V>>, len: u32) -> Self {
        match root {
            None => Hamt::default(),
            Some(Node { bitmap, slots }) => Hamt {
                bitmap,
                len,
                slots: Some(slots),
            },
        }
    }

    /// The root node (one reference count).
    fn root(&self) -> Option<Node<K, V>> {
        self.slots.as_ref().map(|slots| Node {
            bitmap: self.bitmap,
            slots: Arc::clone(slots),
        })
    }
}

/// The bitmap bit of `hash` at the level starting at bit `shift`.
#[inline]
fn bit_of(hash: u64, shift: u32) -> u32 {
    debug_assert!(
        shift < 64,
        "two distinct 64-bit hashes part within 13 levels"
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
                node.slots[0].hash()
            }
        }
    }

    /// Whether this slot may stand in for a node holding only it (an entry or a collision).
    fn is_placed(&self) -> bool {
        !matches!(self, Slot::Branch(node) if !node.is_collision())
    }
}

impl<K, V> Node<K, V> {
    /// Whether this is a collision node.
    #[inline]
    fn is_collision(&self) -> bool {
        self.bitmap == 0
    }

    /// The slot position for `bit` and whether it is occupied.
    #[inline]
    fn position(&self, bit: u32) -> (usize, bool) {
        (
            (self.bitmap & (bit - 1)).count_ones() as usize,
            self.bitmap & bit != 0,
        )
    }
}

impl<K: Clone, V: Clone> Node<K, V> {
    /// A copy with `slot` at `pos` (replacing the slot there if `occupied`). The exact-size
    /// iterator lets the shared array be allocated once and filled in place.
    fn with_slot(&self, bit: u32, pos: usize, slot: Slot<K, V>, occupied: bool) -> Node<K, V> {
        let rest = if occupied { pos + 1 } else { pos };
        let slots = self.slots[..pos]
            .iter()
            .cloned()
            .chain(std::iter::once(slot))
            .chain(self.slots[rest..].iter().cloned())
            .collect();
        Node {
            bitmap: self.bitmap | bit,
            slots,
        }
    }

    /// A copy without the slot at `pos`.
    fn without_slot(&self, bit: u32, pos: usize) -> Node<K, V> {
        let slots = self.slots[..pos]
            .iter()
            .chain(&self.slots[pos + 1..])
            .cloned()
            .collect();
        Node {
            bitmap: self.bitmap & !bit,
            slots,
        }
    }
}

/// A node holding two slots (entries or collision nodes, with their hashes), splitting as deep
/// as their hashes agree; a collision node if the hashes are equal (then both are entries).
fn two_slots<K, V>(shift: u32, a: (u64, Slot<K, V>), b: (u64, Slot<K, V>)) -> Node<K, V> {
    if a.0 == b.0 {
        return Node {
            bitmap: 0,
            slots: Arc::new([a.1, b.1]),
        };
    }
    let bit_a = bit_of(a.0, shift);
    let bit_b = bit_of(b.0, shift);
    if bit_a == bit_b {
        let inner = two_slots(shift + BITS, a, b);
        return Node {
            bitmap: bit_a,
            slots: Arc::new([Slot::Branch(inner)]),
        };
    }
    let slots = if bit_a < bit_b {
        [a.1, b.1]
    } else {
        [b.1, a.1]
    };
    Node {
        bitmap: bit_a | bit_b,
        slots: Arc::new(slots),
    }
}

/// What replaces a node after a removal below it.
enum Rest<K, V> {
    Empty,
    Slot(Slot<K, V>),
}

impl<K: Clone + Placed, V: Clone> Hamt<K, V> {
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
        let (mut bitmap, mut slots) = (self.bitmap, &**self.slots.as_ref()?);
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
                    (bitmap, slots) = (inner.bitmap, &inner.slots);
                    shift += BITS;
                }
            }
        }
    }

    /// Calls `f` on every entry, in no particular order, without allocating.
    pub(super) fn for_each(&self, mut f: impl FnMut(&K, &V)) {
        fn walk<K, V>(slots: &[Slot<K, V>], f: &mut impl FnMut(&K, &V)) {
            for slot in slots {
                match slot {
                    Slot::Entry(k, v) => f(k, v),
                    Slot::Branch(inner) => walk(&inner.slots, f),
                }
            }
        }
        if let Some(slots) = &self.slots {
            walk(slots, &mut f);
        }
    }

    /// A version with `key` mapped to `value` (replacing the key `is_key` finds, if any).
    pub(super) fn insert(&self, key: K, value: V, is_key: impl Fn(&K) -> bool) -> Self {
        fn go<K: Clone + Placed, V: Clone>(
            node: &Node<K, V>,
            shift: u32,
            new: (u64, K, V),
            is_key: &impl Fn(&K) -> bool,
        ) -> (Node<K, V>, bool) {
            let (hash, key, value) = new;
            if node.is_collision() {
                let here = node.slots[0].hash();
                if here != hash {
                    // Push the collision down beside the new entry.
                    let split = two_slots(
                        shift,
                        (here, Slot::Branch(node.clone())),
                        (hash, Slot::Entry(key, value)),
                    );
                    return (split, true);
                }
                let at = node
                    .slots
                    .iter()
                    .position(|slot| matches!(slot, Slot::Entry(k, _) if is_key(k)));
                let mut slots = node.slots.to_vec();
                match at {
                    Some(at) => slots[at] = Slot::Entry(key, value),
                    None => slots.push(Slot::Entry(key, value)),
                }
                let node = Node {
                    bitmap: 0,
                    slots: slots.into(),
                };
                return (node, at.is_none());
            }
            let bit = bit_of(hash, shift);
            let (pos, occupied) = node.position(bit);
            if !occupied {
                let slot = Slot::Entry(key, value);
                return (node.with_slot(bit, pos, slot, false), true);
            }
            let (slot, added) = match &node.slots[pos] {
                Slot::Entry(k, _) if is_key(k) => (Slot::Entry(key, value), false),
                old @ Slot::Entry(k, _) => {
                    let split = two_slots(
                        shift + BITS,
                        (k.place(), old.clone()),
                        (hash, Slot::Entry(key, value)),
                    );
                    (Slot::Branch(split), true)
                }
                Slot::Branch(inner) => {
                    let (inner, added) = go(inner, shift + BITS, (hash, key, value), is_key);
                    (Slot::Branch(inner), added)
                }
            };
            (node.with_slot(bit, pos, slot, true), added)
        }
        let hash = key.place();
        match &self.root() {
            None => Hamt {
                bitmap: bit_of(hash, 0),
                len: 1,
                slots: Some(Arc::new([Slot::Entry(key, value)])),
            },
            Some(root) => {
                let (root, added) = go(root, 0, (hash, key, value), &is_key);
                Hamt::of(Some(root), self.len + u32::from(added))
            }
        }
    }

    /// A version without the key `is_key` finds under `hash`, or `None` if there is none.
    pub(super) fn remove(&self, hash: u64, is_key: impl Fn(&K) -> bool) -> Option<Self> {
        fn go<K: Clone + Placed, V: Clone>(
            node: &Node<K, V>,
            shift: u32,
            hash: u64,
            is_key: &impl Fn(&K) -> bool,
        ) -> Option<Rest<K, V>> {
            if node.is_collision() {
                let at = node
                    .slots
                    .iter()
                    .position(|slot| matches!(slot, Slot::Entry(k, _) if is_key(k)))?;
                let mut slots = node.slots.to_vec();
                slots.remove(at);
                return Some(Rest::Slot(if slots.len() == 1 {
                    slots.pop().expect("one left")
                } else {
                    Slot::Branch(Node {
                        bitmap: 0,
                        slots: slots.into(),
                    })
                }));
            }
            let bit = bit_of(hash, shift);
            let (pos, occupied) = node.position(bit);
            if !occupied {
                return None;
            }
            let replacement = match &node.slots[pos] {
                Slot::Entry(k, _) => {
                    if !is_key(k) {
                        return None;
                    }
                    Rest::Empty
                }
                Slot::Branch(inner) => go(inner, shift + BITS, hash, is_key)?,
            };
            let node = match replacement {
                Rest::Empty => node.without_slot(bit, pos),
                Rest::Slot(slot) => node.with_slot(bit, pos, slot, true),
            };
            // Compression: a level left with one entry or collision is replaced by it.
            Some(match &*node.slots {
                [] => Rest::Empty,
                [only] if shift > 0 && only.is_placed() => Rest::Slot(only.clone()),
                _ => Rest::Slot(Slot::Branch(node)),
            })
        }
        let root = self.root()?;
        let root = match go(&root, 0, hash, &is_key)? {
            Rest::Empty => None,
            Rest::Slot(Slot::Branch(node)) if !node.is_collision() => Some(node),
            Rest::Slot(slot) => Some(Node {
                bitmap: bit_of(slot.hash(), 0),
                slots: Arc::new([slot]),
            }),
        };
        Some(Hamt::of(root, self.len - 1))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
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
    fn a_word_childs_slot_is_32_bytes() {
        use super::super::{kids::Label, raw::Child};
        assert_eq!(std::mem::size_of::<super::Slot<Label, Child>>(), 32);
    }

    #[test]
    fn insert_get_remove_against_a_btreemap() {
        for bad in [true, false] {
            let key = |id| Key { id, bad };
            let mut map: Hamt<Key, u64> = Hamt::default();
            let mut model = std::collections::BTreeMap::new();
            let mut versions = Vec::new();
            for k in 0..300u64 {
                map = map.insert(key(k), k * 10, |x| *x == key(k));
                model.insert(k, k * 10);
                versions.push((map.clone(), model.clone()));
            }
            for k in (0..300u64).step_by(3) {
                // Replacing a value keeps the length.
                map = map.insert(key(k), k * 100, |x| *x == key(k));
                model.insert(k, k * 100);
            }
            for k in (0..300u64).step_by(2) {
                map = map
                    .remove(key(k).place(), |x| *x == key(k))
                    .expect("present");
                model.remove(&k);
                assert!(map.remove(key(k).place(), |x| *x == key(k)).is_none());
            }
            versions.push((map.clone(), model.clone()));
            for k in (1..300u64).step_by(2) {
                map = map
                    .remove(key(k).place(), |x| *x == key(k))
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
        }
    }
}
