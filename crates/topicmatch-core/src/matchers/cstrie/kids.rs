//! A C-node's children by literal word: a short flat array scanned linearly while the level is
//! narrow, a persistent HAMT once it is wide.
//!
//! Words are compared through a 16-byte [`Key`]: a word of up to 15 bytes *is* its key (its
//! bytes, zero-padded, and its length), so finding a child is a scan of 128-bit equalities with
//! no pointer to follow and no hash to compute. A longer word's key is its 64-bit hash plus a
//! marker, and the word itself (kept beside the key) settles equal hashes.
//!
//! Narrow levels (at most [`NARROW`] children, the usual case: ftm's fanout is 10) keep their
//! children in one shared immutable array, rebuilt by an update (O([`NARROW`])). Past that the
//! children move to a [`Hamt`], so a level with 100,000 children still costs O(log n) per update;
//! they move back only below [`NARROW`] / 2, so a level hovering at the threshold does not
//! convert back and forth.

use std::hash::Hasher;

use rustc_hash::FxHasher;

use super::hamt::{Hamt, Placed};
use super::raw::{Array, Delta, LongWord, Packed};
use crate::bytes::pack;
#[cfg(target_arch = "x86_64")]
use crate::bytes::positions_of;
#[cfg(not(target_arch = "x86_64"))]
use crate::bytes::swar_positions;
use crate::hint::prefetch;
use crate::sync::Arc;

/// Most children a narrow level holds.
const NARROW: usize = 16;
/// The length byte that marks a long word's key: the one [`Packed`] tests for.
const LONG: u8 = super::raw::LONG_KEY;

/// A word's identity for child lookups; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Key {
    /// Bytes 0..8.
    low: u64,
    /// Bytes 8..16: the length (or [`LONG`]) in the top byte.
    high: u64,
}

impl Key {
    /// The key of `word`.
    #[inline(always)]
    #[allow(clippy::inline_always)] // once per topic word, in the lookup's front end
    pub(super) fn of(word: &str) -> Key {
        Key::of_bytes(word.as_bytes())
    }

    /// The key of the word of `bytes`.
    #[inline(always)]
    #[allow(clippy::inline_always)] // once per topic word, in the lookup's front end
    fn of_bytes(bytes: &[u8]) -> Key {
        let len = bytes.len();
        if len < 16 {
            return Key::short(pack(bytes), len);
        }
        Key::hashed(bytes)
    }

    /// The key of a word of `len` bytes (under 16) whose bytes are `bits`, little-endian and
    /// zero above them: the bytes, with the length in the top byte.
    #[inline(always)]
    #[allow(clippy::inline_always)] // once per topic word, in the lookup's front end
    fn short(bits: u128, len: usize) -> Key {
        debug_assert!(len < 16 && bits >> (8 * len) == 0);
        Key::new(bits | (u128::from(len as u8) << 120))
    }

    /// The key of a word of 16 bytes or more.
    #[cold]
    #[inline(never)]
    fn hashed(bytes: &[u8]) -> Key {
        let mut h = FxHasher::default();
        h.write(bytes);
        Key::new(u128::from(h.finish()) | (u128::from(LONG) << 120))
    }

    #[inline]
    fn new(bits: u128) -> Key {
        Key {
            low: bits as u64,
            high: (bits >> 64) as u64,
        }
    }

    /// Whether the key is a hash, so equal keys must still compare the words.
    #[inline]
    pub(super) fn is_long(self) -> bool {
        (self.high >> 56) as u8 == LONG
    }

    /// Seven bits of the key's hash, with the top bit set: a narrow level's tags, compared 16
    /// at a time. The set bit tells every tag from the zero padding past a level's last child.
    #[inline]
    fn tag(self) -> u8 {
        ((self.low ^ self.high.rotate_left(29)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 57) as u8
            | 0x80
    }

    /// The key spread over 64 bits, for the HAMT of a wide level (and the result cache's
    /// slots).
    #[inline]
    pub(super) fn hash(self) -> u64 {
        let x = self.low ^ self.high.rotate_left(29);
        let h = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^ (h >> 29)
    }
}

/// A word as a child entry stores it: its key, and the word itself when the key is a hash.
/// `Copy`: a long word is epoch-owned ([`LongWord`]), so copying a level copies bytes.
#[derive(Clone, Copy)]
pub(super) struct Label {
    key: Key,
    long: Option<LongWord>,
}

impl Label {
    /// A new label; a long word's copy is listed as fresh in `delta`.
    fn new(word: &str, key: Key, delta: &mut Delta) -> Label {
        let long = key.is_long().then(|| {
            let long = LongWord::new(word);
            delta.fresh(Array::of_word(long));
            long
        });
        Label { key, long }
    }

    /// Whether this long word's label is the label of `word` (whose key equals this key).
    #[cold]
    #[inline(never)]
    fn is_long(&self, word: &[u8]) -> bool {
        self.long.as_ref().map(|long| long.get().as_bytes()) == Some(word)
    }

    /// Whether this is the label of `word`, whose key is `key`.
    #[inline]
    fn is(&self, word: &str, key: Key) -> bool {
        self.is_bytes(word.as_bytes(), key)
    }

    /// [`Label::is`] for the word of `word`'s bytes.
    #[inline]
    fn is_bytes(&self, word: &[u8], key: Key) -> bool {
        self.key == key && (!key.is_long() || self.is_long(word))
    }

    /// Calls `f` on the long word's copy, if any.
    fn for_each_array(&self, f: &mut impl FnMut(Array)) {
        if let Some(long) = self.long {
            f(Array::of_word(long));
        }
    }
}

/// A word as a wide level's HAMT entry stores it: a [`Label`] packed into 16 bytes (a long
/// word's copy in its key's free bits), so that an entry with its child is 24 bytes, not 32:
/// an insert under a wide level copies a HAMT path of such entries.
#[derive(Clone, Copy)]
pub(super) struct WideLabel(Packed);

impl WideLabel {
    /// The packed `label`.
    fn of(label: Label) -> WideLabel {
        WideLabel(Packed::new((label.key.low, label.key.high), label.long))
    }

    /// The key, without the long word's copy.
    #[inline]
    fn key(self) -> Key {
        let (low, high) = self.0.key();
        Key { low, high }
    }

    /// The label unpacked.
    #[inline]
    fn label(self) -> Label {
        Label {
            key: self.key(),
            long: self.0.long(),
        }
    }

    /// Whether this is the label of `word`, whose key is `key`.
    #[inline]
    fn is(&self, word: &str, key: Key) -> bool {
        self.label().is(word, key)
    }

    /// [`WideLabel::is`] for the word of `word`'s bytes.
    #[inline]
    fn is_bytes(&self, word: &[u8], key: Key) -> bool {
        self.label().is_bytes(word, key)
    }
}

impl Placed for WideLabel {
    fn place(&self) -> u64 {
        self.key().hash()
    }
}

/// One child of a narrow level, linked by `C`.
#[derive(Clone, Copy)]
pub(super) struct Kid<C> {
    label: Label,
    child: C,
}

/// A narrow level's children: one tag byte per child inline (in the main node's cache line),
/// the children in a shared array in the same order. A lookup compares its word's tag with all
/// sixteen tags at once (one SSE2 compare on `x86_64`, SWAR on a `u128` elsewhere), then checks
/// the full key of the one candidate (rarely more).
#[derive(Clone)]
pub(super) struct Narrow<C> {
    tags: [u8; NARROW],
    kids: Arc<[Kid<C>]>,
}

impl<C: Copy> Narrow<C> {
    /// The level of `kids` (one to [`NARROW`] children).
    fn of(kids: Arc<[Kid<C>]>) -> Narrow<C> {
        debug_assert!((1..=NARROW).contains(&kids.len()));
        let mut tags = [0; NARROW];
        for (tag, kid) in tags.iter_mut().zip(kids.iter()) {
            *tag = kid.label.key.tag();
        }
        Narrow { tags, kids }
    }

    /// The children whose tag is `tag`, as a set of bits: bit `i` is set if child `i` has the
    /// tag. The padding past the last child never matches (see [`Key::tag`]), so no length
    /// mask is needed. One SSE2 compare on `x86_64`.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    #[allow(clippy::inline_always)] // part of the lookup's inner loop
    fn candidates(&self, tag: u8) -> u32 {
        positions_of(&self.tags, tag)
    }

    /// [`Narrow::candidates`] elsewhere.
    #[cfg(not(target_arch = "x86_64"))]
    #[inline(always)]
    #[allow(clippy::inline_always)] // part of the lookup's inner loop
    fn candidates(&self, tag: u8) -> u32 {
        swar_positions(&self.tags, tag)
    }
}

/// A topic word ready for child lookups: the word, its [`Key`] and its tag, computed once per
/// lookup rather than once per node visited.
#[derive(Clone, Copy)]
pub(super) struct Probe<'w> {
    word: &'w [u8],
    key: Key,
    tag: u8,
}

impl<'w> Probe<'w> {
    /// The probe of the word of `word`'s bytes.
    #[inline(always)]
    #[allow(clippy::inline_always)] // once per topic word, in the lookup's front end
    pub(super) fn of(word: &'w [u8]) -> Probe<'w> {
        Probe::keyed(word, Key::of_bytes(word))
    }

    /// The probe of `word`, shorter than 16 bytes, whose bytes start `chunk` (little-endian,
    /// the bytes past the word ignored): its key is the chunk masked to the word, with no
    /// per-length branch.
    #[inline(always)]
    #[allow(clippy::inline_always)] // once per topic word, in the lookup's front end
    pub(super) fn short(word: &'w [u8], chunk: u128) -> Probe<'w> {
        /// The mask of the first `len` bytes, for each `len` below 16.
        const MASKS: [u128; 16] = {
            let mut masks = [0; 16];
            let mut len = 0;
            while len < 16 {
                masks[len] = (1 << (8 * len)) - 1;
                len += 1;
            }
            masks
        };
        let len = word.len();
        debug_assert!(len < 16 && chunk.to_le_bytes()[..len] == *word);
        Probe::keyed(word, Key::short(chunk & MASKS[len & 15], len))
    }

    #[inline]
    fn keyed(word: &'w [u8], key: Key) -> Probe<'w> {
        Probe {
            word,
            key,
            tag: key.tag(),
        }
    }

    /// Whether both probe the same word with the same key.
    #[cfg(test)]
    pub(super) fn same_as(&self, other: &Probe<'_>) -> bool {
        self.word == other.word && self.key == other.key && self.tag == other.tag
    }
}

/// A level's children by literal word, each linked by a `C` (the trie's `nodes::Child`; a
/// parameter, so that this module needs nothing from the nodes it links). Cloning is O(1): the
/// versions share the array or map.
#[derive(Clone, Default)]
pub(super) enum Kids<C> {
    /// One to [`NARROW`] children, found by tag. (A variant of its own, not an `Option`, so
    /// that a lookup tells it from the rest with one compare.)
    Narrow(Narrow<C>),
    /// No child (a live level).
    #[default]
    None,
    /// More, in a persistent HAMT.
    Wide(Hamt<WideLabel, C>),
    /// None, in a tombstone: kept here rather than in a flag of its own so that a main node
    /// stays small.
    Tomb,
}

impl<C: Copy + Send + Sync> Kids<C> {
    /// Whether there is no child.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        match self {
            Kids::Narrow(_) => false,
            Kids::Wide(map) => map.is_empty(),
            Kids::None | Kids::Tomb => true,
        }
    }

    /// The child along `word`, whose key is `key`.
    #[inline]
    pub(super) fn get(&self, word: &str, key: Key) -> Option<&C> {
        self.find(&Probe::keyed(word.as_bytes(), key))
    }

    /// The child along `probe`'s word. Inlined into the lookup's loop: the narrow scan is a
    /// handful of instructions, cheaper than the call.
    #[inline(always)]
    #[allow(clippy::inline_always)] // measured: the call and its register saves cost more
    pub(super) fn find(&self, probe: &Probe<'_>) -> Option<&C> {
        // The narrow case first, with one test: the others are out of line.
        let Kids::Narrow(narrow) = self else {
            return self.find_other(probe);
        };
        let mut mask = narrow.candidates(probe.tag);
        while mask != 0 {
            let kid = &narrow.kids[mask.trailing_zeros() as usize];
            if kid.label.key == probe.key && (!probe.key.is_long() || kid.label.is_long(probe.word))
            {
                return Some(&kid.child);
            }
            mask &= mask - 1;
        }
        None
    }

    /// [`Kids::find`] in a wide level (or none).
    #[inline(never)]
    fn find_other(&self, probe: &Probe<'_>) -> Option<&C> {
        match self {
            Kids::Wide(map) => map.get(probe.key.hash(), |label| {
                label.is_bytes(probe.word, probe.key)
            }),
            Kids::Narrow(_) | Kids::None | Kids::Tomb => None,
        }
    }

    /// Asks for a narrow level's children ahead of a [`Kids::find`] (a wide level's map is
    /// left to the find).
    #[inline]
    pub(super) fn prefetch(&self) {
        if let Kids::Narrow(narrow) = self {
            prefetch(narrow.kids.as_ptr().cast());
        }
    }

    /// Whether these are a tombstone's.
    #[inline]
    pub(super) fn is_tomb(&self) -> bool {
        matches!(self, Kids::Tomb)
    }

    /// A version with `child` along `word`, which has no child here (an insert adds only
    /// missing levels, so no search for a child to replace), its HAMT nodes recorded in
    /// `delta`. Not for a tombstone, which never changes.
    pub(super) fn with(&self, word: &str, key: Key, child: C, delta: &mut Delta) -> Kids<C> {
        debug_assert!(self.label(word, key).is_none(), "a new child only");
        let label = Label::new(word, key, delta);
        match self {
            Kids::Narrow(_) | Kids::None | Kids::Tomb => {
                let kids = match self {
                    Kids::Narrow(narrow) => &narrow.kids[..],
                    _ => &[],
                };
                if kids.len() == NARROW {
                    let mut map = Hamt::default();
                    for kid in kids {
                        map = map.insert(WideLabel::of(kid.label), kid.child, |_| false, delta);
                    }
                    return Kids::Wide(map.insert(WideLabel::of(label), child, |_| false, delta));
                }
                let kid = Kid { label, child };
                // An exact-size iterator: the shared array is allocated once, in place.
                let next: Arc<[Kid<C>]> = kids.iter().copied().chain([kid]).collect();
                Kids::Narrow(Narrow::of(next))
            }
            Kids::Wide(map) => {
                Kids::Wide(map.insert(WideLabel::of(label), child, |_| false, delta))
            }
        }
    }

    /// The label of the child along `word`, if there is one.
    fn label(&self, word: &str, key: Key) -> Option<Label> {
        match self {
            Kids::None | Kids::Tomb => None,
            Kids::Narrow(Narrow { kids, .. }) => kids
                .iter()
                .find(|kid| kid.label.is(word, key))
                .map(|kid| kid.label),
            Kids::Wide(map) => {
                let found = std::cell::Cell::new(None);
                map.get(key.hash(), |l| {
                    let is = l.is(word, key);
                    if is {
                        found.set(Some(l.label()));
                    }
                    is
                });
                found.get()
            }
        }
    }

    /// A version without the child along `word`, its HAMT nodes recorded in `delta`, or `None`
    /// if there is none.
    pub(super) fn without(&self, word: &str, key: Key, delta: &mut Delta) -> Option<Kids<C>> {
        let label = self.label(word, key)?;
        // The removed entry's long word goes with it.
        label.for_each_array(&mut |array| delta.stale(array));
        match self {
            Kids::None | Kids::Tomb => None,
            Kids::Narrow(Narrow { kids, .. }) => {
                let at = kids.iter().position(|kid| kid.label.is(word, key))?;
                if kids.len() == 1 {
                    return Some(Kids::None);
                }
                let next: Arc<[Kid<C>]> = kids
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != at)
                    .map(|(_, kid)| *kid)
                    .collect();
                Some(Kids::Narrow(Narrow::of(next)))
            }
            Kids::Wide(map) => {
                let map = map.remove(key.hash(), |l| l.is(word, key), delta)?;
                if map.len() < NARROW / 2 {
                    // Back to an array: no version links the map's nodes any more.
                    map.for_each_array(&mut |array| delta.stale(array));
                    let mut kids = Vec::with_capacity(map.len());
                    map.for_each(|label, child| {
                        kids.push(Kid {
                            label: label.label(),
                            child: *child,
                        });
                    });
                    return Some(if kids.is_empty() {
                        Kids::None
                    } else {
                        Kids::Narrow(Narrow::of(kids.into()))
                    });
                }
                Some(Kids::Wide(map))
            }
        }
    }

    /// Calls `f` on every shared array of this version (a wide level's HAMT nodes, long words).
    pub(super) fn for_each_array(&self, f: &mut impl FnMut(Array)) {
        match self {
            Kids::None | Kids::Tomb => {}
            Kids::Narrow(narrow) => {
                narrow
                    .kids
                    .iter()
                    .for_each(|kid| kid.label.for_each_array(f));
            }
            Kids::Wide(map) => {
                map.for_each(|label, _| label.label().for_each_array(f));
                map.for_each_array(f);
            }
        }
    }

    /// Calls `f` on every child link.
    pub(super) fn for_each(&self, f: &mut impl FnMut(C)) {
        match self {
            Kids::None | Kids::Tomb => {}
            Kids::Narrow(narrow) => narrow.kids.iter().for_each(|kid| f(kid.child)),
            Kids::Wide(map) => map.for_each(|_, child| f(*child)),
        }
    }

    /// Calls `f` on every child link with the spelling of its word.
    pub(super) fn for_each_spelt<'k>(&'k self, f: &mut impl FnMut(Spelling, &'k C)) {
        match self {
            Kids::None | Kids::Tomb => {}
            Kids::Narrow(narrow) => narrow
                .kids
                .iter()
                .for_each(|kid| f(Spelling::of(kid.label), &kid.child)),
            Kids::Wide(map) => map.for_each(|label, child| f(Spelling::of(label.label()), child)),
        }
    }
}

/// A child's word as its label keeps it, for the relation walks that spell the patterns they
/// find: a short word's key holds its bytes, a long word's label its copy.
#[derive(Clone, Copy)]
pub(super) enum Spelling {
    /// The key of a word of at most 15 bytes: the bytes, then the length in the top byte.
    Short(Key),
    /// A long word's copy, valid as long as the level it was read from (under the pin).
    Long(LongWord),
}

impl Spelling {
    fn of(label: Label) -> Spelling {
        match label.long {
            Some(long) => Spelling::Long(long),
            None => Spelling::Short(label.key),
        }
    }

    /// Calls `f` with the word.
    pub(super) fn with<R>(&self, f: impl for<'w> FnOnce(&'w str) -> R) -> R {
        match self {
            Spelling::Short(key) => {
                let mut bytes = [0u8; 16];
                bytes[..8].copy_from_slice(&key.low.to_le_bytes());
                bytes[8..].copy_from_slice(&key.high.to_le_bytes());
                let len = usize::from(bytes[15]);
                f(std::str::from_utf8(&bytes[..len]).expect("a key holds a word's UTF-8 bytes"))
            }
            Spelling::Long(long) => f(long.get()),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::Key;
    use crate::bytes::swar_positions;

    #[test]
    fn tag_positions_are_the_same_with_and_without_simd() {
        let mut bytes = [0u8; 16];
        for (i, b) in bytes.iter_mut().enumerate() {
            // Repeats, neighbours, the top bit set and clear, zero padding at the end.
            *b = [0x80, 0x81, 0xFF, 0x7F, 0x80, 0x01, 0xFE, 0x81][i % 8]
                & if i < 13 { 0xFF } else { 0 };
        }
        for byte in 0..=u8::MAX {
            let expected = bytes
                .iter()
                .enumerate()
                .filter(|&(_, &b)| b == byte)
                .fold(0u32, |bits, (i, _)| bits | 1 << i);
            assert_eq!(swar_positions(&bytes, byte), expected, "{byte:#x}");
            #[cfg(target_arch = "x86_64")]
            assert_eq!(
                crate::bytes::positions_of(&bytes, byte),
                expected,
                "{byte:#x}"
            );
            // A tag (top bit set) never matches the padding.
            if byte >= 0x80 {
                assert_eq!(expected >> 13, 0);
            }
        }
    }

    #[test]
    fn a_word_keyed_from_its_topic_chunk_is_keyed_as_alone() {
        // The tokenizer hands a word's bytes with whatever follows it in the topic.
        let topic = b"0123456789abcdef.xyz";
        for start in 0..topic.len() {
            for end in start..topic.len().min(start + 15) {
                let word = &topic[start..end];
                let mut chunk = [0u8; 16];
                let n = (topic.len() - start).min(16);
                chunk[..n].copy_from_slice(&topic[start..start + n]);
                let short = super::Probe::short(word, u128::from_le_bytes(chunk));
                assert!(short.same_as(&super::Probe::of(word)), "{start}..{end}");
            }
        }
    }

    #[test]
    fn a_narrow_entry_is_half_a_cache_line() {
        // A label and a link (a non-null pointer, as `raw::Child` is).
        assert_eq!(std::mem::size_of::<super::Kid<std::ptr::NonNull<u8>>>(), 32);
    }

    #[test]
    fn a_wide_label_unpacks_to_the_label_it_packs() {
        assert_eq!(super::super::raw::LONG_KEY, super::LONG);
        let mut delta = super::Delta::default();
        for word in [
            "",
            "x",
            "fifteen-bytes-x",
            "sixteen-bytes-xy",
            "a much longer word, é",
        ] {
            let key = Key::of(word);
            let wide = super::WideLabel::of(super::Label::new(word, key, &mut delta));
            let label = wide.label();
            assert_eq!(label.key, key, "{word:?}");
            assert_eq!(
                label.long.map(|long| long.get().to_owned()),
                key.is_long().then(|| word.to_owned())
            );
            assert!(wide.is(word, key) && wide.is_bytes(word.as_bytes(), key));
            let other = format!("{word}!");
            assert!(!wide.is(&other, Key::of(&other)));
        }
        delta.free_all_versions();
    }

    #[test]
    fn keys_are_the_words_for_short_words_and_tell_every_pair_apart() {
        let words: Vec<String> = (0..=20)
            .flat_map(|len| {
                ["", "x", "é"]
                    .map(|tail| format!("{}{tail}", "abcdefghijklmnopqrstu"[..len].to_owned()))
            })
            .collect();
        for a in &words {
            let key = Key::of(a);
            if a.len() < 16 {
                let mut expected = [0u8; 16];
                expected[..a.len()].copy_from_slice(a.as_bytes());
                expected[15] = a.len() as u8;
                let bits = u128::from(key.low) | (u128::from(key.high) << 64);
                assert_eq!(bits.to_le_bytes(), expected, "{a:?}");
            }
            assert_eq!(key.is_long(), a.len() >= 16);
            for b in &words {
                assert_eq!(key == Key::of(b), a == b, "{a:?} {b:?}");
            }
        }
    }
}
