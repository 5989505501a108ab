//! The CS-trie lookup: a depth-first walk over (main node, position) states under one epoch
//! pin, taking no lock.
//!
//! The topic's words are validated, cut and keyed once, up front ([`Probe`]), by the topic
//! tokenizer ([`tokens`]): in registers for a topic of fewer than 16 bytes, by one pass over
//! the bytes otherwise. A state is a main node
//! and the position of the word its children match. Visiting one follows its literal child at
//! once, in registers, for as long as the literal path goes on; the one-word wildcard child's
//! state is pushed, its I-node read as it is pushed, so that the load of its main node overlaps
//! the visits before it is popped. Each I-node on a path is read once, after its parent: every
//! path the walk follows is one the trie held while the lookup ran. The stack is inline for
//! usual shapes (a topic of n words with a one-word wildcard child at every level needs n
//! entries) and spills to the heap past that. Once [`WIDE`] states wait, the walk goes on level
//! by level instead ([`wide`]), asking for a whole level's nodes before reading any, so that
//! their cache misses overlap. The walk is compiled once per dialect, so NATS and MQTT carry no
//! AMQP `#` memo and only MQTT checks the `$` rule.

#[cfg(not(loom))]
use std::cell::RefCell;
use std::ptr;

use arrayvec::ArrayVec;
use rustc_hash::FxHashSet;

use super::cache::Cache;
use super::kids::Probe;
use super::nodes::{INode, Main};
use super::raw::Pin;
use super::CsTrieMatcher;
use crate::dialect::Dialect;
use crate::error::Result;
use crate::hint::prefetch;
use crate::matcher::{dedup_tail, SubscriberId};
use crate::topic::refused;
use crate::topic::tokens::{self, Cursor, Step, Tokens, SHORT};

#[cfg(not(loom))]
thread_local! {
    /// Visited AMQP `#` states, reused across lookups on this thread.
    static SEEN: RefCell<FxHashSet<(usize, u32)>> = RefCell::new(FxHashSet::default());
}

/// The (I-node, position) states an AMQP `#` has reached in this lookup. I-node addresses are
/// stable identities while the lookup stays pinned.
#[derive(Default)]
struct Memo {
    used: bool,
    /// Loom's threads share one OS thread, so the models keep the memo local.
    #[cfg(loom)]
    set: FxHashSet<(usize, u32)>,
}

impl Memo {
    /// Records `state`; whether it is new.
    fn first_visit(&mut self, state: (usize, u32)) -> bool {
        self.used = true;
        #[cfg(not(loom))]
        return SEEN.with(|seen| seen.borrow_mut().insert(state));
        #[cfg(loom)]
        return self.set.insert(state);
    }
}

impl Drop for Memo {
    fn drop(&mut self) {
        #[cfg(not(loom))]
        if self.used {
            SEEN.with(|seen| seen.borrow_mut().clear());
        }
    }
}

/// How many states the stack and how many words the probes hold inline; more go to the heap.
const INLINE: usize = 16;

/// Items inline up to [`INLINE`] (no heap for usual shapes, and no initialisation until
/// pushed), all of them on the heap once more come: the walk's stack of states, a level of the
/// breadth-first walk and the topic's keyed words.
struct Spilling<T> {
    inline: ArrayVec<T, INLINE>,
    /// Every item, once there were more than [`INLINE`] (the inline slots are then empty).
    spill: Vec<T>,
}

impl<T> Spilling<T> {
    /// None yet. (Built in place in the lookup's frame: returning a 640-byte value from a
    /// function would copy it.)
    #[inline(always)]
    #[allow(clippy::inline_always)] // once per lookup
    fn new() -> Self {
        Spilling {
            inline: ArrayVec::new(),
            spill: Vec::new(),
        }
    }

    #[inline(always)]
    #[allow(clippy::inline_always)] // once or twice per node visited
    fn push(&mut self, item: T) {
        if self.spill.is_empty() {
            if let Err(full) = self.inline.try_push(item) {
                spill(&mut self.inline, &mut self.spill, full.element());
            }
        } else {
            self.spill.push(item);
        }
    }

    /// An item: the walk's stack does not depend on the order of visits (the result is the
    /// set of subscribers the states reach).
    #[inline(always)]
    #[allow(clippy::inline_always)] // once per node visited
    fn pop(&mut self) -> Option<T> {
        match self.spill.pop() {
            Some(item) => Some(item),
            None => self.inline.pop(),
        }
    }

    /// The items in the order pushed.
    #[inline(always)]
    #[allow(clippy::inline_always)] // once per lookup, or per level
    fn as_slice(&self) -> &[T] {
        if self.spill.is_empty() {
            &self.inline
        } else {
            &self.spill
        }
    }

    fn len(&self) -> usize {
        self.inline.len() + self.spill.len()
    }

    fn clear(&mut self) {
        self.inline.clear();
        self.spill.clear();
    }
}

/// Moves the full inline slots to the heap, then pushes `item` there.
#[cold]
#[inline(never)]
fn spill<T>(inline: &mut ArrayVec<T, INLINE>, items: &mut Vec<T>, item: T) {
    items.reserve(2 * INLINE);
    items.extend(inline.drain(..));
    items.push(item);
}

/// Keys the words `cursor` hands out, passing each to `push`; false if the topic is invalid
/// (some words may have been keyed).
#[inline(always)]
#[allow(clippy::inline_always)] // the lookup's front end, once per cursor type
pub(super) fn probe_all<'w, C: Cursor<'w>>(mut cursor: C, mut push: impl FnMut(Probe<'w>)) -> bool {
    loop {
        match cursor.step() {
            Step::Word(token) => push(if C::SHORT_WORDS || token.len() < SHORT {
                Probe::short(token.bytes(), token.head())
            } else {
                Probe::of(token.bytes())
            }),
            Step::End => return true,
            Step::Invalid => return false,
        }
    }
}

/// A dialect's walk, chosen at compile time.
pub(super) trait Rules {
    const DIALECT: Dialect;
}

pub(super) struct Amqp;
pub(super) struct Mqtt;
pub(super) struct Nats;

impl Rules for Amqp {
    const DIALECT: Dialect = Dialect::Amqp;
}
impl Rules for Mqtt {
    const DIALECT: Dialect = Dialect::Mqtt;
}
impl Rules for Nats {
    const DIALECT: Dialect = Dialect::Nats;
}

impl CsTrieMatcher {
    /// Walks the trie for `topic`, appending matching subscribers to `out` (deduplicated,
    /// unless `distinct` says no subscriber can be there twice, as for
    /// [`Matcher::lookup_distinct_into`]). With `first_only`, stops at the first subscriber
    /// found and returns whether there was one.
    ///
    /// [`Matcher::lookup_distinct_into`]: crate::matcher::Matcher::lookup_distinct_into
    #[inline(always)]
    #[allow(clippy::inline_always)] // into `lookup_into`: the cache's branch adds no call
    pub(super) fn walk_topic(
        &self,
        topic: &str,
        out: &mut Vec<SubscriberId>,
        first_only: bool,
        distinct: Option<&dyn Fn() -> bool>,
    ) -> Result<bool> {
        let pin = self.reclaim.pin();
        lookup_cached(self, topic, out, first_only, &pin, distinct)
    }
}

/// [`lookup_pinned`], through the result cache if the trie has one.
#[inline(always)]
#[allow(clippy::inline_always)] // once per lookup: the uncached path makes no call
pub(super) fn lookup_cached(
    trie: &CsTrieMatcher,
    topic: &str,
    out: &mut Vec<SubscriberId>,
    first_only: bool,
    pin: &Pin<'_>,
    distinct: Option<&dyn Fn() -> bool>,
) -> Result<bool> {
    if let Some(cache) = &trie.cache {
        return through(cache, trie, topic, out, first_only, pin, distinct);
    }
    lookup_pinned(trie, topic, out, first_only, pin, distinct)
}

/// [`lookup_pinned`] through `cache`: a hit copies the cached subscribers (a topic is cached
/// only once validated, and the limits never change); a miss walks, then offers the result to
/// the cache.
#[inline(never)]
fn through(
    cache: &Cache,
    trie: &CsTrieMatcher,
    topic: &str,
    out: &mut Vec<SubscriberId>,
    first_only: bool,
    pin: &Pin<'_>,
    distinct: Option<&dyn Fn() -> bool>,
) -> Result<bool> {
    let ticket = cache.ticket(topic);
    if let Some(ids) = cache.get(topic, ticket, pin) {
        if !first_only {
            out.extend_from_slice(ids);
        }
        return Ok(!ids.is_empty());
    }
    let start = out.len();
    let found = lookup_pinned(trie, topic, out, first_only, pin, distinct)?;
    if !first_only {
        cache.fill(topic, ticket, &out[start..], pin);
    }
    Ok(found)
}

/// [`CsTrieMatcher::walk_topic`] under a pin the caller holds.
#[inline]
pub(super) fn lookup_pinned(
    trie: &CsTrieMatcher,
    topic: &str,
    out: &mut Vec<SubscriberId>,
    first_only: bool,
    pin: &Pin<'_>,
    distinct: Option<&dyn Fn() -> bool>,
) -> Result<bool> {
    match (trie.config.dialect, first_only) {
        (Dialect::Amqp, false) => walk::<Amqp, false>(trie, topic, out, pin, distinct),
        (Dialect::Amqp, true) => walk::<Amqp, true>(trie, topic, out, pin, None),
        (Dialect::Mqtt, false) => walk::<Mqtt, false>(trie, topic, out, pin, distinct),
        (Dialect::Mqtt, true) => walk::<Mqtt, true>(trie, topic, out, pin, None),
        (Dialect::Nats, false) => walk::<Nats, false>(trie, topic, out, pin, distinct),
        (Dialect::Nats, true) => walk::<Nats, true>(trie, topic, out, pin, None),
    }
}

/// Appends `$node`'s subscribers to `out` (or returns `Ok(true)` with `first_only`).
macro_rules! take {
    ($node:expr, $out:ident, $sets:ident, $first_only:expr) => {
        let node = $node;
        if !node.subs.is_empty() {
            if $first_only {
                return Ok(true);
            }
            node.collect($out);
            $sets += 1;
        }
    };
}

/// [`lookup_pinned`] for one dialect, and `FIRST_ONLY` or not.
fn walk<R: Rules, const FIRST_ONLY: bool>(
    trie: &CsTrieMatcher,
    topic: &str,
    out: &mut Vec<SubscriberId>,
    pin: &Pin<'_>,
    distinct: Option<&dyn Fn() -> bool>,
) -> Result<bool> {
    let dialect = R::DIALECT;
    let amqp = dialect == Dialect::Amqp;
    let limits = &trie.config.limits;
    // One pass validates, cuts and keys the words; an invalid topic's error is reported by
    // the rules.
    let mut words: Spilling<Probe<'_>> = Spilling::new();
    let valid = match tokens::tokens(dialect, limits, topic) {
        Tokens::Tiny(cursor) => probe_all(cursor, |probe| words.push(probe)),
        Tokens::Short(cursor) => probe_all(cursor, |probe| words.push(probe)),
        Tokens::Long(cursor) => probe_all(cursor, |probe| words.push(probe)),
    };
    if !valid {
        words.clear();
        for word in refused(dialect, limits, topic)? {
            words.push(Probe::of(word.as_bytes()));
        }
    }
    let words = words.as_slice();
    let n = words.len();
    let start = out.len();
    // How many subscriber sets were appended: one set has no duplicates to remove.
    let mut sets = 0u32;
    // MQTT: a topic starting with `$` is not matched by wildcards at the root (position 0,
    // whose only state is the root: only an AMQP `#` adds states at the position it is at).
    let wild_root = !(dialect == Dialect::Mqtt && topic.starts_with('$'));
    let mut memo = Memo::default();
    // States waiting to be visited: a main node and the position of the word its children
    // match.
    let mut stack: Spilling<(&Main, usize)> = Spilling::new();
    stack.push((trie.root.load(pin), 0));
    // A multi-word wildcard child of `node`, at `pos`: its patterns match what is left, or an
    // AMQP `#` swallows words.
    macro_rules! multi {
        ($node:ident, $pos:ident) => {
            if let Some(multi) = &$node.multi {
                let multi = multi.get(pin);
                if let Some(ends) = multi_ends(multi, pin, amqp, $pos, n, &mut stack, &mut memo) {
                    take!(ends, out, sets, FIRST_ONLY);
                }
            }
        };
    }
    // A state at the last position: the patterns ending here match, and those ending in a
    // multi-word wildcard that takes no more words (never in NATS).
    macro_rules! last {
        ($node:ident, $pos:ident) => {
            take!($node, out, sets, FIRST_ONLY);
            if dialect != Dialect::Nats && ($pos != 0 || wild_root) {
                multi!($node, $pos);
            }
        };
    }
    // A child's state at `next`: visited at once if it is the last position (no push and pop).
    macro_rules! reach {
        ($child:expr, $next:ident) => {
            let child = $child.get(pin).load(pin);
            if $next == n {
                last!(child, $next);
            } else {
                stack.push((child, $next));
            }
        };
    }
    // A popped state's literal child is followed at once, in registers, down to where the
    // literal path ends: only the wildcards' states wait on the stack.
    'states: while let Some((mut node, mut pos)) = stack.pop() {
        // Many states waiting: the walk goes on level by level.
        if !FIRST_ONLY && stack.len() >= WIDE - 1 {
            stack.push((node, pos));
            sets += wide::<R>(&mut stack, words, out, pin, &mut memo);
            break;
        }
        loop {
            // No word at the last position (every state's position is at most `n`, the
            // words').
            let Some(word) = words.get(pos) else {
                last!(node, pos);
                continue 'states;
            };
            let next = pos + 1;
            if pos != 0 || wild_root {
                multi!(node, pos);
                if let Some(one) = &node.one {
                    reach!(one, next);
                }
            }
            let Some(child) = node.words.find(word) else {
                continue 'states;
            };
            node = child.get(pin).load(pin);
            pos = next;
        }
    }
    // An AMQP `#` that swallowed words can lead to one pattern from several positions.
    let once_each = !memo.used;
    drop(memo);
    if FIRST_ONLY {
        return Ok(false);
    }
    // Asked last, under the pin: a subscriber's second pattern found by this walk was
    // inserted after `distinct` turned false (see `lookup_batch_distinct_into`).
    if sets > 1 && !(once_each && distinct.is_some_and(|distinct| distinct())) {
        dedup(out, start);
    }
    Ok(out.len() > start)
}

/// States waiting at which a walk goes on level by level ([`wide`]). A walk of a usual set
/// never has that many (on ftm, where the level-by-level walk measured a third slower, one to
/// three); one on filters with a `+` at every level of an 8-level topic has eight after its
/// first path (the `cuts` fan-out set, 2x faster level by level, the `crowds` set unchanged).
const WIDE: usize = 4;

/// The rest of a walk from the waiting `states`, level by level: each round visits every state
/// of the current level, then loads the next level's nodes, asking for all their cache lines
/// before reading any. A depth-first walk waits for each node before it can ask for the next;
/// this one keeps many loads in flight, which is what a wide walk over a trie larger than the
/// cache needs (2x faster on the `cuts` fan-out set: 255 states per topic). States at several
/// positions may share a level: each advances one word per round. An AMQP `#` with children
/// adds its states (the words it swallows) to the next round, each once per lookup (`memo`);
/// without one, every state reaches its nodes along one path, so no state is visited twice.
/// Every MQTT state is past position 0 (the root is visited first, alone), where the `$` rule
/// has nothing to keep out. Returns how many subscriber sets were appended.
#[inline(never)]
fn wide<'g, R: Rules>(
    level: &mut Spilling<(&'g Main, usize)>,
    words: &[Probe<'_>],
    out: &mut Vec<SubscriberId>,
    pin: &'g Pin<'_>,
    memo: &mut Memo,
) -> u32 {
    let amqp = R::DIALECT == Dialect::Amqp;
    let n = words.len();
    let mut sets = 0u32;
    let mut take = |node: &Main| {
        if !node.subs.is_empty() {
            node.collect(out);
            sets += 1;
        }
    };
    let mut next: Spilling<(&'g INode, usize)> = Spilling::new();
    // The states an AMQP `#` swallowing words adds: main nodes already loaded.
    let mut swallowed: Spilling<(&'g Main, usize)> = Spilling::new();
    loop {
        let states = level.as_slice();
        if states.len() > 1 {
            for &(node, pos) in states {
                if pos < n {
                    node.words.prefetch();
                }
                if let Some(multi) = &node.multi {
                    prefetch(ptr::from_ref(multi.get(pin)).cast());
                }
            }
        }
        next.clear();
        swallowed.clear();
        for &(node, pos) in states {
            debug_assert!(
                pos > 0 || R::DIALECT != Dialect::Mqtt,
                "the root is visited first"
            );
            let word = words.get(pos);
            if word.is_none() {
                // The last position: the patterns ending here, and (not in NATS) those ending
                // in a multi-word wildcard that takes no more words.
                take(node);
                if R::DIALECT == Dialect::Nats {
                    continue;
                }
            }
            if let Some(multi) = &node.multi {
                if let Some(ends) =
                    multi_ends(multi.get(pin), pin, amqp, pos, n, &mut swallowed, memo)
                {
                    take(ends);
                }
            }
            let Some(word) = word else {
                continue;
            };
            if let Some(one) = &node.one {
                next.push((one.get(pin), pos + 1));
            }
            if let Some(child) = node.words.find(word) {
                next.push((child.get(pin), pos + 1));
            }
        }
        let inodes = next.as_slice();
        if inodes.is_empty() && swallowed.len() == 0 {
            return sets;
        }
        if inodes.len() > 1 {
            for &(inode, _) in inodes {
                prefetch(ptr::from_ref(inode).cast());
            }
        }
        level.clear();
        for &(inode, pos) in inodes {
            level.push((inode.load(pin), pos));
        }
        for &state in swallowed.as_slice() {
            level.push(state);
        }
    }
}

/// The multi-word wildcard child `multi`, reached at `pos`: its main node if its patterns end
/// the match here (NATS `>` takes one word or more, MQTT `#` any number, and an AMQP `#`
/// without children any number), else `None`: an AMQP `#` with children swallows words and
/// walks on ([`swallow`]).
#[inline(always)]
#[allow(clippy::inline_always)] // once per node with a multi-word child, in the walk's loop
fn multi_ends<'g>(
    multi: &'g INode,
    pin: &'g Pin<'_>,
    amqp: bool,
    pos: usize,
    n: usize,
    stack: &mut Spilling<(&'g Main, usize)>,
    memo: &mut Memo,
) -> Option<&'g Main> {
    let node = multi.load(pin);
    if !amqp || node.is_childless() {
        return Some(node);
    }
    swallow(multi, node, pos, n, stack, memo);
    None
}

/// An AMQP `#` at `multi` (whose main node is `node`), reached at `pos`, swallows k >= 0
/// words: the states (multi, pos..=n), each visited once per lookup.
#[inline(never)]
fn swallow<'g>(
    multi: &'g INode,
    node: &'g Main,
    pos: usize,
    n: usize,
    stack: &mut Spilling<(&'g Main, usize)>,
    memo: &mut Memo,
) {
    let id = ptr::from_ref::<INode>(multi) as usize;
    for p in pos..=n {
        if !memo.first_visit((id, p as u32)) {
            // Reached before: so were all later positions from there.
            break;
        }
        stack.push((node, p));
    }
}

/// Removes duplicates from `out[start..]`: in place for the usual few ids (no sort), by
/// [`dedup_tail`] for more.
pub(super) fn dedup(out: &mut Vec<SubscriberId>, start: usize) {
    const FEW: usize = 16;
    let len = out.len();
    if len - start > FEW {
        dedup_tail(out, start);
        return;
    }
    let ids = &mut out[start..];
    let mut kept = 1;
    for i in 1..ids.len() {
        let id = ids[i];
        // An early exit: a loop the compiler does not vectorise, cheaper for a few ids.
        #[allow(clippy::manual_contains)] // `contains` is the vectorised loop
        if !ids[..kept].iter().any(|&earlier| earlier == id) {
            ids[kept] = id;
            kept += 1;
        }
    }
    out.truncate(start + kept);
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::super::CsTrieMatcher;
    use crate::dialect::{Dialect, Limits};
    use crate::matcher::{Config, Matcher};
    use crate::matchers::naive::NaiveMatcher;
    use crate::pattern::Pattern;

    /// Subscribes every pattern to a `cstrie` and to the oracle; each topic must find the same
    /// subscribers in both, with no duplicate.
    fn same_as_naive(dialect: Dialect, patterns: &[String], topics: &[&str]) {
        let limits = Limits::for_dialect(dialect);
        let trie = CsTrieMatcher::new(Config::new(dialect));
        let naive = NaiveMatcher::new(Config::new(dialect));
        for (i, text) in patterns.iter().enumerate() {
            let pattern = Pattern::parse(dialect, &limits, text).unwrap();
            trie.insert(&pattern, i as u64);
            naive.insert(&pattern, i as u64);
        }
        for topic in topics {
            let (mut got, mut expected) = (Vec::new(), Vec::new());
            trie.lookup_into(topic, &mut got).unwrap();
            naive.lookup_into(topic, &mut expected).unwrap();
            let found = got.len();
            got.sort_unstable();
            got.dedup();
            assert_eq!(got.len(), found, "{dialect:?} {topic:?}: duplicates");
            expected.sort_unstable();
            assert_eq!(got, expected, "{dialect:?} {topic:?}");
            assert_eq!(trie.matches_any(topic).unwrap(), !expected.is_empty());
        }
    }

    /// Every pattern of `words` with any of them replaced by `one`: 2^6 = 64 states reach the
    /// last level of a topic of those words.
    fn every_mix(words: &[&str], one: &str, sep: &str) -> Vec<String> {
        (0..1u32 << words.len())
            .map(|mask| {
                let mixed: Vec<&str> = words
                    .iter()
                    .enumerate()
                    .map(|(i, w)| if mask >> i & 1 == 1 { one } else { w })
                    .collect();
                mixed.join(sep)
            })
            .collect()
    }

    #[test]
    fn sixty_four_states_at_the_last_level_find_everything() {
        let words = ["a", "bb", "c", "dd", "e", "f"];
        for (dialect, one, sep) in [
            (Dialect::Amqp, "*", "."),
            (Dialect::Mqtt, "+", "/"),
            (Dialect::Nats, "*", "."),
        ] {
            let mut patterns = every_mix(&words, one, sep);
            // Multi-word wildcards at every depth, reached from every state.
            let multi = if dialect == Dialect::Nats { ">" } else { "#" };
            patterns.extend(
                every_mix(&words[..4], one, sep)
                    .iter()
                    .map(|p| format!("{p}{sep}{multi}")),
            );
            let topic = words.join(sep);
            let shorter = words[..5].join(sep);
            let other = ["a", "bb", "x", "dd", "e", "f"].join(sep);
            same_as_naive(dialect, &patterns, &[&topic, &shorter, &other, "a"]);
        }
        // AMQP `#` inside patterns: many (node, position) states wait for later levels.
        let mut patterns = every_mix(&["a", "b", "c", "d"], "#", ".");
        patterns.extend(every_mix(&["a", "b", "c", "d"], "*", "."));
        same_as_naive(
            Dialect::Amqp,
            &patterns,
            &[
                "a.b.c.d",
                "a.b.c.d.a.b.c.d",
                "a",
                "",
                "x.a.b.y.c.d",
                "d.c.b.a",
            ],
        );
    }

    #[test]
    fn wide_walks_level_by_level_find_everything() {
        // Filters cut at every depth of a small name tree, every level kept or replaced by the
        // one-word wildcard, with and without a multi-word wildcard after: a topic's walk has
        // up to 32 states at one level (past the 16 inline slots) and many waiting from its
        // first path on, so it goes level by level.
        let names = ["a", "bb", "ccc"];
        for (dialect, one, multi, sep) in [
            (Dialect::Amqp, "*", "#", "."),
            (Dialect::Mqtt, "+", "#", "/"),
            (Dialect::Nats, "*", ">", "."),
        ] {
            let mut paths: Vec<Vec<&str>> = vec![vec![]];
            let mut patterns = Vec::new();
            for _ in 0..5 {
                paths = paths
                    .iter()
                    .flat_map(|p| names.iter().map(move |n| [p.as_slice(), &[*n]].concat()))
                    .collect();
                for path in paths.iter().step_by(7) {
                    for mixed in every_mix(path, one, sep) {
                        patterns.push(format!("{mixed}{sep}{multi}"));
                        patterns.push(mixed);
                    }
                }
            }
            let mut topics: Vec<String> = paths.iter().map(|p| p.join(sep)).collect();
            // Shorter and longer topics (a multi-word wildcard at the last position, or past
            // every pattern), one off the tree, and (MQTT) topics whose `$` keeps the root's
            // wildcards out.
            topics.extend(paths.iter().step_by(5).map(|p| p[..3].join(sep)));
            topics.extend(
                paths
                    .iter()
                    .step_by(5)
                    .map(|p| format!("{}{sep}x{sep}y", p.join(sep))),
            );
            topics.push(["a", "bb", "zz", "a", "bb"].join(sep));
            if dialect == Dialect::Amqp {
                // An AMQP `#` with children swallows words: its states join the level-by-level
                // walk at several positions, some reached twice (`#.#`, `a.#.*.#`), and at the
                // root (position 0) as well.
                for path in paths.iter().step_by(11) {
                    for cut in 0..path.len() {
                        let (head, tail) = (path[..cut].join("."), path[cut + 1..].join("."));
                        patterns.push(format!("{head}.#.{tail}").trim_matches('.').into());
                        patterns.push(format!("{head}.#.*.#").trim_start_matches('.').into());
                    }
                }
                patterns
                    .extend(["#", "#.#", "#.a", "#.bb.#", "*.#.ccc", "a.#.#.bb"].map(String::from));
                topics.push(String::new());
                topics.push("a".into());
            }
            if dialect == Dialect::Mqtt {
                let dollar = ["$a", "bb", "ccc", "a", "bb"];
                patterns.extend(every_mix(&dollar, one, sep));
                patterns.push(format!("$a{sep}{multi}"));
                topics.push(dollar.join(sep));
                topics.push(dollar[..4].join(sep));
            }
            let topics: Vec<&str> = topics.iter().map(String::as_str).collect();
            same_as_naive(dialect, &patterns, &topics);
        }
    }

    #[test]
    fn a_deep_topic_spills_its_words_and_states_to_the_heap() {
        // 20 words (past the 16 inline probes); every level of the literal path also has a
        // one-word wildcard child, so the stack holds 20 pending states (past its 16 slots).
        let words: Vec<String> = (0..20).map(|i| format!("w{i}")).collect();
        for (dialect, one, sep) in [
            (Dialect::Amqp, "*", "."),
            (Dialect::Mqtt, "+", "/"),
            (Dialect::Nats, "*", "."),
        ] {
            let mut patterns = vec![words.join(sep)];
            for i in 0..words.len() {
                let mut mixed = words.clone();
                mixed[i] = one.to_owned();
                patterns.push(mixed.join(sep));
            }
            let topic = words.join(sep);
            let other = format!("{topic}{sep}x");
            same_as_naive(
                dialect,
                &patterns,
                &[&topic, &other, &words[..17].join(sep)],
            );
        }
        // AMQP `#` with children swallowing 0 to 20 words: 21 states pushed at once.
        let mut patterns = vec!["#.w19".to_owned(), "w0.#.w19".to_owned(), "#.#".to_owned()];
        patterns.push(format!("{}.#", words[..18].join(".")));
        same_as_naive(
            Dialect::Amqp,
            &patterns,
            &[&words.join("."), "w19", "w0.w19"],
        );
    }

    #[test]
    fn long_and_multibyte_words_are_cut_and_told_apart() {
        let long = "a-word-of-sixteen-bytes-or-more";
        let twin = "a-word-of-sixteen-bytes-or-mor\u{e9}";
        for (dialect, sep) in [
            (Dialect::Amqp, "."),
            (Dialect::Mqtt, "/"),
            (Dialect::Nats, "."),
        ] {
            let patterns: Vec<String> = [
                vec![long, "\u{e9}t\u{e9}", "x"],
                vec![twin, "\u{e9}t\u{e9}", "x"],
                vec!["fifteen-bytes-x", "ab", "abc"],
                vec!["fifteen-bytes-y", "ab", "abcd"],
                vec!["\u{65e5}\u{672c}", "abcdefgh", "abcdefghi"],
            ]
            .iter()
            .map(|words| words.join(sep))
            .collect();
            let topics: Vec<String> = patterns
                .iter()
                .cloned()
                .chain([format!("{long}{sep}\u{e9}t\u{e9}{sep}y")])
                .collect();
            let topics: Vec<&str> = topics.iter().map(String::as_str).collect();
            same_as_naive(dialect, &patterns, &topics);
        }
    }
}
