//! The engine: one algorithm plus the bookkeeping every algorithm shares (validation, limits,
//! subscription ids, idempotent subscribe, the subscriber registry, snapshots).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::dialect::{Dialect, Limits};
use crate::error::{Error, Limit, Result};
use crate::fields::filtered::{any_synthetic, is_synthetic, FilterTable};
use crate::fields::{Filter, Message};
pub use crate::matcher::SubscriptionId;
use crate::matcher::{dedup_tail, Config, Matcher, SubscriberId};
use crate::matchers::Algorithm;
use crate::pattern::{matched_text, share_name, Pattern};
use crate::registry::{Registry, Subscriber};
use crate::sync::ReadMostly;
use groups::{is_member, GroupTable, LOW};
pub use groups::{GroupMatch, GroupPolicy};
use table::Table;

mod groups;
mod relate;
mod table;
mod views;

/// The topics of a batch looked up under one pin ([`Engine::lookup_batch_into`]): enough that
/// the pin costs nothing beside their walks, few enough (a fraction of a millisecond of
/// ordinary topics) that the collector is not held back for long.
const PINNED_TOPICS: usize = 1024;

/// One subscription, as a snapshot lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    /// Its id.
    pub id: SubscriptionId,
    /// The pattern text, as subscribed.
    pub pattern: Arc<str>,
    /// The subscriber.
    pub subscriber: Subscriber,
}

/// A matcher as users see it: subscribe patterns for subscribers, look topics up.
pub struct Engine {
    config: Config,
    algorithm: Algorithm,
    matcher: Box<dyn Matcher>,
    /// Subscriptions by (pattern, subscriber) and by id, sharded; lookups never take it.
    table: Table,
    registry: ReadMostly<Registry>,
    /// The registry's count of subscribers held twice or more, read by batch lookups.
    several: Arc<AtomicUsize>,
    next_id: AtomicU64,
    /// Subscriptions with field criteria (`where=`), see [`crate::fields::filtered`].
    filters: FilterTable,
    /// Shared subscriptions and queue groups, see [`groups`].
    groups: GroupTable,
    /// Whether the algorithm was ever given a synthetic id (a group or a filtered
    /// subscription); never cleared. Set before the first such insert, so a lookup that reads
    /// it false after its walk found none ([`Engine::may_be_synthetic`]).
    synthetic: AtomicBool,
    /// Whether an MQTT `$share/{name}/{filter}` text is a group subscription.
    shared_subscriptions: bool,
}

impl Engine {
    /// A new, empty engine.
    pub fn new(dialect: Dialect, algorithm: Algorithm, limits: Limits) -> Result<Self> {
        let mut config = Config::new(dialect);
        config.limits = limits;
        Engine::with_config(algorithm, config)
    }

    /// A new, empty engine with every setting of `config`. `cache_capacity` is only accepted
    /// for the algorithms caching per topic (`inverted_bitmap`'s rows, `cstrie`'s results) and
    /// must be positive.
    pub fn with_config(algorithm: Algorithm, config: Config) -> Result<Self> {
        let limits = config.limits;
        if limits.max_topic_bytes == 0 || limits.max_levels == 0 {
            return Err(Error::InvalidArgument(
                "max_topic_bytes and max_levels must be at least 1".into(),
            ));
        }
        match config.cache_capacity {
            Some(_) if !matches!(algorithm, Algorithm::InvertedBitmap | Algorithm::Cstrie) => {
                return Err(Error::InvalidArgument(format!(
                    "cache_capacity applies only to algorithms 'inverted_bitmap' and 'cstrie', not '{}'",
                    algorithm.name()
                )));
            }
            Some(0) => {
                return Err(Error::InvalidArgument(
                    "cache_capacity must be at least 1".into(),
                ));
            }
            _ => {}
        }
        let registry = Registry::default();
        Ok(Engine {
            config,
            algorithm,
            matcher: algorithm.build(config),
            table: Table::default(),
            several: registry.several(),
            registry: ReadMostly::new(registry),
            next_id: AtomicU64::new(1),
            filters: FilterTable::default(),
            groups: GroupTable::new(config.dialect, GroupPolicy::default()),
            synthetic: AtomicBool::new(false),
            shared_subscriptions: config.dialect == Dialect::Mqtt,
        })
    }

    /// This (empty) engine with `policy` choosing each group's member, and MQTT
    /// `$share/{name}/{filter}` texts read as group subscriptions if `shared_subscriptions`
    /// (the default in MQTT; off, such a text is matched as its filter and every subscriber
    /// gets the message, as a broker without shared subscriptions delivers). Other dialects
    /// have no `$share` syntax: `shared_subscriptions` must be off there.
    pub fn with_groups(mut self, policy: GroupPolicy, shared_subscriptions: bool) -> Result<Self> {
        if shared_subscriptions && self.config.dialect != Dialect::Mqtt {
            return Err(Error::InvalidArgument(format!(
                "shared_subscriptions applies to the mqtt dialect only, not {}",
                self.config.dialect
            )));
        }
        if !self.is_empty() {
            return Err(Error::InvalidArgument(
                "groups are set before the first subscription".into(),
            ));
        }
        self.groups = GroupTable::new(self.config.dialect, policy);
        self.shared_subscriptions = shared_subscriptions;
        Ok(self)
    }

    /// How a group's member is chosen.
    pub fn group_policy(&self) -> GroupPolicy {
        self.groups.policy()
    }

    /// Whether MQTT `$share/{name}/{filter}` texts are group subscriptions.
    pub fn shared_subscriptions(&self) -> bool {
        self.shared_subscriptions
    }

    /// The dialect.
    pub fn dialect(&self) -> Dialect {
        self.config.dialect
    }

    /// The algorithm.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// The cache bound it was built with (`None`: the algorithm's default: 16,384 rows for
    /// `inverted_bitmap`, no result cache for `cstrie`).
    pub fn cache_capacity(&self) -> Option<usize> {
        self.config.cache_capacity
    }

    /// The limits in force.
    pub fn limits(&self) -> Limits {
        self.config.limits
    }

    /// Subscribes `subscriber` to `pattern`; the same pair again returns the same id.
    /// On error nothing changes. Subscribes and unsubscribes of different pairs run in
    /// parallel (`table`); those of one pair take turns.
    pub fn subscribe(&self, pattern: &str, subscriber: &Subscriber) -> Result<SubscriptionId> {
        self.add(pattern, subscriber, None, None, None, &mut |_| {})
    }

    /// Subscribes `subscriber` to `pattern` as a member of group `group`: a message matching
    /// `pattern` goes to one member of the group (see [`GroupPolicy`]). The same (pattern,
    /// group, subscriber) again returns the same id. On error nothing changes.
    pub fn subscribe_group(
        &self,
        pattern: &str,
        subscriber: &Subscriber,
        group: &str,
    ) -> Result<SubscriptionId> {
        self.add(pattern, subscriber, None, Some(group), None, &mut |_| {})
    }

    /// Subscribes `subscriber` to `pattern` for messages whose fields pass `filter`; the same
    /// (pattern, filter, subscriber) again returns the same id. On error nothing changes.
    pub fn subscribe_where(
        &self,
        pattern: &str,
        subscriber: &Subscriber,
        filter: &Filter,
    ) -> Result<SubscriptionId> {
        self.add(
            pattern,
            subscriber,
            Some(Arc::new(filter.clone())),
            None,
            None,
            &mut |_| {},
        )
    }

    /// [`subscribe`](Self::subscribe) (with `filter`, [`subscribe_where`](Self::subscribe_where);
    /// with `group`, [`subscribe_group`](Self::subscribe_group)) that calls `joined(id)` when
    /// `subscriber` is new (it held no subscription): under the registry's lock, before any
    /// lookup can find `id`. What a caller keeps beside each subscriber id (a binding's
    /// objects) is then in place before the id is ever returned.
    pub fn subscribe_with(
        &self,
        pattern: &str,
        subscriber: &Subscriber,
        filter: Option<&Filter>,
        group: Option<&str>,
        joined: &mut dyn FnMut(SubscriberId),
    ) -> Result<SubscriptionId> {
        let filter = filter.map(|f| Arc::new(f.clone()));
        self.add(pattern, subscriber, filter, group, None, joined)
    }

    /// The group of a subscription to `pattern` with `group` given: `group` itself, or the
    /// share name of an MQTT `$share/{name}/{filter}` text when shared subscriptions are on.
    fn group_of<'t>(&self, pattern: &'t str, group: Option<&'t str>) -> Result<Option<&'t str>> {
        let dialect = self.config.dialect;
        let share = if self.shared_subscriptions {
            share_name(dialect, pattern)
        } else {
            None
        };
        match (group, share) {
            (Some(g), Some(s)) if g != s => Err(Error::InvalidGroup(format!(
                "invalid {dialect} group {g:?}: it differs from the share name {s:?} of {pattern:?}"
            ))),
            (Some(g), _) => {
                groups::check_name(dialect, g)?;
                Ok(Some(g))
            }
            (None, share) => Ok(share),
        }
    }

    /// Adds (`pattern`, `subscriber`), filtered by `filter` if any, in group `group` if any,
    /// under the next id or `given` (a restore); an identical subscription already held
    /// returns its own id. `joined` hears of a new subscriber id, see
    /// [`subscribe_with`](Self::subscribe_with).
    fn add(
        &self,
        pattern: &str,
        subscriber: &Subscriber,
        filter: Option<Arc<Filter>>,
        group: Option<&str>,
        given: Option<SubscriptionId>,
        joined: &mut dyn FnMut(SubscriberId),
    ) -> Result<SubscriptionId> {
        let parsed = Pattern::parse(self.config.dialect, &self.config.limits, pattern)?;
        let group = self.group_of(pattern, group)?;
        if group.is_some() && filter.is_some() {
            return Err(Error::InvalidArgument(
                "a group subscription cannot have where= criteria".into(),
            ));
        }
        let text: Arc<str> = Arc::from(pattern);
        let matched = matched_text(self.config.dialect, pattern);
        // Every filter of one (pattern, subscriber), and every text matched alike, shares its
        // key shard, so the check below and the change after it are one step for them.
        let mut keys = self.table.key_shard(matched, subscriber);
        if let Some(sub) = self.registry.read().id_of(subscriber) {
            let existing = match (&filter, group) {
                (Some(filter), _) => self.filters.existing(&text, filter, sub),
                (None, Some(group)) => self.groups.existing(group, &text, sub),
                (None, None) => keys.pairs.get(&(text.clone(), sub)).copied(),
            };
            if let Some(existing) = existing {
                return Ok(existing);
            }
        }
        let max = self.config.limits.max_subscriptions;
        self.table.reserve(max).map_err(|held| {
            Error::limit_of(
                Limit::Subscriptions,
                max,
                held + 1,
                (self.config.dialect, "pattern", pattern),
            )
        })?;
        let id = match given {
            Some(id) => id,
            None => self.take_id().inspect_err(|_| self.table.unreserve())?,
        };
        let sub = {
            let mut registry = self.registry.write();
            let (sub, new) = registry.acquire_new(subscriber);
            if new {
                joined(sub);
            }
            sub
        };
        if group.is_some() || filter.is_some() {
            self.synthetic.store(true, Ordering::SeqCst);
        }
        if let Some(group) = group {
            // The algorithm holds the group once, from its first member to its last.
            let _writing = self.groups.write();
            let joined = self.groups.join(id, group, matched, text.clone(), sub);
            if let Some(group) = joined.new_group {
                self.matcher.insert(&parsed, group);
            }
            table::record(&self.table, &mut keys, text, joined.member, id);
        } else if let Some(filter) = filter {
            // The algorithm holds the filtered subscriptions of a pattern text once, as a
            // bucket, from the first to the last; the table records each by its synthetic id.
            let synthetic = self
                .filters
                .insert(id, text.clone(), filter, sub, |bucket| {
                    self.matcher.insert(&parsed, bucket);
                });
            table::record(&self.table, &mut keys, text, synthetic, id);
        } else {
            // The algorithm holds (pattern, subscriber) once, for every text matched alike.
            if keys.hold(&text, matched, sub, id) {
                self.matcher.insert(&parsed, sub);
            }
            table::record(&self.table, &mut keys, text, sub, id);
        }
        Ok(id)
    }

    /// Takes the next subscription id.
    fn take_id(&self) -> Result<SubscriptionId> {
        self.next_id
            // Only a restored snapshot can get near the end: refuse ids past 2^60 (bucket,
            // group and member ids live above) rather than wrap onto held ones.
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |id| {
                (id < LOW).then(|| id + 1)
            })
            .map_err(|_| Error::InvalidArgument("subscription ids are exhausted".into()))
    }

    /// Removes a subscription; `false` if there was none with this id.
    pub fn unsubscribe(&self, id: SubscriptionId) -> bool {
        self.unsubscribe_with(id, &mut |_| {})
    }

    /// [`unsubscribe`](Self::unsubscribe) that calls `left(sub)` when it removed the last
    /// subscription of subscriber `sub`: under the registry's lock, so before `sub` can be
    /// reused (see [`Registry`]).
    ///
    /// What `left` defers to the epoch collector on this thread goes to its global queue with
    /// the registry's release of `sub`, in one bag.
    pub fn unsubscribe_with(&self, id: SubscriptionId, left: &mut dyn FnMut(SubscriberId)) -> bool {
        let (text, sub, subscriber) = {
            let ids = self.table.id_shard(id);
            let Some((text, sub)) = ids.get(&id) else {
                return false;
            };
            // Held in `ids`: its filter or group and its subscriber are held too.
            let subscriber = self
                .registry
                .read()
                .get(self.real(*sub))
                .cloned()
                .expect("a held subscription's subscriber is registered");
            (text.clone(), *sub, subscriber)
        };
        // The pair's shard stays locked until the algorithm and the registry have let go, so
        // a subscribe of the same pair cannot slip in between.
        let matched = matched_text(self.config.dialect, &text);
        let mut keys = self.table.key_shard(matched, &subscriber);
        if !table::forget(&self.table, &mut keys, id, &text, sub) {
            // Another unsubscribe of `id` came first.
            return false;
        }
        let parse = || {
            Pattern::parse(self.config.dialect, &self.config.limits, &text)
                .expect("a stored pattern was valid when subscribed")
        };
        let sub = if is_member(sub) {
            let _writing = self.groups.write();
            let (member, gone) = self.groups.leave(sub);
            if let Some(group) = gone {
                let removed = self.matcher.remove(&parse(), group);
                debug_assert!(removed, "the algorithm held every group");
            }
            member
        } else if is_synthetic(sub) {
            self.filters.release(sub, |bucket| {
                let removed = self.matcher.remove(&parse(), bucket);
                debug_assert!(removed, "the algorithm held every bucket");
            })
        } else {
            if keys.let_go(&text, matched, sub, id) {
                let removed = self.matcher.remove(&parse(), sub);
                debug_assert!(removed, "the algorithm held every subscribed pair");
            }
            sub
        };
        self.registry.write().release_then(sub, left);
        true
    }

    /// The subscriber id of subscription `id`, if it is held (the subscriber's own id, also
    /// for a filtered subscription).
    pub fn subscriber_of(&self, id: SubscriptionId) -> Option<SubscriberId> {
        let ids = self.table.id_shard(id);
        ids.get(&id).map(|(_, sub)| self.real(*sub))
    }

    /// The registry id behind a table's subscriber id: itself, or a filtered or group
    /// subscription's subscriber.
    fn real(&self, sub: SubscriberId) -> SubscriberId {
        if is_member(sub) {
            self.groups
                .member(sub)
                .expect("a held group subscription")
                .0
        } else {
            self.filters.real(sub)
        }
    }

    /// Appends the ids of the distinct subscribers matching `topic` (a message without
    /// fields: filtered subscriptions match only if their criteria need no field).
    ///
    /// Inlined into callers: the usual lookup (no filtered subscription among the matches)
    /// costs the algorithm's walk plus one pass over the ids found.
    #[inline]
    pub fn lookup_into(&self, topic: &str, out: &mut Vec<SubscriberId>) -> Result<()> {
        self.lookup_fields_into(topic, &Message::new(), out)
    }

    /// Appends the ids of the distinct subscribers matching `topic` whose criteria, if any,
    /// `fields` meets.
    #[inline]
    pub fn lookup_fields_into(
        &self,
        topic: &str,
        fields: &Message,
        out: &mut Vec<SubscriberId>,
    ) -> Result<()> {
        let start = out.len();
        if self.groups.is_empty() {
            // As in `lookup_batch_into`, the walk may skip de-duplication while every
            // subscriber holds one subscription; resolving a filtered subscription's synthetic
            // id below de-duplicates the tail again.
            let distinct = || self.several.load(Ordering::SeqCst) == 0;
            self.matcher.lookup_distinct_into(topic, out, &distinct)?;
        } else {
            // One pin for the walk and the groups' versions (the algorithm's own pin, if it
            // takes one, is then nested, which costs next to nothing).
            let pinned = groups::pin();
            self.matcher.lookup_into(topic, out)?;
            if any_synthetic(&out[start..]) {
                if self.filters.is_empty() {
                    // Only groups: their picks are de-duplicated as they are made.
                    self.groups.pick_tail(&pinned, topic, out, start);
                } else {
                    self.resolve_synthetic(&pinned, topic, out, start, fields);
                }
            }
            return Ok(());
        }
        if self.may_be_synthetic(&out[start..]) {
            self.resolve_synthetic(&groups::pin(), topic, out, start, fields);
        }
        Ok(())
    }

    /// Whether `ids`, found by a walk that has ended, may hold a synthetic id: none can
    /// unless the algorithm was ever given one, else one pass over them tells.
    ///
    /// Why the flag suffices: it is set (`SeqCst`) before the insert of the first synthetic
    /// id, and a walk that found an id saw that insert, so everything before it; the load
    /// below comes after the walk, so it reads `true`. A matcher that never had a group or a
    /// filtered subscription thus skips the pass over its results (a sixth of a `crowds`
    /// fan-out batch in the core).
    #[inline]
    fn may_be_synthetic(&self, ids: &[SubscriberId]) -> bool {
        self.synthetic.load(Ordering::SeqCst) && any_synthetic(ids)
    }

    /// Resolves the synthetic ids in `out[start..]` (out of line: only matches of groups and
    /// filtered subscriptions come here): a group becomes one member chosen for `topic`, a
    /// filtered subscription its subscriber if `fields` meet its criteria; then the tail is
    /// de-duplicated.
    #[inline(never)]
    fn resolve_synthetic(
        &self,
        pinned: &groups::Pin,
        topic: &str,
        out: &mut Vec<SubscriberId>,
        start: usize,
        fields: &Message,
    ) {
        if !self.groups.is_empty() {
            self.groups.pick_tail(pinned, topic, out, start);
        }
        self.filters.resolve_tail(out, start, fields);
    }

    /// [`lookup_fields_into`](Self::lookup_fields_into) with the groups apart: appends to
    /// `plain` the distinct subscribers matching `topic` outside groups, and to `groups` each
    /// matching group, whose members (all of them, none chosen) it appends to `members`, so a
    /// caller can apply its own policy, as NATS's `Match` returns plain and queue subscriptions
    /// apart.
    pub fn lookup_groups_into(
        &self,
        topic: &str,
        fields: &Message,
        plain: &mut Vec<SubscriberId>,
        groups: &mut Vec<GroupMatch>,
        members: &mut Vec<SubscriberId>,
    ) -> Result<()> {
        let start = plain.len();
        let pinned = groups::pin();
        self.matcher.lookup_into(topic, plain)?;
        if any_synthetic(&plain[start..]) {
            // Whatever the table's count says now: a group found may have just left.
            self.groups
                .split_tail(&pinned, plain, start, groups, members);
            if self.filters.is_empty() {
                dedup_tail(plain, start);
            } else {
                self.filters.resolve_tail(plain, start, fields);
            }
        }
        Ok(())
    }

    /// The name and the pattern of the group that a [`GroupMatch`] of
    /// [`lookup_groups_into`](Self::lookup_groups_into) names by its `id`, while that group is
    /// held; `None` once it is gone (its last member left).
    pub fn group_key(&self, id: u64) -> Option<(Arc<str>, Arc<str>)> {
        self.groups.key_of(id)
    }

    /// Looks up many topics (messages without fields) through the algorithm's batch path; see
    /// [`Matcher::lookup_batch_into`] for the layout of `out` and `ends`. As there, an invalid
    /// topic's error comes back with every earlier topic's row pushed. The topics are looked up
    /// about a thousand at a time, each part under pins of its own, so that a long batch does
    /// not hold back what other threads' unsubscribes leave to the epoch collector.
    pub fn lookup_batch_into(
        &self,
        topics: &[&str],
        out: &mut Vec<SubscriberId>,
        ends: &mut Vec<usize>,
    ) -> Result<()> {
        for part in topics.chunks(PINNED_TOPICS) {
            self.lookup_batch_part(part, out, ends)?;
        }
        Ok(())
    }

    /// [`lookup_batch_into`](Self::lookup_batch_into) of one part.
    fn lookup_batch_part(
        &self,
        topics: &[&str],
        out: &mut Vec<SubscriberId>,
        ends: &mut Vec<usize>,
    ) -> Result<()> {
        let (out_start, ends_start) = (out.len(), ends.len());
        if self.filters.is_empty() && self.groups.is_empty() {
            let distinct = || self.several.load(Ordering::SeqCst) == 0;
            let result = self
                .matcher
                .lookup_batch_distinct_into(topics, out, ends, &distinct);
            // A filtered subscription added meanwhile shows up as a synthetic id: redo the batch
            // the per-topic way, which resolves them.
            if !self.may_be_synthetic(&out[out_start..]) {
                return result;
            }
            out.truncate(out_start);
            ends.truncate(ends_start);
        }
        let none = Message::new();
        self.lookup_batch_resolving(topics, |_| &none, out, ends)
    }

    /// [`lookup_batch_into`](Self::lookup_batch_into) with each topic's message: topic `i`'s
    /// subscribers whose criteria, if any, `fields[i]` meets, as
    /// [`lookup_fields_into`](Self::lookup_fields_into) finds them, through the algorithm's
    /// batch path, in parts as there. Fails if `fields` has another length than
    /// `topics`, pushing nothing.
    pub fn lookup_batch_fields_into(
        &self,
        topics: &[&str],
        fields: &[Message],
        out: &mut Vec<SubscriberId>,
        ends: &mut Vec<usize>,
    ) -> Result<()> {
        if fields.len() != topics.len() {
            return Err(Error::InvalidArgument(format!(
                "{} field messages for {} topics",
                fields.len(),
                topics.len()
            )));
        }
        self.lookup_batch_resolving(topics, |i| &fields[i], out, ends)
    }

    /// The algorithm's batch path, then each topic's synthetic ids resolved with its message
    /// (`fields(i)` for topic `i`), as [`lookup_fields_into`](Self::lookup_fields_into) does;
    /// in parts of [`PINNED_TOPICS`], each walked and resolved under a pin of its own taken
    /// before its walk (as picking a group's member needs).
    fn lookup_batch_resolving<'m>(
        &self,
        topics: &[&str],
        fields: impl Fn(usize) -> &'m Message,
        out: &mut Vec<SubscriberId>,
        ends: &mut Vec<usize>,
    ) -> Result<()> {
        let (mut found, mut found_ends) = (Vec::new(), Vec::new());
        for (first, part) in (0..)
            .step_by(PINNED_TOPICS)
            .zip(topics.chunks(PINNED_TOPICS))
        {
            found.clear();
            found_ends.clear();
            let pinned = groups::pin();
            let walked = if self.groups.is_empty() {
                // As in `lookup_fields_into`: resolving a synthetic id de-duplicates the tail.
                let distinct = || self.several.load(Ordering::SeqCst) == 0;
                self.matcher.lookup_batch_distinct_into(
                    part,
                    &mut found,
                    &mut found_ends,
                    &distinct,
                )
            } else {
                self.matcher
                    .lookup_batch_into(part, &mut found, &mut found_ends)
            };
            let mut from = 0;
            for (i, (topic, &end)) in part.iter().zip(&found_ends).enumerate() {
                let start = out.len();
                out.extend_from_slice(&found[from..end]);
                if any_synthetic(&out[start..]) {
                    if self.filters.is_empty() && !groups::any_filtered(&out[start..]) {
                        // Only groups: their picks are de-duplicated as they are made.
                        self.groups.pick_tail(&pinned, topic, out, start);
                    } else {
                        self.resolve_synthetic(&pinned, topic, out, start, fields(first + i));
                    }
                }
                ends.push(out.len());
                from = end;
            }
            // The topics walked before an invalid one have their rows.
            walked?;
        }
        Ok(())
    }

    /// Whether every lookup of a topic without fields gives the same answer while the
    /// subscriptions stay the same: no group (whose member is picked per message) and no
    /// filtered subscription was ever held. Read after a lookup, `true` means the lookup
    /// picked nothing (the flag it reads is set before the first such subscription reaches
    /// the algorithm), so a caller may give that lookup's answer to other messages of the
    /// same topic in the same batch.
    pub fn answers_by_topic(&self) -> bool {
        !self.synthetic.load(Ordering::SeqCst)
    }

    /// Whether any subscription matches `topic` (a message without fields).
    pub fn matches_any(&self, topic: &str) -> Result<bool> {
        self.matches_any_fields(topic, &Message::new())
    }

    /// Whether any subscription matches `topic` with `fields`.
    pub fn matches_any_fields(&self, topic: &str, fields: &Message) -> Result<bool> {
        if self.filters.is_empty() {
            return self.matcher.matches_any(topic);
        }
        let mut ids = Vec::new();
        self.lookup_fields_into(topic, fields, &mut ids)?;
        Ok(!ids.is_empty())
    }

    /// The distinct subscribers matching `topic`, resolved to their values.
    pub fn lookup(&self, topic: &str) -> Result<Vec<Subscriber>> {
        // Pinned from the walk to the resolution: no id found can change owner meanwhile.
        #[cfg(not(loom))]
        let _pinned = crossbeam_epoch::pin();
        let mut ids = Vec::new();
        self.lookup_into(topic, &mut ids)?;
        Ok(self.resolve(&ids))
    }

    /// Resolves subscriber ids to values, dropping any whose subscriber has meanwhile left.
    /// Ids from a lookup resolve to their own subscribers as long as the thread stayed pinned
    /// (`crossbeam_epoch::pin`) from before the lookup until here (see [`Registry`]); an id
    /// held longer may have been reused by a later subscriber.
    pub fn resolve(&self, ids: &[SubscriberId]) -> Vec<Subscriber> {
        let registry = self.registry.read();
        ids.iter()
            .filter_map(|id| registry.get(*id).cloned())
            .collect()
    }

    /// Runs `f` with read access to the registry (to resolve many ids under one lock).
    pub fn with_registry<R>(&self, f: impl FnOnce(&Registry) -> R) -> R {
        f(&self.registry.read())
    }

    /// How many subscriptions are held (counting those being added by other threads).
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether no subscription is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every subscription, ordered by id.
    pub fn subscriptions(&self) -> Vec<Subscription> {
        let shards = self.table.all_ids();
        let registry = self.registry.read();
        let mut all: Vec<Subscription> = shards
            .iter()
            .flat_map(|ids| ids.iter())
            .map(|(id, (text, sub))| Subscription {
                id: *id,
                pattern: text.clone(),
                subscriber: registry
                    .get(self.real(*sub))
                    .cloned()
                    .expect("held subscriber"),
            })
            .collect();
        all.sort_unstable_by_key(|s| s.id);
        all
    }

    /// The id and filter of every filtered subscription, ordered by id.
    pub fn filters(&self) -> Vec<(SubscriptionId, Arc<Filter>)> {
        self.filters.filters()
    }

    /// The id and group name of every group subscription, ordered by id.
    pub fn groups(&self) -> Vec<(SubscriptionId, Arc<str>)> {
        let mut all = self.groups.names();
        all.sort_unstable_by_key(|(id, _)| *id);
        all
    }

    /// The id the next new subscription will get.
    pub fn next_id(&self) -> SubscriptionId {
        self.next_id.load(Ordering::Relaxed)
    }

    /// Rebuilds an engine with every setting of `config` from a snapshot: its subscriptions,
    /// the filters of its filtered subscriptions (by id) and the id the next new subscription
    /// gets, keeping every id. Fails if an entry is invalid or two entries clash, so a
    /// corrupted snapshot never loads partly.
    pub fn restore_config(
        algorithm: Algorithm,
        config: Config,
        subscriptions: &[Subscription],
        filters: &[(SubscriptionId, Arc<Filter>)],
        next_id: SubscriptionId,
    ) -> Result<Self> {
        Engine::with_config(algorithm, config)?.restored(subscriptions, filters, &[], next_id)
    }

    /// This (empty) engine holding a snapshot's subscriptions, as
    /// [`restore_config`](Self::restore_config) rebuilds them, with the group of each group
    /// subscription given by id (a `$share/{name}/{filter}` text with shared subscriptions on
    /// needs none).
    pub fn restored(
        self,
        subscriptions: &[Subscription],
        filters: &[(SubscriptionId, Arc<Filter>)],
        groups: &[(SubscriptionId, Arc<str>)],
        next_id: SubscriptionId,
    ) -> Result<Self> {
        let engine = self;
        if !engine.is_empty() {
            return Err(Error::InvalidArgument(
                "a snapshot is restored into an empty engine".into(),
            ));
        }
        let filters = by_id(filters.iter().map(|(id, f)| (*id, f)), "filter")?;
        let groups = by_id(groups.iter().map(|(id, g)| (*id, &**g)), "group")?;
        let held = |id: SubscriptionId| engine.table.id_shard(id).contains_key(&id);
        let mut max_id = 0;
        for s in subscriptions {
            if held(s.id) {
                return Err(Error::InvalidArgument(format!(
                    "snapshot repeats subscription id {}",
                    s.id
                )));
            }
            if s.id > LOW {
                return Err(Error::InvalidArgument(format!(
                    "snapshot subscription id {} is too large",
                    s.id
                )));
            }
            let filter = filters.get(&s.id).map(|&f| f.clone());
            let group = groups.get(&s.id).copied();
            let got = engine.add(
                &s.pattern,
                &s.subscriber,
                filter,
                group,
                Some(s.id),
                &mut |_| {},
            )?;
            if got != s.id {
                return Err(Error::InvalidArgument(format!(
                    "snapshot repeats subscription ({:?}, {:?})",
                    s.pattern, s.subscriber
                )));
            }
            max_id = max_id.max(s.id);
        }
        if let Some(id) = filters.keys().find(|&&id| !held(id)) {
            return Err(Error::InvalidArgument(format!(
                "snapshot has a filter for subscription {id}, which it does not hold"
            )));
        }
        if let Some(id) = groups.keys().find(|&&id| !held(id)) {
            return Err(Error::InvalidArgument(format!(
                "snapshot has a group for subscription {id}, which it does not hold"
            )));
        }
        let after_max = max_id.checked_add(1).ok_or_else(|| {
            Error::InvalidArgument(format!("snapshot subscription id {max_id} is too large"))
        })?;
        engine
            .next_id
            .store(next_id.max(after_max), Ordering::Relaxed);
        Ok(engine)
    }
}

/// A snapshot's `what` (filters, groups) by subscription id; an id given twice is refused.
fn by_id<T>(
    items: impl Iterator<Item = (SubscriptionId, T)>,
    what: &str,
) -> Result<FxHashMap<SubscriptionId, T>> {
    let mut out = FxHashMap::default();
    for (id, item) in items {
        if out.insert(id, item).is_some() {
            return Err(Error::InvalidArgument(format!(
                "snapshot gives subscription {id} two {what}s"
            )));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{Engine, GroupPolicy};
    use crate::dialect::{Dialect, Limits};
    use crate::fields::{Criterion, Filter, Mode};
    use crate::matchers::Algorithm;
    use crate::registry::Subscriber;

    /// Listing an engine's subscriptions (what a snapshot reads) makes neither the `where=`
    /// nor the group table's lock; each is made by the first subscription that needs it.
    #[test]
    fn listings_make_no_lazy_table() {
        let engine = Engine::new(
            Dialect::Mqtt,
            Algorithm::Cstrie,
            Limits::for_dialect(Dialect::Mqtt),
        )
        .and_then(|e| e.with_groups(GroupPolicy::default(), true))
        .unwrap();
        let alice = Subscriber::from("alice");
        engine.subscribe("a/+", &alice).unwrap();
        engine.subscribe("a/b", &alice).unwrap();
        assert_eq!(engine.subscriptions().len(), 2);
        assert!(engine.filters().is_empty());
        assert!(engine.groups().is_empty());
        assert!(!engine.filters.is_made() && !engine.groups.is_made());

        let filter = Filter::new(vec![("n".into(), Criterion::Present)], Mode::All).unwrap();
        engine.subscribe_where("a/#", &alice, &filter).unwrap();
        assert!(engine.filters.is_made() && !engine.groups.is_made());
        engine.subscribe_group("a/#", &alice, "g").unwrap();
        assert!(engine.groups.is_made());
        assert_eq!(engine.filters().len(), 1);
        assert_eq!(engine.groups().len(), 1);
    }
}
