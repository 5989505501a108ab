//! The shared arrays of the CS-trie's persistent maps (a wide level's HAMT nodes) and the long
//! words of its child entries: plain pointers with no reference count, owned by the current
//! version of the main node that links them (see "Who owns a shared array" in [`super`]), and
//! the [`Delta`] an update keeps of the arrays it allocated and stopped linking.

use std::ptr::NonNull;

use smallvec::SmallVec;

use super::pool;

/// An immutable array shared by the versions of a persistent map (a HAMT node's slots): a plain
/// pointer, no reference count. Who frees it is in the module docs ("Who owns a shared array").
/// A thin pointer with a 32-bit length and a 32-bit tag its owner may use (a HAMT node's bitmap):
/// 16 bytes, so that a HAMT slot linking a node is no larger than a word child's entry.
pub(in super::super) struct Shared<T> {
    items: NonNull<T>,
    len: u32,
    tag: u32,
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Shared<T> {}

// SAFETY: a `Shared` is a pointer to an immutable `[T]`, so sending or sharing it shares `&[T]`
// (hence `T: Sync`), and the thread that frees it drops the `T`s (hence `T: Send`).
unsafe impl<T: Send + Sync> Send for Shared<T> {}
// SAFETY: as for `Send`.
unsafe impl<T: Send + Sync> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// A new array of the items of `parts` in turn, in a block of the thread's cache
    /// ([`pool`]), tagged `tag`: the caller lists it as fresh in the update's [`Delta`].
    #[inline]
    pub(in super::super) fn concat(parts: &[&[T]], tag: u32) -> Self
    where
        T: Copy,
    {
        let slice = pool::new_slice(parts);
        Shared {
            items: slice.cast::<T>(),
            len: u32::try_from(slice.len()).expect("a node of at most a few hundred items"),
            tag,
        }
    }

    /// The tag the array was made with.
    #[inline]
    pub(in super::super) fn tag(&self) -> u32 {
        self.tag
    }

    /// The items. A `Shared` is only ever read through the node that links it (a main node
    /// loaded under a pin, or a HAMT slot reached from one), or by the writer that made it.
    #[inline]
    pub(in super::super) fn get(&self) -> &[T] {
        // SAFETY: the array is freed only (a) through the epoch, retired by the CAS that
        // replaced the last current version linking it, so after every pin under which that
        // version (or a HAMT slot of it) could be read; (b) at once by a failed CAS or a dropped
        // unpublished chain, which never published it; or (c) with the matcher (`&mut`). The
        // node this handle is read from was reached under such a pin, or is the writer's own.
        // `items` and `len` are those of the block `concat` filled (dangling and 0 for none).
        unsafe { std::slice::from_raw_parts(self.items.as_ptr(), self.len as usize) }
    }
}

/// A long word kept beside its hashed key in a child entry: a thin pointer with no reference
/// count, so that an entry is `Copy` (a path copy is a `memcpy`) and stays 32 bytes. It is owned
/// like a [`Shared`] array: by the current versions linking its entry; the update that removes
/// the entry lists it as stale, the one that adds it as fresh ([`Array::of_word`]).
#[derive(Clone, Copy)]
pub(in super::super) struct LongWord(NonNull<String>);

// SAFETY: a pointer to an immutable `String`, freed by the protocol of the module docs.
unsafe impl Send for LongWord {}
// SAFETY: as for `Send`: sharing it only shares `&str` access.
unsafe impl Sync for LongWord {}

impl LongWord {
    /// A new copy of `word`: the caller lists it as fresh in the update's [`Delta`].
    pub(in super::super) fn new(word: &str) -> LongWord {
        // SAFETY: `Box::into_raw` never returns null.
        LongWord(unsafe { NonNull::new_unchecked(Box::into_raw(Box::new(word.to_owned()))) })
    }

    /// The word. Read, like a [`Shared`] array, only through the entry that holds it.
    #[inline]
    pub(in super::super) fn get(&self) -> &str {
        // SAFETY: as for `Shared::get`: freed only through the epoch after the last version
        // linking its entry was replaced, or unpublished, or with the matcher.
        unsafe { self.0.as_ref() }
    }
}

/// The top byte of a long word's 16-byte key (`kids::Key`): the key is then a 64-bit hash and
/// the bits below this byte are free.
pub(in super::super) const LONG_KEY: u8 = 0xFF;
/// The bits of a long word's key that [`Packed`] fills with the address of its copy: every
/// user-space address on the targets this builds for (at most 56 bits, with 5-level paging).
const ADDRESS: u64 = (1 << 56) - 1;

/// A word's 16-byte key with, for a long word, the address of its copy ([`LongWord`]) in the
/// key's free bits: a wide level's entry is then 24 bytes with its child, not 32. Built only by
/// [`Packed::new`], so those bits are always a live copy's address when the key is long.
#[derive(Clone, Copy)]
pub(in super::super) struct Packed {
    low: u64,
    high: u64,
}

impl Packed {
    /// The key `(low, high)` with `long`, the word's copy, which a long key (top byte
    /// [`LONG_KEY`]) must have and a short one must not.
    pub(in super::super) fn new((low, high): (u64, u64), long: Option<LongWord>) -> Packed {
        let is_long = (high >> 56) as u8 == LONG_KEY;
        assert_eq!(
            is_long,
            long.is_some(),
            "a long key and its word go together"
        );
        let high = match long {
            None => high,
            Some(long) => {
                let address = long.0.as_ptr() as usize as u64;
                assert!(
                    high & ADDRESS == 0 && address & !ADDRESS == 0,
                    "a long key's free bits hold a user-space address"
                );
                high | address
            }
        };
        Packed { low, high }
    }

    /// The key, as given to [`Packed::new`].
    #[inline]
    pub(in super::super) fn key(self) -> (u64, u64) {
        if self.is_long() {
            (self.low, self.high & !ADDRESS)
        } else {
            (self.low, self.high)
        }
    }

    /// Whether the key is a long word's.
    #[inline]
    fn is_long(self) -> bool {
        (self.high >> 56) as u8 == LONG_KEY
    }

    /// The long word's copy, if the key is long.
    #[inline]
    pub(in super::super) fn long(self) -> Option<LongWord> {
        self.is_long().then(|| {
            let address = (self.high & ADDRESS) as usize;
            // SAFETY: `new` stored the address of a live `LongWord`'s `String` (non-null) in the
            // free bits of every long key (an integer cast exposes the pointer's provenance).
            LongWord(unsafe { NonNull::new_unchecked(address as *mut String) })
        })
    }
}

/// A [`Shared`] array of any item type, as what freeing it needs: its address and one word of
/// layout (its size in bytes, its alignment, and whether it is a long word's `String`, the one
/// item type with a destructor). Two words, so that a retired main node's box holds two of them
/// and stays within glibc's fast bins (at most 120 bytes).
pub(in super::super) struct Array {
    items: NonNull<u8>,
    layout: usize,
}

// SAFETY: made only from a `Shared<T>`, which is `Send` (so `T: Send + Sync`), or a `LongWord`.
unsafe impl Send for Array {}

/// In [`Array::layout`]: the flag of a long word's boxed `String`.
const WORD: usize = 1 << 63;
/// In [`Array::layout`]: where the base-2 logarithm of the alignment sits.
const ALIGN_SHIFT: u32 = 56;
/// In [`Array::layout`]: the size in bytes.
const BYTES: usize = (1 << ALIGN_SHIFT) - 1;

impl Array {
    /// The array `shared` points to. Its items have no destructor (a HAMT node's slots are
    /// `Copy`), so freeing it only returns its memory.
    pub(in super::super) fn of<T: Send + Sync>(shared: Shared<T>) -> Array {
        const { assert!(!std::mem::needs_drop::<T>(), "items without destructors") };
        let bytes = std::mem::size_of_val(shared.get());
        debug_assert!(bytes <= BYTES);
        Array {
            items: shared.items.cast::<u8>(),
            layout: bytes | ((std::mem::align_of::<T>().trailing_zeros() as usize) << ALIGN_SHIFT),
        }
    }

    /// A long word's boxed `String`.
    pub(in super::super) fn of_word(word: LongWord) -> Array {
        Array {
            items: word.0.cast::<u8>(),
            layout: WORD,
        }
    }

    /// Frees the array and drops its items.
    ///
    /// # Safety
    /// No thread can still read the array, and it is freed once.
    pub(in super::super) unsafe fn free(self) {
        if self.layout & WORD != 0 {
            // SAFETY: made by `of_word` from a `LongWord`, a `Box<String>`; per this contract.
            drop(unsafe { Box::from_raw(self.items.cast::<String>().as_ptr()) });
            return;
        }
        let bytes = self.layout & BYTES;
        if bytes == 0 {
            // An empty boxed slice owns no memory.
            return;
        }
        let align = 1usize << (self.layout >> ALIGN_SHIFT);
        // SAFETY: made by `of` from a `Shared<T>` of `bytes` bytes aligned to `align`, which
        // `pool::new_slice` allocated with that layout, whose items need no drop; per this
        // function's contract.
        unsafe {
            pool::dealloc(
                self.items,
                std::alloc::Layout::from_size_align_unchecked(bytes, align),
            );
        }
    }
}

/// What an update of a main node did to its shared arrays: the ones it allocated (`fresh`) and
/// the ones of the version it replaces that the new version no longer links (`stale`). An array
/// may be both (allocated and dropped again within the update: freed either way, once).
#[derive(Default)]
pub(in super::super) struct Delta {
    pub(in super::super) fresh: SmallVec<[Array; 4]>,
    pub(in super::super) stale: SmallVec<[Array; 4]>,
}

impl Delta {
    /// Records an array the update allocated.
    #[inline]
    pub(in super::super) fn fresh(&mut self, array: Array) {
        self.fresh.push(array);
    }

    /// Records an array of the replaced version that the new version does not link.
    #[inline]
    pub(in super::super) fn stale(&mut self, array: Array) {
        self.stale.push(array);
    }

    /// For an update whose new version is not installed by a CAS of its own but built into a
    /// new, unpublished I-node (a [`Fresh`](super::Fresh) chain): its arrays now belong to
    /// that version.
    pub(in super::super) fn keep(self) {
        debug_assert!(self.stale.is_empty(), "a chain is built from empty levels");
    }

    /// For tests that keep every version of a map and no trie: frees every array the updates
    /// recorded in this delta allocated, which is every array of every version.
    #[cfg(all(test, not(loom)))]
    pub(in super::super) fn free_all_versions(self) {
        self.discard();
    }

    /// Frees the fresh arrays of an update that was not published (its stale ones stay with
    /// the version it did not replace; an array both fresh and stale is freed here, once).
    pub(in super::super) fn discard(self) {
        for array in self.fresh {
            // SAFETY: fresh arrays were allocated by this update, which was never published,
            // so no other thread saw them; each is listed once.
            unsafe { array.free() };
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{Array, Delta, LongWord, Shared};

    #[test]
    fn a_main_node_and_an_array_fit_one_deferred_function() {
        // crossbeam-epoch keeps a deferred function of at most three words inline; more is
        // boxed (an allocation per retirement).
        assert_eq!(std::mem::size_of::<Array>(), 16);
        assert!(std::mem::size_of::<(*mut u8, Option<Array>)>() <= 24);
    }

    #[test]
    fn arrays_free_what_they_were_made_of() {
        // Under valgrind or ASan (`make valgrind`, `make asan`) a wrong layout or a leak fails.
        let mut delta = Delta::default();
        delta.fresh(Array::of(Shared::concat(&[&[7u64; 5]], 0)));
        let bytes = Shared::concat(&[&[1u8; 3], &[2u8; 1]], 9);
        assert_eq!((bytes.get(), bytes.tag()), (&[1, 1, 1, 2][..], 9));
        delta.fresh(Array::of(bytes));
        delta.fresh(Array::of(Shared::<u64>::concat(&[], 0)));
        delta.fresh(Array::of(Shared::concat(&[&[9u64; 100]], 0)));
        delta.fresh(Array::of_word(LongWord::new(
            "a word of more than fifteen bytes",
        )));
        delta.free_all_versions();
    }
}
