//! The index of one field: its presence, equality and comparison postings, and the estimate
//! of how often a message meets a criterion on it, which picks a pivoted subscription's pivot.

use rustc_hash::FxHashMap;

use crate::fields::criteria::{Comparison, Criterion};
use crate::fields::ids::{FieldId, Ids, Slot, ValueId};
use crate::fields::pivot::{Check, Record};
use crate::fields::postings::{Grouped, Postings, Thresholds};
use crate::fields::value::Value;

/// The four comparisons, in the order [`FieldIndex::cmp`] holds their thresholds.
pub const COMPARISONS: [Comparison; 4] = [
    Comparison::Lt,
    Comparison::Le,
    Comparison::Gt,
    Comparison::Ge,
];

/// Above this many distinct values a comparison's estimate is a flat guess rather than a
/// pass over the values (which would make subscribing cost as much as the field has values).
const HISTOGRAM_MAX: usize = 256;

/// What a comparison is guessed to pass without a histogram.
const CMP_GUESS: f64 = 0.5;

/// Presence estimates above every other criterion: it is met whenever the field is there.
const PRESENT: f64 = 1.5;

/// The slots asking for one value of a field, and the value's id.
#[derive(Debug)]
pub struct ValueEntry {
    /// Its id, for checking a pivoted subscription's criteria without comparing values.
    pub id: ValueId,
    /// The slots, by group.
    pub lists: Grouped<Postings>,
}

/// Postings of the criteria on one field.
#[derive(Debug)]
pub struct FieldIndex {
    /// Dense id (for the per-lookup table of where each field sits in the message).
    pub id: FieldId,
    /// Slots asking for the field's presence.
    pub present: Grouped<Postings>,
    /// Slots asking for each value (equality and `in` criteria).
    pub eq: FxHashMap<Value, ValueEntry>,
    /// Thresholds, indexed like [`COMPARISONS`].
    pub cmp: [Grouped<Thresholds>; 4],
    /// Criteria naming this field; the entry goes when none is left.
    pub criteria: usize,
    /// Postings under all values of `eq` together.
    pub eq_postings: usize,
}

impl FieldIndex {
    /// An empty index with id `id`.
    pub fn new(id: FieldId) -> Self {
        FieldIndex {
            id,
            present: Grouped::default(),
            eq: FxHashMap::default(),
            cmp: Default::default(),
            criteria: 0,
            eq_postings: 0,
        }
    }

    /// Posts `slot` for `criterion` in `group`, with its record if `criterion` is its pivot.
    pub fn post(
        &mut self,
        criterion: &Criterion,
        group: u32,
        slot: Slot,
        record: Option<Record>,
        ids: &mut Ids,
    ) {
        self.criteria += 1;
        match criterion {
            Criterion::Present => self.present.entry(group).push(slot, record),
            Criterion::Eq(v) => self.post_value(v, group, slot, record, ids),
            Criterion::In(vs) => vs
                .iter()
                .for_each(|v| self.post_value(v, group, slot, record, ids)),
            _ => {
                let (op, t) = criterion.comparison().expect("validated as numeric");
                self.cmp[cmp_index(op)].entry(group).insert(t, slot, record);
            }
        }
    }

    fn post_value(
        &mut self,
        v: &Value,
        group: u32,
        slot: Slot,
        record: Option<Record>,
        ids: &mut Ids,
    ) {
        let entry = self.eq.entry(v.clone()).or_insert_with(|| ValueEntry {
            id: ids.take(),
            lists: Grouped::default(),
        });
        entry.lists.entry(group).push(slot, record);
        self.eq_postings += 1;
    }

    /// Removes what [`post`](Self::post) added; returns whether the field has no criteria left.
    pub fn unpost(&mut self, criterion: &Criterion, group: u32, slot: Slot, ids: &mut Ids) -> bool {
        match criterion {
            Criterion::Present => {
                let removed = self.present.update(group, |l| l.remove(slot));
                debug_assert!(removed, "slot was indexed as present");
            }
            Criterion::Eq(v) => self.unpost_value(v, group, slot, ids),
            Criterion::In(vs) => vs
                .iter()
                .for_each(|v| self.unpost_value(v, group, slot, ids)),
            _ => {
                let (op, t) = criterion.comparison().expect("validated as numeric");
                let removed = self.cmp[cmp_index(op)].update(group, |th| th.remove(t, slot));
                debug_assert!(removed, "slot was indexed with its threshold");
            }
        }
        self.criteria -= 1;
        self.criteria == 0
    }

    fn unpost_value(&mut self, v: &Value, group: u32, slot: Slot, ids: &mut Ids) {
        let entry = self.eq.get_mut(v).expect("indexed value");
        let removed = entry.lists.update(group, |l| l.remove(slot));
        debug_assert!(removed, "slot was indexed under its value");
        if entry.lists.is_empty() {
            ids.give(entry.id);
            self.eq.remove(v);
        }
        self.eq_postings -= 1;
    }

    /// Appends the checks of `criterion`, on this field, to `out` (a pivoted subscription's
    /// other criteria, verified rather than counted: see [`Checks`](super::pivot::Checks)).
    pub fn checks(&self, criterion: &Criterion, out: &mut Vec<Check>) {
        let id = |v: &Value| self.eq.get(v).expect("a posted value").id;
        let f = self.id;
        match criterion {
            Criterion::Present => out.push(Check::Present(f)),
            Criterion::Eq(v) => out.push(Check::Eq(f, id(v))),
            Criterion::In(vs) => {
                out.push(Check::In(f, u32::try_from(vs.len()).expect("capped")));
                out.extend(vs.iter().map(|v| Check::Of(id(v))));
            }
            _ => {
                let (op, t) = criterion.comparison().expect("validated as numeric");
                out.push(match (t.as_i64(), t.as_u64()) {
                    (Some(i), _) => Check::CmpInt(f, op, i),
                    (None, Some(u)) => Check::CmpUInt(f, op, u),
                    (None, None) => Check::CmpFloat(f, op, t.as_f64()),
                });
            }
        }
    }

    /// How often a message carrying this field is guessed to meet `criterion`, from the values
    /// the subscriptions already indexed ask for: they are drawn from the same world as the
    /// messages, so a value many subscriptions name is a value many messages carry. Smaller
    /// is more selective; presence ranks last.
    #[allow(clippy::cast_precision_loss)]
    pub fn selectivity(&self, criterion: &Criterion) -> f64 {
        let total = (self.eq_postings + 1) as f64;
        let share =
            |v: &Value| (self.eq.get(v).map_or(0, |e| postings(&e.lists)) + 1) as f64 / total;
        match criterion {
            Criterion::Present => PRESENT,
            Criterion::Eq(v) => share(v),
            Criterion::In(vs) => vs.iter().map(share).sum::<f64>().min(1.0),
            _ if self.eq.len() > HISTOGRAM_MAX || self.eq_postings == 0 => CMP_GUESS,
            _ => {
                let (op, t) = criterion.comparison().expect("validated as numeric");
                let passing: usize = self
                    .eq
                    .iter()
                    .filter(|(v, _)| v.number().is_some_and(|x| op.holds(x, t)))
                    .map(|(_, e)| postings(&e.lists))
                    .sum();
                (passing + 1) as f64 / total
            }
        }
    }
}

fn postings(lists: &Grouped<Postings>) -> usize {
    lists.iter().map(|(_, l)| l.slots.len()).sum()
}

/// Where `op`'s thresholds sit in [`FieldIndex::cmp`].
pub fn cmp_index(op: Comparison) -> usize {
    COMPARISONS.iter().position(|&c| c == op).expect("listed")
}
