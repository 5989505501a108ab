//! The inverted index of criteria and the hit-counting lookup.
//!
//! Subscriptions occupy numbered slots (reused after removal). Each criterion is indexed where
//! a message field finds it in one step: equality and `in` values under (field, value), presence
//! under the field, comparisons in per-field sorted [`Thresholds`]. A lookup gathers the posting
//! lists the message's fields hit and counts, per slot, how many criteria were met (the
//! counting algorithm of Yan and Garcia-Molina): only slots with a hit are touched, and a slot
//! matches when its count reaches its threshold. Lists are grouped by the fewest fields a
//! subscription needs ([`Grouped`]), so groups beyond the number of fields that hit are skipped.
//!
//! When the lists to count are long compared with the number of slots, counting switches to a
//! dense pass: plain increments without tracking touched slots, then one linear sweep comparing
//! the count and threshold arrays and one `fill(0)`, loops the compiler vectorises.

use std::cell::RefCell;

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use crate::fields::criteria::{Comparison, Criterion, Filter};
use crate::fields::message::Message;
use crate::fields::postings::{remove_slot, Grouped, Slot, Thresholds};
use crate::fields::value::Value;

/// Threshold of a free slot: no count reaches it.
const FREE: Count = Count::MAX;

/// A hit count or threshold: 16 bits keep the counter array of 10k subscriptions in L1 cache.
/// [`Filter::new`] caps the number of criteria below [`FREE`].
type Count = u16;

/// Counting switches to the dense pass when the hits to count exceed `slots / DENSE_RATIO`.
const DENSE_RATIO: usize = 2;

const COMPARISONS: [Comparison; 4] = [
    Comparison::Lt,
    Comparison::Le,
    Comparison::Gt,
    Comparison::Ge,
];

#[derive(Debug, Default)]
struct FieldIndex {
    present: Grouped<Vec<Slot>>,
    eq: FxHashMap<Value, Grouped<Vec<Slot>>>,
    /// Indexed like [`COMPARISONS`].
    cmp: [Grouped<Thresholds>; 4],
    /// Criteria naming this field; the entry goes when none is left.
    criteria: usize,
}

fn cmp_index(op: Comparison) -> usize {
    COMPARISONS.iter().position(|&c| c == op).expect("listed")
}

/// Per-thread counters, all zero between lookups.
#[derive(Default)]
struct Scratch {
    counts: Vec<Count>,
    touched: Vec<Slot>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Which slots a lookup reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// Slots whose count reached their threshold.
    Matches,
    /// Every slot with at least one hit (no group is skipped).
    Hits,
}

/// The index over every subscription's criteria.
#[derive(Debug, Default)]
pub struct Index {
    fields: FxHashMap<Box<str>, FieldIndex>,
    /// Threshold per slot ([`FREE`] for a free slot).
    need: Vec<Count>,
    free: Vec<Slot>,
}

impl Index {
    /// Indexes `filter` in a free slot and returns the slot.
    pub fn insert(&mut self, filter: &Filter) -> Slot {
        let need = Count::try_from(filter.threshold()).expect("criteria are capped below FREE");
        let slot = if let Some(slot) = self.free.pop() {
            self.need[slot as usize] = need;
            slot
        } else {
            self.need.push(need);
            Slot::try_from(self.need.len() - 1).expect("at most 2^32 subscriptions")
        };
        let group = group_of(filter);
        for (field, criterion) in filter.criteria() {
            let fi = self.fields.entry(field.clone()).or_default();
            fi.criteria += 1;
            match criterion {
                Criterion::Present => fi.present.entry(group).push(slot),
                Criterion::Eq(v) => fi.eq.entry(v.clone()).or_default().entry(group).push(slot),
                Criterion::In(vs) => {
                    for v in vs {
                        fi.eq.entry(v.clone()).or_default().entry(group).push(slot);
                    }
                }
                _ => {
                    let (op, t) = criterion.comparison().expect("validated as numeric");
                    fi.cmp[cmp_index(op)].entry(group).insert(t, slot);
                }
            }
        }
        slot
    }

    /// Removes `filter`, indexed in `slot`, and frees the slot.
    pub fn remove(&mut self, slot: Slot, filter: &Filter) {
        let group = group_of(filter);
        for (field, criterion) in filter.criteria() {
            let fi = self.fields.get_mut(&**field).expect("indexed field");
            let mut drop_value = |v: &Value| {
                let lists = fi.eq.get_mut(v).expect("indexed value");
                let removed = lists.update(group, |l| remove_slot(l, slot));
                debug_assert!(removed, "slot was indexed under its value");
                if lists.is_empty() {
                    fi.eq.remove(v);
                }
            };
            match criterion {
                Criterion::Present => {
                    let removed = fi.present.update(group, |l| remove_slot(l, slot));
                    debug_assert!(removed, "slot was indexed as present");
                }
                Criterion::Eq(v) => drop_value(v),
                Criterion::In(vs) => vs.iter().for_each(drop_value),
                _ => {
                    let (op, t) = criterion.comparison().expect("validated as numeric");
                    let removed = fi.cmp[cmp_index(op)].update(group, |th| th.remove(t, slot));
                    debug_assert!(removed, "slot was indexed with its threshold");
                }
            }
            fi.criteria -= 1;
            if fi.criteria == 0 {
                self.fields.remove(&**field);
            }
        }
        self.need[slot as usize] = FREE;
        self.free.push(slot);
    }

    /// Counts the criteria `message` meets per slot and calls `visit(slot, count)` for each
    /// slot `report` asks for, in no particular order.
    pub fn lookup(&self, message: &Message, report: Report, mut visit: impl FnMut(Slot, u32)) {
        // Pass 1: the runs of slots each message field hits, with their group.
        let mut runs: SmallVec<[(u32, &[Slot]); 32]> = SmallVec::new();
        let mut pending: SmallVec<[(u32, Slot); 16]> = SmallVec::new();
        let mut live_fields = 0u32;
        for (name, value) in message.iter() {
            let Some(fi) = self.fields.get(name) else {
                continue;
            };
            let before = (runs.len(), pending.len());
            runs.extend(fi.present.iter().map(|(g, l)| (g, l.as_slice())));
            if let Some(v) = value {
                if let Some(lists) = fi.eq.get(v) {
                    runs.extend(lists.iter().map(|(g, l)| (g, l.as_slice())));
                }
                if let Some(x) = v.number() {
                    for (i, &op) in COMPARISONS.iter().enumerate() {
                        for (g, th) in fi.cmp[i].iter() {
                            let (run, more) = th.satisfied(op, x);
                            runs.push((g, run));
                            pending.extend(more.map(|s| (g, s)));
                        }
                    }
                }
            }
            let hit =
                runs[before.0..].iter().any(|(_, r)| !r.is_empty()) || pending.len() > before.1;
            live_fields += u32::from(hit);
        }
        // k-index pruning: a slot needing more fields than hit anything cannot match.
        let max_group = match report {
            Report::Matches => live_fields,
            Report::Hits => u32::MAX,
        };
        let total: usize = runs.iter().map(|(_, r)| r.len()).sum::<usize>() + pending.len();
        if total == 0 {
            return;
        }
        let mut scratch = SCRATCH
            .with(|s| s.try_borrow_mut().map(|mut s| std::mem::take(&mut *s)))
            .unwrap_or_default();
        if scratch.counts.len() < self.need.len() {
            scratch.counts.resize(self.need.len(), 0);
        }
        let dense = total * DENSE_RATIO > self.need.len();
        let counts = &mut scratch.counts[..self.need.len()];
        let selected = runs
            .iter()
            .filter(|(g, _)| *g <= max_group)
            .map(|(_, r)| *r);
        let singles: SmallVec<[Slot; 16]> = pending
            .iter()
            .filter(|(g, _)| *g <= max_group)
            .map(|(_, s)| *s)
            .collect();
        if dense {
            for run in selected.chain(std::iter::once(singles.as_slice())) {
                for &s in run {
                    counts[s as usize] += 1;
                }
            }
            sweep(counts, &self.need, report, &mut visit);
            counts.fill(0);
        } else {
            let touched = &mut scratch.touched;
            for run in selected.chain(std::iter::once(singles.as_slice())) {
                for &s in run {
                    let c = &mut counts[s as usize];
                    if *c == 0 {
                        touched.push(s);
                    }
                    *c += 1;
                }
            }
            for &s in touched.iter() {
                let c = std::mem::take(&mut counts[s as usize]);
                let wanted = match report {
                    Report::Matches => c >= self.need[s as usize],
                    Report::Hits => true,
                };
                if wanted {
                    visit(s, u32::from(c));
                }
            }
            touched.clear();
        }
        SCRATCH.with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                *s = scratch;
            }
        });
    }

    /// How many slots exist, free or not.
    pub fn slots(&self) -> usize {
        self.need.len()
    }
}

/// Calls `visit` for each slot `report` asks for, reading the count and threshold arrays 64
/// slots at a time: a branch-free comparison builds a bit mask (vectorised), and only its set
/// bits are visited.
fn sweep(counts: &[Count], need: &[Count], report: Report, visit: &mut impl FnMut(Slot, u32)) {
    let floor = match report {
        Report::Matches => None,
        Report::Hits => Some(1),
    };
    for (chunk, (cs, ns)) in counts.chunks(64).zip(need.chunks(64)).enumerate() {
        let mut mask = 0u64;
        for (j, (&c, &n)) in cs.iter().zip(ns).enumerate() {
            mask |= u64::from(c >= floor.unwrap_or(n)) << j;
        }
        while mask != 0 {
            let j = mask.trailing_zeros() as usize;
            visit((chunk * 64 + j) as Slot, u32::from(cs[j]));
            mask &= mask - 1;
        }
    }
}

fn group_of(filter: &Filter) -> u32 {
    u32::try_from(filter.min_fields()).expect("criteria counts fit in u32")
}
