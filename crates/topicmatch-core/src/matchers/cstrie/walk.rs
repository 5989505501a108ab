//! The CS-trie lookup: the `trie`'s iterative (node, position) walk, reading each I-node's
//! main node once per visit under one epoch pin and taking no lock.

#[cfg(not(loom))]
use std::cell::RefCell;
use std::ptr;

use rustc_hash::FxHashSet;
use smallvec::SmallVec;

use super::kids::Key;
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

/// What [`Frontier::begin`] found for a level.
enum Level {
    /// States to walk.
    Walk,
    /// None at this level, but `#` states wait at later ones.
    Empty,
    /// Nothing left.
    Done,
}

/// The lookup's states, level by level: `states[lo..hi]` are the I-nodes reached at the current
/// position; those for the next one are appended after them (their cache lines requested), so a
/// level's branches are independent straight-line work, not a stack of pending branches.
struct Frontier<'g> {
    states: SmallVec<[&'g INode; 32]>,
    /// AMQP `#` states for positions past the next one.
    later: SmallVec<[(&'g INode, u32); 8]>,
    lo: usize,
    hi: usize,
}

impl<'g> Frontier<'g> {
    fn new(root: &'g INode) -> Self {
        let mut states = SmallVec::new();
        states.push(root);
        Frontier {
            states,
            later: SmallVec::new(),
            lo: 0,
            hi: 1,
        }
    }

    /// Starts the level of position `pos`, adding the `#` states that wait for it.
    fn begin(&mut self, pos: u32) -> Level {
        if !self.later.is_empty() {
            let mut due: SmallVec<[&INode; 8]> = SmallVec::new();
            self.later.retain(|&mut (inode, p)| {
                if p == pos {
                    due.push(inode);
                }
                p != pos
            });
            self.states.extend(due);
            self.hi = self.states.len();
        }
        match (self.lo == self.hi, self.later.is_empty()) {
            (false, _) => Level::Walk,
            (true, false) => Level::Empty,
            (true, true) => Level::Done,
        }
    }

    /// Adds `inode` to the next level.
    #[inline]
    fn push_next(&mut self, inode: &'g INode) {
        inode.prefetch();
        self.states.push(inode);
    }

    /// An AMQP `#` at `multi`, reached at `pos`, swallows k >= 0 words: the states
    /// (multi, pos..=n), each visited once.
    fn swallow(&mut self, multi: &'g INode, pos: u32, n: u32, memo: &mut Memo) {
        let id = ptr::from_ref::<INode>(multi) as usize;
        for p in pos..=n {
            if !memo.first_visit((id, p)) {
                // Reached before: so were all later positions from there.
                break;
            }
            if p == pos {
                // Walked in this level: inserted at its end.
                self.states.insert(self.hi, multi);
                self.hi += 1;
            } else if p == pos + 1 {
                self.states.push(multi);
            } else {
                self.later.push((multi, p));
            }
        }
    }

    /// Ends the current level: the next one starts.
    fn end(&mut self) {
        (self.lo, self.hi) = (self.hi, self.states.len());
    }
}

/// The words of a topic with their [`Key`]s, inline for usual depths.
type Keys<'t> = SmallVec<[(&'t str, Key); INLINE_WORDS]>;

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
fn lookup_pinned(
    trie: &CsTrieMatcher,
    topic: &str,
    out: &mut Vec<SubscriberId>,
    first_only: bool,
    pin: &Pin<'_>,
) -> Result<bool> {
    let dialect = trie.config.dialect;
    let limits = &trie.config.limits;
    let mut words: Keys<'_> = SmallVec::new();
    // One pass over the bytes for a plainly valid topic; anything else is validated (and its
    // error reported) the long way.
    if !scan_plain_topic(dialect, limits, topic, |word| {
        words.push((word, Key::of(word)));
    }) {
        check_topic(dialect, limits, topic)?;
        words.clear();
        for word in split_words(dialect, topic) {
            words.push((word, Key::of(word)));
        }
    }
    let n = words.len() as u32;
    // The first word starts with `$` exactly when the topic does.
    let hide_root_wildcards = dialect == Dialect::Mqtt && topic.starts_with('$');
    let start = out.len();
    let root: &INode = &trie.root;
    let mut walk = Frontier::new(root);
    let mut memo = Memo::default();
    // How many subscriber sets were appended: one set has no duplicates to remove.
    let mut sets = 0u32;

    for pos in 0..=n {
        match walk.begin(pos) {
            Level::Done => break,
            Level::Empty => continue,
            Level::Walk => {}
        }
        let mut k = walk.lo;
        while k < walk.hi {
            let inode = walk.states[k];
            let node = inode.load(pin);
            k += 1;
            if pos == n && !node.subs.is_empty() {
                if first_only {
                    return Ok(true);
                }
                node.collect(out);
                sets += 1;
            }
            let wildcards_allowed = !(hide_root_wildcards && ptr::eq(inode, root));
            if let (Some(multi), true) = (&node.multi, wildcards_allowed) {
                let multi = multi.get(pin);
                let multi_node = multi.load(pin);
                let take = match dialect {
                    Dialect::Nats => pos < n,
                    Dialect::Mqtt => true,
                    Dialect::Amqp if multi_node.is_childless() => true,
                    Dialect::Amqp => {
                        walk.swallow(multi, pos, n, &mut memo);
                        false
                    }
                };
                if take && !multi_node.subs.is_empty() {
                    if first_only {
                        return Ok(true);
                    }
                    multi_node.collect(out);
                    sets += 1;
                }
            }
            if pos == n {
                continue;
            }
            if let (Some(one), true) = (&node.one, wildcards_allowed) {
                walk.push_next(one.get(pin));
            }
            let (word, key) = words[pos as usize];
            if let Some(child) = node.words.get(word, key) {
                walk.push_next(child.get(pin));
            }
        }
        walk.end();
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
