//! The subscriber registry: subscriber values (ints or strings) interned to ids.

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

/// Interns subscribers, counting the subscriptions that hold each one.
///
/// Ids grow monotonically and are never reused, so an id a concurrent lookup returned can only
/// resolve to its own subscriber or, if that subscriber has just gone, to nothing.
#[derive(Debug, Default)]
pub struct Registry {
    ids: FxHashMap<Subscriber, (SubscriberId, usize)>,
    values: FxHashMap<SubscriberId, Subscriber>,
    next: SubscriberId,
}

impl Registry {
    /// The id of `subscriber`, creating it if new, and one more reference to it.
    pub fn acquire(&mut self, subscriber: &Subscriber) -> SubscriberId {
        if let Some((id, refs)) = self.ids.get_mut(subscriber) {
            *refs += 1;
            return *id;
        }
        let id = self.next;
        self.next += 1;
        self.ids.insert(subscriber.clone(), (id, 1));
        self.values.insert(id, subscriber.clone());
        id
    }

    /// Drops one reference to `id`, forgetting the subscriber when none is left.
    pub fn release(&mut self, id: SubscriberId) {
        let Some(value) = self.values.get(&id) else {
            return;
        };
        let entry = self.ids.get_mut(value).expect("registry maps agree");
        entry.1 -= 1;
        if entry.1 == 0 {
            let value = self.values.remove(&id).expect("checked above");
            self.ids.remove(&value);
            crate::matcher::shrink_if_sparse(&mut self.ids);
            crate::matcher::shrink_if_sparse(&mut self.values);
        }
    }

    /// The id of `subscriber`, if it holds any subscription.
    pub fn id_of(&self, subscriber: &Subscriber) -> Option<SubscriberId> {
        self.ids.get(subscriber).map(|(id, _)| *id)
    }

    /// The subscriber with this id, if it still holds a subscription.
    pub fn get(&self, id: SubscriberId) -> Option<&Subscriber> {
        self.values.get(&id)
    }

    /// How many distinct subscribers are held.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether no subscriber is held.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}
