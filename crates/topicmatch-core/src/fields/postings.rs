//! Posting lists: which subscription slots ask for one (field, value), for a field's presence,
//! or compare a field with a threshold.
//!
//! Every list is split into groups by the fewest distinct message fields a subscription needs
//! to reach its threshold (the grouping of k-index): a message in which only `m` fields hit
//! anything cannot satisfy a subscription of a group above `m`, so lookups skip those groups.

use crate::fields::criteria::Comparison;
use crate::fields::ids::Slot;
use crate::fields::pivot::Record;
use crate::fields::value::Number;

/// Lists of `T`, one per group, ordered by group; no group is kept empty.
#[derive(Debug)]
pub struct Grouped<T> {
    groups: Vec<(u32, T)>,
}

impl<T> Default for Grouped<T> {
    fn default() -> Self {
        Grouped { groups: Vec::new() }
    }
}

/// What a group holds: it can say whether it became empty.
pub trait Group: Default {
    /// Whether nothing is left.
    fn is_empty(&self) -> bool;
}

/// The slots of one posting list and, for the pivots of pivoted slots, their [`Record`]s in
/// the same order (empty for any other list).
#[derive(Debug, Default)]
pub struct Postings {
    /// The slots.
    pub slots: Vec<Slot>,
    /// The records, parallel to `slots`, or none.
    pub records: Vec<Record>,
}

impl Group for Postings {
    fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

impl Postings {
    /// Adds `slot`, with its record if it is pivoted here.
    pub fn push(&mut self, slot: Slot, record: Option<Record>) {
        self.slots.push(slot);
        self.records.extend(record);
        debug_assert!(self.records.is_empty() || self.records.len() == self.slots.len());
    }

    /// Removes one occurrence of `slot` (order does not matter); whether there was one.
    pub fn remove(&mut self, slot: Slot) -> bool {
        match self.slots.iter().position(|&s| s == slot) {
            Some(at) => {
                self.slots.swap_remove(at);
                if !self.records.is_empty() {
                    self.records.swap_remove(at);
                }
                true
            }
            None => false,
        }
    }
}

impl<T: Group> Grouped<T> {
    /// The list of `group`, created if new.
    pub fn entry(&mut self, group: u32) -> &mut T {
        let at = match self.groups.binary_search_by_key(&group, |(g, _)| *g) {
            Ok(at) => at,
            Err(at) => {
                self.groups.insert(at, (group, T::default()));
                at
            }
        };
        &mut self.groups[at].1
    }

    /// Runs `f` on the list of `group` if there is one, dropping the list if `f` empties it;
    /// returns what `f` did, or `false` without such a group.
    pub fn update(&mut self, group: u32, f: impl FnOnce(&mut T) -> bool) -> bool {
        let Ok(at) = self.groups.binary_search_by_key(&group, |(g, _)| *g) else {
            return false;
        };
        let done = f(&mut self.groups[at].1);
        if self.groups[at].1.is_empty() {
            self.groups.remove(at);
        }
        done
    }

    /// Whether no group is left.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Every group with its number.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> {
        self.groups.iter().map(|(g, t)| (*g, t))
    }
}

/// Thresholds of one comparison on one field, sorted so that a binary search finds the slots
/// a value satisfies as one contiguous run: `x > t` holds for a prefix of ascending `t`,
/// `x < t` for a suffix.
///
/// New thresholds wait in a small unsorted `pending` list (scanned linearly by lookups) and
/// are merged in when it outgrows `sqrt(len) / 2`, so building a million thresholds costs
/// `O(sqrt(n))` per insert, not the `O(n)` of keeping one vector sorted.
///
/// Pivoted slots keep their [`Record`]s alongside, in the same order (all or none of a
/// list's slots have one).
#[derive(Debug, Default)]
pub struct Thresholds {
    keys: Vec<Number>,
    slots: Vec<Slot>,
    records: Vec<Record>,
    pending: Vec<(Number, Slot, Option<Record>)>,
}

impl Group for Thresholds {
    fn is_empty(&self) -> bool {
        self.keys.is_empty() && self.pending.is_empty()
    }
}

impl Thresholds {
    /// Adds `slot` with threshold `t`, and its record if it is pivoted here.
    pub fn insert(&mut self, t: Number, slot: Slot, record: Option<Record>) {
        self.pending.push((t, slot, record));
        if self.pending.len() > 8.max(sqrt(self.keys.len()) / 2) {
            self.merge();
        }
    }

    fn merge(&mut self) {
        self.pending.sort_unstable_by_key(|&(t, s, _)| (t, s));
        let old_keys = std::mem::take(&mut self.keys);
        let old_slots = std::mem::take(&mut self.slots);
        let old_records = std::mem::take(&mut self.records);
        let total = old_keys.len() + self.pending.len();
        self.keys.reserve_exact(total);
        self.slots.reserve_exact(total);
        let with_records = !old_records.is_empty() || self.pending.iter().any(|p| p.2.is_some());
        if with_records {
            self.records.reserve_exact(total);
        }
        let mut old_records = old_records.into_iter();
        let mut old = old_keys
            .into_iter()
            .zip(old_slots)
            .map(|(k, s)| (k, s, old_records.next()))
            .peekable();
        let mut new = self.pending.drain(..).peekable();
        loop {
            let take_old = match (old.peek(), new.peek()) {
                (Some(a), Some(b)) => (a.0, a.1) <= (b.0, b.1),
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            let (k, s, r) = if take_old { old.next() } else { new.next() }.expect("peeked");
            self.keys.push(k);
            self.slots.push(s);
            self.records.extend(r);
        }
        debug_assert!(self.records.is_empty() || self.records.len() == self.slots.len());
    }

    /// Removes `slot` with threshold `t`.
    pub fn remove(&mut self, t: Number, slot: Slot) -> bool {
        if let Some(at) = self.pending.iter().position(|p| (p.0, p.1) == (t, slot)) {
            self.pending.swap_remove(at);
            return true;
        }
        let start = self.keys.partition_point(|k| *k < t);
        let end = self.keys.partition_point(|k| *k <= t);
        match self.slots[start..end].iter().position(|&s| s == slot) {
            Some(at) => {
                self.keys.remove(start + at);
                self.slots.remove(start + at);
                if !self.records.is_empty() {
                    self.records.remove(start + at);
                }
                true
            }
            None => false,
        }
    }

    /// The sorted slots whose threshold `x` satisfies under `op` with their records (none
    /// if the list keeps none), and the pending ones.
    pub fn satisfied(
        &self,
        op: Comparison,
        x: Number,
    ) -> (
        &[Slot],
        &[Record],
        impl Iterator<Item = (Slot, Option<Record>)> + '_,
    ) {
        let range = match op {
            Comparison::Gt => 0..self.keys.partition_point(|t| *t < x),
            Comparison::Ge => 0..self.keys.partition_point(|t| *t <= x),
            Comparison::Lt => self.keys.partition_point(|t| *t <= x)..self.keys.len(),
            Comparison::Le => self.keys.partition_point(|t| *t < x)..self.keys.len(),
        };
        let records = if self.records.is_empty() {
            &[][..]
        } else {
            &self.records[range.clone()]
        };
        let pending = self
            .pending
            .iter()
            .filter(move |(t, _, _)| op.holds(x, *t))
            .map(|&(_, s, r)| (s, r));
        (&self.slots[range], records, pending)
    }
}

/// `floor(sqrt(n))`, near enough (the pending list's bound need not be exact).
#[allow(clippy::cast_precision_loss, clippy::cast_sign_loss)]
fn sqrt(n: usize) -> usize {
    (n as f64).sqrt() as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_give_the_satisfied_run() {
        let mut th = Thresholds::default();
        for i in 0..200u32 {
            th.insert(Number::int(i64::from(i % 50)), i, None);
        }
        assert!(th.remove(Number::int(3), 3));
        assert!(!th.remove(Number::int(3), 3));
        for (op, x) in [
            (Comparison::Gt, 10),
            (Comparison::Ge, 10),
            (Comparison::Lt, 10),
            (Comparison::Le, 10),
        ] {
            let x = Number::int(x);
            let (run, records, pending) = th.satisfied(op, x);
            assert!(records.is_empty());
            let mut got: Vec<Slot> = run.iter().copied().chain(pending.map(|p| p.0)).collect();
            got.sort_unstable();
            let want: Vec<Slot> = (0..200u32)
                .filter(|&i| i != 3 && op.holds(x, Number::int(i64::from(i % 50))))
                .collect();
            assert_eq!(got, want, "{op:?}");
        }
    }

    #[test]
    fn thresholds_keep_each_slot_with_its_record() {
        use crate::fields::pivot::{Check, Checks};
        let mut checks = Checks::default();
        let mut records = Vec::new();
        let mut th = Thresholds::default();
        for i in 0..300u32 {
            let r = checks.set(i, &[Check::Eq(0, i)]);
            records.push(r);
            th.insert(Number::int(i64::from(i % 37)), i, Some(r));
        }
        for i in (0..300u32).step_by(7) {
            assert!(th.remove(Number::int(i64::from(i % 37)), i));
        }
        for op in [
            Comparison::Gt,
            Comparison::Ge,
            Comparison::Lt,
            Comparison::Le,
        ] {
            let (run, recs, pending) = th.satisfied(op, Number::int(18));
            assert_eq!(run.len(), recs.len());
            let mut seen: Vec<Slot> = Vec::new();
            for (&s, r) in run.iter().zip(recs) {
                assert_eq!(*r, records[s as usize], "slot {s}");
                seen.push(s);
            }
            for (s, r) in pending {
                assert_eq!(r, Some(records[s as usize]), "pending slot {s}");
                seen.push(s);
            }
            seen.sort_unstable();
            let want: Vec<Slot> = (0..300u32)
                .filter(|i| i % 7 != 0 && op.holds(Number::int(18), Number::int(i64::from(i % 37))))
                .collect();
            assert_eq!(seen, want, "{op:?}");
        }
    }

    #[test]
    fn postings_remove_a_slot_with_its_record() {
        use crate::fields::pivot::{Check, Checks};
        let mut checks = Checks::default();
        let mut list = Postings::default();
        let records: Vec<Record> = (0..10u32)
            .map(|i| checks.set(i, &[Check::Eq(1, i)]))
            .collect();
        for i in 0..10u32 {
            list.push(i, Some(records[i as usize]));
        }
        assert!(list.remove(3));
        assert!(!list.remove(3));
        assert_eq!(list.slots.len(), 9);
        for (&s, r) in list.slots.iter().zip(&list.records) {
            assert_eq!(*r, records[s as usize]);
        }
    }
}
