//! The trie lookup: an iterative walk over (node, position) states.

use std::cell::RefCell;

use rustc_hash::FxHashSet;
use smallvec::SmallVec;

use super::arena::{Edge, NodeId, WordId, NONE, ROOT};
use super::WordTrie;
use crate::dialect::Dialect;
use crate::error::Result;
use crate::matcher::{dedup_tail, Config, SubscriberId};
use crate::topic::tokens::{self, Cursor, Step, Tokens};
use crate::topic::{refused, INLINE_WORDS};

/// A topic word no pattern uses: only wildcards can match it.
const UNKNOWN: WordId = WordId::MAX;

/// The memo capacity a thread keeps between lookups.
const SEEN_KEPT_CAPACITY: usize = 4096;

thread_local! {
    /// Visited AMQP `#` states, reused across lookups on this thread.
    static SEEN: RefCell<FxHashSet<(NodeId, u32)>> = RefCell::new(FxHashSet::default());
}

impl WordTrie {
    /// The interned ids of `topic`'s words ([`UNKNOWN`] for a word no pattern uses), validated
    /// and cut in one pass; an invalid topic's error is reported by the rules.
    #[inline(always)]
    #[allow(clippy::inline_always)] // the lookup's front end
    fn topic_ids(&self, config: &Config, topic: &str) -> Result<SmallVec<[WordId; INLINE_WORDS]>> {
        let mut ids = SmallVec::new();
        let valid = match tokens::tokens(config.dialect, &config.limits, topic) {
            Tokens::Tiny(cursor) => self.intern_all(cursor, &mut ids),
            Tokens::Short(cursor) => self.intern_all(cursor, &mut ids),
            Tokens::Long(cursor) => self.intern_all(cursor, &mut ids),
        };
        if !valid {
            ids.clear();
            for word in refused(config.dialect, &config.limits, topic)? {
                ids.push(self.words.get(word).unwrap_or(UNKNOWN));
            }
        }
        Ok(ids)
    }

    /// The interned ids of the words `cursor` hands out ([`UNKNOWN`] for a word no pattern
    /// uses), into `ids`; false if the topic is invalid.
    #[inline(always)]
    #[allow(clippy::inline_always)] // the lookup's front end, once per cursor type
    fn intern_all<'t>(
        &self,
        mut cursor: impl Cursor<'t>,
        ids: &mut SmallVec<[WordId; INLINE_WORDS]>,
    ) -> bool {
        loop {
            match cursor.step() {
                Step::Word(token) => ids.push(self.words.get(token.text()).unwrap_or(UNKNOWN)),
                Step::End => return true,
                Step::Invalid => return false,
            }
        }
    }

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
        let ids = self.topic_ids(config, topic)?;
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
