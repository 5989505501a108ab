//! [`TopicStore`]: a map from concrete topics to values, queried by wildcard filters.
//!
//! The reverse of matching: a [`Matcher`](crate::Matcher) answers "which subscriptions match
//! this topic?", a store answers "which stored topics does this filter match?", the question a
//! broker asks of its retained messages each time a client subscribes (MQTT's retained
//! messages, NATS's subject tree over a stream's subjects).
//!
//! ```
//! use topicmatch_core::{Dialect, TopicStore};
//!
//! let store = TopicStore::new(Dialect::Mqtt);
//! store.insert("home/kitchen/temp", 21)?;
//! store.insert("home/hall/temp", 19)?;
//! store.insert("$SYS/uptime", 7)?;
//! assert_eq!(
//!     store.matches("home/+/temp")?,
//!     vec![("home/hall/temp".to_owned(), 19), ("home/kitchen/temp".to_owned(), 21)]
//! );
//! assert_eq!(store.count("#")?, 2); // `#` does not reach `$` topics
//! # Ok::<(), topicmatch_core::Error>(())
//! ```
//!
//! # Semantics
//!
//! A query returns exactly the stored topics `t` with `filter.matches_words(words(t))`
//! ([`Pattern::matches_words`](crate::Pattern::matches_words), the reference semantics), each
//! once: MQTT `a/#` returns `a` too, and a filter starting with `+` or `#` skips topics whose
//! first level starts with `$`; AMQP `#` takes zero or more words and empty words are words
//! (the empty routing key is a topic); NATS `>` takes one or more tokens. An MQTT shared
//! subscription `$share/{name}/{filter}` queries as its `{filter}`, as it matches; a broker
//! that sends no retained messages to shared subscriptions (MQTT 5.0, 4.8.2) does not ask.
//!
//! Topics are validated as a matcher validates published topics, filters as it validates
//! patterns, under the store's [`StoreLimits`]; an invalid one is an error and changes
//! nothing.
//!
//! # Order
//!
//! Results come sorted by the topics' word lists: word by word, each word compared by its
//! UTF-8 bytes, a topic before the topics that extend it (`a`, `a/b`, `a/b/c`, `a/c`). This is
//! the order of the texts themselves except where one word is a prefix of its sibling and the
//! sibling's next byte sorts below the separator: `a.us.x` comes before `a.us-east`. In
//! Python: `sorted(topics, key=lambda t: t.split(sep))`.
//!
//! # Structure
//!
//! A radix trie of words (`tree`): a node per branching topic prefix, a chain without
//! branches being one node, so shared prefixes are stored once. A node's children (`kids`)
//! are the child nodes themselves, sorted by their words' bytes, in one vector up to 32 and
//! in blocks of at most 32 past that, so the nodes of one level lie side by side in memory in
//! walk order however the topics were inserted. Each node carries its word's first eight
//! bytes (`label`): words up to eight bytes are spelled there and never looked up; longer
//! words, and the words of a chain after its first, are interned (`words`) so each distinct
//! text is stored once. A filter (`query`) is answered by one depth-first walk (`walk`):
//! a literal word follows one edge, `+`/`*` visits the children of the nodes reached, a last
//! `#`/`>` takes the subtree whole, and the topic text is rebuilt in one buffer as the walk
//! descends (each result costs the words that differ from the previous one's). Removing a
//! topic prunes the nodes it alone used, frees words no node uses, and gives back vectors'
//! spare room.

//! # Concurrency
//!
//! All methods take `&self`; the trie sits behind one reader-writer lock (`parking_lot`,
//! task-fair: a waiting writer is not starved by a stream of readers). Queries, lookups and
//! counts hold it shared and run in parallel with each other; inserts and removals hold it
//! exclusively for one trie update (O(topic words), plus a rare renumbering of the interned
//! words after many removals), validation and parsing done before. Every call is atomic: a query sees the store as it was at one
//! instant, between writes. [`Reader::page`] bounds how long a huge result holds the lock: a
//! caller that reads a result page by page sees each page at one instant, and a topic stored
//! for the whole of its reading is returned exactly once, in order; a topic inserted or
//! removed meanwhile may or may not be. Values are dropped only after the lock is released
//! (`insert` and `remove` hand the old value back, `clear` drops after unlocking), so a value
//! whose drop does work (a Python object) never runs it under the lock.

mod found;
mod kids;
mod label;
mod query;
mod tree;
mod walk;
mod words;

use parking_lot::{RwLock, RwLockReadGuard};

use crate::dialect::{Dialect, Limits};
use crate::error::{Error, Limit, Result};
use crate::hint::prefetch;
use crate::pattern::Pattern;
use crate::topic::{check_topic, parse_topic, split_words, Words};

pub use found::Found;

use query::Query;
use tree::Tree;
use walk::{Target, Walk};

/// How many topics ahead a bulk insert asks for a topic's text and value.
const INSERT_AHEAD: usize = 8;

/// The first sixteen bytes of `text`, zero-padded, as a number that orders as they do: the key
/// that groups a bulk insert's topics by where they go in the trie.
fn head16(text: &str) -> u128 {
    let mut head = [0u8; 16];
    let n = text.len().min(16);
    head[..n].copy_from_slice(&text.as_bytes()[..n]);
    u128::from_be_bytes(head)
}

/// The limits of one store: a topic's size and depth (topics and filters alike) and how many
/// topics it holds. Exceeding one is a [`Error::LimitExceeded`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreLimits {
    /// Longest topic or filter, in UTF-8 bytes.
    pub max_topic_bytes: usize,
    /// Most words (levels, tokens) in a topic or filter.
    pub max_levels: usize,
    /// Most topics stored at once.
    pub max_topics: usize,
}

impl StoreLimits {
    /// The dialect's defaults, as [`Limits::for_dialect`], and no cap on topics.
    pub fn for_dialect(dialect: Dialect) -> Self {
        let limits = Limits::for_dialect(dialect);
        StoreLimits {
            max_topic_bytes: limits.max_topic_bytes,
            max_levels: limits.max_levels,
            max_topics: usize::MAX,
        }
    }

    /// The limits that validation of one topic or filter applies.
    fn text(self) -> Limits {
        Limits {
            max_topic_bytes: self.max_topic_bytes,
            max_levels: self.max_levels,
            max_subscriptions: usize::MAX,
            max_multi_wildcards: usize::MAX,
        }
    }
}

/// A filter parsed and validated for one store's dialect and limits, for repeated queries.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Filter {
    pattern: Pattern,
}

impl Filter {
    /// The parsed pattern.
    pub fn pattern(&self) -> &Pattern {
        &self.pattern
    }
}

/// A map from concrete topics to values, queried by wildcard filters. See the
/// [module docs](self) for the semantics, the order and the concurrency guarantee.
#[derive(Debug)]
pub struct TopicStore<V> {
    dialect: Dialect,
    limits: StoreLimits,
    tree: RwLock<Tree<V>>,
}

/// Sizes of a store's structure, for memory accounting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreStats {
    /// Stored topics.
    pub topics: usize,
    /// Trie nodes, the root included.
    pub nodes: usize,
    /// Distinct interned words.
    pub words: usize,
    /// Heap bytes of the structure, the values' own heap memory not included.
    pub heap_bytes: usize,
}

impl<V> TopicStore<V> {
    /// An empty store with `dialect`'s default limits.
    pub fn new(dialect: Dialect) -> Self {
        TopicStore::with_limits(dialect, StoreLimits::for_dialect(dialect))
    }

    /// An empty store with `limits`.
    pub fn with_limits(dialect: Dialect, limits: StoreLimits) -> Self {
        TopicStore {
            dialect,
            limits,
            tree: RwLock::new(Tree::default()),
        }
    }

    /// The dialect of every topic and filter.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The limits in force.
    pub fn limits(&self) -> StoreLimits {
        self.limits
    }

    /// How many topics are stored.
    pub fn len(&self) -> usize {
        self.tree.read().len()
    }

    /// Whether no topic is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn topic<'a>(&self, topic: &'a str) -> Result<Words<'a>> {
        parse_topic(self.dialect, &self.limits.text(), topic)
    }

    /// Stores `value` under `topic`; returns the value it replaces. An invalid topic, or a new
    /// topic past `max_topics`, is an error and changes nothing.
    pub fn insert(&self, topic: &str, value: V) -> Result<Option<V>> {
        let words = self.topic(topic)?;
        let mut tree = self.tree.write();
        if tree.len() >= self.limits.max_topics && tree.get(&words).is_none() {
            return Err(Error::limit_of(
                Limit::Topics,
                self.limits.max_topics,
                tree.len() + 1,
                (self.dialect, "topic", topic),
            ));
        }
        Ok(tree.insert(&words, value))
    }

    /// Stores every `(topic, value)` of `items`, as [`insert`](Self::insert)s in their order
    /// would (a topic given twice keeps its last value), under one write lock and faster for
    /// many topics: they are inserted in the order of their first bytes, so that consecutive
    /// inserts reach the same part of the trie while it is in cache. Every topic is
    /// validated, and `max_topics` checked, before anything is stored: an error changes
    /// nothing. The values replaced are dropped after the lock is released.
    pub fn insert_many<S: AsRef<str>>(
        &self,
        items: impl IntoIterator<Item = (S, V)>,
    ) -> Result<()> {
        let (topics, values): (Vec<S>, Vec<V>) = items.into_iter().unzip();
        let limits = self.limits.text();
        // Each topic's text, its sixteen first bytes as the sort key, and its place in the
        // batch (to take its value): sorted by key, a stable sort, so that a topic given
        // twice keeps the order of its values.
        let mut order: Vec<(u128, &str, usize)> = Vec::with_capacity(topics.len());
        for (i, topic) in topics.iter().enumerate() {
            let topic = topic.as_ref();
            check_topic(self.dialect, &limits, topic)?;
            order.push((head16(topic), topic, i));
        }
        order.sort_by_key(|&(key, _, _)| key);
        let mut values: Vec<Option<V>> = values.into_iter().map(Some).collect();
        let mut replaced = Vec::new();
        let mut tree = self.tree.write();
        if tree.len().saturating_add(order.len()) > self.limits.max_topics {
            let after = tree.len() + self.fresh_topics(&tree, &order);
            if after > self.limits.max_topics {
                drop(tree);
                return Err(Error::limit(Limit::Topics, self.limits.max_topics, after));
            }
        }
        for (n, &(_, topic, i)) in order.iter().enumerate() {
            if let Some(&(_, soon, j)) = order.get(n + INSERT_AHEAD) {
                // In this order the texts and values are no longer where the batch put them
                // side by side: ask for them early.
                prefetch(soon.as_ptr());
                prefetch(std::ptr::from_ref(&values[j]).cast());
            }
            let value = values[i].take().expect("each value is taken once");
            let words: Words = split_words(self.dialect, topic).collect();
            replaced.extend(tree.insert(&words, value));
        }
        drop(tree);
        drop(replaced);
        Ok(())
    }

    /// How many distinct topics of `order` are not stored.
    fn fresh_topics(&self, tree: &Tree<V>, order: &[(u128, &str, usize)]) -> usize {
        let mut fresh = rustc_hash::FxHashSet::default();
        for &(_, topic, _) in order {
            let words: Words = split_words(self.dialect, topic).collect();
            if tree.get(&words).is_none() {
                fresh.insert(topic);
            }
        }
        fresh.len()
    }

    /// Removes `topic`; returns its value, `None` if it was not stored.
    pub fn remove(&self, topic: &str) -> Result<Option<V>> {
        let words = self.topic(topic)?;
        Ok(self.tree.write().remove(&words))
    }

    /// Whether `topic` is stored.
    pub fn contains(&self, topic: &str) -> Result<bool> {
        let words = self.topic(topic)?;
        Ok(self.tree.read().get(&words).is_some())
    }

    /// `f` of the value stored under `topic`, run under the read lock.
    pub fn get_with<R>(&self, topic: &str, f: impl FnOnce(&V) -> R) -> Result<Option<R>> {
        let words = self.topic(topic)?;
        Ok(self.tree.read().get(&words).map(f))
    }

    /// A copy of the value stored under `topic`.
    pub fn get(&self, topic: &str) -> Result<Option<V>>
    where
        V: Clone,
    {
        self.get_with(topic, V::clone)
    }

    /// Removes every topic. The values are dropped after the lock is released.
    pub fn clear(&self) {
        let old = std::mem::take(&mut *self.tree.write());
        drop(old);
    }

    /// Gives back the spare room of every vector of the trie, and renumbers the interned
    /// words if most of their slots are free (removals do both by themselves, in part). The
    /// order of the nodes in memory needs no upkeep: each level is stored in walk order.
    /// O(topics), under the write lock.
    pub fn compact(&self) {
        self.tree.write().compact();
    }

    /// Parses and validates `text` as a filter of this store's dialect and limits.
    pub fn filter(&self, text: &str) -> Result<Filter> {
        Ok(Filter {
            pattern: Pattern::parse(self.dialect, &self.limits.text(), text)?,
        })
    }

    /// Holds the read lock for several queries at one instant (a batch pays the lock once).
    pub fn read(&self) -> Reader<'_, V> {
        Reader {
            dialect: self.dialect,
            tree: self.tree.read(),
        }
    }

    /// Calls `f(topic, value)` for each stored topic `filter` matches, in order, under the
    /// read lock.
    pub fn for_each_match(&self, filter: &str, mut f: impl FnMut(&str, &V)) -> Result<()> {
        let filter = self.filter(filter)?;
        self.read().walk(Some(&filter), None, true, &mut |t, v| {
            f(t, v);
            true
        });
        Ok(())
    }

    /// The stored topics `filter` matches, with their values, in order.
    pub fn matches(&self, filter: &str) -> Result<Vec<(String, V)>>
    where
        V: Clone,
    {
        let filter = self.filter(filter)?;
        let mut found = Found::new();
        self.read().match_into(&filter, &mut found)?;
        Ok(found.into_pairs())
    }

    /// How many stored topics `filter` matches.
    pub fn count(&self, filter: &str) -> Result<usize> {
        let filter = self.filter(filter)?;
        self.read().count(&filter)
    }

    /// [`matches`](Self::matches) for each filter, all at one instant. Every filter is
    /// validated first: one invalid filter is an error and nothing is returned.
    pub fn match_many(&self, filters: &[&str]) -> Result<Vec<Vec<(String, V)>>>
    where
        V: Clone,
    {
        let filters = filters
            .iter()
            .map(|f| self.filter(f))
            .collect::<Result<Vec<_>>>()?;
        let reader = self.read();
        filters
            .iter()
            .map(|f| {
                let mut found = Found::new();
                reader.match_into(f, &mut found)?;
                Ok(found.into_pairs())
            })
            .collect()
    }

    /// Sizes of the structure, for memory accounting.
    pub fn stats(&self) -> StoreStats {
        let tree = self.tree.read();
        StoreStats {
            topics: tree.len(),
            nodes: tree.nodes(),
            words: tree.words(),
            heap_bytes: tree.heap_bytes(),
        }
    }
}

/// The read lock of a [`TopicStore`], held for several queries (see
/// [`TopicStore::read`]). Writers wait while it lives: keep it short.
pub struct Reader<'s, V> {
    dialect: Dialect,
    tree: RwLockReadGuard<'s, Tree<V>>,
}

impl<V> Reader<'_, V> {
    /// How many topics are stored.
    pub fn len(&self) -> usize {
        self.tree.len()
    }

    /// Whether no topic is stored.
    pub fn is_empty(&self) -> bool {
        self.tree.len() == 0
    }

    fn check(&self, filter: &Filter) -> Result<()> {
        if filter.pattern.dialect() == self.dialect {
            Ok(())
        } else {
            Err(Error::InvalidArgument(format!(
                "a {} filter cannot query a {} store",
                filter.pattern.dialect(),
                self.dialect
            )))
        }
    }

    /// Walks the matches of `filter` (every topic for `None`) after the topic `after`, calling
    /// `emit` until it returns `false`; returns whether the walk finished.
    fn walk(
        &self,
        filter: Option<&Filter>,
        after: Option<&str>,
        texts: bool,
        emit: &mut impl FnMut(&str, &V) -> bool,
    ) -> bool {
        let query = filter.map(|f| Query::new(&f.pattern, &self.tree.words));
        let target = query.as_ref().map_or(Target::All, Target::Query);
        let after: Option<Vec<&str>> = after.map(|a| split_words(self.dialect, a).collect());
        Walk::new(
            &self.tree,
            target,
            self.dialect.separator(),
            after.as_deref(),
            texts,
        )
        .run(emit)
    }

    /// Calls `f(topic, value)` for each stored topic `filter` matches, in order.
    pub fn for_each_match(&self, filter: &Filter, mut f: impl FnMut(&str, &V)) -> Result<()> {
        self.check(filter)?;
        self.walk(Some(filter), None, true, &mut |t, v| {
            f(t, v);
            true
        });
        Ok(())
    }

    /// Appends the matches of `filter` to `out`, in order.
    pub fn match_into(&self, filter: &Filter, out: &mut Found<V>) -> Result<()>
    where
        V: Clone,
    {
        self.for_each_match(filter, |t, v| out.push(t, v.clone()))
    }

    /// How many stored topics `filter` matches.
    pub fn count(&self, filter: &Filter) -> Result<usize> {
        self.check(filter)?;
        let mut n = 0;
        self.walk(Some(filter), None, false, &mut |_, _| {
            n += 1;
            true
        });
        Ok(n)
    }

    /// Calls `f(topic, value)` for every stored topic, in order.
    pub fn for_each(&self, mut f: impl FnMut(&str, &V)) {
        self.walk(None, None, true, &mut |t, v| {
            f(t, v);
            true
        });
    }

    /// One page of a result read in pages: calls `f(topic, value)` for at most `limit` of the
    /// topics `filter` matches (every topic for `None`) that come after the topic `after`
    /// (from the first for `None`), in order. Returns whether the result ended within the
    /// page; if not, the next page starts after the last topic given to `f`. A `limit` of 0
    /// is an [`Error::InvalidArgument`].
    pub fn page(
        &self,
        filter: Option<&Filter>,
        after: Option<&str>,
        limit: usize,
        mut f: impl FnMut(&str, &V),
    ) -> Result<bool> {
        if let Some(filter) = filter {
            self.check(filter)?;
        }
        if limit == 0 {
            return Err(Error::InvalidArgument(
                "a page holds at least one topic".to_owned(),
            ));
        }
        let mut left = limit;
        let finished = self.walk(filter, after, true, &mut |t, v| {
            f(t, v);
            left -= 1;
            left > 0
        });
        Ok(finished)
    }
}
