//! The CS-trie lookup: the `trie`'s iterative (node, position) walk, reading each I-node's
//! main node once per visit under one epoch pin and taking no lock.

#[cfg(not(loom))]
use std::cell::RefCell;
use std::ptr;

use rustc_hash::FxHashSet;
use smallvec::SmallVec;

use super::nodes::{word_hash, Edge};
use super::raw::INode;
use super::CsTrieMatcher;
use crate::dialect::Dialect;
use crate::error::Result;
use crate::matcher::{dedup_tail, SubscriberId};
use crate::topic::{parse_topic, INLINE_WORDS};

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

/// Walks the trie for `topic`, appending matching subscribers to `out` (deduplicated).
/// With `first_only`, stops at the first subscriber found and returns whether there was one.
pub(super) fn lookup(
    trie: &CsTrieMatcher,
    topic: &str,
    out: &mut Vec<SubscriberId>,
    first_only: bool,
) -> Result<bool> {
    let dialect = trie.config.dialect;
    let words = parse_topic(dialect, &trie.config.limits, topic)?;
    let hashes: SmallVec<[u64; INLINE_WORDS]> = words.iter().map(|w| word_hash(w)).collect();
    let n = words.len() as u32;
    let hide_root_wildcards =
        dialect == Dialect::Mqtt && words.first().is_some_and(|w| w.starts_with('$'));
    let start = out.len();
    let pin = trie.reclaim.pin();
    let root: &INode = &trie.root;
    let mut stack: SmallVec<[(&INode, u32); 32]> = SmallVec::new();
    stack.push((root, 0));
    let mut memo = Memo::default();
    let mut found = false;

    while let Some((inode, pos)) = stack.pop() {
        let node = inode.load(&pin);
        if pos == n && !node.subs.is_empty() {
            node.collect(out);
            found = true;
        }
        if found && first_only {
            break;
        }
        let wildcards_allowed = !(hide_root_wildcards && ptr::eq(inode, root));
        if let (Some(multi), true) = (&node.multi, wildcards_allowed) {
            let multi_node = multi.load(&pin);
            match dialect {
                Dialect::Nats => {
                    if pos < n && !multi_node.subs.is_empty() {
                        multi_node.collect(out);
                        found = true;
                    }
                }
                Dialect::Mqtt => {
                    multi_node.collect(out);
                    found |= !multi_node.subs.is_empty();
                }
                Dialect::Amqp => {
                    if multi_node.is_childless() {
                        multi_node.collect(out);
                        found |= !multi_node.subs.is_empty();
                    } else {
                        // `#` swallows k >= 0 words: states (multi, pos..=n), each visited once.
                        let id = ptr::from_ref::<INode>(multi) as usize;
                        for p in pos..=n {
                            if !memo.first_visit((id, p)) {
                                // Reached before: so were all later positions from there.
                                break;
                            }
                            stack.push((multi, p));
                        }
                    }
                }
            }
            if found && first_only {
                break;
            }
        }
        if pos < n {
            let at = pos as usize;
            if let Some(child) = node.child(Edge::Word(words[at], hashes[at])) {
                stack.push((child, pos + 1));
            }
            if let (Some(one), true) = (&node.one, wildcards_allowed) {
                stack.push((one, pos + 1));
            }
        }
    }
    drop(memo);
    if first_only {
        out.truncate(start);
        return Ok(found);
    }
    dedup_tail(out, start);
    Ok(out.len() > start)
}
