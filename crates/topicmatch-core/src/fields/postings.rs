//! Posting lists: which subscription slots ask for one (field, value), for a field's presence,
//! or compare a field with a threshold.
//!
//! Every list is split into groups by the fewest distinct message fields a subscription needs
//! to reach its threshold (the grouping of k-index): a message in which only `m` fields hit
//! anything cannot satisfy a subscription of a group above `m`, so lookups skip those groups.

use crate::fields::criteria::Comparison;
use crate::fields::value::Number;

/// A subscription's index in the counter array.
pub type Slot = u32;

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

impl Group for Vec<Slot> {
    fn is_empty(&self) -> bool {
        Vec::is_empty(self)
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
#[derive(Debug, Default)]
pub struct Thresholds {
    keys: Vec<Number>,
    slots: Vec<Slot>,
    pending: Vec<(Number, Slot)>,
}

impl Group for Thresholds {
    fn is_empty(&self) -> bool {
        self.keys.is_empty() && self.pending.is_empty()
    }
}

impl Thresholds {
    /// Adds `slot` with threshold `t`.
    pub fn insert(&mut self, t: Number, slot: Slot) {
        self.pending.push((t, slot));
        if self.pending.len() > 8.max(sqrt(self.keys.len()) / 2) {
            self.merge();
        }
    }

    fn merge(&mut self) {
        self.pending.sort_unstable();
        let old_keys = std::mem::take(&mut self.keys);
        let old_slots = std::mem::take(&mut self.slots);
        let total = old_keys.len() + self.pending.len();
        self.keys.reserve_exact(total);
        self.slots.reserve_exact(total);
        let mut old = old_keys.into_iter().zip(old_slots).peekable();
        let mut new = self.pending.drain(..).peekable();
        loop {
            let take_old = match (old.peek(), new.peek()) {
                (Some(a), Some(b)) => a <= b,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            let (k, s) = if take_old { old.next() } else { new.next() }.expect("peeked");
            self.keys.push(k);
            self.slots.push(s);
        }
    }

    /// Removes `slot` with threshold `t`.
    pub fn remove(&mut self, t: Number, slot: Slot) -> bool {
        if let Some(at) = self.pending.iter().position(|&p| p == (t, slot)) {
            self.pending.swap_remove(at);
            return true;
        }
        let start = self.keys.partition_point(|k| *k < t);
        let end = self.keys.partition_point(|k| *k <= t);
        match self.slots[start..end].iter().position(|&s| s == slot) {
            Some(at) => {
                self.keys.remove(start + at);
                self.slots.remove(start + at);
                true
            }
            None => false,
        }
    }

    /// The sorted slots whose threshold `x` satisfies under `op`, and the pending ones.
    pub fn satisfied(
        &self,
        op: Comparison,
        x: Number,
    ) -> (&[Slot], impl Iterator<Item = Slot> + '_) {
        let run = match op {
            Comparison::Gt => &self.slots[..self.keys.partition_point(|t| *t < x)],
            Comparison::Ge => &self.slots[..self.keys.partition_point(|t| *t <= x)],
            Comparison::Lt => &self.slots[self.keys.partition_point(|t| *t <= x)..],
            Comparison::Le => &self.slots[self.keys.partition_point(|t| *t < x)..],
        };
        let pending = self
            .pending
            .iter()
            .filter(move |(t, _)| op.holds(x, *t))
            .map(|(_, s)| *s);
        (run, pending)
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
            th.insert(Number::int(i64::from(i % 50)), i);
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
            let (run, pending) = th.satisfied(op, x);
            let mut got: Vec<Slot> = run.iter().copied().chain(pending).collect();
            got.sort_unstable();
            let want: Vec<Slot> = (0..200u32)
                .filter(|&i| i != 3 && op.holds(x, Number::int(i64::from(i % 50))))
                .collect();
            assert_eq!(got, want, "{op:?}");
        }
    }
}
