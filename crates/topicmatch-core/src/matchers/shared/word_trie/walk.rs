//! The trie lookup: an iterative walk over (node, position) states.

use std::cell::RefCell;

use rustc_hash::FxHashSet;
use smallvec::SmallVec;

use super::arena::{Edge, NodeId, WordId, NONE, ROOT};
use super::WordTrie;
use crate::dialect::Dialect;
use crate::error::Result;
use crate::matcher::{dedup_tail, Config, SubscriberId};
use crate::topic::{check_topic, split_words, INLINE_WORDS};

/// A topic word no pattern uses: only wildcards can match it.
const UNKNOWN: WordId = WordId::MAX;

/// The memo capacity a thread keeps between lookups.
const SEEN_KEPT_CAPACITY: usize = 4096;

thread_local! {
    /// Visited AMQP `#` states, reused across lookups on this thread.
    static SEEN: RefCell<FxHashSet<(NodeId, u32)>> = RefCell::new(FxHashSet::default());
}

impl WordTrie {
    /// Walks the trie for `topic`, appending matching subscribers to `out` (deduplicated).
    /// With `first_only`, stops at the first subscriber found and returns whether there was one.
    pub(crate) fn lookup(
        &self,
        config: &Config,
        topic: &str,
        out: &mut Vec<SubscriberId>,
        first_only: bool,
    ) -> Result<bool> {
        let dialect = config.dialect;
        check_topic(dialect, &config.limits, topic)?;
        let mut ids: SmallVec<[WordId; INLINE_WORDS]> = SmallVec::new();
        for word in split_words(dialect, topic) {
            ids.push(self.words.get(word).unwrap_or(UNKNOWN));
        }
        let n = ids.len() as u32;
        // MQTT: the first level starts with `$` exactly when the topic does.
        let hide_root_wildcards = dialect == Dialect::Mqtt && topic.starts_with('$');
        let start = out.len();
        // How many nodes contributed subscribers: one node's subscribers are already distinct.
        let mut sources = 0u32;
        let mut stack: SmallVec<[(NodeId, u32); INLINE_WORDS]> = SmallVec::new();
        stack.push((ROOT, 0));
        let mut used_seen = false;
        let mut found = false;

        while let Some((id, pos)) = stack.pop() {
            let node = self.arena.get(id);
            if pos == n && !node.subs.is_empty() {
                out.extend_from_slice(&node.subs);
                found = true;
                sources += 1;
            }
            if found && first_only {
                break;
            }
            let wildcards_allowed = !(hide_root_wildcards && id == ROOT);
            if node.multi != NONE && wildcards_allowed {
                let multi = self.arena.get(node.multi);
                match dialect {
                    Dialect::Nats => {
                        if pos < n && !multi.subs.is_empty() {
                            out.extend_from_slice(&multi.subs);
                            found = true;
                            sources += 1;
                        }
                    }
                    Dialect::Mqtt => {
                        if !multi.subs.is_empty() {
                            out.extend_from_slice(&multi.subs);
                            found = true;
                            sources += 1;
                        }
                    }
                    Dialect::Amqp => {
                        if multi.children.is_empty() && multi.one == NONE && multi.multi == NONE {
                            if !multi.subs.is_empty() {
                                out.extend_from_slice(&multi.subs);
                                found = true;
                                sources += 1;
                            }
                        } else {
                            // `#` swallows k >= 0 words: states (multi, pos..=n), each visited once.
                            used_seen = true;
                            SEEN.with(|seen| {
                                let mut seen = seen.borrow_mut();
                                for p in pos..=n {
                                    if !seen.insert((node.multi, p)) {
                                        // Reached before: so were all later positions from there.
                                        break;
                                    }
                                    stack.push((node.multi, p));
                                }
                            });
                        }
                    }
                }
                if found && first_only {
                    break;
                }
            }
            if pos < n {
                let word = ids[pos as usize];
                if word != UNKNOWN {
                    let child = self.arena.child(id, Edge::Word(word));
                    if child != NONE {
                        stack.push((child, pos + 1));
                    }
                }
                if node.one != NONE && wildcards_allowed {
                    stack.push((node.one, pos + 1));
                }
            }
        }
        if used_seen {
            SEEN.with(|seen| {
                let mut seen = seen.borrow_mut();
                seen.clear();
                // One hostile lookup must not pin its memo's memory on this thread.
                if seen.capacity() > SEEN_KEPT_CAPACITY {
                    seen.shrink_to(SEEN_KEPT_CAPACITY);
                }
            });
        }
        if first_only {
            out.truncate(start);
            return Ok(found);
        }
        if sources > 1 {
            dedup_tail(out, start);
        }
        Ok(found)
    }
}
