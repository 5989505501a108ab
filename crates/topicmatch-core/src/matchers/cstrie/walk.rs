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
use std::ptr;

use rustc_hash::FxHashSet;
use smallvec::SmallVec;

use super::kids::Probe;
use super::raw::{INode, Pin};
use super::CsTrieMatcher;
use crate::dialect::Dialect;
use crate::error::Result;
use crate::matcher::{dedup_tail, SubscriberId};
use crate::topic::{check_topic, scan_plain_topic, split_words, INLINE_WORDS};

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

/// The states of one level: an inline array (no capacity check on reads, no heap for usual
/// widths), then a vector for a level wider than [`WIDTH`].
struct Level<'g> {
    inline: [&'g INode; WIDTH],
    len: usize,
    spill: Vec<&'g INode>,
}

impl<'g> Level<'g> {
    /// An empty level; `fill` only initialises the unused slots.
    fn new(fill: &'g INode) -> Self {
        Level {
            inline: [fill; WIDTH],
            len: 0,
            spill: Vec::new(),
        }
    }

    /// Adds a state.
    #[inline(always)]
    #[allow(clippy::inline_always)] // once or twice per node visited
    fn push(&mut self, inode: &'g INode) {
        if self.len < WIDTH {
            self.inline[self.len] = inode;
        } else {
            self.spill_push(inode);
        }
        self.len += 1;
    }

    #[cold]
    #[inline(never)]
    fn spill_push(&mut self, inode: &'g INode) {
        self.spill.push(inode);
    }

    /// State `i` (below `len`).
    #[inline(always)]
    #[allow(clippy::inline_always)] // once per node visited
    fn get(&self, i: usize) -> &'g INode {
        if i < WIDTH {
            self.inline[i]
        } else {
            self.spill[i - WIDTH]
        }
    }

    fn clear(&mut self) {
        self.len = 0;
        self.spill.clear();
    }
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

/// The words of a topic as [`Probe`]s, inline for usual depths.
type Probes<'t> = SmallVec<[Probe<'t>; INLINE_WORDS]>;

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
    match trie.config.dialect {
        Dialect::Amqp => walk::<Amqp>(trie, topic, out, first_only, pin),
        Dialect::Mqtt => walk::<Mqtt>(trie, topic, out, first_only, pin),
        Dialect::Nats => walk::<Nats>(trie, topic, out, first_only, pin),
    }
}

/// Appends `$node`'s subscribers to `out` (or returns `Ok(true)` with `first_only`).
macro_rules! take {
    ($node:expr, $out:ident, $sets:ident, $first_only:ident) => {
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

/// [`lookup_pinned`] for one dialect.
#[allow(clippy::too_many_lines)] // one loop: split, its branches would pass a dozen locals
fn walk<R: Rules>(
    trie: &CsTrieMatcher,
    topic: &str,
    out: &mut Vec<SubscriberId>,
    first_only: bool,
    pin: &Pin<'_>,
) -> Result<bool> {
    let dialect = R::DIALECT;
    let amqp = dialect == Dialect::Amqp;
    let limits = &trie.config.limits;
    let mut probes: Probes<'_> = SmallVec::new();
    // One pass over the bytes for a plainly valid topic; anything else is validated (and its
    // error reported) the long way.
    if !scan_plain_topic(dialect, limits, topic, |word| probes.push(Probe::of(word))) {
        check_topic(dialect, limits, topic)?;
        probes.clear();
        probes.extend(split_words(dialect, topic).map(Probe::of));
    }
    let n = probes.len();
    let start = out.len();
    let root: &INode = &trie.root;
    let mut levels = [Level::new(root), Level::new(root)];
    levels[0].push(root);
    // AMQP `#` states for positions past the next one.
    let mut later: SmallVec<[(&INode, usize); 8]> = SmallVec::new();
    let mut memo = Memo::default();
    // How many subscriber sets were appended: one set has no duplicates to remove.
    let mut sets = 0u32;
    // MQTT: a topic starting with `$` is not matched by wildcards at the root (the first
    // level, whose only state is the root: only AMQP adds states to a level it is walking).
    let mut wild = !(dialect == Dialect::Mqtt && topic.starts_with('$'));

    for pos in 0..=n {
        let [even, odd] = &mut levels;
        let (cur, next) = if pos % 2 == 0 {
            (even, odd)
        } else {
            (odd, even)
        };
        next.clear();
        if amqp && !later.is_empty() {
            later.retain(|&mut (inode, p)| {
                if p == pos {
                    cur.push(inode);
                }
                p != pos
            });
        }
        if cur.len == 0 {
            if later.is_empty() {
                break;
            }
            continue;
        }
        let mut k = 0;
        if pos < n {
            let probe = probes[pos];
            while k < cur.len {
                let inode = cur.get(k);
                k += 1;
                let node = inode.load(pin);
                if wild {
                    if let Some(multi) = &node.multi {
                        let multi = multi.get(pin);
                        let multi_node = multi.load(pin);
                        // NATS `>` takes one word or more, MQTT `#` any number; an AMQP `#`
                        // with children walks on.
                        if !amqp || multi_node.is_childless() {
                            take!(multi_node, out, sets, first_only);
                        } else {
                            swallow(multi, pos, n, cur, next, &mut later, &mut memo);
                        }
                    }
                    if let Some(one) = &node.one {
                        let one = one.get(pin);
                        one.prefetch();
                        next.push(one);
                    }
                }
                if let Some(child) = node.words.find(&probe) {
                    let child = child.get(pin);
                    child.prefetch();
                    next.push(child);
                }
            }
        } else {
            // The last level: the patterns ending here match, and those ending in a
            // multi-word wildcard that takes no more words (never in NATS).
            while k < cur.len {
                let inode = cur.get(k);
                k += 1;
                let node = inode.load(pin);
                take!(node, out, sets, first_only);
                if dialect == Dialect::Nats || !wild {
                    continue;
                }
                if let Some(multi) = &node.multi {
                    let multi = multi.get(pin);
                    let multi_node = multi.load(pin);
                    if !amqp || multi_node.is_childless() {
                        take!(multi_node, out, sets, first_only);
                    } else {
                        swallow(multi, pos, n, cur, next, &mut later, &mut memo);
                    }
                }
            }
        }
        wild = true;
    }
    drop(memo);
    if first_only {
        return Ok(false);
    }
    if sets > 1 {
        dedup(out, start);
    }
    Ok(out.len() > start)
}

/// An AMQP `#` at `multi`, reached at `pos`, swallows k >= 0 words: the states
/// (multi, pos..=n), each visited once, added to the level of their position.
#[inline(never)]
fn swallow<'g>(
    multi: &'g INode,
    pos: usize,
    n: usize,
    cur: &mut Level<'g>,
    next: &mut Level<'g>,
    later: &mut SmallVec<[(&'g INode, usize); 8]>,
    memo: &mut Memo,
) {
    let id = ptr::from_ref::<INode>(multi) as usize;
    for p in pos..=n {
        if !memo.first_visit((id, p as u32)) {
            // Reached before: so were all later positions from there.
            break;
        }
        if p == pos {
            // Walked in this level, after the states already there.
            cur.push(multi);
        } else if p == pos + 1 {
            multi.prefetch();
            next.push(multi);
        } else {
            later.push((multi, p));
        }
    }
}

/// Removes duplicates from `out[start..]`: in place for the usual few ids (no sort), by
/// [`dedup_tail`] for more.
fn dedup(out: &mut Vec<SubscriberId>, start: usize) {
    const FEW: usize = 16;
    if out.len() - start > FEW {
        dedup_tail(out, start);
        return;
    }
    let mut kept = start;
    for i in start..out.len() {
        let id = out[i];
        if !out[start..kept].contains(&id) {
            out[kept] = id;
            kept += 1;
        }
    }
    out.truncate(kept);
}
