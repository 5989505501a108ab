//! A persistent hash array mapped trie (Bagwell's HAMT): the wide-node structure of the CS-trie.
//!
//! Every update returns a new version and leaves the old one intact; the two share every node
//! off the updated path through reference counts, so an update copies at most
//! `ceil(64 / 5) = 13` nodes of at most 32 slots, never the whole map. The CS-trie keeps a
//! node's word children and its subscriber set in these, so adding the 100,000th child or
//! subscriber costs the same as adding the first.
//!
//! Keys are placed by a 64-bit hash, 5 bits per level, low bits first; keys with equal hashes
//! share one leaf (a collision list). Nodes are immutable once built, so readers need no
//! synchronisation beyond having obtained the root safely. Recursion depth is bounded by the
//! 13 levels a 64-bit hash allows.

use smallvec::SmallVec;

use crate::sync::Arc;

const BITS: u32 = 5;
const MASK: u64 = (1 << BITS) - 1;

/// Several keys with one hash (rare: only on a full 64-bit hash collision).
struct Leaf<K, V> {
    hash: u64,
    entries: SmallVec<[(K, V); 2]>,
}

enum Slot<K, V> {
    /// One key, inline: a lookup reaches it without another pointer.
    Entry(u64, K, V),
    /// Keys sharing one hash.
    Collision(Arc<Leaf<K, V>>),
    /// The next level.
    Branch(Arc<Node<K, V>>),
}

impl<K: Clone, V: Clone> Clone for Slot<K, V> {
    fn clone(&self) -> Self {
        match self {
            Slot::Entry(h, k, v) => Slot::Entry(*h, k.clone(), v.clone()),
            Slot::Collision(l) => Slot::Collision(Arc::clone(l)),
            Slot::Branch(b) => Slot::Branch(Arc::clone(b)),
        }
    }
}

impl<K, V> Slot<K, V> {
    /// The hash of a non-branch slot.
    fn hash(&self) -> u64 {
        match self {
            Slot::Entry(h, _, _) => *h,
            Slot::Collision(l) => l.hash,
            Slot::Branch(_) => unreachable!("only entries and collisions are placed by hash"),
        }
    }
}

/// One level: a bitmap of the occupied 5-bit indices and their slots, densely packed.
struct Node<K, V> {
    bitmap: u32,
    slots: Box<[Slot<K, V>]>,
}

/// A persistent map from keys (placed by a caller-supplied 64-bit hash) to values.
pub(super) struct Hamt<K, V> {
    root: Option<Arc<Node<K, V>>>,
    len: usize,
}

impl<K, V> Default for Hamt<K, V> {
    fn default() -> Self {
        Hamt { root: None, len: 0 }
    }
}

impl<K, V> Clone for Hamt<K, V> {
    /// O(1): the versions share every node.
    fn clone(&self) -> Self {
        Hamt {
            root: self.root.clone(),
            len: self.len,
        }
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

impl<K: Clone, V: Clone> Node<K, V> {
    /// The slot position for `bit` and whether it is occupied.
    #[inline]
    fn position(&self, bit: u32) -> (usize, bool) {
        (
            (self.bitmap & (bit - 1)).count_ones() as usize,
            self.bitmap & bit != 0,
        )
    }

    fn with_slot(&self, bit: u32, pos: usize, slot: Slot<K, V>, occupied: bool) -> Node<K, V> {
        let mut slots: Vec<Slot<K, V>> = Vec::with_capacity(self.slots.len() + 1);
        slots.extend_from_slice(&self.slots[..pos]);
        slots.push(slot);
        let rest = if occupied { pos + 1 } else { pos };
        slots.extend_from_slice(&self.slots[rest..]);
        Node {
            bitmap: self.bitmap | bit,
            slots: slots.into_boxed_slice(),
        }
    }

    fn without_slot(&self, bit: u32, pos: usize) -> Node<K, V> {
        let mut slots: Vec<Slot<K, V>> = Vec::with_capacity(self.slots.len() - 1);
        slots.extend_from_slice(&self.slots[..pos]);
        slots.extend_from_slice(&self.slots[pos + 1..]);
        Node {
            bitmap: self.bitmap & !bit,
            slots: slots.into_boxed_slice(),
        }
    }
}

/// A node holding two slots of different hashes, splitting as deep as their hashes agree.
fn two_slots<K, V>(shift: u32, a: Slot<K, V>, b: Slot<K, V>) -> Node<K, V> {
    let bit_a = bit_of(a.hash(), shift);
    let bit_b = bit_of(b.hash(), shift);
    if bit_a == bit_b {
        let inner = two_slots(shift + BITS, a, b);
        return Node {
            bitmap: bit_a,
            slots: Box::new([Slot::Branch(Arc::new(inner))]),
        };
    }
    let slots = if bit_a < bit_b { [a, b] } else { [b, a] };
    Node {
        bitmap: bit_a | bit_b,
        slots: Box::new(slots),
    }
}

/// What replaces a node after a removal below it.
enum Rest<K, V> {
    Empty,
    Slot(Slot<K, V>),
}

impl<K: Clone, V: Clone> Hamt<K, V> {
    /// Number of keys.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Whether the map is empty.
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The value of the key with `hash` for which `is_key` holds.
    #[inline]
    pub(super) fn get(&self, hash: u64, is_key: impl Fn(&K) -> bool) -> Option<&V> {
        let mut node = self.root.as_deref()?;
        let mut shift = 0;
        loop {
            let (pos, occupied) = node.position(bit_of(hash, shift));
            if !occupied {
                return None;
            }
            match &node.slots[pos] {
                Slot::Entry(h, k, v) => return (*h == hash && is_key(k)).then_some(v),
                Slot::Collision(leaf) => {
                    if leaf.hash != hash {
                        return None;
                    }
                    return leaf.entries.iter().find(|(k, _)| is_key(k)).map(|(_, v)| v);
                }
                Slot::Branch(inner) => {
                    node = inner;
                    shift += BITS;
                }
            }
        }
    }

    /// Calls `f` on every entry, in no particular order, without allocating.
    pub(super) fn for_each(&self, mut f: impl FnMut(&K, &V)) {
        fn walk<K, V>(node: &Node<K, V>, f: &mut impl FnMut(&K, &V)) {
            for slot in &node.slots {
                match slot {
                    Slot::Entry(_, k, v) => f(k, v),
                    Slot::Collision(leaf) => leaf.entries.iter().for_each(|(k, v)| f(k, v)),
                    Slot::Branch(inner) => walk(inner, f),
                }
            }
        }
        if let Some(root) = &self.root {
            walk(root, &mut f);
        }
    }

    /// A version with `key` mapped to `value` (replacing the key `is_key` finds, if any).
    pub(super) fn insert(&self, hash: u64, key: K, value: V, is_key: impl Fn(&K) -> bool) -> Self {
        fn go<K: Clone, V: Clone>(
            node: &Node<K, V>,
            shift: u32,
            new: (u64, K, V),
            is_key: &impl Fn(&K) -> bool,
        ) -> (Node<K, V>, bool) {
            let (hash, key, value) = new;
            let bit = bit_of(hash, shift);
            let (pos, occupied) = node.position(bit);
            if !occupied {
                let slot = Slot::Entry(hash, key, value);
                return (node.with_slot(bit, pos, slot, false), true);
            }
            let (slot, added) = match &node.slots[pos] {
                Slot::Entry(h, k, v) if *h == hash => {
                    if is_key(k) {
                        (Slot::Entry(hash, key, value), false)
                    } else {
                        let mut entries = SmallVec::new();
                        entries.push((k.clone(), v.clone()));
                        entries.push((key, value));
                        (Slot::Collision(Arc::new(Leaf { hash, entries })), true)
                    }
                }
                Slot::Collision(old) if old.hash == hash => {
                    let mut entries = old.entries.clone();
                    let added = if let Some(entry) = entries.iter_mut().find(|(k, _)| is_key(k)) {
                        *entry = (key, value);
                        false
                    } else {
                        entries.push((key, value));
                        true
                    };
                    (Slot::Collision(Arc::new(Leaf { hash, entries })), added)
                }
                Slot::Branch(inner) => {
                    let (inner, added) = go(inner, shift + BITS, (hash, key, value), is_key);
                    (Slot::Branch(Arc::new(inner)), added)
                }
                other => {
                    let split =
                        two_slots(shift + BITS, other.clone(), Slot::Entry(hash, key, value));
                    (Slot::Branch(Arc::new(split)), true)
                }
            };
            (node.with_slot(bit, pos, slot, true), added)
        }
        match &self.root {
            None => Hamt {
                root: Some(Arc::new(Node {
                    bitmap: bit_of(hash, 0),
                    slots: Box::new([Slot::Entry(hash, key, value)]),
                })),
                len: 1,
            },
            Some(root) => {
                let (root, added) = go(root, 0, (hash, key, value), &is_key);
                Hamt {
                    root: Some(Arc::new(root)),
                    len: self.len + usize::from(added),
                }
            }
        }
    }

    /// A version without the key `is_key` finds under `hash`, or `None` if there is none.
    pub(super) fn remove(&self, hash: u64, is_key: impl Fn(&K) -> bool) -> Option<Self> {
        fn go<K: Clone, V: Clone>(
            node: &Node<K, V>,
            shift: u32,
            hash: u64,
            is_key: &impl Fn(&K) -> bool,
        ) -> Option<Rest<K, V>> {
            let bit = bit_of(hash, shift);
            let (pos, occupied) = node.position(bit);
            if !occupied {
                return None;
            }
            let replacement = match &node.slots[pos] {
                Slot::Entry(h, k, _) => {
                    if *h != hash || !is_key(k) {
                        return None;
                    }
                    Rest::Empty
                }
                Slot::Collision(leaf) => {
                    if leaf.hash != hash {
                        return None;
                    }
                    let at = leaf.entries.iter().position(|(k, _)| is_key(k))?;
                    let mut entries = leaf.entries.clone();
                    entries.remove(at);
                    if entries.len() == 1 {
                        let (k, v) = entries.pop().expect("one left");
                        Rest::Slot(Slot::Entry(hash, k, v))
                    } else {
                        Rest::Slot(Slot::Collision(Arc::new(Leaf { hash, entries })))
                    }
                }
                Slot::Branch(inner) => go(inner, shift + BITS, hash, is_key)?,
            };
            let node = match replacement {
                Rest::Empty => node.without_slot(bit, pos),
                Rest::Slot(slot) => node.with_slot(bit, pos, slot, true),
            };
            // Compression: a branch left with one entry or collision is replaced by it.
            Some(match &*node.slots {
                [] => Rest::Empty,
                [only] if shift > 0 && !matches!(only, Slot::Branch(_)) => Rest::Slot(only.clone()),
                _ => Rest::Slot(Slot::Branch(Arc::new(node))),
            })
        }
        let root = self.root.as_deref()?;
        let root = match go(root, 0, hash, &is_key)? {
            Rest::Empty => None,
            Rest::Slot(Slot::Branch(node)) => Some(node),
            Rest::Slot(slot) => Some(Arc::new(Node {
                bitmap: bit_of(slot.hash(), 0),
                slots: Box::new([slot]),
            })),
        };
        Some(Hamt {
            root,
            len: self.len - 1,
        })
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::Hamt;

    fn bad_hash(k: u64) -> u64 {
        // Few distinct hashes: forces collision lists and deep splits.
        (k % 7) << 58 | (k % 3)
    }

    #[test]
    fn insert_get_remove_against_a_btreemap() {
        for hash in [bad_hash as fn(u64) -> u64, |k: u64| {
            k.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        }] {
            let mut map: Hamt<u64, u64> = Hamt::default();
            let mut model = std::collections::BTreeMap::new();
            let mut versions = Vec::new();
            for k in 0..300u64 {
                map = map.insert(hash(k), k, k * 10, |x| *x == k);
                model.insert(k, k * 10);
                versions.push((map.clone(), model.clone()));
            }
            for k in (0..300u64).step_by(2) {
                map = map.remove(hash(k), |x| *x == k).expect("present");
                model.remove(&k);
                assert!(map.remove(hash(k), |x| *x == k).is_none());
            }
            versions.push((map.clone(), model.clone()));
            for (version, model) in &versions {
                assert_eq!(version.len(), model.len());
                for k in 0..300u64 {
                    assert_eq!(version.get(hash(k), |x| *x == k), model.get(&k));
                }
                let mut seen = Vec::new();
                version.for_each(|k, v| seen.push((*k, *v)));
                seen.sort_unstable();
                assert_eq!(
                    seen,
                    model.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>()
                );
            }
        }
    }
}
