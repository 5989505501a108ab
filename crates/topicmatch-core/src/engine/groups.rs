//! Shared subscriptions and queue groups: a group is a (name, pattern) pair, as MQTT 5 shared
//! subscriptions (`$share/{name}/{filter}`) identify it, and a message matching the pattern goes
//! to exactly one of its members. In NATS the groups of one name are one queue: a message
//! matching several of them goes to one member of them all, as nats-server's `Match` gathers
//! the matching queue subscriptions by queue name whatever their subjects (`sublist.go`,
//! `addNodeToResults`).
//!
//! The algorithm holds each group once, under a synthetic subscriber id of its own (the group's
//! place with [`GROUP`] set), inserted when its first member joins and removed with its last. A
//! lookup that finds a group id asks the table for one member, chosen by the engine's
//! [`GroupPolicy`]; every other id is resolved as before. A group subscription is recorded in
//! the engine's table under a member id ([`MEMBER`] set, the subscription id below it), so
//! unsubscribing finds its group.
//!
//! A group whose last member left gives its place back to the next new group, one generation
//! on ([`Places`]), and each group's version carries its id: a group id a concurrent lookup
//! found names that group or, once it is gone, nothing, even where another group took its
//! place. Membership changes take one writers' lock for their whole step, algorithm insert or
//! remove included, so a subscribe or unsubscribe that returned is seen by every later lookup.
//! Lookups take no lock: they read each group's members from its current version
//! ([`views`](super::views)).

use std::cell::Cell;
use std::hash::BuildHasher;
use std::ops::Range;
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};
use rustc_hash::{FxBuildHasher, FxHashMap, FxHashSet};

pub(super) use super::views::{pin, Pin};
use super::views::{Reader, View, Views};
use crate::dialect::{Dialect, NATS_WHITESPACE};
use crate::error::Error;
use crate::matcher::{dedup_tail, SubscriberId, SubscriptionId};
use crate::sync::LazyReadMostly;
use crate::synthetic::{index_of, Places, GROUP, MEMBER, SUBSCRIPTION_IDS, SYNTHETIC};

/// Subscription ids and group places with their generations stay below this (and below the
/// ids of filtered subscriptions' buckets).
pub(super) const LOW: SubscriberId = SUBSCRIPTION_IDS - 1;

/// Whether `id` is a group (the algorithm's id of one).
#[inline]
pub(super) fn is_group(id: SubscriberId) -> bool {
    id & (SYNTHETIC | GROUP) == SYNTHETIC | GROUP
}

/// Whether any of `ids` stands for a filtered subscription (synthetic, not a group).
#[inline]
pub(super) fn any_filtered(ids: &[SubscriberId]) -> bool {
    ids.iter().any(|&id| id & (SYNTHETIC | GROUP) == SYNTHETIC)
}

/// Whether `id` is a group subscription's member id (the table's id of one).
#[inline]
pub(super) fn is_member(id: SubscriberId) -> bool {
    id & (SYNTHETIC | GROUP | MEMBER) == SYNTHETIC | MEMBER
}

/// Group `id`'s version, if that group is held: not another's that has taken its index.
#[inline]
fn view_of<'g>(views: &Reader<'g>, id: SubscriberId) -> Option<&'g View> {
    views.get(index_of(id)).filter(|view| view.id == id)
}

/// How a group's member is chosen for a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GroupPolicy {
    /// Each group hands messages to its members in turn (per group, fair over calls, shared
    /// by every thread).
    #[default]
    RoundRobin,
    /// A member drawn at random for each message.
    Random,
    /// The topic's hash picks the member: one topic goes to one member while the group's
    /// members stay the same (deterministic across processes).
    Hash,
}

impl GroupPolicy {
    /// Every policy, in the order their names are listed.
    pub const ALL: &'static [GroupPolicy] = &[
        GroupPolicy::RoundRobin,
        GroupPolicy::Random,
        GroupPolicy::Hash,
    ];

    /// The policy's name.
    pub fn name(self) -> &'static str {
        match self {
            GroupPolicy::RoundRobin => "round_robin",
            GroupPolicy::Random => "random",
            GroupPolicy::Hash => "hash",
        }
    }
}

impl FromStr for GroupPolicy {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        GroupPolicy::ALL
            .iter()
            .copied()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "unknown group_policy {s:?}: expected one of \"round_robin\", \"random\", \
                     \"hash\""
                ))
            })
    }
}

/// Checks a group name given apart from the pattern: at least one character; in MQTT also a
/// valid share name (no `/`, `+`, `#` or U+0000, so that `$share/{name}/{filter}` names the
/// same group); in NATS no whitespace or NUL (a queue name is one protocol token).
pub(super) fn check_name(dialect: Dialect, name: &str) -> Result<(), Error> {
    let bad = match dialect {
        _ if name.is_empty() => Some("must be at least one character"),
        Dialect::Mqtt if name.contains(['/', '+', '#', '\0']) => {
            Some("must not contain '/', '+', '#' or U+0000 (an MQTT share name)")
        }
        Dialect::Nats
            if name
                .chars()
                .any(|c| NATS_WHITESPACE.contains(&c) || c == '\0') =>
        {
            Some("must not contain whitespace or a NUL byte (a NATS queue name)")
        }
        _ => None,
    };
    match bad {
        Some(rule) => Err(Error::InvalidGroup(format!(
            "invalid {dialect} group name {name:?}: a group name {rule}"
        ))),
        None => Ok(()),
    }
}

/// A group matching a topic, as [`Engine::lookup_groups_into`](super::Engine) reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMatch {
    /// The group's place: from 0 up to the most groups held at once. A group formed after this
    /// one left may take it.
    pub slot: usize,
    /// Names this group while it is held: no other group, before or after it in its `slot`,
    /// has it. With `slot`, a key to what a caller keeps per group (a binding's objects);
    /// [`Engine::group_key`](super::Engine::group_key) gives its name and pattern.
    pub id: u64,
    /// Where its members' subscriber ids are in the lookup's `members`, in the order they
    /// joined.
    pub members: Range<usize>,
}

struct Group {
    name: Arc<str>,
    pattern: Arc<str>,
    /// Each member and how many of its subscriptions hold it here.
    members: Vec<(SubscriberId, u32)>,
    /// The ids of those subscriptions, in no order.
    subscriptions: Vec<SubscriptionId>,
    /// Round-robin position, shared with every version lookups read.
    turn: Arc<AtomicUsize>,
}

impl Group {
    /// The version lookups read of group `id` (this one).
    fn view(&self, id: SubscriberId) -> View {
        let members: Box<[SubscriberId]> = self.members.iter().map(|(s, _)| *s).collect();
        View {
            only: match *members {
                [only] => Some(only),
                _ => None,
            },
            members,
            turn: Arc::clone(&self.turn),
            name: Arc::clone(&self.name),
            pattern: Arc::clone(&self.pattern),
            id,
        }
    }
}

/// One group subscription.
struct Held {
    group: SubscriberId,
    text: Arc<str>,
    member: SubscriberId,
}

#[derive(Default)]
struct Inner {
    /// By group id.
    groups: FxHashMap<SubscriberId, Group>,
    /// (name, pattern) to group id.
    by_name: FxHashMap<(Arc<str>, Arc<str>), SubscriberId>,
    /// By member id (one per group subscription).
    held: FxHashMap<SubscriberId, Held>,
    /// (name, text as subscribed, subscriber) to subscription id: subscribe is idempotent.
    by_key: FxHashMap<(Arc<str>, Arc<str>, SubscriberId), SubscriptionId>,
    /// NATS: each queue name, with the turn its groups share and how many there are.
    queues: FxHashMap<Arc<str>, Queue>,
    /// The groups' places: a group's id names its place, which is its index in the versions'
    /// array.
    places: Places,
}

/// The groups of one NATS queue name.
struct Queue {
    turn: Arc<AtomicUsize>,
    groups: usize,
}

/// The groups of one engine and the policy choosing their members.
pub(super) struct GroupTable {
    inner: LazyReadMostly<Inner>,
    /// What lookups read: each group's members, by group index.
    views: Views,
    /// Held by a membership change for its whole step, the algorithm's change included.
    writers: Mutex<()>,
    policy: GroupPolicy,
    /// NATS: the groups of one name are one queue.
    queues: bool,
    /// Groups held (read without the lock on every lookup).
    count: AtomicUsize,
}

/// What a join did: the member id to record, and the group id if the group is new (the
/// algorithm must then insert it).
pub(super) struct Joined {
    pub(super) member: SubscriberId,
    pub(super) new_group: Option<SubscriberId>,
}

thread_local! {
    /// The `random` policy's generator (xorshift64*), seeded per thread.
    static RANDOM: Cell<u64> = Cell::new(
        FxBuildHasher.hash_one((std::thread::current().id(), std::time::Instant::now())) | 1
    );
}

/// Takes the group ids out of `out[start..]`, in order, handing each to `group`; the other ids
/// stay, in order.
fn take_groups(out: &mut Vec<SubscriberId>, start: usize, mut group: impl FnMut(SubscriberId)) {
    let mut kept = start;
    for i in start..out.len() {
        let id = out[i];
        if is_group(id) {
            group(id);
        } else {
            out[kept] = id;
            kept += 1;
        }
    }
    out.truncate(kept);
}

fn random_below(n: usize) -> usize {
    RANDOM.with(|state| {
        let mut x = state.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        state.set(x);
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as usize % n
    })
}

impl GroupTable {
    /// The groups of an engine of `dialect`, whose members `policy` chooses.
    pub(super) fn new(dialect: Dialect, policy: GroupPolicy) -> Self {
        GroupTable {
            inner: LazyReadMostly::default(),
            views: Views::default(),
            writers: Mutex::new(()),
            policy,
            queues: dialect == Dialect::Nats,
            count: AtomicUsize::new(0),
        }
    }

    /// The policy choosing members.
    pub(super) fn policy(&self) -> GroupPolicy {
        self.policy
    }

    /// Whether the table's lock has been made (by a group subscription).
    #[cfg(test)]
    pub(super) fn is_made(&self) -> bool {
        self.inner.is_made()
    }

    /// The length of the versions' array and how many group places there are (the most groups
    /// held at once).
    #[cfg(test)]
    pub(super) fn indices(&self) -> (usize, usize) {
        let given = self.inner.read_made().map_or(0, |inner| inner.places.len());
        (self.views.len(), given)
    }

    /// Whether no group is held.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.count.load(Ordering::Acquire) == 0
    }

    /// Takes the writers' lock: hold it from [`GroupTable::join`] or [`GroupTable::leave`]
    /// until the algorithm has been changed.
    pub(super) fn write(&self) -> MutexGuard<'_, ()> {
        self.writers.lock()
    }

    /// The id of an identical group subscription, if one is held.
    pub(super) fn existing(
        &self,
        name: &str,
        text: &Arc<str>,
        subscriber: SubscriberId,
    ) -> Option<SubscriptionId> {
        let inner = self.inner.read_made()?;
        let key = (Arc::<str>::from(name), text.clone(), subscriber);
        inner.by_key.get(&key).copied()
    }

    /// Records subscription `id` of `subscriber` (text `text`) in group (`name`, `pattern`),
    /// creating the group if new. Call holding [`GroupTable::write`].
    pub(super) fn join(
        &self,
        id: SubscriptionId,
        name: &str,
        pattern: &str,
        text: Arc<str>,
        subscriber: SubscriberId,
    ) -> Joined {
        assert!(id <= LOW, "subscription ids stay below 2^60");
        let member = id | SYNTHETIC | MEMBER;
        let mut inner = self.inner.write();
        let key = (Arc::<str>::from(name), Arc::<str>::from(pattern));
        let mut new_group = None;
        let group_id = if let Some(&g) = inner.by_name.get(&key) {
            g
        } else {
            let g = inner.places.take(GROUP);
            inner.by_name.insert(key.clone(), g);
            let turn = if self.queues {
                let queue = inner.queues.entry(key.0.clone()).or_insert_with(|| Queue {
                    turn: Arc::new(AtomicUsize::new(0)),
                    groups: 0,
                });
                queue.groups += 1;
                queue.turn.clone()
            } else {
                Arc::new(AtomicUsize::new(0))
            };
            inner.groups.insert(
                g,
                Group {
                    name: key.0.clone(),
                    pattern: key.1.clone(),
                    members: Vec::new(),
                    subscriptions: Vec::new(),
                    turn,
                },
            );
            self.count.fetch_add(1, Ordering::Release);
            new_group = Some(g);
            g
        };
        let group = inner.groups.get_mut(&group_id).expect("held group");
        group.subscriptions.push(id);
        if let Some((_, refs)) = group.members.iter_mut().find(|(s, _)| *s == subscriber) {
            *refs += 1;
        } else {
            // The newcomer's turn comes after every member's now: the next stays the next.
            self.keep_turn(group, |next| next);
            group.members.push((subscriber, 1));
            self.views
                .set(index_of(group_id), Some(group.view(group_id)));
        }
        inner.by_key.insert((key.0, text.clone(), subscriber), id);
        inner.held.insert(
            member,
            Held {
                group: group_id,
                text,
                member: subscriber,
            },
        );
        Joined { member, new_group }
    }

    /// Forgets the group subscription of member id `member`: its subscriber, and the group id
    /// if that was its last member (the algorithm must then remove it; the group is gone).
    /// Call holding [`GroupTable::write`].
    pub(super) fn leave(&self, member: SubscriberId) -> (SubscriberId, Option<SubscriberId>) {
        let mut inner = self.inner.write();
        let held = inner.held.remove(&member).expect("held member id");
        let group = inner.groups.get_mut(&held.group).expect("held group");
        let name = group.name.clone();
        let subscription = member & LOW;
        let of = group
            .subscriptions
            .iter()
            .position(|&id| id == subscription)
            .expect("a subscription of its group");
        group.subscriptions.swap_remove(of);
        let at = group
            .members
            .iter()
            .position(|(s, _)| *s == held.member)
            .expect("a member of its group");
        group.members[at].1 -= 1;
        if group.members[at].1 == 0 {
            // The member due next stays due next (or, leaving, gives its turn to the one
            // after it): no member is served twice in a row nor skipped.
            let last = group.members.len() - 1;
            self.keep_turn(group, |next| {
                if at < next {
                    next - 1
                } else if next == last {
                    0
                } else {
                    next
                }
            });
            // In order: `hash` keeps its choices for the members that stay where it can.
            group.members.remove(at);
            let view = (!group.members.is_empty()).then(|| group.view(held.group));
            self.views.set(index_of(held.group), view);
        }
        let emptied = group.members.is_empty();
        let pattern = group.pattern.clone();
        inner.by_key.remove(&(name.clone(), held.text, held.member));
        if !emptied {
            return (held.member, None);
        }
        inner.groups.remove(&held.group);
        // Its version is gone from the array (set above): a walk still holding the id finds
        // nothing at the index, and a later group there has another generation.
        inner.places.give_back(held.group);
        if let Some(queue) = inner.queues.get_mut(&name) {
            queue.groups -= 1;
            if queue.groups == 0 {
                inner.queues.remove(&name);
            }
        }
        inner.by_name.remove(&(name, pattern));
        self.count.fetch_sub(1, Ordering::Release);
        (held.member, Some(held.group))
    }

    /// Sets `group`'s round-robin position, before its members change, to `next` of the index
    /// of its member due next: a position counted over other member counts would jump. NATS
    /// queues keep theirs: one position turns over the members of every group of a name.
    fn keep_turn(&self, group: &Group, next: impl Fn(usize) -> usize) {
        let n = group.members.len();
        if self.policy != GroupPolicy::RoundRobin || self.queues || n == 0 {
            return;
        }
        // A lookup taking a turn meanwhile makes the exchange retry: no turn is lost.
        let _ = group
            .turn
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |t| Some(next(t % n)));
    }

    /// The subscriber and group name of member id `member`.
    pub(super) fn member(&self, member: SubscriberId) -> Option<(SubscriberId, Arc<str>)> {
        let inner = self.inner.read_made()?;
        let held = inner.held.get(&member)?;
        let name = inner.groups.get(&held.group)?.name.clone();
        Some((held.member, name))
    }

    /// Every group subscription's id and group name.
    pub(super) fn names(&self) -> Vec<(SubscriptionId, Arc<str>)> {
        let Some(inner) = self.inner.read_made() else {
            return Vec::new();
        };
        inner
            .held
            .iter()
            .filter_map(|(member, held)| {
                let name = inner.groups.get(&held.group)?.name.clone();
                Some((member & LOW, name))
            })
            .collect()
    }

    /// The ids of group `group`'s subscriptions (none for a group gone).
    pub(super) fn subscriptions_of(&self, group: SubscriberId) -> Vec<SubscriptionId> {
        self.inner
            .read_made()
            .and_then(|inner| Some(inner.groups.get(&group)?.subscriptions.clone()))
            .unwrap_or_default()
    }

    /// Replaces each group id in `out[start..]` by one of its members, chosen for `topic`
    /// (a group that left meanwhile is dropped), and drops the ids kept twice (a member that
    /// is also a plain subscriber, or two groups' pick); the other ids are distinct already.
    /// Takes no lock; `pin` must be held since before the lookup that found the ids.
    #[inline]
    pub(super) fn pick_tail(
        &self,
        pin: &Pin,
        topic: &str,
        out: &mut Vec<SubscriberId>,
        start: usize,
    ) {
        /// Up to this many ids, each pick is compared with those kept; beyond, one
        /// de-duplication of the whole tail.
        const FEW: usize = 16;
        let few = out.len() - start <= FEW;
        let views = self.views.reader(pin);
        if self.queues
            && out[start..]
                .iter()
                .filter(|&&id| is_group(id))
                .nth(1)
                .is_some()
        {
            self.pick_queues(&views, topic, out, start);
            return;
        }
        let mut kept = start;
        let mut picked = false;
        for i in start..out.len() {
            let id = out[i];
            let real = if is_group(id) {
                picked = true;
                match view_of(&views, id) {
                    Some(v) => self.pick(v, topic),
                    None => continue,
                }
            } else {
                id
            };
            if few && picked && out[start..kept].contains(&real) {
                continue;
            }
            out[kept] = real;
            kept += 1;
        }
        out.truncate(kept);
        if !few && picked {
            dedup_tail(out, start);
        }
    }

    /// [`GroupTable::pick_tail`] for NATS, where two of the groups found may be of one queue:
    /// each queue's groups found give one member, chosen among all their members (in the
    /// order of the groups' ids, each member once, so that `hash` picks alike whatever order
    /// the walk found them in) with the queue's turn.
    #[inline(never)]
    fn pick_queues(
        &self,
        views: &Reader<'_>,
        topic: &str,
        out: &mut Vec<SubscriberId>,
        start: usize,
    ) {
        let mut found: Vec<(SubscriberId, &View)> = Vec::new();
        take_groups(out, start, |id| {
            if let Some(view) = view_of(views, id) {
                found.push((id, view));
            }
        });
        found.sort_unstable_by_key(|&(id, _)| id);
        let mut members: Vec<SubscriberId> = Vec::new();
        let mut seen: FxHashSet<SubscriberId> = FxHashSet::default();
        for i in 0..found.len() {
            let first = found[i].1;
            if found[..i].iter().any(|(_, v)| v.name == first.name) {
                continue;
            }
            let queue = found[i + 1..].iter().filter(|(_, v)| v.name == first.name);
            if queue.clone().next().is_none() {
                out.push(self.pick(first, topic));
                continue;
            }
            members.clear();
            seen.clear();
            for &m in first
                .members
                .iter()
                .chain(queue.flat_map(|(_, v)| v.members.iter()))
            {
                if seen.insert(m) {
                    members.push(m);
                }
            }
            out.push(self.pick_among(&members, &first.turn, topic));
        }
        dedup_tail(out, start);
    }

    /// Moves the group ids out of `out[start..]` to the end of `groups`, each with all its
    /// members (a group that left meanwhile is dropped). The ids of one walk are distinct and
    /// name distinct groups, so each group found is there once. Takes no lock; `pin` must be
    /// held since before the lookup that found the ids.
    pub(super) fn split_tail(
        &self,
        pin: &Pin,
        out: &mut Vec<SubscriberId>,
        start: usize,
        groups: &mut Vec<GroupMatch>,
        members: &mut Vec<SubscriberId>,
    ) {
        let views = self.views.reader(pin);
        take_groups(out, start, |id| {
            if let Some(view) = view_of(&views, id) {
                let first = members.len();
                members.extend_from_slice(&view.members);
                groups.push(GroupMatch {
                    slot: index_of(id),
                    id,
                    members: first..members.len(),
                });
            }
        });
    }

    /// The name and pattern of group `id` while it is held (`None` once it is gone, and for
    /// an id that names no group).
    pub(super) fn key_of(&self, id: SubscriberId) -> Option<(Arc<str>, Arc<str>)> {
        let pin = pin();
        let views = self.views.reader(&pin);
        view_of(&views, id).map(|view| (Arc::clone(&view.name), Arc::clone(&view.pattern)))
    }

    fn pick(&self, group: &View, topic: &str) -> SubscriberId {
        // A group of one has no choice to make: no turn is taken (a shared counter's cache
        // line), no number drawn, no topic hashed, and its members are not read.
        if let Some(only) = group.only {
            return only;
        }
        self.pick_among(&group.members, &group.turn, topic)
    }

    /// One of `members` (at least one), chosen for `topic` by the policy, with `turn` the
    /// round-robin position.
    fn pick_among(
        &self,
        members: &[SubscriberId],
        turn: &AtomicUsize,
        topic: &str,
    ) -> SubscriberId {
        let n = members.len();
        let at = match self.policy {
            GroupPolicy::RoundRobin => turn.fetch_add(1, Ordering::Relaxed) % n,
            GroupPolicy::Random => random_below(n),
            GroupPolicy::Hash => (FxBuildHasher.hash_one(topic) >> 32) as usize % n,
        };
        members[at]
    }
}

#[cfg(test)]
mod tests {
    use super::{index_of, pin, GroupPolicy, GroupTable, MEMBER, SYNTHETIC};
    use crate::dialect::Dialect;

    /// A group gone and another taking its index: the id a walk found before still names the
    /// first, whose members are not the second's.
    #[test]
    fn a_stale_group_id_finds_nothing_where_another_group_took_its_index() {
        for dialect in [Dialect::Mqtt, Dialect::Nats] {
            let table = GroupTable::new(dialect, GroupPolicy::RoundRobin);
            let _writing = table.write();
            let first = table.join(1, "g", "a.b", "a.b".into(), 7);
            let stale = first.new_group.expect("a new group");
            assert_eq!(table.leave(first.member), (7, Some(stale)));
            let second = table.join(2, "h", "a.c", "a.c".into(), 8);
            let taken = second.new_group.expect("a new group");
            assert_eq!(index_of(taken), index_of(stale), "the index is reused");
            assert_ne!(taken, stale);
            assert_eq!(second.member, 2 | SYNTHETIC | MEMBER);

            let pinned = pin();
            let mut out = vec![stale];
            table.pick_tail(&pinned, "a.b", &mut out, 0);
            assert!(out.is_empty(), "{dialect}: {out:?}");
            let mut out = vec![taken];
            table.pick_tail(&pinned, "a.c", &mut out, 0);
            assert_eq!(out, [8]);
            // NATS: two groups found take the queues' path.
            let mut out = vec![5, stale, taken];
            table.pick_tail(&pinned, "a.c", &mut out, 0);
            assert_eq!(out, [5, 8], "{dialect}");
        }
    }

    /// A group lists the subscriptions it holds now: a member's second subscription too, not
    /// another group's, none once it is gone.
    #[test]
    fn a_group_lists_its_subscriptions() {
        let table = GroupTable::new(Dialect::Mqtt, GroupPolicy::RoundRobin);
        let _writing = table.write();
        let a = table.join(1, "g", "a/+", "$share/g/a/+".into(), 7);
        let group = a.new_group.expect("a new group");
        let other = table.join(2, "h", "a/+", "$share/h/a/+".into(), 7);
        let b = table.join(3, "g", "a/+", "$share/g/a/+".into(), 8);
        let c = table.join(4, "g", "a/+", "a/+".into(), 7);
        assert_eq!((b.new_group, c.new_group), (None, None));
        let sorted = |group| {
            let mut ids = table.subscriptions_of(group);
            ids.sort_unstable();
            ids
        };
        assert_eq!(sorted(group), [1, 3, 4]);
        assert_eq!(sorted(other.new_group.unwrap()), [2]);
        assert_eq!(table.leave(a.member), (7, None));
        assert_eq!(
            sorted(group),
            [3, 4],
            "7 stays a member by its second subscription"
        );
        table.leave(c.member);
        table.leave(b.member);
        assert_eq!(sorted(group), Vec::<u64>::new(), "gone");
        let taken = table.join(5, "k", "b", "$share/k/b".into(), 9);
        assert_eq!(index_of(taken.new_group.unwrap()), index_of(group));
        assert_eq!(sorted(group), Vec::<u64>::new(), "a stale id lists nothing");
    }

    /// Groups coming and going one at a time hold one index, however many there were.
    #[test]
    fn groups_that_come_and_go_reuse_their_index() {
        let table = GroupTable::new(Dialect::Mqtt, GroupPolicy::RoundRobin);
        let _writing = table.write();
        let kept = table.join(0, "kept", "a/#", "a/#".into(), 1);
        let mut ids = Vec::new();
        for i in 1..=10_000 {
            let joined = table.join(i, &format!("g{i}"), "a/b", "a/b".into(), 2);
            ids.push(joined.new_group.expect("a new group"));
            table.leave(joined.member);
        }
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 10_000, "each group has an id of its own");
        assert_eq!(table.indices(), (16, 2));
        let pinned = pin();
        let mut out = vec![kept.new_group.unwrap()];
        table.pick_tail(&pinned, "a/b", &mut out, 0);
        assert_eq!(out, [1]);
    }
}
