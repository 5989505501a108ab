//! Subscription slots: one bitmap column per distinct wildcard pattern, freed columns reused
//! lowest first (the deleted-slot list of "Fast Topic Matching Algorithm Implementation For
//! WSO2 Message Broker"), so bitmaps stay as wide as the most patterns ever live at once, not
//! as the number ever subscribed.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use crate::matcher::SubscriberId;
use crate::pattern::Pattern;

/// A live slot: its pattern.
#[derive(Debug)]
pub(crate) struct Slot {
    pub(crate) pattern: Pattern,
}

/// The slot table. The subscribers of each slot sit in their own array, which is all a
/// lookup reads.
#[derive(Debug, Default)]
pub(crate) struct Slots {
    entries: Vec<Option<Slot>>,
    subs: Vec<SmallVec<[SubscriberId; 2]>>,
    by_pattern: FxHashMap<Pattern, u32>,
    free: BinaryHeap<Reverse<u32>>,
}

impl Slots {
    /// The slot of `pattern`, if live.
    pub(crate) fn find(&self, pattern: &Pattern) -> Option<u32> {
        self.by_pattern.get(pattern).copied()
    }

    /// Adds `subscriber` under `pattern`; returns the slot and whether it was just created.
    pub(crate) fn insert(&mut self, pattern: &Pattern, subscriber: SubscriberId) -> (u32, bool) {
        if let Some(slot) = self.find(pattern) {
            self.subs_mut(slot).push(subscriber);
            return (slot, false);
        }
        let entry = Some(Slot {
            pattern: pattern.clone(),
        });
        let subs = smallvec::smallvec![subscriber];
        let slot = if let Some(Reverse(slot)) = self.free.pop() {
            self.entries[slot as usize] = entry;
            self.subs[slot as usize] = subs;
            slot
        } else {
            let slot = u32::try_from(self.entries.len()).expect("fewer than 2^32 patterns");
            self.entries.push(entry);
            self.subs.push(subs);
            slot
        };
        self.by_pattern.insert(pattern.clone(), slot);
        (slot, true)
    }

    /// Removes `subscriber` from `pattern`: `None` if it was not there, else the slot and
    /// whether the slot was freed (its last subscriber left).
    pub(crate) fn remove(
        &mut self,
        pattern: &Pattern,
        subscriber: SubscriberId,
    ) -> Option<(u32, bool)> {
        let slot = self.find(pattern)?;
        let subs = self.subs_mut(slot);
        let pos = subs.iter().position(|s| *s == subscriber)?;
        subs.swap_remove(pos);
        if !subs.is_empty() {
            return Some((slot, false));
        }
        self.entries[slot as usize] = None;
        self.subs[slot as usize] = SmallVec::new();
        self.by_pattern.remove(pattern);
        self.free.push(Reverse(slot));
        Some((slot, true))
    }

    /// The subscribers of slot `slot` (empty if not live).
    #[inline]
    pub(crate) fn subs(&self, slot: u32) -> &[SubscriberId] {
        self.subs.get(slot as usize).map_or(&[], |s| s.as_slice())
    }

    fn subs_mut(&mut self, slot: u32) -> &mut SmallVec<[SubscriberId; 2]> {
        &mut self.subs[slot as usize]
    }

    /// Approximate heap bytes of the table.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.iter()
            .map(|(i, s)| 64 + self.subs(i).len() * 8 + s.pattern.words().len() * 24)
            .sum()
    }

    /// Number of live slots.
    pub(crate) fn live(&self) -> usize {
        self.by_pattern.len()
    }

    /// Every live slot with its number.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u32, &Slot)> {
        self.entries
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (i as u32, s)))
    }
}
