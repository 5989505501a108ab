//! The only place the concurrent algorithms get their atomics from: `std` normally,
//! [`loom`](https://docs.rs/loom)'s model-checked versions under `--cfg loom`, so the same code
//! runs in the loom models (`tests/loom_cstrie.rs`, `make loom`).
//!
//! `Arc` is `std`'s in both builds on purpose: its reference counts are trusted library code,
//! and letting loom branch on every count change of a persistent map's path copy would explode
//! the models' state space without checking anything of ours.
//!
//! Also [`ReadMostly`], the lock that lookups read through where they read one: those of
//! `optimized_bitmap`, `auto` and `inverted_bitmap` (past its lock-free front), the engine's
//! registry, `where=` and group tables ([`LazyReadMostly`]), and `FieldMatcher`.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

pub(crate) use std::sync::Arc;

/// A reader-writer lock for state read by every lookup and written by subscribes: a thread
/// reads through the shard its index picks (crossbeam's `ShardedLock`: 8 shards on separate
/// cache lines), so readers on different cores do not pass one lock word back and forth, as
/// they do on a single `RwLock`'s (every read there is an atomic write to the shared word). A
/// write takes every shard, so it costs more than a plain lock's. Like the `parking_lot` lock it
/// stands in for, it does not poison: after a panic while it was held (caught at the binding's
/// boundary) it is taken as usual.
pub(crate) struct ReadMostly<T>(crossbeam_utils::sync::ShardedLock<T>);

/// Topics a batch looks up under one read of a [`ReadMostly`] lock: the lock's cost (an atomic
/// write to the thread's shard and its release) is paid once per this many lookups, and a
/// subscribe waits for at most this many (a few microseconds) before it takes the lock.
pub(crate) const READ_BATCH: usize = 64;

impl<T> ReadMostly<T> {
    pub(crate) fn new(value: T) -> Self {
        ReadMostly(crossbeam_utils::sync::ShardedLock::new(value))
    }

    /// Shared access through this thread's shard.
    #[inline]
    pub(crate) fn read(&self) -> crossbeam_utils::sync::ShardedLockReadGuard<'_, T> {
        self.0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Exclusive access: every shard taken.
    pub(crate) fn write(&self) -> crossbeam_utils::sync::ShardedLockWriteGuard<'_, T> {
        self.0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A [`ReadMostly`] made on first use: a table most engines never fill (the `where=` and group
/// tables) costs one pointer until then, not the lock's shards (8 cache-padded shards, 1 KiB).
pub(crate) struct LazyReadMostly<T>(std::sync::OnceLock<ReadMostly<T>>);

impl<T> Default for LazyReadMostly<T> {
    fn default() -> Self {
        LazyReadMostly(std::sync::OnceLock::new())
    }
}

impl<T: Default> LazyReadMostly<T> {
    fn lock(&self) -> &ReadMostly<T> {
        self.0.get_or_init(|| ReadMostly::new(T::default()))
    }

    /// Shared access through this thread's shard.
    #[inline]
    pub(crate) fn read(&self) -> crossbeam_utils::sync::ShardedLockReadGuard<'_, T> {
        self.lock().read()
    }

    /// Shared access, or `None` while the lock was never made: a reader that would find only
    /// the default value (a snapshot, a listing) answers without making it.
    #[inline]
    pub(crate) fn read_made(&self) -> Option<crossbeam_utils::sync::ShardedLockReadGuard<'_, T>> {
        self.0.get().map(ReadMostly::read)
    }

    /// Exclusive access: every shard taken.
    pub(crate) fn write(&self) -> crossbeam_utils::sync::ShardedLockWriteGuard<'_, T> {
        self.lock().write()
    }

    /// Whether the lock has been made.
    #[cfg(test)]
    pub(crate) fn is_made(&self) -> bool {
        self.0.get().is_some()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{LazyReadMostly, ReadMostly};

    /// Readers on many threads never see a write half done.
    #[test]
    fn readers_see_whole_writes() {
        let pair = ReadMostly::new((0u64, 0u64));
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..20_000 {
                        let (a, b) = *pair.read();
                        assert_eq!(a, b);
                    }
                });
            }
            s.spawn(|| {
                for i in 1..=2_000 {
                    let mut w = pair.write();
                    w.0 = i;
                    std::hint::spin_loop();
                    w.1 = i;
                }
            });
        });
        assert_eq!(*pair.read(), (2_000, 2_000));
    }

    /// A panic while the lock is held leaves it usable (no poisoning).
    #[test]
    fn a_panic_does_not_poison_it() {
        let lock = ReadMostly::new(1);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _held = lock.write();
            panic!("while held");
        }));
        assert!(caught.is_err());
        *lock.write() += 1;
        assert_eq!(*lock.read(), 2);
    }

    /// The lazy lock starts from the default value, made once: a write is seen by later reads.
    #[test]
    fn the_lazy_lock_starts_from_the_default_once() {
        let lock: LazyReadMostly<Vec<u32>> = LazyReadMostly::default();
        assert!(lock.read_made().is_none());
        assert!(!lock.is_made());
        assert!(lock.read().is_empty());
        assert!(lock.is_made());
        assert!(lock.read_made().is_some_and(|v| v.is_empty()));
        lock.write().push(7);
        assert_eq!(*lock.read(), vec![7]);
    }
}
