//! Batches of lookups ([`Matcher::lookup_batch_into`]), walked [`GROUP`] topics at a time.
//!
//! One topic's walk is a chain of dependent loads: a level's main node, its children's array,
//! the child's I-node, the child's main node, and below a multi-word wildcard child the same
//! again down to the subscribers' array. On a trie larger than the core's cache each of those
//! waits for the one before, whatever the prefetching within the topic: a topic of few states
//! has nothing else to ask for. A group walks its topics' states together, level by level:
//! each round asks for every state's lines before reading any, so the misses of different
//! topics overlap, and the subscriber sets found are read in rounds after the walk (their
//! I-nodes, then their main nodes, then their arrays), each round's loads again in flight
//! together. Each topic's subscribers are then appended in the batch's order, deduplicated as
//! a single lookup's are.
//!
//! What a lookup guarantees does not change (docs/CONCURRENCY.md, "What a lookup
//! guarantees"): every level is read after its parent, under the batch's pin, and each pattern's
//! set at some instant within the batch's lookup of its topic.
//!
//! An AMQP `#` with children swallows words: it adds its states (its main node at each word
//! from the current one to the end) to the next round, each (I-node, word, topic) once per
//! group, as the one-topic walk's memo does, so a lookup stays polynomial.
//!
//! Groups serve topics of high fan-out: a batch walks its topics one at a time until
//! [`GROUP`] of them find [`FANOUT`] subscribers each on average, and in groups while they do.
//! A trie with a result cache, which answers topic by topic, and a batch of one topic keep the
//! one-topic walk ([`lookup_cached`]); so does a topic the tokenizer refuses, whose error the
//! rules of the one-topic walk report.
//!
//! [`Matcher::lookup_batch_into`]: crate::matcher::Matcher::lookup_batch_into

use std::ptr;

use rustc_hash::FxHashSet;

use super::kids::Probe;
use super::nodes::{INode, Main};
use super::raw::Pin;
use super::walk::{dedup, lookup_cached, lookup_pinned, probe_all, Amqp, Mqtt, Nats, Rules};
use super::CsTrieMatcher;
use crate::dialect::Dialect;
use crate::error::Result;
use crate::hint::prefetch;
use crate::matcher::SubscriberId;
use crate::topic::tokens::{self, Tokens};

/// Subscribers per topic from which a group walk pays, judged on the batch's last [`GROUP`]
/// topics. One topic's walk follows its literal path in registers; a group's rounds cost a few
/// nanoseconds more per state, repaid where topics reach many sets and not where they reach
/// few. Core alone, 480-topic batches: the `crowds` fan-out set (384 subscribers in 12 sets per
/// topic) 33% faster in groups in MQTT, 25% in AMQP; ftm (3.7 subscribers per topic) 5% slower
/// in groups in MQTT, 12% in AMQP, which its topics' fan-out keeps out of groups.
const FANOUT: usize = 16;

/// Topics walked together. On the `crowds` fan-out set (MQTT, core alone), groups of 4 were
/// the fastest measured: 0.75 ns per delivered subscriber against 1.19 for one topic at a time,
/// 0.78 for groups of 2, 0.79 for 8 and 0.84 for 16, whose rounds hold too many states to stay
/// in the first-level cache.
const GROUP: usize = 4;

impl CsTrieMatcher {
    /// Looks up every topic under one pin (the layout of [`Matcher::lookup_batch_into`];
    /// with `distinct`, of [`Matcher::lookup_batch_distinct_into`]).
    ///
    /// [`Matcher::lookup_batch_into`]: crate::matcher::Matcher::lookup_batch_into
    /// [`Matcher::lookup_batch_distinct_into`]: crate::matcher::Matcher::lookup_batch_distinct_into
    pub(super) fn walk_batch(
        &self,
        topics: &[&str],
        out: &mut Vec<SubscriberId>,
        ends: &mut Vec<usize>,
        distinct: Option<&dyn Fn() -> bool>,
    ) -> Result<()> {
        let pin = self.reclaim.pin();
        if self.cache.is_some() || topics.len() < 2 {
            for topic in topics {
                lookup_cached(self, topic, out, false, &pin, distinct)?;
                ends.push(out.len());
            }
            return Ok(());
        }
        self.batch(topics, out, ends, &pin, distinct, FANOUT)
    }

    /// [`Self::walk_batch`] with every topic in a group (none cached): what the tests compare
    /// with one lookup at a time.
    #[cfg(test)]
    pub(super) fn walk_batch_in_groups(
        &self,
        topics: &[&str],
        out: &mut Vec<SubscriberId>,
        ends: &mut Vec<usize>,
    ) -> Result<()> {
        self.batch(topics, out, ends, &self.reclaim.pin(), None, 0)
    }

    /// Every topic, in groups from `fanout` subscribers per topic (see [`batch`]).
    fn batch(
        &self,
        topics: &[&str],
        out: &mut Vec<SubscriberId>,
        ends: &mut Vec<usize>,
        pin: &Pin<'_>,
        distinct: Option<&dyn Fn() -> bool>,
        fanout: usize,
    ) -> Result<()> {
        let ask = Ask {
            trie: self,
            pin,
            distinct,
        };
        match self.config.dialect {
            Dialect::Amqp => batch::<Amqp>(ask, topics, out, ends, fanout),
            Dialect::Mqtt => batch::<Mqtt>(ask, topics, out, ends, fanout),
            Dialect::Nats => batch::<Nats>(ask, topics, out, ends, fanout),
        }
    }
}

/// What each topic of a batch is looked up under.
#[derive(Clone, Copy)]
struct Ask<'g, 'd> {
    trie: &'g CsTrieMatcher,
    /// The batch's pin.
    pin: &'g Pin<'g>,
    /// Whether no subscriber can be found twice (see `lookup_batch_distinct_into`).
    distinct: Option<&'d dyn Fn() -> bool>,
}

impl Ask<'_, '_> {
    /// Looks up `topic` alone, appending its subscribers to `out`.
    fn one(self, topic: &str, out: &mut Vec<SubscriberId>) -> Result<bool> {
        lookup_pinned(self.trie, topic, out, false, self.pin, self.distinct)
    }
}

/// The batch for one dialect, [`GROUP`] topics at a time: in a group while the last [`GROUP`]
/// topics found at least `fanout` subscribers each, one by one otherwise (the first [`GROUP`]
/// too, unless `fanout` is 0).
fn batch<'w, 'g, R: Rules>(
    ask: Ask<'g, '_>,
    topics: &[&'w str],
    out: &mut Vec<SubscriberId>,
    ends: &mut Vec<usize>,
    fanout: usize,
) -> Result<()> {
    // Made for the first group.
    let mut groups: Option<Groups<'w, 'g, '_>> = None;
    let mut grouped = fanout == 0;
    for chunk in topics.chunks(GROUP) {
        let start = out.len();
        if grouped {
            groups
                .get_or_insert_with(|| Groups::new(ask))
                .walk::<R>(chunk, out, ends)?;
        } else {
            for topic in chunk {
                ask.one(topic, out)?;
                ends.push(out.len());
            }
        }
        grouped = out.len() - start >= fanout * chunk.len();
    }
    Ok(())
}

/// A state of a group's walk at level `N` (a main node, or an I-node not read yet).
#[derive(Clone, Copy)]
struct Visit<N> {
    /// The level.
    node: N,
    /// Where the word its children match is in the group's words.
    word: u32,
    /// Where the topic's words end there.
    end: u32,
    /// The topic's place in the group.
    topic: u32,
}

impl<N> Visit<N> {
    /// The same state at `node`.
    fn at<M>(self, node: M) -> Visit<M> {
        Visit {
            node,
            word: self.word,
            end: self.end,
            topic: self.topic,
        }
    }
}

/// The buffers of a batch's groups, reused from group to group.
struct Groups<'w, 'g, 'd> {
    /// What the topics are looked up under.
    ask: Ask<'g, 'd>,
    /// The keyed words of the group's topics, one after the other.
    words: Vec<Probe<'w>>,
    /// Where each topic's words start in [`Self::words`], and where the last one's end.
    starts: Vec<u32>,
    /// Whether each topic's wildcards may match at the root (not for an MQTT `$` topic).
    wild_root: Vec<bool>,
    /// The states of the current level.
    level: Vec<Visit<&'g Main>>,
    /// The next level's states, their I-nodes not read yet.
    next: Vec<Visit<&'g INode>>,
    /// Per topic: multi-word wildcard children whose whole set matches.
    multis: Vec<Vec<&'g INode>>,
    /// Per topic: main nodes whose set matches and is not empty.
    mains: Vec<Vec<&'g Main>>,
    /// AMQP: the `#` children met this round, their main nodes not read yet.
    hashes: Vec<Visit<&'g INode>>,
    /// AMQP: the `#` children met this round, their main nodes read, with their I-nodes'
    /// addresses.
    swallowed: Vec<(Visit<&'g Main>, usize)>,
    /// AMQP: the (I-node, word, topic) states a `#` has reached in this group; an I-node
    /// address is a stable identity while the batch stays pinned.
    seen: FxHashSet<(usize, u32, u32)>,
    /// AMQP: per topic, whether a `#` swallowed words, so that one pattern may have been
    /// reached from several words and its subscribers appended more than once.
    revisits: Vec<bool>,
}

impl<'w, 'g, 'd> Groups<'w, 'g, 'd> {
    fn new(ask: Ask<'g, 'd>) -> Self {
        Groups {
            ask,
            words: Vec::with_capacity(8 * GROUP),
            starts: Vec::with_capacity(GROUP + 1),
            wild_root: Vec::with_capacity(GROUP),
            level: Vec::with_capacity(4 * GROUP),
            next: Vec::with_capacity(4 * GROUP),
            multis: (0..GROUP).map(|_| Vec::new()).collect(),
            mains: (0..GROUP).map(|_| Vec::new()).collect(),
            hashes: Vec::new(),
            swallowed: Vec::new(),
            seen: FxHashSet::default(),
            revisits: vec![false; GROUP],
        }
    }

    /// Every topic, in order: groups of those the tokenizer keys, each refused one alone.
    fn walk<R: Rules>(
        &mut self,
        topics: &[&'w str],
        out: &mut Vec<SubscriberId>,
        ends: &mut Vec<usize>,
    ) -> Result<()> {
        let limits = &self.ask.trie.config.limits;
        self.clear();
        for &topic in topics {
            let words = &mut self.words;
            let keyed = match tokens::tokens(R::DIALECT, limits, topic) {
                Tokens::Tiny(cursor) => probe_all(cursor, |probe| words.push(probe)),
                Tokens::Short(cursor) => probe_all(cursor, |probe| words.push(probe)),
                Tokens::Long(cursor) => probe_all(cursor, |probe| words.push(probe)),
            };
            // A group's words are counted in `u32`: topic limits keep them far below.
            if keyed && u32::try_from(self.words.len()).is_ok() {
                self.starts.push(self.words.len() as u32);
                self.wild_root
                    .push(!(R::DIALECT == Dialect::Mqtt && topic.starts_with('$')));
                if self.wild_root.len() == GROUP {
                    self.group::<R>(out, ends);
                }
            } else {
                self.words
                    .truncate(self.starts[self.starts.len() - 1] as usize);
                self.group::<R>(out, ends);
                // The rules report the error (or look up a topic the tokenizer should have
                // keyed).
                self.ask.one(topic, out)?;
                ends.push(out.len());
            }
        }
        self.group::<R>(out, ends);
        Ok(())
    }

    /// Empties the group.
    fn clear(&mut self) {
        self.words.clear();
        self.starts.clear();
        self.starts.push(0);
        self.wild_root.clear();
        if !self.seen.is_empty() {
            self.seen.clear();
            self.revisits.fill(false);
        }
    }

    /// Looks up the group's topics (none is fine), appending each one's subscribers and end,
    /// then empties the group.
    fn group<R: Rules>(&mut self, out: &mut Vec<SubscriberId>, ends: &mut Vec<usize>) {
        let pin = self.ask.pin;
        let topics = self.wild_root.len();
        if topics == 0 {
            return;
        }
        let node = self.ask.trie.root.load(pin);
        self.level.clear();
        self.level.extend((0..topics).map(|t| Visit {
            node,
            word: self.starts[t],
            end: self.starts[t + 1],
            topic: t as u32,
        }));
        let mut first = true;
        while !self.level.is_empty() {
            self.round::<R>(first);
            first = false;
        }
        self.collect(topics, out, ends);
        self.clear();
    }

    /// Visits every state of the current level (the root, if `first`), noting the sets that
    /// match, and loads the next level's.
    fn round<R: Rules>(&mut self, first: bool) {
        let pin = self.ask.pin;
        let Groups {
            words,
            wild_root,
            level,
            next,
            multis,
            mains,
            hashes,
            ..
        } = self;
        if !first {
            for state in level.iter() {
                if state.word < state.end {
                    state.node.words.prefetch();
                }
                if let Some(multi) = &state.node.multi {
                    prefetch(ptr::from_ref(multi.get(pin)).cast());
                }
            }
        }
        next.clear();
        for &state in level.iter() {
            let (node, topic) = (state.node, state.topic as usize);
            let last = state.word == state.end;
            if last {
                // The last position: the patterns ending here, and (not in NATS) those ending
                // in a multi-word wildcard that takes no more words.
                if !node.subs.is_empty() {
                    mains[topic].push(node);
                }
                if R::DIALECT == Dialect::Nats {
                    continue;
                }
            }
            // MQTT: a topic starting with `$` is not matched by wildcards at the root.
            let wild = !first || wild_root[topic];
            if wild {
                if let Some(multi) = &node.multi {
                    let multi = multi.get(pin);
                    prefetch(ptr::from_ref(multi).cast());
                    if R::DIALECT == Dialect::Amqp {
                        // Whether it ends the match or swallows words, its main node says.
                        hashes.push(state.at(multi));
                    } else {
                        multis[topic].push(multi);
                    }
                }
            }
            if last {
                continue;
            }
            let word = state.word + 1;
            let (end, topic) = (state.end, state.topic);
            if wild {
                if let Some(one) = &node.one {
                    let node = one.get(pin);
                    next.push(Visit {
                        node,
                        word,
                        end,
                        topic,
                    });
                }
            }
            if let Some(child) = node.words.find(&words[state.word as usize]) {
                let node = child.get(pin);
                next.push(Visit {
                    node,
                    word,
                    end,
                    topic,
                });
            }
        }
        if next.len() > 1 {
            for state in next.iter() {
                prefetch(ptr::from_ref(state.node).cast());
            }
        }
        level.clear();
        level.extend(next.iter().map(|s| s.at(s.node.load(pin))));
        if !self.hashes.is_empty() {
            self.hash_children();
        }
    }

    /// AMQP: the `#` children met this round. A childless one's patterns match whatever is
    /// left; one with children swallows k >= 0 words: the states (its main node, each word
    /// from the current one to the end) join the next round, each once per topic.
    fn hash_children(&mut self) {
        let pin = self.ask.pin;
        let swallowed = &mut self.swallowed;
        for &hash in &self.hashes {
            let node = hash.node.load(pin);
            prefetch(ptr::from_ref(node).cast());
            swallowed.push((hash.at(node), ptr::from_ref(hash.node) as usize));
        }
        self.hashes.clear();
        for (state, id) in swallowed.drain(..) {
            let Visit {
                node,
                word,
                end,
                topic,
            } = state;
            if node.is_childless() {
                if !node.subs.is_empty() {
                    self.mains[topic as usize].push(node);
                }
                continue;
            }
            for at in word..=end {
                if !self.seen.insert((id, at, topic)) {
                    // Reached before: so were all later words from there.
                    break;
                }
                self.revisits[topic as usize] = true;
                self.level.push(Visit {
                    node,
                    word: at,
                    end,
                    topic,
                });
            }
        }
    }

    /// Reads the sets found, in rounds (the multi-word wildcard children's main nodes, then
    /// the sets' arrays), and appends each topic's subscribers in order.
    fn collect(&mut self, topics: usize, out: &mut Vec<SubscriberId>, ends: &mut Vec<usize>) {
        let Ask { pin, distinct, .. } = self.ask;
        let (multis, mains) = (&mut self.multis[..topics], &mut self.mains[..topics]);
        for (multis, mains) in multis.iter_mut().zip(mains.iter_mut()) {
            for inode in multis.drain(..) {
                let node = inode.load(pin);
                prefetch(ptr::from_ref(node).cast());
                mains.push(node);
            }
        }
        for node in mains.iter().flatten() {
            node.subs.prefetch();
        }
        for (mains, &revisits) in mains.iter_mut().zip(&self.revisits) {
            let start = out.len();
            // How many subscriber sets were appended: one set has no duplicates to remove.
            let mut sets = 0u32;
            for node in mains.drain(..) {
                if !node.subs.is_empty() {
                    node.collect(out);
                    sets += 1;
                }
            }
            // Asked last, under the pin (see `lookup_batch_distinct_into`).
            if sets > 1 && (revisits || !distinct.is_some_and(|distinct| distinct())) {
                dedup(out, start);
            }
            ends.push(out.len());
        }
    }
}
