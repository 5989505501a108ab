//! The naive matcher: a map of pattern to subscribers, every pattern tried on every lookup.
//!
//! This is the baseline the source documents measure against, and the project's oracle: it runs the reference semantics
//! ([`Pattern::matches_words`]) and nothing else, so every other algorithm is tested against it.

use parking_lot::RwLock;
use rustc_hash::FxHashMap;

use crate::error::Result;
use crate::matcher::{dedup_tail, Config, Matcher, Related, SubscriberId};
use crate::pattern::Pattern;
use crate::relation::Query;
use crate::topic::parse_topic;

/// Scans every pattern on every lookup.
pub struct NaiveMatcher {
    config: Config,
    patterns: RwLock<FxHashMap<Pattern, Vec<SubscriberId>>>,
}

impl NaiveMatcher {
    /// An empty matcher.
    pub fn new(config: Config) -> Self {
        NaiveMatcher {
            config,
            patterns: RwLock::new(FxHashMap::default()),
        }
    }
}

impl Matcher for NaiveMatcher {
    fn name(&self) -> &'static str {
        "naive"
    }

    fn insert(&self, pattern: &Pattern, subscriber: SubscriberId) {
        self.patterns
            .write()
            .entry(pattern.clone())
            .or_default()
            .push(subscriber);
    }

    fn remove(&self, pattern: &Pattern, subscriber: SubscriberId) -> bool {
        let mut patterns = self.patterns.write();
        let Some(subs) = patterns.get_mut(pattern) else {
            return false;
        };
        let Some(pos) = subs.iter().position(|s| *s == subscriber) else {
            return false;
        };
        subs.swap_remove(pos);
        if subs.is_empty() {
            patterns.remove(pattern);
            crate::matcher::shrink_if_sparse(&mut patterns);
        }
        true
    }

    fn lookup_into(&self, topic: &str, out: &mut Vec<SubscriberId>) -> Result<()> {
        let words = parse_topic(self.config.dialect, &self.config.limits, topic)?;
        let start = out.len();
        for (pattern, subs) in self.patterns.read().iter() {
            if pattern.matches_words(&words) {
                out.extend_from_slice(subs);
            }
        }
        dedup_tail(out, start);
        Ok(())
    }

    fn matches_any(&self, topic: &str) -> Result<bool> {
        let words = parse_topic(self.config.dialect, &self.config.limits, topic)?;
        Ok(self.patterns.read().keys().any(|p| p.matches_words(&words)))
    }

    /// A scan: the relation decided for every pattern held.
    fn related_into(&self, query: &Query<'_>, out: &mut Vec<Related>) -> Result<bool> {
        let mut found = Vec::new();
        for (pattern, subs) in self.patterns.read().iter() {
            if query.holds(pattern.words())? {
                found.push(Related {
                    words: pattern.words().to_vec(),
                    subscribers: subs.clone(),
                });
            }
        }
        out.append(&mut found);
        Ok(true)
    }
}
