//! The CS-trie lookup: the `trie`'s iterative (node, position) walk, reading each I-node's
//! main node once per visit under one epoch pin and taking no lock.
//!
//! The walk goes level by level: the I-nodes reached at one position are the states of that
//! level, and visiting them fills the next level (their cache lines requested as they are
//! found), so a level's branches are independent straight-line work, not a stack of pending
//! branches. It is compiled once per dialect, so NATS and MQTT carry no AMQP `#` memo and only
//! MQTT checks the `$` rule.

#[cfg(not(loom))]
use std::cell::RefCell;
use std::{mem, ptr};

use rustc_hash::FxHashSet;
use smallvec::SmallVec;

use super::kids::Probe;
use super::nodes::Main;
use super::raw::{INode, Pin};
use super::CsTrieMatcher;
use crate::dialect::Dialect;
use crate::error::Result;
use crate::matcher::{dedup_tail, SubscriberId};
use crate::topic::{check_topic, plain_depth, split_words};

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

/// States a level holds inline; more go to the heap.
const WIDTH: usize = 16;

/// The states of the level being walked and of the next one: the two halves of one inline
/// array (no capacity check on reads, no heap for usual widths), each spilling to a vector past
/// [`WIDTH`].
struct Levels<'g> {
    slots: [&'g INode; 2 * WIDTH],
    /// Where the current level's half starts: 0 or [`WIDTH`].
    base: usize,
    /// The current level's length.
    len: usize,
    /// The next level's length.
    next_len: usize,
    /// The current level's states past [`WIDTH`].
    spill: Vec<&'g INode>,
    /// The next level's states past [`WIDTH`].
    next_spill: Vec<&'g INode>,
}

impl<'g> Levels<'g> {
    /// The first level, holding `root` alone.
    #[inline]
    fn new(root: &'g INode) -> Self {
        Levels {
            slots: [root; 2 * WIDTH],
            base: 0,
            len: 1,
            next_len: 0,
            spill: Vec::new(),
            next_spill: Vec::new(),
        }
    }

    /// State `i` of the current level (below `len`).
    #[inline(always)]
    #[allow(clippy::inline_always)] // once per node visited
    fn get(&self, i: usize) -> &'g INode {
        if i < WIDTH {
            self.slots[(self.base & WIDTH) | i]
        } else {
            self.spill[i - WIDTH]
        }
    }

    /// Adds a state to the next level, its cache lines requested.
    #[inline(always)]
    #[allow(clippy::inline_always)] // once or twice per node visited
    fn push_next(&mut self, inode: &'g INode) {
        inode.prefetch();
        if self.next_len < WIDTH {
            self.slots[(!self.base & WIDTH) | self.next_len] = inode;
        } else {
            spill(&mut self.next_spill, inode);
        }
        self.next_len += 1;
    }

    /// Adds a state to the current level, after those there (AMQP `#`, which may take no word).
    #[inline]
    fn push_cur(&mut self, inode: &'g INode) {
        if self.len < WIDTH {
            self.slots[(self.base & WIDTH) | self.len] = inode;
        } else {
            spill(&mut self.spill, inode);
        }
        self.len += 1;
    }

    /// Moves on: the next level becomes the current one.
    #[inline(always)]
    #[allow(clippy::inline_always)] // once per level
    fn advance(&mut self) {
        self.base ^= WIDTH;
        self.len = self.next_len;
        self.next_len = 0;
        if !(self.spill.is_empty() && self.next_spill.is_empty()) {
            mem::swap(&mut self.spill, &mut self.next_spill);
            self.next_spill.clear();
        }
    }
}

/// Adds `inode` to a level past its inline slots.
#[cold]
#[inline(never)]
fn spill<'g>(states: &mut Vec<&'g INode>, inode: &'g INode) {
    states.push(inode);
}

/// A dialect's walk, chosen at compile time.
trait Rules {
    const DIALECT: Dialect;
}

struct Amqp;
struct Mqtt;
struct Nats;

impl Rules for Amqp {
    const DIALECT: Dialect = Dialect::Amqp;
}
impl Rules for Mqtt {
    const DIALECT: Dialect = Dialect::Mqtt;
}
impl Rules for Nats {
    const DIALECT: Dialect = Dialect::Nats;
}

/// Walks the trie for `topic`, appending matching subscribers to `out` (deduplicated).
/// With `first_only`, stops at the first subscriber found and returns whether there was one.
pub(super) fn lookup(
    trie: &CsTrieMatcher,
    topic: &str,
    out: &mut Vec<SubscriberId>,
    first_only: bool,
) -> Result<bool> {
    let pin = trie.reclaim.pin();
    lookup_pinned(trie, topic, out, first_only, &pin)
}

/// Looks up every topic under one pin (the layout of [`Matcher::lookup_batch_into`]).
///
/// [`Matcher::lookup_batch_into`]: crate::matcher::Matcher::lookup_batch_into
pub(super) fn lookup_batch(
    trie: &CsTrieMatcher,
    topics: &[&str],
    out: &mut Vec<SubscriberId>,
    ends: &mut Vec<usize>,
) -> Result<()> {
    let pin = trie.reclaim.pin();
    for topic in topics {
        lookup_pinned(trie, topic, out, false, &pin)?;
        ends.push(out.len());
    }
    Ok(())
}

/// [`lookup`] under a pin the caller holds.
#[inline]
fn lookup_pinned(
    trie: &CsTrieMatcher,
    topic: &str,
    out: &mut Vec<SubscriberId>,
    first_only: bool,
    pin: &Pin<'_>,
) -> Result<bool> {
    match (trie.config.dialect, first_only) {
        (Dialect::Amqp, false) => walk::<Amqp, false>(trie, topic, out, pin),
        (Dialect::Amqp, true) => walk::<Amqp, true>(trie, topic, out, pin),
        (Dialect::Mqtt, false) => walk::<Mqtt, false>(trie, topic, out, pin),
        (Dialect::Mqtt, true) => walk::<Mqtt, true>(trie, topic, out, pin),
        (Dialect::Nats, false) => walk::<Nats, false>(trie, topic, out, pin),
        (Dialect::Nats, true) => walk::<Nats, true>(trie, topic, out, pin),
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
#[allow(clippy::too_many_lines)] // one loop: split, its branches would pass a dozen locals
fn walk<R: Rules, const FIRST_ONLY: bool>(
    trie: &CsTrieMatcher,
    topic: &str,
    out: &mut Vec<SubscriberId>,
    pin: &Pin<'_>,
) -> Result<bool> {
    let dialect = R::DIALECT;
    let amqp = dialect == Dialect::Amqp;
    let limits = &trie.config.limits;
    // One pass over the bytes for a plainly valid topic; anything else is validated (and its
    // error reported) the long way. The words are cut as the walk reaches them.
    let n = if let Some(n) = plain_depth(dialect, limits, topic) {
        n
    } else {
        check_topic(dialect, limits, topic)?;
        split_words(dialect, topic).count()
    };
    let bytes = topic.as_bytes();
    let sep = dialect.separator();
    // Where the next word starts.
    let mut from = 0;
    let start = out.len();
    let root: &INode = &trie.root;
    let mut walk = Levels::new(root);
    // AMQP `#` states for positions past the next one.
    let mut hashes = Hashes::default();
    // How many subscriber sets were appended: one set has no duplicates to remove.
    let mut sets = 0u32;
    // MQTT: a topic starting with `$` is not matched by wildcards at the root (the first
    // level, whose only state is the root: only AMQP adds states to a level it is walking).
    let mut wild = !(dialect == Dialect::Mqtt && topic.starts_with('$'));

    let mut pos = 0;
    while pos < n {
        // The word at `pos`, cut even where the level turns out empty.
        let rest = bytes.get(from..).unwrap_or_default();
        let len = rest.iter().position(|&b| b == sep).unwrap_or(rest.len());
        let word = &rest[..len];
        from += len + 1;
        if amqp {
            hashes.join(&mut walk, pos);
        }
        if walk.len == 0 {
            if hashes.later.is_empty() {
                break;
            }
            walk.advance();
            pos += 1;
            continue;
        }
        let probe = Probe::of(word);
        let mut k = 0;
        while k < walk.len {
            let inode = walk.get(k);
            k += 1;
            let node = inode.load(pin);
            if wild {
                if let Some(multi) = &node.multi {
                    let multi = multi.get(pin);
                    if let Some(ends) = multi_ends(multi, pin, amqp, pos, n, &mut walk, &mut hashes)
                    {
                        take!(ends, out, sets, FIRST_ONLY);
                    }
                }
                if let Some(one) = &node.one {
                    walk.push_next(one.get(pin));
                }
            }
            if let Some(child) = node.words.find(&probe) {
                walk.push_next(child.get(pin));
            }
        }
        walk.advance();
        wild = true;
        pos += 1;
    }
    if pos == n {
        if amqp {
            hashes.join(&mut walk, pos);
        }
        // The last level: the patterns ending here match, and those ending in a multi-word
        // wildcard that takes no more words (never in NATS).
        let mut k = 0;
        while k < walk.len {
            let inode = walk.get(k);
            k += 1;
            let node = inode.load(pin);
            take!(node, out, sets, FIRST_ONLY);
            if dialect == Dialect::Nats || !wild {
                continue;
            }
            if let Some(multi) = &node.multi {
                let multi = multi.get(pin);
                if let Some(ends) = multi_ends(multi, pin, amqp, pos, n, &mut walk, &mut hashes) {
                    take!(ends, out, sets, FIRST_ONLY);
                }
            }
        }
    }
    drop(hashes);
    if FIRST_ONLY {
        return Ok(false);
    }
    if sets > 1 {
        dedup(out, start);
    }
    Ok(out.len() > start)
}

/// The multi-word wildcard child `multi`, reached at `pos`: its main node if its patterns end
/// the match here (NATS `>` takes one word or more, MQTT `#` any number, and an AMQP `#`
/// without children any number), else `None`: an AMQP `#` with children swallows words and
/// walks on ([`Hashes::swallow`]).
#[inline(always)]
#[allow(clippy::inline_always)] // once per node with a multi-word child, in the walk's loop
fn multi_ends<'g>(
    multi: &'g INode,
    pin: &'g Pin<'_>,
    amqp: bool,
    pos: usize,
    n: usize,
    walk: &mut Levels<'g>,
    hashes: &mut Hashes<'g>,
) -> Option<&'g Main> {
    let node = multi.load(pin);
    if !amqp || node.is_childless() {
        return Some(node);
    }
    hashes.swallow(multi, pos, n, walk);
    None
}

/// One lookup's AMQP `#` bookkeeping: the states visited, and those waiting for a position
/// past the next one.
#[derive(Default)]
struct Hashes<'g> {
    memo: Memo,
    later: SmallVec<[(&'g INode, usize); 8]>,
}

impl<'g> Hashes<'g> {
    /// An AMQP `#` at `multi`, reached at `pos`, swallows k >= 0 words: the states
    /// (multi, pos..=n), each visited once. `multi` joins the current level (walked after the
    /// states already there) and the next one in `walk`; later positions wait here.
    #[inline(never)]
    fn swallow(&mut self, multi: &'g INode, pos: usize, n: usize, walk: &mut Levels<'g>) {
        let id = ptr::from_ref::<INode>(multi) as usize;
        for p in pos..=n {
            if !self.memo.first_visit((id, p as u32)) {
                // Reached before: so were all later positions from there.
                break;
            }
            if p == pos {
                walk.push_cur(multi);
            } else if p == pos + 1 {
                walk.push_next(multi);
            } else {
                self.later.push((multi, p));
            }
        }
    }

    /// The states waiting for `pos` join its level.
    #[inline]
    fn join(&mut self, walk: &mut Levels<'g>, pos: usize) {
        if self.memo.used && !self.later.is_empty() {
            self.join_waiting(walk, pos);
        }
    }

    #[inline(never)]
    fn join_waiting(&mut self, walk: &mut Levels<'g>, pos: usize) {
        let mut i = 0;
        while i < self.later.len() {
            let (inode, p) = self.later[i];
            if p == pos {
                walk.push_cur(inode);
                self.later.remove(i);
            } else {
                i += 1;
            }
        }
    }
}

/// Removes duplicates from `out[start..]`: in place for the usual few ids (no sort), by
/// [`dedup_tail`] for more.
fn dedup(out: &mut Vec<SubscriberId>, start: usize) {
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

    /// Every pattern of `words` with any of them replaced by `one`: 2^6 = 64 states at the
    /// last level of a topic of those words, past a level's 16 inline slots.
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
    fn a_level_wider_than_its_inline_slots_spills_and_finds_everything() {
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
