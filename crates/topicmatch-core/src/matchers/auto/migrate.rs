//! The structure `auto` runs now, and the book of subscriptions it is rebuilt from.

use rustc_hash::FxHashMap;

use crate::matcher::{Config, Matcher, SubscriberId};
use crate::matchers::optimized_bitmap::OptimizedBitmapMatcher;
use crate::matchers::trie::TrieMatcher;
use crate::pattern::Pattern;

/// Every (pattern, subscriber) held, and how many distinct patterns have wildcards.
#[derive(Debug, Default)]
pub(crate) struct Book {
    patterns: FxHashMap<Pattern, Vec<SubscriberId>>,
    wildcard: usize,
}

impl Book {
    pub(crate) fn insert(&mut self, pattern: &Pattern, subscriber: SubscriberId) {
        let subs = self.patterns.entry(pattern.clone()).or_default();
        if subs.is_empty() && pattern.has_wildcards() {
            self.wildcard += 1;
        }
        subs.push(subscriber);
    }

    pub(crate) fn remove(&mut self, pattern: &Pattern, subscriber: SubscriberId) -> bool {
        let Some(subs) = self.patterns.get_mut(pattern) else {
            return false;
        };
        let Some(pos) = subs.iter().position(|s| *s == subscriber) else {
            return false;
        };
        subs.swap_remove(pos);
        if subs.is_empty() {
            self.patterns.remove(pattern);
            if pattern.has_wildcards() {
                self.wildcard -= 1;
            }
        }
        true
    }

    pub(crate) fn wildcard_patterns(&self) -> usize {
        self.wildcard
    }

    fn fill(&self, matcher: &dyn Matcher) {
        for (pattern, subs) in &self.patterns {
            for &s in subs {
                matcher.insert(pattern, s);
            }
        }
    }
}

/// The matcher in charge.
pub(crate) enum Active {
    Bitmap(Box<OptimizedBitmapMatcher>),
    Trie(TrieMatcher),
}

impl Active {
    pub(crate) fn bitmap(config: Config) -> Active {
        Active::Bitmap(Box::new(OptimizedBitmapMatcher::new(config)))
    }

    pub(crate) fn bitmap_from(config: Config, book: &Book) -> Active {
        let m = OptimizedBitmapMatcher::new(config);
        book.fill(&m);
        Active::Bitmap(Box::new(m))
    }

    pub(crate) fn trie(config: Config, book: &Book) -> Active {
        let m = TrieMatcher::new(config);
        book.fill(&m);
        Active::Trie(m)
    }

    pub(crate) fn is_bitmap(&self) -> bool {
        matches!(self, Active::Bitmap(_))
    }

    pub(crate) fn get(&self) -> &dyn Matcher {
        match self {
            Active::Bitmap(m) => &**m,
            Active::Trie(m) => m,
        }
    }
}
