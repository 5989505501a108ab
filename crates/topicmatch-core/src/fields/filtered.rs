//! Topic subscriptions with field criteria (`where=`): the bookkeeping the [`Engine`] keeps
//! beside its topic algorithm.
//!
//! The filtered subscriptions of one pattern text form a bucket, and the topic algorithm
//! holds each bucket once, under a synthetic subscriber id of its own (the top bit set, and
//! [`BUCKET`]; registry ids never get that high), from its first subscription to its last.
//! The topic match narrows the candidates to the buckets of the patterns it matches; for each,
//! the engine finds the subscriptions whose [`Filter`] the message's fields pass, keeps their
//! subscribers, and de-duplicates. A bucket of up to [`INDEXED_ABOVE`] subscriptions evaluates
//! each filter directly; a larger one keeps its filters in an inverted [`Index`] (the one
//! [`FieldMatcher`](crate::fields::FieldMatcher) uses), so that a message costs what its hits
//! cost, not a check of every filter: a pattern with thousands of filtered subscriptions (one
//! per user on `notify/#`) is answered in about the time of a few.
//!
//! Each subscription also has a synthetic id (its subscription id with the top bit set),
//! which the engine's table records as its subscriber.
//!
//! [`Engine`]: crate::Engine

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use crate::fields::criteria::Filter;
use crate::fields::ids::Slot;
use crate::fields::index::{Index, Report};
use crate::fields::message::Message;
use crate::hint::prefetch;
use crate::matcher::{dedup_tail, SubscriberId, SubscriptionId};
use crate::sync::LazyReadMostly;
use crate::synthetic::{index_of, Places, BUCKET, SUBSCRIPTION_IDS, SYNTHETIC};

/// A bucket of more subscriptions than this evaluates them through an index.
const INDEXED_ABOVE: usize = 32;

/// An indexed bucket down to this many subscriptions drops its index (not at once below
/// [`INDEXED_ABOVE`], so that one subscription coming and going does not rebuild it).
const UNINDEXED_AT: usize = 16;

/// Filters evaluated together by [`FilterTable::resolve_tail`].
const STAGE: usize = 16;

/// Whether `id` stands for a filtered subscription or a bucket of them.
pub fn is_synthetic(id: SubscriberId) -> bool {
    id & SYNTHETIC != 0
}

/// Whether any of `ids` stands for a filtered subscription or a bucket: one OR over the ids
/// (no branch per id), since every lookup asks it of its result.
#[inline]
pub fn any_synthetic(ids: &[SubscriberId]) -> bool {
    ids.iter().fold(0, |acc, &id| acc | id) & SYNTHETIC != 0
}

/// Where a filtered subscription is held, by its synthetic id: its pattern, its bucket's id
/// and its place in the bucket's `members` (which hold its filter and subscriber).
struct Held {
    pattern: Arc<str>,
    bucket: SubscriberId,
    position: usize,
}

/// A filtered subscription as its bucket holds it.
struct Member {
    filter: Arc<Filter>,
    subscriber: SubscriberId,
    /// Its synthetic id.
    synthetic: SubscriberId,
    /// Its slot in the bucket's index, while the bucket has one.
    slot: Slot,
}

/// The filtered subscriptions of one pattern text.
#[derive(Default)]
struct Bucket {
    /// One held in place: most patterns with criteria have one subscription, whose
    /// evaluation then reads no array of members first.
    members: SmallVec<[Member; 1]>,
    /// Over more than [`INDEXED_ABOVE`] members: their filters, and each slot's place in
    /// `members`.
    index: Option<Box<(Index, Vec<usize>)>>,
}

impl Bucket {
    /// Adds a member; its place in `members`.
    fn push(&mut self, mut member: Member) -> usize {
        let position = self.members.len();
        if let Some((index, places)) = self.index.as_deref_mut() {
            member.slot = index.insert(&member.filter);
            record_place(places, member.slot, position);
        }
        self.members.push(member);
        if self.index.is_none() && self.members.len() > INDEXED_ABOVE {
            let mut index = Index::default();
            let mut places = Vec::with_capacity(self.members.len());
            for (position, member) in self.members.iter_mut().enumerate() {
                member.slot = index.insert(&member.filter);
                record_place(&mut places, member.slot, position);
            }
            self.index = Some(Box::new((index, places)));
        }
        position
    }

    /// Removes the member at `position`; it, and the synthetic id of the member moved into
    /// its place, if one was.
    fn remove(&mut self, position: usize) -> (Member, Option<SubscriberId>) {
        let member = self.members.swap_remove(position);
        if let Some((index, places)) = self.index.as_deref_mut() {
            index.remove(member.slot, &member.filter);
            if let Some(moved) = self.members.get(position) {
                places[moved.slot as usize] = position;
            }
        }
        if self.members.len() <= UNINDEXED_AT {
            self.index = None;
        }
        let moved = self.members.get(position).map(|moved| moved.synthetic);
        (member, moved)
    }

    /// Appends the subscribers of the members whose filters `message` passes (indexed), or
    /// the members to evaluate to `direct`.
    fn resolve<'b>(&'b self, message: &Message, found: &mut Found, direct: &mut Direct<'b>) {
        match self.index.as_deref() {
            Some((index, places)) => index.lookup(message, Report::Matches, |slot, _| {
                found.push(self.members[places[slot as usize]].subscriber);
            }),
            None => direct.extend(&self.members),
        }
    }
}

/// The subscribers an indexed bucket found for one message.
type Found = SmallVec<[SubscriberId; 16]>;

/// The members of unindexed buckets to evaluate for one message.
type Direct<'b> = SmallVec<[&'b Member; STAGE]>;

/// Records that index slot `slot` holds the member at `position`.
fn record_place(places: &mut Vec<usize>, slot: Slot, position: usize) {
    let slot = slot as usize;
    if places.len() <= slot {
        places.resize(slot + 1, usize::MAX);
    }
    places[slot] = position;
}

/// The buckets, by the place their id names (see [`Places`]): a lookup finds one by an
/// array read, not a hash probe.
#[derive(Default)]
struct Buckets {
    places: Places,
    /// By place: its bucket, `None` for a free place.
    buckets: Vec<Option<Bucket>>,
}

impl Buckets {
    /// A new empty bucket; its id.
    fn make(&mut self) -> SubscriberId {
        let id = self.places.take(BUCKET);
        let place = index_of(id);
        if place == self.buckets.len() {
            self.buckets.push(Some(Bucket::default()));
        } else {
            self.buckets[place] = Some(Bucket::default());
        }
        id
    }

    /// Bucket `id`'s place, if `id` names a bucket held now: of its place's generation, and
    /// not an id of another kind (a group the engine holds) whose low bits look like one.
    fn place(&self, id: SubscriberId) -> Option<usize> {
        self.places
            .index(id, BUCKET)
            .filter(|&place| self.buckets[place].is_some())
    }

    fn get(&self, id: SubscriberId) -> Option<&Bucket> {
        self.place(id)
            .and_then(|place| self.buckets[place].as_ref())
    }

    fn get_mut(&mut self, id: SubscriberId) -> Option<&mut Bucket> {
        self.place(id)
            .and_then(|place| self.buckets[place].as_mut())
    }

    /// Frees bucket `id`'s place.
    fn remove(&mut self, id: SubscriberId) {
        if let Some(place) = self.place(id) {
            self.buckets[place] = None;
            self.places.give_back(id);
        }
    }
}

#[derive(Default)]
struct Inner {
    by_synthetic: FxHashMap<SubscriberId, Held>,
    by_key: FxHashMap<(Arc<str>, Arc<Filter>, SubscriberId), SubscriptionId>,
    buckets: Buckets,
    bucket_of: FxHashMap<Arc<str>, SubscriberId>,
}

impl Inner {
    /// The held subscription of synthetic id `id`, as its bucket holds it.
    fn member(&self, id: SubscriberId) -> &Member {
        let held = self.by_synthetic.get(&id).expect("held synthetic id");
        &self
            .buckets
            .get(held.bucket)
            .expect("a held subscription's bucket is held")
            .members[held.position]
    }
}

/// Filtered subscriptions by synthetic id, by (pattern, filter, subscriber) and in buckets by
/// pattern.
#[derive(Default)]
pub struct FilterTable {
    inner: LazyReadMostly<Inner>,
    /// How many are held: read without the lock by every lookup that meets a synthetic id.
    count: AtomicUsize,
}

impl FilterTable {
    /// The id of an identical filtered subscription, if one is held.
    pub fn existing(
        &self,
        pattern: &Arc<str>,
        filter: &Arc<Filter>,
        subscriber: SubscriberId,
    ) -> Option<SubscriptionId> {
        let inner = self.inner.read_made()?;
        let key = (pattern.clone(), filter.clone(), subscriber);
        inner.by_key.get(&key).copied()
    }

    /// Holds a new filtered subscription, and returns its synthetic id (for the engine's
    /// table). The first of its pattern makes the pattern's bucket: `new_bucket(bucket)` is
    /// then called, holding the table's lock, to insert the bucket's id in the topic
    /// algorithm, so that no lookup resolves the bucket before the algorithm holds it and no
    /// other subscribe or unsubscribe of the pattern comes between.
    pub fn insert(
        &self,
        id: SubscriptionId,
        pattern: Arc<str>,
        filter: Arc<Filter>,
        subscriber: SubscriberId,
        new_bucket: impl FnOnce(SubscriberId),
    ) -> SubscriberId {
        assert!(id < SUBSCRIPTION_IDS, "subscription ids stay below 2^60");
        let synthetic = id | SYNTHETIC;
        let mut inner = self.inner.write();
        let inner = &mut *inner;
        let bucket = if let Some(&bucket) = inner.bucket_of.get(&pattern) {
            bucket
        } else {
            let bucket = inner.buckets.make();
            inner.bucket_of.insert(pattern.clone(), bucket);
            new_bucket(bucket);
            bucket
        };
        let position = inner
            .buckets
            .get_mut(bucket)
            .expect("a pattern's bucket is held")
            .push(Member {
                filter: filter.clone(),
                subscriber,
                synthetic,
                slot: 0,
            });
        inner
            .by_key
            .insert((pattern.clone(), filter, subscriber), id);
        inner.by_synthetic.insert(
            synthetic,
            Held {
                pattern,
                bucket,
                position,
            },
        );
        self.count.fetch_add(1, Ordering::Release);
        synthetic
    }

    /// The registry id behind `id` (from the engine's table): itself unless synthetic, in
    /// which case the filtered subscription is forgotten. The last of its pattern empties the
    /// pattern's bucket: `emptied(bucket)` is then called, holding the table's lock, to remove
    /// the bucket's id from the topic algorithm.
    pub fn release(&self, id: SubscriberId, emptied: impl FnOnce(SubscriberId)) -> SubscriberId {
        if !is_synthetic(id) {
            return id;
        }
        let mut inner = self.inner.write();
        let inner = &mut *inner;
        let held = inner.by_synthetic.remove(&id).expect("held synthetic id");
        let bucket = inner
            .buckets
            .get_mut(held.bucket)
            .expect("a held subscription's bucket is held");
        let (member, moved) = bucket.remove(held.position);
        inner
            .by_key
            .remove(&(held.pattern.clone(), member.filter, member.subscriber));
        if let Some(moved) = moved {
            inner
                .by_synthetic
                .get_mut(&moved)
                .expect("a bucket's member is held")
                .position = held.position;
        }
        if bucket.members.is_empty() {
            inner.buckets.remove(held.bucket);
            inner.bucket_of.remove(&held.pattern);
            emptied(held.bucket);
        }
        self.count.fetch_sub(1, Ordering::Release);
        member.subscriber
    }

    /// The registry id behind `id` (from the engine's table: itself unless synthetic).
    pub fn real(&self, id: SubscriberId) -> SubscriberId {
        if !is_synthetic(id) {
            return id;
        }
        self.inner.read().member(id).subscriber
    }

    /// The subscription ids in bucket `bucket` (an id the topic algorithm holds), none if it
    /// has been emptied since.
    pub fn subscriptions_in(&self, bucket: SubscriberId) -> Vec<SubscriptionId> {
        self.inner
            .read_made()
            .and_then(|inner| {
                inner
                    .buckets
                    .get(bucket)
                    .map(|b| b.members.iter().map(|m| m.synthetic & !SYNTHETIC).collect())
            })
            .unwrap_or_default()
    }

    /// Whether the table's lock has been made (by a filtered subscription).
    #[cfg(test)]
    pub(crate) fn is_made(&self) -> bool {
        self.inner.is_made()
    }

    /// Whether no filtered subscription is held.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.count.load(Ordering::Acquire) == 0
    }

    /// Every filtered subscription's id and filter.
    pub fn filters(&self) -> Vec<(SubscriptionId, Arc<Filter>)> {
        let Some(inner) = self.inner.read_made() else {
            return Vec::new();
        };
        let mut all: Vec<_> = inner
            .by_synthetic
            .keys()
            .map(|&synthetic| {
                (
                    synthetic & !SYNTHETIC,
                    inner.member(synthetic).filter.clone(),
                )
            })
            .collect();
        all.sort_unstable_by_key(|(id, _)| *id);
        all
    }

    /// Replaces each bucket id in `out[start..]` by the subscribers of its subscriptions whose
    /// filters `message` passes, then de-duplicates that tail. The engine calls it only when
    /// [`any_synthetic`] found one there (and groups, if any, have been picked).
    ///
    /// The members of unindexed buckets are evaluated together: more than [`STAGE`] go
    /// [`STAGE`] at a time through three rounds, their filters asked for, then the filters'
    /// criteria, then each filter evaluated. One evaluation is a chain of dependent loads
    /// (the filter, its criteria, their field names); in rounds, the loads of different
    /// members overlap instead of each waiting for the one before.
    pub fn resolve_tail(&self, out: &mut Vec<SubscriberId>, start: usize, message: &Message) {
        let inner = self.inner.read();
        let mut found = Found::new();
        let mut direct = Direct::new();
        let mut kept = start;
        for at in start..out.len() {
            let id = out[at];
            if !is_synthetic(id) {
                out[kept] = id;
                kept += 1;
            } else if let Some(bucket) = inner.buckets.get(id) {
                // (A bucket emptied since the topic walk saw it is simply gone.)
                bucket.resolve(message, &mut found, &mut direct);
            }
        }
        out.truncate(kept);
        out.extend_from_slice(&found);
        let staged = direct.len() > STAGE;
        for stage in direct.chunks(STAGE) {
            if staged {
                for member in stage {
                    prefetch(Arc::as_ptr(&member.filter).cast());
                }
                for member in stage {
                    member.filter.prefetch();
                }
            }
            out.extend(
                stage
                    .iter()
                    .filter(|m| m.filter.matches(message))
                    .map(|m| m.subscriber),
            );
        }
        dedup_tail(out, start);
    }
}

#[cfg(test)]
mod tests {
    use super::{any_synthetic, Buckets, BUCKET, SYNTHETIC};

    #[test]
    fn a_reused_place_gives_a_new_id_and_the_old_one_finds_nothing() {
        let mut buckets = Buckets::default();
        let first = buckets.make();
        let second = buckets.make();
        assert_ne!(first, second);
        for id in [first, second] {
            assert_eq!(id & (SYNTHETIC | BUCKET), SYNTHETIC | BUCKET);
            assert!(buckets.get(id).is_some());
        }
        buckets.remove(first);
        assert!(buckets.get(first).is_none());
        let again = buckets.make();
        assert_eq!(
            again & 0xFFFF_FFFF,
            first & 0xFFFF_FFFF,
            "the place is reused"
        );
        assert_ne!(again, first);
        assert!(
            buckets.get(first).is_none(),
            "a stale id names another generation"
        );
        assert!(buckets.get(again).is_some() && buckets.get(second).is_some());
        // Freed and not taken again: its id, still of the place's generation, names nothing.
        buckets.remove(again);
        assert!(buckets.get(again).is_none());
        buckets.remove(again);
        assert_eq!(
            buckets.make() & 0xFFFF_FFFF,
            again & 0xFFFF_FFFF,
            "freed once"
        );
        assert_eq!(buckets.make() & 0xFFFF_FFFF, 2, "a new place");
    }

    #[test]
    fn an_id_of_another_kind_names_no_bucket() {
        let mut buckets = Buckets::default();
        let id = buckets.make();
        let place = id & 0xFFFF_FFFF;
        assert_eq!(id, SYNTHETIC | BUCKET | place, "generation 0");
        // The engine's group ids set bit 62 (and a generation of their own); a filtered
        // subscription's id lacks `BUCKET`. Neither may read as the bucket at their low bits.
        for other in [
            SYNTHETIC | (1 << 62) | place,
            SYNTHETIC | (1 << 62) | BUCKET | place,
            SYNTHETIC | (1 << 61) | BUCKET | place,
            SYNTHETIC | place,
            BUCKET | place,
        ] {
            assert!(buckets.get(other).is_none(), "{other:#x}");
        }
        assert!(buckets.get(id).is_some());
    }

    #[test]
    fn any_synthetic_sees_the_marked_id_wherever_it_sits() {
        assert!(!any_synthetic(&[]));
        assert!(!any_synthetic(&[0, 1, SYNTHETIC - 1]));
        for at in 0..4 {
            let mut ids = vec![3, 7, u64::MAX >> 1, 0];
            ids[at] |= SYNTHETIC;
            assert!(any_synthetic(&ids), "marked id at {at}");
        }
    }
}
