//! A per-thread cache of freed node memory: the CS-trie's main nodes, I-nodes and HAMT nodes
//! are allocated and freed here rather than straight from the global allocator.
//!
//! Why: an insert allocates about four small blocks and retires as many, but the epoch frees
//! retired blocks in bursts (a collection runs a few hundred deferred frees at once). glibc's
//! per-thread cache holds only 7 blocks of a size, so a burst spills into its bins, and the
//! next allocations take its slow path (~190 instructions each, measured with callgrind). This
//! cache keeps up to [`BUDGET`] bytes per size class per thread, last in first out (so a reused
//! block is likely still in the CPU cache), and hands the rest back to the global allocator.
//!
//! Blocks up to [`LARGEST`] bytes are grouped by 16-byte size class, and every block of a class
//! is allocated from the global allocator with the same layout (the class's size, 16-byte
//! aligned), so any block of a class may serve any request of that class and be returned with
//! that layout. Larger blocks and zero-sized ones bypass the cache.
//!
//! A thread's cache is freed when the thread exits; a free that runs after that (an epoch
//! collection during thread teardown) goes to the global allocator. Under loom, and with
//! `--cfg topicmatch_no_pool` (the sanitizer runs that should see every
//! use of a freed node), nothing is cached: every block goes straight back.

use std::alloc::Layout;
use std::ptr::NonNull;

/// Size classes are multiples of this (glibc's chunk granularity on 64-bit targets).
const GRAIN: usize = 16;
/// The largest block the cache keeps: a full 16-slot HAMT node of 24-byte slots is 384 bytes,
/// a narrow level's 16 entries of 32 bytes 512.
const LARGEST: usize = 512;
/// Number of size classes.
#[cfg(not(any(loom, topicmatch_no_pool)))]
const CLASSES: usize = LARGEST / GRAIN;
/// Most bytes kept per size class per thread: a burst of a few hundred freed nodes of a
/// class fits (128 full HAMT nodes, 682 main nodes), and a thread keeps at most 2 MiB.
#[cfg(not(any(loom, topicmatch_no_pool)))]
const BUDGET: usize = 64 * 1024;

/// The size class of `layout` (1-based: class `c` holds blocks of `c * GRAIN` bytes), or `None`
/// if the cache does not keep such blocks.
#[inline]
fn class_of(layout: Layout) -> Option<usize> {
    let size = layout.size();
    (size != 0 && size <= LARGEST && layout.align() <= GRAIN).then(|| size.div_ceil(GRAIN))
}

/// The layout every block of class `class` is allocated with.
#[inline]
fn class_layout(class: usize) -> Layout {
    // Cannot fail: a multiple of 16 up to 512, aligned to 16.
    Layout::from_size_align(class * GRAIN, GRAIN).expect("a small power-of-two alignment")
}

/// Allocates a block for `layout` (not zero-sized). Free it with [`dealloc`] and the same
/// layout.
#[inline]
pub(super) fn alloc(layout: Layout) -> NonNull<u8> {
    debug_assert!(layout.size() != 0);
    let layout = match class_of(layout) {
        Some(class) => {
            #[cfg(not(any(loom, topicmatch_no_pool)))]
            if let Some(block) = cache::pop(class) {
                return block;
            }
            class_layout(class)
        }
        None => layout,
    };
    // SAFETY: `layout` is not zero-sized (asserted by the caller's contract: a class layout
    // is at least 16 bytes, and other layouts come from the caller unchanged).
    let block = unsafe { std::alloc::alloc(layout) };
    NonNull::new(block).unwrap_or_else(|| std::alloc::handle_alloc_error(layout))
}

/// Frees a block that [`alloc`] returned for `layout`.
///
/// # Safety
/// `block` came from [`alloc`] with `layout` (on any thread), is freed once, and nothing reads
/// or writes it any more.
#[inline]
pub(super) unsafe fn dealloc(block: NonNull<u8>, layout: Layout) {
    let layout = match class_of(layout) {
        Some(class) => {
            #[cfg(not(any(loom, topicmatch_no_pool)))]
            // SAFETY: per this function's contract, a block of `class` that is ours to reuse.
            if unsafe { cache::push(class, block) } {
                return;
            }
            class_layout(class)
        }
        None => layout,
    };
    // SAFETY: `alloc` allocated the block with this layout (its class's, or the caller's own
    // for a block the cache does not keep) from the global allocator; per the contract above.
    unsafe { std::alloc::dealloc(block.as_ptr(), layout) };
}

/// Moves `value` into a new block.
#[inline]
pub(super) fn new_box<T>(value: T) -> NonNull<T> {
    let block = alloc(Layout::new::<T>()).cast::<T>();
    // SAFETY: a fresh block of `T`'s size, aligned for `T` (a class block is 16-byte aligned,
    // and only alignments up to 16 get one).
    unsafe { block.as_ptr().write(value) };
    block
}

/// Moves `value` into a block of this thread's cache if it has one free (no call to the
/// global allocator), or gives it back. Free the block like one from [`new_box`].
#[cfg(not(loom))]
#[inline]
pub(super) fn cached_box<T>(value: T) -> Result<NonNull<T>, T> {
    #[cfg(not(any(loom, topicmatch_no_pool)))]
    if let Some(block) = class_of(Layout::new::<T>()).and_then(cache::pop) {
        let block = block.cast::<T>();
        // SAFETY: a free block of `T`'s class: `T`'s size rounded up, 16-byte aligned, and
        // only alignments up to 16 get a class.
        unsafe { block.as_ptr().write(value) };
        return Ok(block);
    }
    Err(value)
}

/// Drops the value in a block from [`new_box`] and frees the block.
///
/// # Safety
/// `block` came from [`new_box`], holds a live `T`, is freed once, and nothing reads or writes
/// it any more.
#[inline]
pub(super) unsafe fn free_box<T>(block: NonNull<T>) {
    // SAFETY: per this function's contract.
    unsafe {
        std::ptr::drop_in_place(block.as_ptr());
        dealloc(block.cast::<u8>(), Layout::new::<T>());
    }
}

/// A new block holding the concatenation of `parts` (no block if that is empty). Free it with
/// [`dealloc`] and the layout of its items (none if it is empty).
#[inline]
pub(super) fn new_slice<T: Copy>(parts: &[&[T]]) -> NonNull<[T]> {
    let len = parts.iter().map(|part| part.len()).sum();
    let layout = Layout::array::<T>(len).expect("a node of at most a few hundred bytes");
    if layout.size() == 0 {
        return NonNull::slice_from_raw_parts(NonNull::dangling(), len);
    }
    let block = alloc(layout).cast::<T>();
    let mut at = 0;
    for part in parts {
        // SAFETY: the block holds `len` items, and the parts fill `at..at + part.len()` of it
        // in turn, from memory that is not the fresh block.
        unsafe {
            std::ptr::copy_nonoverlapping(part.as_ptr(), block.as_ptr().add(at), part.len());
        }
        at += part.len();
    }
    NonNull::slice_from_raw_parts(block, len)
}

/// The per-thread free lists.
#[cfg(not(any(loom, topicmatch_no_pool)))]
mod cache {
    use std::cell::UnsafeCell;
    use std::ptr::{self, NonNull};

    use super::{class_layout, BUDGET, CLASSES, GRAIN};

    /// A free block: its first word links the next one.
    struct Free {
        next: *mut Free,
    }

    /// One size class's free blocks.
    #[derive(Clone, Copy)]
    struct List {
        head: *mut Free,
        len: usize,
    }

    /// A thread's free lists, index `class - 1`.
    struct Cache([List; CLASSES]);

    impl Drop for Cache {
        fn drop(&mut self) {
            for (i, list) in self.0.iter_mut().enumerate() {
                let mut block = list.head;
                while !block.is_null() {
                    // SAFETY: a free block of this thread's list, allocated with its class's
                    // layout and read by no one else; its first word links the next one.
                    unsafe {
                        let next = (*block).next;
                        std::alloc::dealloc(block.cast::<u8>(), class_layout(i + 1));
                        block = next;
                    }
                }
                list.head = ptr::null_mut();
                list.len = 0;
            }
        }
    }

    thread_local! {
        static CACHE: UnsafeCell<Cache> = const {
            UnsafeCell::new(Cache([List { head: ptr::null_mut(), len: 0 }; CLASSES]))
        };
    }

    /// A free block of `class`, if this thread has one.
    #[inline]
    pub(super) fn pop(class: usize) -> Option<NonNull<u8>> {
        CACHE
            .try_with(|cache| {
                // SAFETY: this thread's cache, borrowed only inside `pop` and `push`, which
                // call nothing that could re-enter them.
                let list = unsafe { &mut (*cache.get()).0[class - 1] };
                let block = NonNull::new(list.head)?;
                // SAFETY: a free block of the list; its first word links the next one.
                list.head = unsafe { block.as_ref().next };
                list.len -= 1;
                Some(block.cast::<u8>())
            })
            .ok()
            .flatten()
    }

    /// Keeps `block` of `class` for reuse, unless this thread's list of the class is full (or
    /// its cache is gone, at thread exit): then returns false and the caller frees it.
    ///
    /// # Safety
    /// `block` is a block of `class` (allocated with `class_layout(class)`) that nothing reads
    /// or writes any more.
    #[inline]
    pub(super) unsafe fn push(class: usize, block: NonNull<u8>) -> bool {
        CACHE
            .try_with(|cache| {
                // SAFETY: as in `pop`.
                let list = unsafe { &mut (*cache.get()).0[class - 1] };
                if list.len >= BUDGET / (class * GRAIN) {
                    return false;
                }
                let free = block.cast::<Free>().as_ptr();
                // SAFETY: the block is ours (this function's contract), at least 16 bytes and
                // 16-byte aligned, so it holds the link.
                unsafe { free.write(Free { next: list.head }) };
                list.head = free;
                list.len += 1;
                true
            })
            .unwrap_or(false)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{alloc, dealloc, free_box, new_box, new_slice};
    use std::alloc::Layout;

    #[test]
    fn blocks_are_reused_and_hold_what_was_written() {
        // Under valgrind or ASan (`make valgrind`, `make asan`) a wrong layout or a leak fails.
        let layout = Layout::new::<[u64; 11]>();
        let a = alloc(layout);
        // SAFETY: `a` came from `alloc` with `layout` and is not used after.
        unsafe { dealloc(a, layout) };
        let b = new_box([7u64; 11]);
        #[cfg(not(topicmatch_no_pool))]
        assert_eq!(
            a.as_ptr(),
            b.as_ptr().cast::<u8>(),
            "the cache hands back its last block"
        );
        // SAFETY: `b` holds a live value made by `new_box`.
        assert_eq!(unsafe { *b.as_ptr() }, [7; 11]);
        // SAFETY: `b` came from `new_box`, freed once.
        unsafe { free_box(b) };
        let parts: [&[u32]; 3] = [&[1, 2], &[3], &[]];
        let slice = new_slice(&parts);
        // SAFETY: a live slice from `new_slice`.
        assert_eq!(unsafe { slice.as_ref() }, &[1, 2, 3]);
        // SAFETY: from `new_slice`, i.e. `alloc` with the array's layout; freed once.
        unsafe { dealloc(slice.cast::<u8>(), Layout::array::<u32>(3).unwrap()) };
        // A block too large to keep goes straight through.
        let big = Layout::array::<u64>(100).unwrap();
        // SAFETY: from `alloc` with `big`, freed once.
        unsafe { dealloc(alloc(big), big) };
    }

    #[test]
    fn a_full_class_hands_blocks_back() {
        let layout = Layout::new::<[u8; 512]>();
        let blocks: Vec<_> = (0..1000).map(|_| alloc(layout)).collect();
        for block in blocks {
            // SAFETY: each from `alloc` with `layout`, freed once.
            unsafe { dealloc(block, layout) };
        }
    }
}
