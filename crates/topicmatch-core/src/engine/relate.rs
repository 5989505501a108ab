//! The subscriptions whose pattern covers, or intersects, a query pattern
//! ([`Engine::covering`], [`Engine::intersecting`]).
//!
//! The algorithm walks its index ([`Matcher::related_into`](crate::Matcher::related_into))
//! and reports the patterns it holds that stand in the relation, with their subscriber ids; the
//! engine maps each (matched text, subscriber id) back to every subscription matched as it: the
//! one whose text it is, the MQTT shared subscriptions `$share/{name}/{filter}` of that filter
//! (when they are not groups), the filtered subscriptions of a pattern through their bucket,
//! and a group through its members. An algorithm without a walk is answered by a scan of the
//! subscriptions, deciding the relation for each.
//!
//! Field criteria (`where=`) play no part: a filtered subscription is related by its pattern.

use std::sync::Arc;

use rustc_hash::FxHashSet;

use super::groups::is_group;
use super::{Engine, Subscription, SubscriptionId};
use crate::error::Result;
use crate::fields::filtered::is_synthetic;
use crate::matcher::{Related, SubscriberId};
use crate::pattern::{Pattern, Word};
use crate::relation::{Query, Relation, DEFAULT_MAX_WORK};

/// The fewest states an index walk may visit, on a small matcher. Past one state for each held
/// subscription and each word of the query (and this), the query is answered by a scan
/// instead: a walk's state (a hash-set entry, a trie level read, its children pushed) costs
/// about what deciding the relation for a pattern costs per word of the query.
const MIN_WALK_STATES: usize = 4096;

impl Engine {
    /// The subscriptions whose pattern covers `pattern` (matches every valid topic that
    /// `pattern` matches: "is this subscribe allowed by any ACL filter?"), ordered by id.
    /// `pattern` is validated as `subscribe` validates it; see [`crate::relation`].
    pub fn covering(&self, pattern: &str) -> Result<Vec<Subscription>> {
        self.related(Relation::Covers, pattern)
    }

    /// [`covering`](Self::covering), giving up with `LimitExceeded` once deciding one held
    /// pattern passes `max_work` (as [`covers_within`](crate::covers_within) does).
    pub fn covering_within(&self, pattern: &str, max_work: usize) -> Result<Vec<Subscription>> {
        self.related_within(Relation::Covers, pattern, max_work)
    }

    /// The subscriptions whose pattern intersects `pattern` (some valid topic matches both),
    /// ordered by id. `pattern` is validated as `subscribe` validates it.
    pub fn intersecting(&self, pattern: &str) -> Result<Vec<Subscription>> {
        self.related(Relation::Intersects, pattern)
    }

    /// The subscriptions whose pattern stands in `relation` to `pattern`, ordered by id.
    pub fn related(&self, relation: Relation, pattern: &str) -> Result<Vec<Subscription>> {
        self.related_within(relation, pattern, DEFAULT_MAX_WORK)
    }

    /// [`related`](Self::related), deciding each held pattern within `max_work` (only
    /// [`Relation::Covers`] can need that much: an intersection is decided in polynomial time).
    pub fn related_within(
        &self,
        relation: Relation,
        pattern: &str,
        max_work: usize,
    ) -> Result<Vec<Subscription>> {
        let parsed = Pattern::parse(self.config.dialect, &self.config.limits, pattern)?;
        // A walk past one state for each held pattern and step of the query costs more than
        // deciding each pattern in a scan.
        let budget = self
            .len()
            .saturating_mul(parsed.words().len() + 1)
            .max(MIN_WALK_STATES);
        let query = Query::new(relation, &parsed, max_work).with_walk_budget(budget);
        let mut found = Vec::new();
        let mut all = if self.matcher.related_into(&query, &mut found)? {
            self.subscriptions_of(&found)
        } else {
            self.scan(&query)?
        };
        all.sort_unstable_by_key(|s| s.id);
        all.dedup_by_key(|s| s.id);
        Ok(all)
    }

    /// Every subscription matched as one of the patterns found.
    fn subscriptions_of(&self, found: &[Related]) -> Vec<Subscription> {
        let dialect = self.config.dialect;
        let sep = char::from(dialect.separator()).to_string();
        let mut ids: Vec<SubscriptionId> = Vec::new();
        for f in found {
            let matched: Arc<str> = spell(dialect, &f.words, &sep).into();
            // The subscribers' values first: no key shard is taken under the registry's lock.
            let subscribers: Vec<_> = {
                let registry = self.registry.read();
                f.subscribers
                    .iter()
                    .filter(|&&sub| !is_synthetic(sub))
                    .filter_map(|&sub| Some((sub, registry.get(sub)?.clone())))
                    .collect()
            };
            for (sub, value) in subscribers {
                ids.extend(
                    self.table
                        .key_shard(&matched, &value)
                        .matched_as(dialect, &matched, sub),
                );
            }
            for &sub in f.subscribers.iter().filter(|&&sub| is_synthetic(sub)) {
                if is_group(sub) {
                    ids.extend(self.groups.subscriptions_of(sub));
                } else {
                    ids.extend(self.filters.subscriptions_in(sub));
                }
            }
        }
        let unique: FxHashSet<SubscriptionId> = ids.into_iter().collect();
        let mut held = Vec::with_capacity(unique.len());
        for id in unique {
            let shard = self.table.id_shard(id);
            if let Some((text, sub)) = shard.get(&id) {
                // Under the id's shard: a filtered subscription still held keeps its filter.
                held.push((id, text.clone(), self.real(*sub)));
            }
        }
        self.resolve_held(held)
    }

    /// Every subscription whose pattern stands in the relation: a scan.
    fn scan(&self, query: &Query<'_>) -> Result<Vec<Subscription>> {
        let mut held = Vec::new();
        for shard in self.table.all_ids() {
            held.extend(
                shard
                    .iter()
                    .map(|(id, (text, sub))| (*id, text.clone(), self.real(*sub))),
            );
        }
        let mut kept = Vec::new();
        for (id, text, sub) in held {
            let pattern = Pattern::parse(self.config.dialect, &self.config.limits, &text)
                .expect("a stored pattern was valid when subscribed");
            if query.holds(pattern.words())? {
                kept.push((id, text, sub));
            }
        }
        Ok(self.resolve_held(kept))
    }

    /// Subscriptions from (id, text, subscriber id), skipping any whose subscriber has
    /// meanwhile left.
    fn resolve_held(
        &self,
        held: Vec<(SubscriptionId, Arc<str>, SubscriberId)>,
    ) -> Vec<Subscription> {
        let registry = self.registry.read();
        held.into_iter()
            .filter_map(|(id, pattern, sub)| {
                Some(Subscription {
                    id,
                    pattern,
                    subscriber: registry.get(sub)?.clone(),
                })
            })
            .collect()
    }
}

/// The text of a pattern's words.
fn spell(dialect: crate::dialect::Dialect, words: &[Word], sep: &str) -> String {
    let texts: Vec<&str> = words
        .iter()
        .map(|w| match w {
            Word::Literal(l) => l,
            Word::One => dialect.one_wildcard(),
            Word::Multi => dialect.multi_wildcard(),
        })
        .collect();
    texts.join(sep)
}
