//! Everything one bitmap matcher indexes: direct (wildcard-free) patterns in one hash map keyed
//! by topic, wildcard patterns as slots in the per-level rows, and the AMQP patterns the rows
//! cannot express (`#` before the last word) in a small trie keyed by slot.

use super::bits::{self, Acc};
use super::direct::Direct;
use super::keys::{topic_hash, TopicHash, WordKey, PACKED_BYTES};
use super::levels::{Levels, SMALL};
use super::shape::Shape;
use super::slots::Slots;
use super::words::{key_of, packed_key};
use crate::dialect::Dialect;
use crate::matcher::{dedup_tail, Config, SubscriberId};
use crate::matchers::shared::word_trie::WordTrie;
use crate::pattern::{Pattern, Word};
use crate::topic::tokens::{self, Cursor, Step, Token, Tokens};

/// What an insert or remove changed, for matchers that keep derived state (cached rows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// A direct pattern: the topic it names.
    Direct(Box<str>),
    /// A wildcard slot; `edge`: the slot was created (insert) or freed (remove).
    Slot { slot: u32, edge: bool },
}

/// Direct map, slots, level rows and the trie of complex patterns.
pub(crate) struct Index {
    config: Config,
    pub(crate) slots: Slots,
    pub(crate) levels: Levels,
    complex: WordTrie,
    complex_live: usize,
    pub(crate) direct: Direct,
    /// Bumped by every change to the wildcard slots.
    pub(crate) generation: u64,
}

/// `out.extend_from_slice(subs)` without a `memmove` call for the one or two ids a topic or
/// slot usually has (measured: the call costs ~5% of an ftm lookup).
#[allow(clippy::inline_always)] // a call here would cost what it saves
#[inline(always)]
pub(crate) fn append(out: &mut Vec<SubscriberId>, subs: &[SubscriberId]) {
    match *subs {
        [a] => out.push(a),
        [a, b] => {
            out.reserve(2);
            out.push(a);
            out.push(b);
        }
        _ => out.extend_from_slice(subs),
    }
}

/// The topic a wildcard-free pattern matches, as text.
fn direct_key(dialect: Dialect, pattern: &Pattern) -> Box<str> {
    let sep = char::from(dialect.separator()).to_string();
    let words: Vec<&str> = pattern.words().iter().filter_map(Word::literal).collect();
    words.join(&sep).into_boxed_str()
}

impl Index {
    pub(crate) fn new(config: Config) -> Self {
        Index {
            config,
            slots: Slots::default(),
            levels: Levels::new(config.dialect),
            complex: WordTrie::default(),
            complex_live: 0,
            direct: Direct::new(config.dialect),
            generation: 0,
        }
    }

    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    pub(crate) fn insert(&mut self, pattern: &Pattern, subscriber: SubscriberId) -> Change {
        if !pattern.has_wildcards() {
            let key = direct_key(self.config.dialect, pattern);
            self.direct.push(&key, subscriber);
            return Change::Direct(key);
        }
        self.generation += 1;
        let (slot, fresh) = self.slots.insert(pattern, subscriber);
        if fresh {
            self.levels.grow(slot);
            match Shape::of(pattern) {
                Shape::Complex => {
                    self.complex.insert(pattern, u64::from(slot));
                    self.complex_live += 1;
                }
                shape => self.levels.insert(slot, pattern.words(), shape),
            }
        }
        Change::Slot { slot, edge: fresh }
    }

    pub(crate) fn remove(&mut self, pattern: &Pattern, subscriber: SubscriberId) -> Option<Change> {
        if !pattern.has_wildcards() {
            let key = direct_key(self.config.dialect, pattern);
            return self
                .direct
                .remove(&key, subscriber)
                .then_some(Change::Direct(key));
        }
        let (slot, freed) = self.slots.remove(pattern, subscriber)?;
        self.generation += 1;
        if freed {
            match Shape::of(pattern) {
                Shape::Complex => {
                    self.complex.remove(pattern, u64::from(slot));
                    self.complex_live -= 1;
                }
                shape => self.levels.remove(slot, pattern.words(), shape),
            }
        }
        Some(Change::Slot { slot, edge: freed })
    }

    /// Whether `words` is an MQTT topic hidden from wildcard-first filters.
    #[inline]
    pub(crate) fn dollar(&self, words: &[&str]) -> bool {
        self.config.dialect == Dialect::Mqtt && words.first().is_some_and(|w| w.starts_with('$'))
    }

    /// Leaves in `acc` every wildcard slot matching the validated `topic` (`words`).
    pub(crate) fn matching_slots(
        &self,
        topic: &str,
        words: &[&str],
        keys: &[WordKey],
        acc: &mut Acc,
    ) -> bool {
        let mut any = self
            .levels
            .matching_keyed(words, keys, self.dollar(words), acc);
        if self.complex_live > 0 {
            if !any {
                acc.clear();
                acc.resize(self.levels.width(), 0);
            }
            let mut slots = Vec::new();
            self.complex
                .lookup(&self.config, topic, &mut slots, false)
                .expect("topic already validated");
            for slot in slots {
                bits::set(acc, slot as u32);
                any = true;
            }
        }
        any
    }

    /// Appends the distinct subscribers of `topic`'s direct entry and of the slots in `acc`.
    /// Short results are kept distinct by a scan as they grow; long ones are sorted once.
    /// `hash`: the topic's [`topic_hash`].
    #[inline]
    pub(crate) fn resolve(&self, topic: &str, hash: u64, acc: &[u64], out: &mut Vec<SubscriberId>) {
        self.resolve_inline(topic, hash, acc, out);
    }

    /// [`resolve`](Self::resolve), always inlined: the one-pass small lookup calls it once
    /// per topic, and out of line its call, spills and the iterator adapters of
    /// [`bits::ones`] cost about a tenth of an ftm lookup's instructions (measured with
    /// callgrind).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn resolve_inline(&self, topic: &str, hash: u64, acc: &[u64], out: &mut Vec<SubscriberId>) {
        const SCAN: usize = 32;
        let start = out.len();
        let mut sort = false;
        if let Some(subs) = self.direct.get(topic, hash) {
            append(out, subs);
        }
        let mut base = 0u32;
        for &word in acc {
            let mut rest = word;
            while rest != 0 {
                let slot = base + rest.trailing_zeros();
                rest &= rest - 1;
                let subs = self.slots.subs(slot);
                if out.len() == start {
                    append(out, subs);
                } else if sort || out.len() - start + subs.len() > SCAN {
                    out.extend_from_slice(subs);
                    sort = true;
                } else {
                    for &s in subs {
                        if !out[start..].contains(&s) {
                            out.push(s);
                        }
                    }
                }
            }
            base += 64;
        }
        if sort {
            dedup_tail(out, start);
        }
    }

    /// Appends the distinct subscribers matching the validated `topic` (`words`).
    /// `keys`: the words' keys. Rows of at most [`SMALL`] words are combined in a fixed array.
    #[inline]
    pub(crate) fn lookup(
        &self,
        topic: &str,
        words: &[&str],
        keys: &[WordKey],
        out: &mut Vec<SubscriberId>,
    ) {
        let hash = topic_hash(keys);
        if self.complex_live == 0 && self.levels.width() <= SMALL {
            let mut acc = [0u64; SMALL];
            let any = self
                .levels
                .matching_small(words, keys, self.dollar(words), &mut acc);
            let width = if any { self.levels.width() } else { 0 };
            self.resolve(topic, hash, &acc[..width], out);
            return;
        }
        let mut acc = Acc::new();
        if !self.matching_slots(topic, words, keys, &mut acc) {
            acc.clear();
        }
        self.resolve(topic, hash, &acc, out);
    }

    /// The lookup of a small index (rows of at most [`SMALL`] words, no complex pattern) in
    /// one pass over `topic`'s bytes that validates, splits, keys each word and ANDs its
    /// level's row as soon as the word ends (AND commutes, so the length row comes last),
    /// folding the direct map's hash on the way: no word list is kept. Once nothing is left
    /// the remaining words are only validated and hashed. Returns false, having appended
    /// nothing, when the index is not small or the topic is not plainly valid: the general
    /// path (and `parse_topic`) then decide.
    #[allow(clippy::inline_always)] // as `walk_small`
    #[inline(always)]
    pub(crate) fn lookup_small(&self, topic: &str, out: &mut Vec<SubscriberId>) -> bool {
        if self.levels.width() <= 2 {
            return self.lookup_small_n::<2>(topic, out);
        }
        self.lookup_small_n::<SMALL>(topic, out)
    }

    /// [`lookup_small`](Self::lookup_small) with an accumulator of `N` words.
    #[allow(clippy::inline_always)] // as `walk_small`
    #[inline(always)]
    fn lookup_small_n<const N: usize>(&self, topic: &str, out: &mut Vec<SubscriberId>) -> bool {
        let Some((acc, hash)) = self.walk_small::<N>(topic) else {
            return false;
        };
        // The whole fixed array (its words past the width are zero: every row's are, and the
        // length row is always ANDed): a known length unrolls the loop over it, and each arm
        // gets its own copy of `resolve_inline` (the empty one is the direct probe alone).
        match acc {
            Some(a) => self.resolve_inline(topic, hash, &a, out),
            None => self.resolve_inline(topic, hash, &[], out),
        }
        true
    }

    /// `matches_any` by the same pass as [`lookup_small`](Self::lookup_small); `None` when
    /// that pass does not apply.
    #[cfg(test)]
    #[inline]
    pub(crate) fn any_small(&self, topic: &str) -> Option<bool> {
        let (acc, hash) = self.walk_small::<SMALL>(topic)?;
        Some(acc.is_some() || self.direct.get(topic, hash).is_some())
    }

    /// Whether a wildcard pattern matches `topic`, by the pass of
    /// [`lookup_small`](Self::lookup_small) without probing the direct map (for a caller that
    /// already did); `None` when that pass does not apply.
    #[inline]
    pub(crate) fn any_wildcard_small(&self, topic: &str) -> Option<bool> {
        if self.levels.width() <= 2 {
            return self.walk_small::<2>(topic).map(|(acc, _)| acc.is_some());
        }
        self.walk_small::<SMALL>(topic)
            .map(|(acc, _)| acc.is_some())
    }

    /// The pass of [`lookup_small`](Self::lookup_small): the matching slots (`None` if none)
    /// and the direct map's hash of `topic` (computed only for topics longer than
    /// [`PACKED_BYTES`]: [`Direct::get`] reads no hash for the others), or `None` if it does
    /// not apply.
    /// Always inlined: measured, its accumulator returned through memory stalls the reload.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn walk_small<const N: usize>(&self, topic: &str) -> Option<(Option<[u64; N]>, u64)> {
        if self.complex_live > 0 || self.levels.width() > N || topic.is_empty() {
            return None;
        }
        let cursor = tokens::tokens(self.config.dialect, &self.config.limits, topic);
        if self.config.dialect == Dialect::Mqtt && topic.as_bytes()[0] == b'$' {
            // Its first word's row is found by its text: compiled once, for every length.
            return self.walk_keyed::<N, true, true>(topic, cursor);
        }
        // Compiled apart for short topics: every word packs, no hash is folded, and the
        // registers the hash and the tests took hold the accumulator (measured, callgrind).
        match cursor {
            Tokens::Tiny(cursor) if topic.len() <= PACKED_BYTES => {
                self.walk_keyed::<N, false, false>(topic, cursor)
            }
            Tokens::Tiny(cursor) => self.walk_keyed::<N, true, false>(topic, cursor),
            Tokens::Short(cursor) => self.walk_keyed::<N, true, false>(topic, cursor),
            Tokens::Long(cursor) => self.walk_keyed::<N, true, false>(topic, cursor),
        }
    }

    /// [`walk_small`](Self::walk_small) of a topic longer than [`PACKED_BYTES`] (`LONG`) or
    /// not, whose words `cursor` hands out: the direct map keys short topics by their bytes,
    /// so only long ones need the hash. `DOLLAR`: an MQTT topic whose first level starts with
    /// `$`.
    #[allow(clippy::inline_always)] // as `walk_small`
    #[inline(always)]
    fn walk_keyed<'t, const N: usize, const LONG: bool, const DOLLAR: bool>(
        &self,
        topic: &'t str,
        mut cursor: impl Cursor<'t>,
    ) -> Option<(Option<[u64; N]>, u64)> {
        debug_assert!(LONG || topic.len() <= PACKED_BYTES);

        let mut hash = TopicHash::default();
        let mut len = 0;
        // Two loops, so no per-word test of whether anything is left: the first ANDs rows
        // until the accumulator empties or the topic ends, the second only keys the rest.
        let mut acc = self.levels.small_start::<N>();
        let mut ended = false;
        if let Some(a) = acc.as_mut() {
            loop {
                match cursor.step() {
                    Step::Word(token) => {
                        let hash = if LONG { Some(&mut hash) } else { None };
                        let left =
                            self.and_word::<N, LONG>(a, hash, len, &token, DOLLAR && len == 0);
                        len += 1;
                        if !left {
                            acc = None;
                            break;
                        }
                    }
                    Step::End => {
                        ended = true;
                        break;
                    }
                    Step::Invalid => return None,
                }
            }
        }
        while !ended {
            match cursor.step() {
                Step::Word(token) => {
                    if LONG {
                        hash.push(&key_of(&token));
                    }
                    len += 1;
                }
                Step::End => ended = true,
                Step::Invalid => return None,
            }
        }
        if let Some(a) = acc.as_mut() {
            if !self.levels.small_finish(a, len) {
                acc = None;
            }
        }
        Some((acc, hash.finish(len)))
    }

    /// One word of [`walk_small`](Self::walk_small) ends while slots are left: key it, fold
    /// it into `hash` (if given) and AND its level's row into `acc`; whether anything is left.
    /// `dollar`: the word is the first level of an MQTT `$` topic.
    #[allow(clippy::inline_always)] // measured, as below
    #[inline(always)]
    fn and_word<const N: usize, const LONG: bool>(
        &self,
        acc: &mut [u64; N],
        hash: Option<&mut TopicHash>,
        level: usize,
        token: &Token<'_>,
        dollar: bool,
    ) -> bool {
        // The text is read only for long words and the `$` level (a short word's row is
        // found by its packed key). A word of a short topic (not `LONG`) is short.
        if LONG && token.len() > PACKED_BYTES {
            let word = token.text();
            let key = WordKey::long(word);
            if let Some(hash) = hash {
                hash.push(&key);
            }
            return self.levels.small_step(acc, level, word, &key, dollar);
        }
        let key = packed_key(token);
        if let Some(hash) = hash {
            hash.push(&key);
        }
        if dollar {
            return self.levels.small_step(acc, level, token.text(), &key, true);
        }
        self.levels.small_step_short(acc, level, &key)
    }

    /// Whether a complex (trie-held) pattern matches the validated `topic`.
    pub(crate) fn complex_matches(&self, topic: &str) -> bool {
        self.complex_live > 0
            && self
                .complex
                .lookup(&self.config, topic, &mut Vec::new(), true)
                .expect("topic already validated")
    }

    /// Distinct wildcard patterns held (the bitmap columns in use).
    pub(crate) fn wildcard_patterns(&self) -> usize {
        self.slots.live()
    }

    /// Approximate heap bytes: rows, slot table, direct map (for the memory benchmark).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.levels.heap_bytes() + self.slots.heap_bytes() + self.direct.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::words::with_keys;
    use super::*;

    fn word() -> impl Strategy<Value = String> {
        prop_oneof![
            "[ab$]{0,2}",
            "[ab]{8,9}",
            Just("*".to_owned()),
            Just("#".to_owned())
        ]
    }

    proptest! {
        /// The one-pass small lookup (and `any_small`) answers exactly as the general path
        /// does, in every dialect, whenever it answers.
        #[test]
        fn small_lookup_agrees_with_general_path(
            patterns in prop::collection::vec(prop::collection::vec(word(), 1..4), 0..12),
            topics in prop::collection::vec("[ab$./ ]{0,12}", 1..12),
        ) {
            for dialect in crate::dialect::Dialect::ALL {
                let config = Config::new(dialect);
                let mut index = Index::new(config);
                for (i, words) in patterns.iter().enumerate() {
                    let sep = char::from(dialect.separator()).to_string();
                    let text = words
                        .iter()
                        .map(|w| match (dialect, w.as_str()) {
                            (Dialect::Mqtt, "*") => "+",
                            (Dialect::Nats, "#") => ">",
                            _ => w,
                        })
                        .collect::<Vec<_>>()
                        .join(&sep);
                    if let Ok(p) = Pattern::parse(dialect, &config.limits, &text) {
                        if index.slots.find(&p).is_none() || !p.has_wildcards() {
                            index.insert(&p, i as u64);
                        }
                    }
                }
                for topic in &topics {
                    let topic = topic.replace(['.', '/'], &char::from(dialect.separator()).to_string());
                    let mut fast = Vec::new();
                    if !index.lookup_small(&topic, &mut fast) {
                        continue;
                    }
                    let mut slow = Vec::new();
                    with_keys(&config, &topic, |w, k| index.lookup(&topic, w, k, &mut slow))
                        .expect("the small path only answers valid topics");
                    prop_assert_eq!(index.any_small(&topic), Some(!slow.is_empty()));
                    let direct = index.direct.contains_unchecked(&topic);
                    prop_assert_eq!(
                        index.any_wildcard_small(&topic).map(|any| any || direct),
                        Some(!slow.is_empty())
                    );
                    fast.sort_unstable();
                    slow.sort_unstable();
                    prop_assert_eq!(fast, slow);
                }
            }
        }
    }
}
