//! The subscriber registry: subscriber values (ints or strings) interned to dense ids.
//!
//! Ids are small integers, from 0 up, so that what sits beside a subscriber (a binding's
//! object for it, a lookup's de-duplication stamp) lives in a plain array indexed by its id.
//! The id of a subscriber that left is reused, but only once every thread pinned to the epoch
//! collector (`crossbeam_epoch::pin`) at the moment it left has unpinned: until then the id
//! still resolves to the subscriber that left ([`Registry::get`]), and nothing else can take
//! it. So a lookup that pins before it walks and stays pinned until it has resolved the ids it
//! found resolves each to the subscriber the walk found, even one that left meanwhile (a
//! group's chosen member among them: the message is not lost).
//!
//! A subscriber that comes back before its id is reclaimed gets the same id again. A walk
//! does not see one instant: pinned before the subscriber left, it may find it under a pattern
//! it held then and under one it took after it came back. Under two ids, the lookup would
//! give the subscriber twice; under one, its de-duplication removes the second (and the count
//! of subscribers held twice, [`Registry::several`], rises for the return as for a second
//! subscription, so that a lookup skipping de-duplication does not skip it then).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use rustc_hash::FxHashMap;

use crate::matcher::SubscriberId;

/// A subscriber as the user names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Subscriber {
    /// An integer subscriber.
    Int(i64),
    /// A string subscriber.
    Str(Box<str>),
}

impl From<i64> for Subscriber {
    fn from(v: i64) -> Self {
        Subscriber::Int(v)
    }
}

impl From<&str> for Subscriber {
    fn from(v: &str) -> Self {
        Subscriber::Str(v.into())
    }
}

/// Runs `f` once every thread pinned to the epoch collector now has unpinned, and once this
/// thread's bag of deferred functions goes to the collector's global queue ([`flush`]). Under
/// loom, which has no epoch collector, never.
#[cfg(not(loom))]
fn after_pins(f: impl FnOnce() + Send + 'static) {
    crossbeam_epoch::pin().defer(f);
}

#[cfg(loom)]
fn after_pins(_f: impl FnOnce() + Send + 'static) {}

/// Hands this thread's bag of deferred functions to the collector's global queue now: left
/// in the bag, they would wait for 63 more. A bag is a few KB of the collector's, and a
/// collection frees at most a few bags, so a departure hands over one bag, not one per
/// deferred function.
#[cfg(not(loom))]
fn flush() {
    crossbeam_epoch::pin().flush();
}

#[cfg(loom)]
fn flush() {}

/// Interns subscribers to dense ids, counting the subscriptions that hold each one.
#[derive(Debug, Default)]
pub struct Registry {
    ids: FxHashMap<Subscriber, (SubscriberId, usize)>,
    /// By id; `None` for a free id. A subscriber that left keeps its value here until its
    /// id is reclaimed.
    values: Vec<Option<Subscriber>>,
    /// Ids free for reuse now.
    free: Vec<SubscriberId>,
    /// Ids whose subscriber left, handed here by the epoch collector once no thread pinned
    /// when it left is still pinned.
    released: Arc<Mutex<Vec<SubscriberId>>>,
    /// The subscribers that left and whose ids are not reclaimed yet: one that comes back
    /// gets its id again ([`Registry::acquire_new`]).
    left: FxHashMap<Subscriber, SubscriberId>,
    /// By id: how many of its releases the epoch collector holds (a subscriber that came
    /// back and left again has two): the id is free once none is left and it is not held.
    retiring: Vec<u32>,
    /// How many subscribers hold two subscriptions or more ([`Registry::several`]).
    several: Arc<AtomicUsize>,
}

impl Registry {
    /// The id of `subscriber` and one more reference to it; `true` with a new id (the
    /// subscriber held no subscription before).
    pub fn acquire_new(&mut self, subscriber: &Subscriber) -> (SubscriberId, bool) {
        if let Some((id, refs)) = self.ids.get_mut(subscriber) {
            *refs += 1;
            if *refs == 2 {
                // Before the caller inserts the second subscription: see `several`.
                self.several.fetch_add(1, Ordering::SeqCst);
            }
            return (*id, false);
        }
        if let Some(id) = self.left.remove(subscriber) {
            // It left so recently that a lookup pinned then may still find it under a pattern
            // it held: back under the same id, such a lookup finds one id, which its
            // de-duplication removes, where a new id would give the subscriber twice. That
            // lookup may find it under an old pattern and a new one while it never held two
            // at once: the count of subscribers held twice rises as for a second
            // subscription, and falls once every thread pinned now has unpinned.
            self.ids.insert(subscriber.clone(), (id, 1));
            self.several.fetch_add(1, Ordering::SeqCst);
            self.lower_several();
            return (id, true);
        }
        let id = self.take_id();
        self.ids.insert(subscriber.clone(), (id, 1));
        self.values[id as usize] = Some(subscriber.clone());
        (id, true)
    }

    /// The id of `subscriber`, creating it if new, and one more reference to it.
    pub fn acquire(&mut self, subscriber: &Subscriber) -> SubscriberId {
        self.acquire_new(subscriber).0
    }

    /// A free id: a released one if any, else the next past the end.
    fn take_id(&mut self) -> SubscriberId {
        if self.free.is_empty() {
            let released = std::mem::take(&mut *self.released.lock());
            for id in released {
                let at = id as usize;
                self.retiring[at] -= 1;
                // Free once its last release is back and its subscriber did not come back:
                // no lookup can still resolve it, so the subscriber that left is forgotten.
                if self.retiring[at] == 0 && !self.is_live(id) {
                    if let Some(value) = self.values[at].take() {
                        self.left.remove(&value);
                    }
                    self.free.push(id);
                }
            }
        }
        if let Some(id) = self.free.pop() {
            return id;
        }
        self.values.push(None);
        self.retiring.push(0);
        (self.values.len() - 1) as SubscriberId
    }

    /// Drops one reference to `id`, forgetting the subscriber when none is left; whether it
    /// was the last (the id then resolves to it until the epoch lets it be reused, see the
    /// module docs).
    pub fn release(&mut self, id: SubscriberId) -> bool {
        self.release_then(id, |_| {})
    }

    /// [`release`](Self::release) that, when it was the last reference, calls `left(id)`
    /// before the id's release goes to the epoch collector: what `left` defers on this
    /// thread (a binding's release of the subscriber's object) goes in the same bag.
    pub(crate) fn release_then(
        &mut self,
        id: SubscriberId,
        left: impl FnOnce(SubscriberId),
    ) -> bool {
        if !self.forget(id) {
            return false;
        }
        left(id);
        flush();
        true
    }

    /// Drops one reference to `id`; whether it was the last, the id then handed to the epoch
    /// collector in this thread's bag, which the caller flushes.
    fn forget(&mut self, id: SubscriberId) -> bool {
        if !self.is_live(id) {
            return false;
        }
        let value = self.values[id as usize].as_ref().expect("a live id");
        let entry = self.ids.get_mut(value).expect("registry maps agree");
        entry.1 -= 1;
        let refs = entry.1;
        if refs == 1 {
            self.lower_several();
        }
        if refs > 0 {
            return false;
        }
        let value = value.clone();
        self.ids.remove(&value);
        crate::matcher::shrink_if_sparse(&mut self.ids);
        self.left.insert(value, id);
        self.retire(id);
        true
    }

    /// Hands `id` to the epoch collector, which gives it back once every thread pinned now
    /// has unpinned (under loom, never: an id is not reused).
    fn retire(&mut self, id: SubscriberId) {
        self.retiring[id as usize] += 1;
        let released = Arc::clone(&self.released);
        after_pins(move || released.lock().push(id));
    }

    /// The count of subscribers holding two subscriptions or more, as lookups read it without
    /// the registry's lock: raised before a subscriber's second subscription is inserted, and
    /// lowered (its second-to-last subscription released) only once every thread pinned then
    /// has unpinned. So a lookup that pins before it walks, and reads the count after, reads
    /// zero only if no subscriber it found can have been held twice while it was pinned.
    pub fn several(&self) -> Arc<AtomicUsize> {
        Arc::clone(&self.several)
    }

    /// Lowers [`several`](Self::several) once every thread pinned now has unpinned (under
    /// loom, never: lookups keep removing duplicates).
    fn lower_several(&self) {
        let several = Arc::clone(&self.several);
        after_pins(move || {
            several.fetch_sub(1, Ordering::SeqCst);
        });
        flush();
    }

    /// The id of `subscriber`, if it holds any subscription.
    pub fn id_of(&self, subscriber: &Subscriber) -> Option<SubscriberId> {
        self.ids.get(subscriber).map(|(id, _)| *id)
    }

    /// The subscriber with this id: one holding a subscription, or one that left so recently
    /// that a lookup may still resolve it (see the module docs).
    pub fn get(&self, id: SubscriberId) -> Option<&Subscriber> {
        self.values.get(usize::try_from(id).ok()?)?.as_ref()
    }

    /// Whether `id` names a subscriber that holds a subscription.
    pub fn is_live(&self, id: SubscriberId) -> bool {
        self.get(id)
            .is_some_and(|value| self.ids.get(value).is_some_and(|(held, _)| *held == id))
    }

    /// Every held subscriber with its id, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (SubscriberId, &Subscriber)> {
        (0..)
            .zip(&self.values)
            .filter_map(|(id, v)| v.as_ref().map(|v| (id, v)))
            .filter(|(id, _)| self.is_live(*id))
    }

    /// One past the largest id handed out: every id is below it.
    pub fn id_bound(&self) -> usize {
        self.values.len()
    }

    /// How many distinct subscribers are held.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no subscriber is held.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn ids_are_dense_and_reused_after_the_epoch() {
        let mut r = Registry::default();
        let a = r.acquire(&Subscriber::from("a"));
        let b = r.acquire(&Subscriber::from("b"));
        assert_eq!((a, b), (0, 1));
        assert_eq!(r.acquire_new(&Subscriber::from("a")), (0, false));
        assert!(!r.release(a), "a still holds one subscription");
        {
            // A lookup pinned before `a` leaves keeps its id from being reused.
            let pinned = crossbeam_epoch::pin();
            assert!(r.release(a));
            // Left, but a pinned lookup may still resolve it.
            assert!(!r.is_live(a));
            assert_eq!(r.get(a), Some(&Subscriber::from("a")));
            assert_eq!(r.id_of(&Subscriber::from("a")), None);
            for _ in 0..1_000 {
                crossbeam_epoch::pin().flush();
            }
            assert_eq!(
                r.acquire(&Subscriber::from("c")),
                2,
                "a's id is not free yet"
            );
            drop(pinned);
        }
        // Once nobody is pinned, the collector hands the id back.
        let mut reused = None;
        for i in 0..10_000 {
            crossbeam_epoch::pin().flush();
            let (id, new) = r.acquire_new(&Subscriber::Int(i));
            assert!(new);
            if id == a {
                reused = Some(i);
                break;
            }
        }
        assert!(reused.is_some(), "a's id was never reused");
        assert!(r.id_bound() < 10_000);
    }

    #[test]
    fn a_subscriber_back_before_its_id_is_reclaimed_gets_it_again() {
        let a = Subscriber::from("a");
        let mut r = Registry::default();
        let id = r.acquire(&a);
        let several = r.several();
        {
            // A lookup pinned before `a` leaves may find it under a pattern it held then.
            let pinned = crossbeam_epoch::pin();
            assert!(r.release(id));
            assert_eq!(r.acquire_new(&a), (id, true), "back under the id it left");
            assert!(r.is_live(id));
            assert_eq!(
                several.load(Ordering::SeqCst),
                1,
                "the pinned lookup may find it under an old pattern and a new one"
            );
            // Gone and back once more: two releases of the id are with the collector.
            assert!(r.release(id));
            assert_eq!(r.acquire_new(&a), (id, true));
            drop(pinned);
        }
        // Both releases come back while `a` holds its id: it stays `a`'s, and the count falls.
        for i in 0..10_000 {
            crossbeam_epoch::pin().flush();
            let (other, new) = r.acquire_new(&Subscriber::Int(i));
            assert!(new);
            assert_ne!(other, id, "a's id handed out while a holds it");
            if several.load(Ordering::SeqCst) == 0 && r.retiring[id as usize] == 0 {
                break;
            }
        }
        assert_eq!(several.load(Ordering::SeqCst), 0);
        assert_eq!(r.retiring[id as usize], 0);
        assert_eq!(r.get(id), Some(&a));
        // Once `a` leaves for good, its id is reused, and `a` coming back later gets a new one.
        assert!(r.release(id));
        let mut reused = false;
        for i in 10_000..20_000 {
            crossbeam_epoch::pin().flush();
            if r.acquire(&Subscriber::Int(i)) == id {
                reused = true;
                break;
            }
        }
        assert!(reused, "a's id was never reused");
        assert!(
            r.left.is_empty(),
            "the subscribers that left were forgotten"
        );
        let (again, new) = r.acquire_new(&a);
        assert!(new);
        assert_ne!(again, id);
    }
}
