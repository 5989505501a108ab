//! Every `unsafe` operation of the CS-trie, behind a small safe API: the I-node's atomic main
//! pointer (load, compare-and-swap, teardown) and memory reclamation.
//!
//! Reclamation is crossbeam-epoch's: a [`Pin`] is an epoch guard, and a main node replaced by
//! a successful CAS is destroyed only once every thread pinned at that moment has unpinned.
//! Under `--cfg loom` (whose model checker cannot see crossbeam-epoch's own atomics) retired
//! nodes are instead kept until the matcher is dropped: never freeing early is trivially safe,
//! and the models then check the CAS protocol itself.

use std::marker::PhantomData;
use std::ptr;

use super::nodes::Main;
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

    /// Hints the CPU to start fetching this I-node's cache line, for a branch the lookup will
    /// visit later (the wildcard child waiting on its stack): the fetch overlaps the walk of the
    /// literal branch. No effect on behaviour.
    #[inline]
    pub(super) fn prefetch(&self) {
        #[cfg(all(target_arch = "x86_64", not(loom)))]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            // SAFETY: a prefetch is a hint that never faults and reads nothing observable;
            // the address is a live reference besides.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(ptr::from_ref(self).cast::<i8>()) };
        }
    }

    /// Takes the main node out of an I-node nobody else refers to, for iterative teardown.
    #[allow(clippy::unnecessary_box_returns)] // the main node is already boxed; no move
    pub(super) fn into_main(self) -> Box<Main> {
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

/// Where a matcher's retired main nodes go.
#[derive(Default)]
pub(super) struct Reclaim {
    /// Under loom, retired nodes are kept until the matcher drops.
    #[cfg(loom)]
    retired: std::sync::Mutex<Vec<Box<Main>>>,
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
}
