//! Every `unsafe` operation of the CS-trie, behind a small safe API: the I-node's atomic main
//! pointer (load, compare-and-swap, teardown), the links from main nodes to child I-nodes, and
//! memory reclamation.
//!
//! Reclamation is crossbeam-epoch's: a [`Pin`] is an epoch guard, and a main node replaced by
//! a successful CAS, or an I-node unlinked from its parent, is destroyed only once every thread
//! pinned at that moment has unpinned. Under `--cfg loom` (whose model checker cannot see
//! crossbeam-epoch's own atomics) retired nodes are instead kept until the matcher is dropped:
//! never freeing early is trivially safe, and the models then check the CAS protocol itself.
//!
//! # Who owns an I-node
//! A main node links its children by [`Child`], a plain pointer with no reference count, so
//! that copying a level (the path copy of its array or HAMT) touches no child's memory. Every
//! I-node is linked from exactly one *current* main node, its parent's (retired old versions
//! of the parent may still point to it, without owning it). It is freed in one of three ways:
//! - unlinked from its parent by a successful CAS ([`INode::cas_unlinking`]: it is a tombstone
//!   then, so it holds nothing below it), through the epoch;
//! - never published: a [`Fresh`] chain whose CAS failed frees itself when dropped;
//! - with the whole trie, when the matcher is dropped ([`INode::free_children`]).

use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use super::nodes::{Edge, Main};
use crate::sync::{AtomicPtr, Ordering};

/// An indirection node: the one mutable cell of the trie. Its main node is immutable and is
/// replaced whole by compare-and-swap. Invariant: `main` is never null while the node is
/// reachable, and points to a main node that this I-node owns.
pub(super) struct INode {
    main: AtomicPtr<Main>,
}

impl INode {
    /// A new I-node owning `main`.
    pub(super) fn new(main: Main) -> Self {
        INode {
            main: AtomicPtr::new(Box::into_raw(Box::new(main))),
        }
    }

    /// The current main node, valid while `pin` is held.
    #[inline]
    pub(super) fn load<'g>(&'g self, _pin: &'g Pin<'_>) -> &'g Main {
        // Acquire pairs with the Release of the successful `cas` (or the initialisation in
        // `new`, ordered by whatever published this I-node) that stored the pointer, so the main
        // node's fields and every node it points to are visible.
        let main = self.main.load(Ordering::Acquire);
        // SAFETY: `main` is non-null while the I-node is reachable (we reached it under `pin`,
        // see `Drop`). A main node is freed only (a) through `Pin::retire` after a CAS unlinked
        // it, which waits until every guard active at that moment is dropped, so not before
        // `pin` is; or (b) when its I-node is dropped, which happens once no published main
        // node refers to the I-node any more, each of those having itself been retired after
        // `pin` began (the argument of docs/CONCURRENCY.md, "Reclamation").
        unsafe { &*main }
    }

    /// Replaces `current` (the value `load` returned under `pin`) with `new`. On success the old
    /// main node is retired; on failure `new` is dropped and the caller reloads.
    pub(super) fn cas(&self, current: &Main, new: Main, pin: &Pin<'_>) -> bool {
        let new = Box::into_raw(Box::new(new));
        // Success: Release publishes `new` and the nodes built for it to the Acquire loads of
        // `load`; Acquire orders our teardown of `current` after its writer's stores. Failure:
        // Acquire is not needed for correctness (the caller reloads with Acquire) but keeps the
        // argument uniform.
        let swapped = self.main.compare_exchange(
            ptr::from_ref(current).cast_mut(),
            new,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
        #[allow(clippy::single_match_else)] // the two outcomes read better side by side
        match swapped {
            Ok(old) => {
                // SAFETY: the CAS unlinked `old` from the only place it was published, so no
                // thread pinned from now on can reach it; `retire` defers the free past the
                // threads pinned now. Pinned since our load, `old` cannot have been freed and
                // reused at the same address (no ABA).
                unsafe { pin.retire(old) };
                true
            }
            Err(_) => {
                // SAFETY: `new` came from `Box::into_raw` above and was never published.
                drop(unsafe { Box::from_raw(new) });
                false
            }
        }
    }

    /// [`cas`](Self::cas) for a contraction: `new` is `current` without `child`, which `current`
    /// links along `edge` and which is a tombstone. On success `child` is unlinked from the trie
    /// and retired with its tombstone.
    pub(super) fn cas_unlinking(
        &self,
        current: &Main,
        new: Main,
        (edge, child): (Edge<'_>, Child),
        pin: &Pin<'_>,
    ) -> bool {
        assert!(
            current.child(edge) == Some(&child)
                && new.child(edge).is_none()
                && child.get(pin).load(pin).is_tomb(),
            "an unlink removes a tombstoned child"
        );
        if !self.cas(current, new, pin) {
            return false;
        }
        // SAFETY: the CAS replaced the only current main node linking `child` (each I-node is
        // linked from one current main node, its parent's, and `new` does not link it), so no
        // thread pinning from now on can reach it; it is retired once, by the one CAS that
        // unlinked it. It is a tombstone, which links nothing, so nothing else is freed with it.
        unsafe { pin.retire_inode(child.0.as_ptr()) };
        true
    }

    /// Frees every I-node below this one (not this one, nor its main node: `Drop` does that).
    /// Iterative, so a deep trie cannot overflow the stack.
    pub(super) fn free_children(&mut self) {
        let main = self.main.load(Ordering::Acquire);
        let mut pending = Vec::new();
        // SAFETY: `&mut self` means no thread is reading the trie this I-node roots (a lookup or
        // a writer would hold a shared borrow), so its current main node is live and stays so.
        unsafe { &*main }.for_each_child(|child| pending.push(child));
        free_subtrees(pending);
    }

    /// Hints the CPU to start fetching this I-node's cache line, for a node the lookup visits
    /// in its next level: the fetch overlaps the rest of this level. No effect on behaviour.
    #[inline]
    pub(super) fn prefetch(&self) {
        prefetch(self);
    }

    /// Takes the main node out of an I-node nobody else refers to, for iterative teardown.
    #[allow(clippy::unnecessary_box_returns)] // the main node is already boxed; no move
    fn into_main(self) -> Box<Main> {
        let main = self.main.swap(ptr::null_mut(), Ordering::Acquire);
        // SAFETY: `self` is owned, so no other thread refers to this I-node (whoever could
        // reach it through a published main node has unpinned, see `load`); `main` is the
        // non-null pointer it owns, and the swap leaves null so `Drop` does not free it again.
        unsafe { Box::from_raw(main) }
    }
}

impl Drop for INode {
    fn drop(&mut self) {
        let main = self.main.swap(ptr::null_mut(), Ordering::Acquire);
        if !main.is_null() {
            // SAFETY: as in `into_main`: the I-node is being dropped, so unreachable by any
            // pinned thread, and owns `main`.
            drop(unsafe { Box::from_raw(main) });
        }
    }
}

/// Hints the CPU to start fetching the cache line of `value`. No effect on behaviour.
#[inline]
fn prefetch<T>(value: &T) {
    #[cfg(all(target_arch = "x86_64", not(loom)))]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is a hint that never faults and reads nothing observable; the
        // address is a live reference besides.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(ptr::from_ref(value).cast::<i8>()) };
    }
    #[cfg(not(all(target_arch = "x86_64", not(loom))))]
    let _ = value;
}

/// Frees the I-nodes of `pending` and everything linked below them, which the caller owns
/// exclusively (no other thread can reach them, and no other owner frees them).
fn free_subtrees(mut pending: Vec<Child>) {
    while let Some(child) = pending.pop() {
        // SAFETY: per this function's contract, `child` (and, by induction, every child of an
        // I-node it owns, each linked from exactly one current main node) is exclusively ours;
        // it came from `Box::into_raw` in `Fresh::new`.
        let inode = *unsafe { Box::from_raw(child.0.as_ptr()) };
        let main = inode.into_main();
        main.for_each_child(|child| pending.push(child));
    }
}

/// A link from a main node to a child I-node: a pointer, not a reference count. See the module
/// docs for who frees the I-node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Child(NonNull<INode>);

// SAFETY: a `Child` is a shared pointer to an `INode`, which is `Sync` (one atomic pointer to an
// immutable, `Send + Sync` main node); the protocol, not the thread holding the link, decides
// when the I-node is freed.
unsafe impl Send for Child {}
// SAFETY: as for `Send`: sharing the link only shares `&INode` access.
unsafe impl Sync for Child {}

impl Child {
    /// The I-node, valid while `pin` is held.
    #[inline]
    pub(super) fn get<'g>(&'g self, _pin: &'g Pin<'_>) -> &'g INode {
        // SAFETY: this link was read from a main node loaded under `pin` (or built by this
        // writer, under `pin`, from such links and its own fresh I-nodes). An I-node linked from
        // a main node that was current at some moment of the pin is freed only after the pin
        // ends: by `cas_unlinking` (through the epoch, retired at or after that moment, since an
        // unlinked I-node is never linked again), or with the matcher (which needs `&mut`, so no
        // pin of ours is alive). See docs/CONCURRENCY.md, "Reclamation".
        unsafe { self.0.as_ref() }
    }

    /// Whether this links `inode`.
    #[inline]
    pub(super) fn is(self, inode: &INode) -> bool {
        ptr::eq(self.0.as_ptr(), inode)
    }
}

/// A new I-node not yet linked into the trie, owning the chain of levels below it (their links
/// were made by [`Fresh::into_child`]). Dropped unpublished, it frees the whole chain.
pub(super) struct Fresh(Child);

impl Fresh {
    /// A new I-node owning `main`.
    pub(super) fn new(main: Main) -> Fresh {
        let inode = Box::into_raw(Box::new(INode::new(main)));
        // SAFETY: `Box::into_raw` never returns null.
        Fresh(Child(unsafe { NonNull::new_unchecked(inode) }))
    }

    /// A link to this I-node, for a main node under construction; this still owns it.
    pub(super) fn child(&self) -> Child {
        self.0
    }

    /// Gives up ownership: the main node the returned link is put in (a fresh one, itself
    /// owned by a `Fresh`, or one a successful CAS published) owns the I-node from now on.
    pub(super) fn into_child(self) -> Child {
        let child = self.0;
        std::mem::forget(self);
        child
    }
}

impl Fresh {
    /// Gives up ownership after the CAS that linked this I-node into the trie succeeded.
    pub(super) fn publish(self) {
        std::mem::forget(self);
    }
}

impl Drop for Fresh {
    fn drop(&mut self) {
        // Never published, so ours alone, with the chain below it.
        free_subtrees(vec![self.0]);
    }
}

/// Where a matcher's retired main nodes go.
#[derive(Default)]
pub(super) struct Reclaim {
    /// Under loom, retired nodes are kept until the matcher drops.
    #[cfg(loom)]
    retired: std::sync::Mutex<Vec<Box<Main>>>,
    /// Under loom, unlinked I-nodes likewise.
    #[cfg(loom)]
    retired_inodes: std::sync::Mutex<Vec<Box<INode>>>,
}

impl Reclaim {
    /// Pins the current thread: main nodes loaded under the pin stay valid until it drops.
    #[inline]
    #[cfg_attr(not(loom), allow(clippy::unused_self))] // the loom build keeps retired nodes here
    pub(super) fn pin(&self) -> Pin<'_> {
        Pin {
            #[cfg(not(loom))]
            guard: crossbeam_epoch::pin(),
            #[cfg(loom)]
            reclaim: self,
            _reclaim: PhantomData,
        }
    }
}

/// A pinned epoch: while it lives, no main node it could observe is freed.
pub(super) struct Pin<'r> {
    #[cfg(not(loom))]
    guard: crossbeam_epoch::Guard,
    #[cfg(loom)]
    reclaim: &'r Reclaim,
    _reclaim: PhantomData<&'r Reclaim>,
}

impl Pin<'_> {
    /// Frees `main` once no pinned thread can hold it.
    ///
    /// # Safety
    /// `main` came from `Box::into_raw`, was just unlinked by a successful CAS (so is
    /// unreachable for threads pinning later), and is retired once.
    unsafe fn retire(&self, main: *mut Main) {
        #[cfg(not(loom))]
        // SAFETY: per this function's contract; the deferred closure runs after every guard
        // active now is dropped, and a `Main` may be dropped on any thread (it is `Send`).
        unsafe {
            self.guard
                .defer_unchecked(move || drop(Box::from_raw(main)));
        }
        #[cfg(loom)]
        {
            // SAFETY: per this function's contract; the box is freed when the matcher drops.
            let main = unsafe { Box::from_raw(main) };
            self.reclaim.retired.lock().unwrap().push(main);
        }
    }

    /// Frees the unlinked I-node `inode` (and its tombstone) once no pinned thread can hold it.
    ///
    /// # Safety
    /// `inode` came from `Box::into_raw` (in [`Fresh::new`]), was just unlinked by a successful
    /// CAS (so is unreachable for threads pinning later), is a tombstone (it links no child),
    /// and is retired once.
    unsafe fn retire_inode(&self, inode: *mut INode) {
        #[cfg(not(loom))]
        // SAFETY: per this function's contract; an `INode` may be dropped on any thread.
        unsafe {
            self.guard
                .defer_unchecked(move || drop(Box::from_raw(inode)));
        }
        #[cfg(loom)]
        {
            // SAFETY: per this function's contract; the box is freed when the matcher drops.
            let inode = unsafe { Box::from_raw(inode) };
            self.reclaim.retired_inodes.lock().unwrap().push(inode);
        }
    }
}
