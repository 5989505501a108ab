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
//! Node memory (main nodes, I-nodes, HAMT nodes) comes from and returns to a per-thread cache
//! of free blocks ([`pool`]): it changes where a freed block goes, never when it is freed.
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
//!
//! # Who owns a shared array
//! A wide level's HAMT nodes (its children's or its subscribers') are [`Shared`] arrays
//! ([`arrays`]): plain pointers again, so that a path copy copies pointers and touches no
//! reference count, and a freed version decrements none. The versions of a main node form a chain (each replaced by
//! the next with one CAS); an array is owned by the *current* version, and every update says
//! which arrays it allocated (*fresh*) and which arrays of the version it replaces it no longer
//! links (*stale*: the copied path, since the nodes off the path are shared): its [`Delta`].
//! - the CAS that installs the update succeeds: the stale arrays are unlinked from the only
//!   current version that linked them, and are retired through the epoch like the old main node;
//! - it fails: the fresh arrays were never published, and are freed at once;
//! - a tombstone replaces the version: every array of that version is stale;
//! - the I-node is freed (unpublished chain, matcher dropped): its current version's arrays go
//!   with it. A retired main node frees none of its arrays: the current version or a later
//!   delta owns each of them.

use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use smallvec::SmallVec;

use crate::sync::{AtomicPtr, Ordering};

mod arrays;
mod pool;
pub(super) mod slot;

pub(super) use arrays::{Array, Delta, LongWord, Packed, Shared, LONG_KEY};

/// What this layer needs of a main node (the CS-trie's `nodes::Main` is the one kind): how to
/// tell a tombstone, find a child, and list its children and shared arrays. The layer above
/// implements it, so this one depends on nothing above it.
pub(super) trait Node: Default + Send + Sync + Sized + 'static {
    /// What a main node's children are found by.
    type Edge<'a>: Copy;

    /// Whether this is a tombstone (it never changes again and links nothing).
    fn is_tomb(&self) -> bool;

    /// The child along `edge`.
    fn child(&self, edge: Self::Edge<'_>) -> Option<&Child<Self>>;

    /// Calls `f` on every child link.
    fn for_each_child(&self, f: impl FnMut(Child<Self>));

    /// Calls `f` on every shared array of this version.
    fn for_each_array(&self, f: &mut impl FnMut(Array));
}

/// An indirection node: the one mutable cell of the trie. Its main node is immutable and is
/// replaced whole by compare-and-swap. Invariant: `main` is never null while the node is
/// reachable, and points to a main node that this I-node owns: a boxed one, or `first`.
///
/// `repr(C)`, the pointer first: a lookup reading it then reads the first main node's
/// subscribers and wildcard links (the main node's leading fields) from the same cache line.
#[repr(C)]
pub(super) struct INode<M: Node> {
    main: AtomicPtr<M>,
    /// The first main node of an I-node made by [`Fresh::new`], in the I-node's own allocation:
    /// a new level costs one allocation, not two, and a level never changed since (most
    /// leaves) is read from the I-node's own cache lines. Never moved (the I-node stays in its
    /// box), freed with the I-node, never through `main`.
    first: M,
}

impl<M: Node> INode<M> {
    /// A new I-node owning `main`, boxed apart (the root, which moves with the matcher).
    pub(super) fn new(main: M) -> Self {
        INode {
            main: AtomicPtr::new(pool::new_box(main).as_ptr()),
            first: M::default(),
        }
    }

    /// A new boxed I-node whose main node is `main`, kept in the I-node's own allocation.
    fn boxed(main: M) -> NonNull<INode<M>> {
        let inode = pool::new_box(INode {
            main: AtomicPtr::new(ptr::null_mut()),
            first: main,
        })
        .as_ptr();
        // SAFETY: `inode` is the live allocation just made, not shared yet; the address of its
        // `first` stays valid as long as the I-node, which is never moved out of its block.
        unsafe {
            let first = ptr::addr_of_mut!((*inode).first);
            // Relaxed: the I-node is not shared yet; whoever publishes it orders this store
            // (the Release of the CAS that links it).
            (*inode).main.store(first, Ordering::Relaxed);
            NonNull::new_unchecked(inode)
        }
    }

    /// Whether `main` is this I-node's own first main node.
    #[inline]
    fn is_first(&self, main: *const M) -> bool {
        ptr::eq(main, &self.first)
    }

    /// The current main node, valid while `pin` is held.
    #[inline]
    pub(super) fn load<'g>(&'g self, _pin: &'g Pin<'_>) -> &'g M {
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

    /// Replaces `current` (the value `load` returned under `pin`) with `new`, built from it by
    /// the update `delta` describes. On success the old main node and the delta's stale arrays
    /// are retired; on failure `new` and the delta's fresh arrays are freed, and the caller
    /// reloads.
    pub(super) fn cas(&self, current: &M, new: M, delta: Delta, pin: &Pin<'_>) -> bool {
        self.swap(current, new, delta, None, pin)
    }

    /// [`cas`](Self::cas) for a contraction: `new` is `current` without `child`, which `current`
    /// links along `edge` and which is a tombstone. On success `child` is unlinked from the trie
    /// and retired with its tombstone.
    pub(super) fn cas_unlinking(
        &self,
        current: &M,
        new: M,
        delta: Delta,
        (edge, child): (M::Edge<'_>, Child<M>),
        pin: &Pin<'_>,
    ) -> bool {
        assert!(
            current.child(edge) == Some(&child)
                && new.child(edge).is_none()
                && child.get(pin).load(pin).is_tomb(),
            "an unlink removes a tombstoned child"
        );
        self.swap(current, new, delta, Some(child), pin)
    }

    /// The CAS of [`cas`](Self::cas) and [`cas_unlinking`](Self::cas_unlinking).
    fn swap(
        &self,
        current: &M,
        new: M,
        delta: Delta,
        unlinked: Option<Child<M>>,
        pin: &Pin<'_>,
    ) -> bool {
        let new = pool::new_box(new).as_ptr();
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
                // reused at the same address (no ABA). A stale array: the CAS replaced the only
                // current version linking it (see the module docs), and each is listed once, by
                // the one update that stopped linking it. `unlinked`: the CAS replaced the only
                // current main node linking it (each I-node is linked from one current main
                // node, its parent's, and `new` does not link it); it is retired once, by the
                // one CAS that unlinked it, and is a tombstone, which links nothing.
                unsafe {
                    pin.retire(Retired {
                        // The first main node is freed with its I-node.
                        main: if self.is_first(old) {
                            ptr::null_mut()
                        } else {
                            old
                        },
                        inode: unlinked.map(|child| child.0),
                        arrays: delta.stale,
                    });
                }
                true
            }
            Err(_) => {
                // SAFETY: `new` came from `new_box` above and was never published.
                unsafe { pool::free_box(NonNull::new_unchecked(new)) };
                delta.discard();
                false
            }
        }
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
}

impl<M: Node> Drop for INode<M> {
    fn drop(&mut self) {
        let main = self.main.swap(ptr::null_mut(), Ordering::Acquire);
        if main.is_null() {
            return;
        }
        if self.is_first(main) {
            // `first` itself drops with the I-node, after this.
            free_arrays(&self.first);
        } else {
            // SAFETY: the I-node is being dropped, so unreachable by any pinned thread (whoever
            // could reach it through a published main node has unpinned, see `load`), and owns
            // `main`, a main node from `new_box` (not `first`); the swap leaves null, so it is
            // freed once.
            unsafe {
                free_arrays(&*main);
                pool::free_box(NonNull::new_unchecked(main));
            }
        }
    }
}

/// Frees the shared arrays of the current main node of an I-node being freed (the current
/// version owns them: see the module docs).
fn free_arrays<M: Node>(main: &M) {
    let mut arrays = Vec::new();
    main.for_each_array(&mut |array| arrays.push(array));
    for array in arrays {
        // SAFETY: the I-node is unreachable (the caller's contract), so is its current version;
        // an array it links is linked by no other live version (older ones were retired with
        // their stale arrays, and there is no newer one), and is listed once by the walk.
        unsafe { array.free() };
    }
}

/// Frees the I-nodes of `pending` and everything linked below them, which the caller owns
/// exclusively (no other thread can reach them, and no other owner frees them).
fn free_subtrees<M: Node>(mut pending: Vec<Child<M>>) {
    while let Some(child) = pending.pop() {
        // SAFETY: per this function's contract, `child` (and, by induction, every child of an
        // I-node it owns, each linked from exactly one current main node) is exclusively ours;
        // it came from `new_box` in `INode::boxed`, and is dropped in place (never moved out of
        // its block: its `first` is pointed to). Its current main node is live until it drops.
        unsafe {
            let main = &*child.0.as_ref().main.load(Ordering::Acquire);
            main.for_each_child(|child| pending.push(child));
            pool::free_box(child.0);
        }
    }
}

/// A link from a main node to a child I-node: a pointer, not a reference count. See the module
/// docs for who frees the I-node.
pub(super) struct Child<M: Node>(NonNull<INode<M>>);

// By hand: derived, they would ask the same of the main node.
impl<M: Node> Clone for Child<M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M: Node> Copy for Child<M> {}

impl<M: Node> PartialEq for Child<M> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<M: Node> Eq for Child<M> {}

impl<M: Node> std::fmt::Debug for Child<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Child").field(&self.0).finish()
    }
}

// SAFETY: a `Child` is a shared pointer to an `INode`, which is `Sync` (one atomic pointer to an
// immutable, `Send + Sync` main node); the protocol, not the thread holding the link, decides
// when the I-node is freed.
unsafe impl<M: Node> Send for Child<M> {}
// SAFETY: as for `Send`: sharing the link only shares `&INode` access.
unsafe impl<M: Node> Sync for Child<M> {}

impl<M: Node> Child<M> {
    /// The I-node, valid while `pin` is held.
    #[inline]
    pub(super) fn get<'g>(&'g self, _pin: &'g Pin<'_>) -> &'g INode<M> {
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
    pub(super) fn is(self, inode: &INode<M>) -> bool {
        ptr::eq(self.0.as_ptr(), inode)
    }
}

/// A new I-node not yet linked into the trie, owning the chain of levels below it (their links
/// were made by [`Fresh::into_child`]). Dropped unpublished, it frees the whole chain.
pub(super) struct Fresh<M: Node>(Child<M>);

impl<M: Node> Fresh<M> {
    /// A new I-node owning `main`.
    pub(super) fn new(main: M) -> Fresh<M> {
        Fresh(Child(INode::boxed(main)))
    }

    /// A link to this I-node, for a main node under construction; this still owns it.
    pub(super) fn child(&self) -> Child<M> {
        self.0
    }

    /// Gives up ownership: the main node the returned link is put in (a fresh one, itself
    /// owned by a `Fresh`, or one a successful CAS published) owns the I-node from now on.
    pub(super) fn into_child(self) -> Child<M> {
        let child = self.0;
        std::mem::forget(self);
        child
    }
}

impl<M: Node> Fresh<M> {
    /// Gives up ownership after the CAS that linked this I-node into the trie succeeded.
    pub(super) fn publish(self) {
        std::mem::forget(self);
    }
}

impl<M: Node> Drop for Fresh<M> {
    fn drop(&mut self) {
        // Never published, so ours alone, with the chain below it.
        free_subtrees(vec![self.0]);
    }
}

/// Where a matcher's retired main nodes go.
#[derive(Default)]
pub(super) struct Reclaim {
    /// Under loom, retired main nodes are kept until the matcher drops.
    #[cfg(loom)]
    retired: std::sync::Mutex<Vec<Box<dyn Send>>>,
    /// Under loom, unlinked I-nodes likewise.
    #[cfg(loom)]
    retired_inodes: std::sync::Mutex<Vec<Box<dyn Send>>>,
    /// Under loom, retired shared arrays likewise.
    #[cfg(loom)]
    retired_arrays: std::sync::Mutex<Vec<Array>>,
    /// Under loom, values replaced in a [`Slot`] (the result cache's entries) likewise.
    #[cfg(loom)]
    retired_values: std::sync::Mutex<Vec<Box<dyn Send>>>,
}

/// Under loom, a retired block from [`pool::new_box`], freed when dropped (with the matcher).
#[cfg(loom)]
struct Owned<T>(NonNull<T>);

// SAFETY: the block is owned alone, like a `Box<T>`.
#[cfg(loom)]
unsafe impl<T: Send> Send for Owned<T> {}

#[cfg(loom)]
impl<T> Drop for Owned<T> {
    fn drop(&mut self) {
        // SAFETY: made from a retired block (`Pin::retire`), unreachable since, freed once here,
        // and the matcher that could reach it is being dropped.
        unsafe { pool::free_box(self.0) };
    }
}

#[cfg(loom)]
impl Drop for Reclaim {
    fn drop(&mut self) {
        for array in self.retired_arrays.get_mut().unwrap().drain(..) {
            // SAFETY: retired once (`Pin::retire_array`), unreachable since, and the matcher
            // that could reach it is being dropped.
            unsafe { array.free() };
        }
    }
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
    /// Frees what a successful CAS unlinked once no pinned thread can hold it: one deferred
    /// function per CAS. Crossbeam-epoch frees at most 8 bags of 64 deferred functions every
    /// 128 pins (four per pin), so a writer that defers more per operation outruns it (a churn
    /// of subscribe and unsubscribe then grows without bound), and every 64 deferred functions
    /// cost it a 2 KiB bag from the global allocator.
    ///
    /// # Safety
    /// Everything in `retired` was just unlinked by a successful CAS (so is unreachable for
    /// threads pinning later), came from `pool::new_box`, is retired once, and the I-node, if
    /// any, is a tombstone (it links no child).
    unsafe fn retire<M: Node>(&self, retired: Retired<M>) {
        #[cfg(not(loom))]
        // SAFETY: per this function's contract; the deferred closure runs after every guard
        // active now is dropped, and everything retired may be dropped on any thread.
        unsafe {
            let few = retired.inode.is_none() && retired.arrays.len() <= 2;
            // Several (an insert below a wide level retires the main node and a HAMT path) go
            // as one batch in one deferred function when the thread's cache has a block for it;
            // two arrays or fewer are otherwise deferred inline (an allocation from the global
            // allocator would cost more than a second deferred function).
            let retired = if retired.inode.is_none() && retired.arrays.len() <= 1 {
                Err(retired)
            } else if few {
                pool::cached_box(retired)
            } else {
                Ok(pool::new_box(retired))
            };
            match retired {
                Err(retired) => {
                    // The old main node with its first stale array: three words, kept inline in
                    // the deferred function (no allocation); a second array in one of its own.
                    let main = retired.main;
                    let mut arrays = retired.arrays.into_iter();
                    let first = arrays.next();
                    if main.is_null() {
                        if let Some(array) = first {
                            self.guard.defer_unchecked(move || array.free());
                        }
                    } else {
                        self.guard.defer_unchecked(move || {
                            pool::free_box(NonNull::new_unchecked(main));
                            if let Some(array) = first {
                                array.free();
                            }
                        });
                    }
                    for array in arrays {
                        self.guard.defer_unchecked(move || array.free());
                    }
                }
                Ok(retired) => self.guard.defer_unchecked(move || {
                    let block = retired.as_ptr();
                    block.read().free();
                    // The `Retired` was moved out above: free the block without dropping it.
                    pool::dealloc(
                        retired.cast::<u8>(),
                        std::alloc::Layout::new::<Retired<M>>(),
                    );
                }),
            }
        }
        #[cfg(loom)]
        {
            let reclaim = self.reclaim;
            if !retired.main.is_null() {
                // Freed when the matcher drops; non-null, checked above.
                let main = Owned(NonNull::new(retired.main).expect("non-null"));
                reclaim.retired.lock().unwrap().push(Box::new(main));
            }
            if let Some(inode) = retired.inode {
                reclaim
                    .retired_inodes
                    .lock()
                    .unwrap()
                    .push(Box::new(Owned(inode)));
            }
            reclaim
                .retired_arrays
                .lock()
                .unwrap()
                .extend(retired.arrays);
        }
    }
}

/// What one successful CAS unlinked: the replaced main node (null if it was its I-node's
/// `first`, freed with the I-node), the unlinked tombstoned I-node of a contraction, the stale
/// arrays of the update.
struct Retired<M: Node> {
    main: *mut M,
    inode: Option<NonNull<INode<M>>>,
    arrays: SmallVec<[Array; 4]>,
}

impl<M: Node> Retired<M> {
    /// Frees everything.
    ///
    /// # Safety
    /// As for [`Pin::retire`], and no thread can still read any of it.
    #[cfg(not(loom))]
    unsafe fn free(self) {
        // SAFETY: per this function's contract.
        unsafe {
            if !self.main.is_null() {
                pool::free_box(NonNull::new_unchecked(self.main));
            }
            if let Some(inode) = self.inode {
                pool::free_box(inode);
            }
            for array in self.arrays {
                array.free();
            }
        }
    }
}

impl Delta {
    /// For an update whose new version is dropped for a tombstone that replaces `current`:
    /// frees the fresh arrays now (never published) and makes every array of `current` stale.
    pub(super) fn tombstoning<M: Node>(self, current: &M) -> Delta {
        self.discard();
        let mut stale = SmallVec::new();
        current.for_each_array(&mut |array| stale.push(array));
        Delta {
            fresh: SmallVec::new(),
            stale,
        }
    }
}
