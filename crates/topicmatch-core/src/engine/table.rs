//! The engine's bookkeeping of subscriptions, sharded so that subscribes and unsubscribes of
//! different (pattern, subscriber) pairs do not wait for each other: the algorithm below may
//! be lock-free (`cstrie`), and one table lock would serialise every change above it.
//!
//! - **Key shards** map (pattern, subscriber id) to the subscription id: what makes subscribe
//!   idempotent. A pair's shard is chosen by the pattern's *matched* text
//!   ([`matched_text`]: an MQTT shared subscription
//!   `$share/{name}/{filter}` is matched as its filter) and the subscriber *value* (not its
//!   registry id, which a value only has while subscribed), so every subscribe and unsubscribe
//!   of one pair, or of texts matched alike, holds the same shard for its whole
//!   check-then-change.
//! - A key shard also lists the shared subscriptions of each (matched text, subscriber), so
//!   the algorithm holds the pattern once however many texts of the subscriber match alike
//!   (`a/b`, `$share/g1/a/b`, `$share/g2/a/b`): inserted by the first, removed with the last;
//!   and a pattern an algorithm holds leads back to every subscription matched as it
//!   ([`Keys::matched_as`]).
//! - **Id shards** map a subscription id to its (pattern, subscriber id), by id.
//!
//! Lock order: a key shard, then an id shard; a snapshot takes every id shard in index order
//! and no key shard. Nothing takes a key shard while holding an id shard, so there is no cycle.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};
use rustc_hash::{FxBuildHasher, FxHashMap};
use std::hash::BuildHasher;

use crate::dialect::Dialect;
use crate::matcher::{shrink_if_sparse, SubscriberId, SubscriptionId};
use crate::pattern::{matched_text, SHARE_PREFIX};
use crate::registry::Subscriber;

/// Shards of each kind: a few times the cores writers are likely to run on.
const SHARDS: usize = 32;

/// One key shard.
#[derive(Default)]
pub(super) struct Keys {
    /// (pattern text, subscriber id) to subscription id.
    pub(super) pairs: FxHashMap<(Arc<str>, SubscriberId), SubscriptionId>,
    /// (matched text, subscriber id) to the held shared subscriptions matched as it (absent
    /// when none): only MQTT `$share/...` texts are listed here.
    pub(super) shared: FxHashMap<(Arc<str>, SubscriberId), Vec<SubscriptionId>>,
}

impl Keys {
    /// How many held subscriptions of `sub` are matched as `matched`: each shared one, and the
    /// subscription whose text is `matched` itself if that text is matched whole (a text that
    /// is itself `$share/...`, the filter of `$share/g/$share/...`, is matched as its own
    /// filter, so it is not one of them).
    fn holders(&self, matched: &Arc<str>, sub: SubscriberId) -> usize {
        let key = (matched.clone(), sub);
        let whole = !matched.starts_with(SHARE_PREFIX) && self.pairs.contains_key(&key);
        self.shared.get(&key).map_or(0, Vec::len) + usize::from(whole)
    }

    /// The ids of the held subscriptions of `sub` matched as `matched` (a matched text of
    /// `dialect`), in no order.
    pub(super) fn matched_as(
        &self,
        dialect: Dialect,
        matched: &Arc<str>,
        sub: SubscriberId,
    ) -> Vec<SubscriptionId> {
        let key = (matched.clone(), sub);
        let mut ids = self.shared.get(&key).cloned().unwrap_or_default();
        if matched_text(dialect, matched).len() == matched.len() {
            ids.extend(self.pairs.get(&key));
        }
        ids
    }

    /// Counts a new, not yet recorded subscription `id` of `sub` whose text `text` is matched
    /// as `matched`; whether it is the first so matched (the algorithm must then insert it).
    pub(super) fn hold(
        &mut self,
        text: &Arc<str>,
        matched: &str,
        sub: SubscriberId,
        id: SubscriptionId,
    ) -> bool {
        let matched = matched_key(text, matched);
        let first = self.holders(&matched, sub) == 0;
        if !Arc::ptr_eq(&matched, text) {
            self.shared.entry((matched, sub)).or_default().push(id);
        }
        first
    }

    /// Uncounts subscription `id`, which [`forget`] has just removed; whether it was the last
    /// of `sub` matched as `matched` (the algorithm must then remove it).
    pub(super) fn let_go(
        &mut self,
        text: &Arc<str>,
        matched: &str,
        sub: SubscriberId,
        id: SubscriptionId,
    ) -> bool {
        let matched = matched_key(text, matched);
        if !Arc::ptr_eq(&matched, text) {
            let key = (matched.clone(), sub);
            let ids = self.shared.get_mut(&key).expect("listed when subscribed");
            ids.retain(|&held| held != id);
            if ids.is_empty() {
                self.shared.remove(&key);
                shrink_if_sparse(&mut self.shared);
            }
        }
        self.holders(&matched, sub) == 0
    }
}

/// `matched` as a key: `text` itself when it is matched whole (no allocation), else a copy.
fn matched_key(text: &Arc<str>, matched: &str) -> Arc<str> {
    if matched.len() == text.len() {
        text.clone()
    } else {
        Arc::from(matched)
    }
}

/// Subscription id to (pattern, subscriber id).
pub(super) type Ids = FxHashMap<SubscriptionId, (Arc<str>, SubscriberId)>;

/// One lock on its own cache line, so writers in different shards do not share a line.
#[repr(align(64))]
#[derive(Default)]
struct Padded<T>(Mutex<T>);

/// The sharded table and how many subscriptions it holds.
pub(super) struct Table {
    keys: Box<[Padded<Keys>]>,
    ids: Box<[Padded<Ids>]>,
    /// Subscriptions held plus those being added (reserved by [`Table::reserve`]).
    count: AtomicUsize,
}

impl Default for Table {
    fn default() -> Self {
        Table {
            keys: (0..SHARDS).map(|_| Padded::default()).collect(),
            ids: (0..SHARDS).map(|_| Padded::default()).collect(),
            count: AtomicUsize::new(0),
        }
    }
}

impl Table {
    /// The key shard of (`pattern`, `subscriber`), locked.
    pub(super) fn key_shard(&self, pattern: &str, subscriber: &Subscriber) -> MutexGuard<'_, Keys> {
        let hash = FxBuildHasher.hash_one((pattern, subscriber));
        // Fx hashes carry their entropy in the high bits.
        self.keys[(hash >> 32) as usize % SHARDS].0.lock()
    }

    /// The id shard of `id`, locked. Ids are handed out in sequence, so they spread evenly.
    pub(super) fn id_shard(&self, id: SubscriptionId) -> MutexGuard<'_, Ids> {
        self.ids[(id % SHARDS as u64) as usize].0.lock()
    }

    /// Every id shard, locked in index order: a consistent view of the held subscriptions.
    pub(super) fn all_ids(&self) -> Vec<MutexGuard<'_, Ids>> {
        self.ids.iter().map(|shard| shard.0.lock()).collect()
    }

    /// Takes room for one more subscription; `Err(held)` when `max` are held or being added.
    pub(super) fn reserve(&self, max: usize) -> std::result::Result<(), usize> {
        self.count
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < max).then_some(n + 1)
            })
            .map(|_| ())
    }

    /// Gives back room taken by [`Table::reserve`] or held by a removed subscription.
    pub(super) fn unreserve(&self) {
        self.count.fetch_sub(1, Ordering::Relaxed);
    }

    /// Subscriptions held (and being added).
    pub(super) fn len(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }
}

/// Records a new subscription in its locked key shard and in its id shard.
pub(super) fn record(
    table: &Table,
    keys: &mut Keys,
    text: Arc<str>,
    sub: SubscriberId,
    id: SubscriptionId,
) {
    keys.pairs.insert((text.clone(), sub), id);
    table.id_shard(id).insert(id, (text, sub));
}

/// Forgets subscription `id` = (`text`, `sub`), its key shard locked by the caller; whether it
/// was still held.
pub(super) fn forget(
    table: &Table,
    keys: &mut Keys,
    id: SubscriptionId,
    text: &Arc<str>,
    sub: SubscriberId,
) -> bool {
    let mut ids = table.id_shard(id);
    match ids.get(&id) {
        Some((t, s)) if Arc::ptr_eq(t, text) && *s == sub => {}
        _ => return false,
    }
    ids.remove(&id);
    shrink_if_sparse(&mut ids);
    drop(ids);
    keys.pairs.remove(&(text.clone(), sub));
    shrink_if_sparse(&mut keys.pairs);
    table.unreserve();
    true
}
