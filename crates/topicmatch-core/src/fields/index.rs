//! The inverted index of criteria and the hit-counting lookup.
//!
//! Subscriptions occupy numbered slots (reused after removal). Each criterion is indexed where
//! a message field finds it in one step ([`FieldIndex`]): equality and `in` values under
//! (field, value), presence under the field, comparisons in per-field sorted thresholds. A
//! lookup gathers the posting lists the message's fields hit and counts, per slot, how many
//! criteria were met (the counting algorithm of Yan and Garcia-Molina): only slots with a hit
//! are touched, and a slot matches when its count reaches its threshold. Lists are grouped by
//! the fewest fields a subscription needs (k-index), so groups beyond the number of fields that
//! hit are skipped.
//!
//! "All" subscriptions are not counted but pivoted ([`crate::fields::pivot`]): only their most
//! selective criterion leads a lookup to them, and the lookup verifies the others directly.
//! Counting is left to "any" and "at least k" subscriptions, for which one met criterion does
//! not decide, and to lookups of hit counts.
//!
//! When the lists to count are long compared with the number of slots, counting switches to a
//! dense pass: plain increments without tracking touched slots, then one linear sweep comparing
//! the count and threshold arrays and one `fill(0)`, loops the compiler vectorises.

use std::cell::RefCell;

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use crate::fields::criteria::Filter;
use crate::fields::field::{FieldIndex, COMPARISONS};
use crate::fields::ids::{FieldId, Ids, Slot};
use crate::fields::message::Message;
use crate::fields::pivot::{Checks, Record, Seen, PIVOT, REST};
use crate::fields::postings::Postings;

/// Threshold of a free slot: no count reaches it.
const FREE: Count = Count::MAX;

/// A hit count or threshold: 16 bits keep the counter array of 10k subscriptions in L1 cache.
/// [`Filter::new`] caps the number of criteria below [`FREE`].
type Count = u16;

/// Counting switches to the dense pass when the hits to count exceed `slots / DENSE_RATIO`.
const DENSE_RATIO: usize = 2;

/// Per-thread counters, all zero between lookups, and what the message holds by field id,
/// all [`Seen::ABSENT`] between lookups.
#[derive(Default)]
struct Scratch {
    counts: Vec<Count>,
    touched: Vec<Slot>,
    seen: Vec<Seen>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// A run of slots one message field hits: its group, the slots and, for a pivot list, their
/// records.
type Run<'a> = (u32, &'a [Slot], &'a [Record]);

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
    field_ids: Ids,
    value_ids: Ids,
    /// Threshold per slot ([`FREE`] for a free slot).
    need: Vec<Count>,
    /// Per slot: which criterion is the pivot of a pivoted subscription ([`NOT_PIVOTED`]
    /// otherwise).
    pivot: Vec<u32>,
    /// The criteria other than the pivot of each pivoted slot.
    checks: Checks,
    free: Vec<Slot>,
}

/// [`Index::pivot`] of a counted subscription.
const NOT_PIVOTED: u32 = u32::MAX;

impl Index {
    /// Indexes `filter` in a free slot and returns the slot.
    pub fn insert(&mut self, filter: &Filter) -> Slot {
        let need = Count::try_from(filter.threshold()).expect("criteria are capped below FREE");
        let slot = if let Some(slot) = self.free.pop() {
            self.need[slot as usize] = need;
            slot
        } else {
            self.need.push(need);
            self.pivot.push(NOT_PIVOTED);
            Slot::try_from(self.need.len() - 1).expect("at most 2^32 subscriptions")
        };
        let pivot = self.choose_pivot(filter);
        let group = group_of(filter);
        // The pivot is posted last, with the record of the other criteria's checks, which
        // need their values' ids.
        let mut checks = Vec::new();
        for (i, (field, criterion)) in (0..).zip(filter.criteria()) {
            if !self.fields.contains_key(&**field) {
                let id = self.field_ids.take();
                self.fields.insert(field.clone(), FieldIndex::new(id));
            }
            if i == pivot {
                continue;
            }
            let fi = self.fields.get_mut(&**field).expect("inserted if new");
            let g = if pivot == NOT_PIVOTED { group } else { REST };
            fi.post(criterion, g, slot, None, &mut self.value_ids);
            if g == REST {
                fi.checks(criterion, &mut checks);
            }
        }
        self.pivot[slot as usize] = pivot;
        if pivot != NOT_PIVOTED {
            let record = self.checks.set(slot, &checks);
            let (field, criterion) = &filter.criteria()[pivot as usize];
            let fi = self.fields.get_mut(&**field).expect("inserted above");
            fi.post(criterion, PIVOT, slot, Some(record), &mut self.value_ids);
        }
        slot
    }

    /// The criterion to pivot `filter` on, or [`NOT_PIVOTED`] for a filter that is not
    /// "all" (one met criterion does not tell whether it reaches its threshold).
    fn choose_pivot(&self, filter: &Filter) -> u32 {
        if filter.threshold() < filter.criteria().len() {
            return NOT_PIVOTED;
        }
        let estimate = |(field, c): &(Box<str>, _)| {
            self.fields
                .get(&**field)
                .map_or(1.0, |fi: &FieldIndex| fi.selectivity(c))
        };
        let mut best = (0, f64::INFINITY);
        for (i, fc) in (0..).zip(filter.criteria()) {
            let e = estimate(fc);
            if e < best.1 {
                best = (i, e);
            }
        }
        best.0
    }

    /// Removes `filter`, indexed in `slot`, and frees the slot.
    pub fn remove(&mut self, slot: Slot, filter: &Filter) {
        let pivot = self.pivot[slot as usize];
        let group = group_of(filter);
        for (i, (field, criterion)) in (0..).zip(filter.criteria()) {
            let fi = self.fields.get_mut(&**field).expect("indexed field");
            let g = match pivot {
                NOT_PIVOTED => group,
                p if p == i => PIVOT,
                _ => REST,
            };
            if fi.unpost(criterion, g, slot, &mut self.value_ids) {
                self.field_ids.give(fi.id);
                self.fields.remove(&**field);
            }
        }
        self.need[slot as usize] = FREE;
        self.pivot[slot as usize] = NOT_PIVOTED;
        self.checks.clear(slot);
        self.free.push(slot);
    }

    /// Counts the criteria `message` meets per slot and calls `visit(slot, count)` for each
    /// slot `report` asks for, in no particular order. (A pivoted slot that matches is
    /// verified rather than counted; its count is then its threshold: every criterion.)
    pub fn lookup(&self, message: &Message, report: Report, mut visit: impl FnMut(Slot, u32)) {
        let mut scratch = SCRATCH
            .with(|s| s.try_borrow_mut().map(|mut s| std::mem::take(&mut *s)))
            .unwrap_or_default();
        self.lookup_with(&mut scratch, message, report, &mut visit);
        SCRATCH.with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                *s = scratch;
            }
        });
    }

    fn lookup_with<'s>(
        &'s self,
        scratch: &mut Scratch,
        message: &Message,
        report: Report,
        visit: &mut impl FnMut(Slot, u32),
    ) {
        // Pass 1: the runs of slots each message field hits, with their group, and what the
        // message holds by field id. Matches never count the pivoted groups: they verify the
        // slots `PIVOT` gives and ignore `REST`.
        let mut runs: SmallVec<[Run<'s>; 256]> = SmallVec::new();
        let mut pending: SmallVec<[(u32, Slot); 256]> = SmallVec::new();
        let mut pivots: SmallVec<[(Slot, Record); 64]> = SmallVec::new();
        let mut ids: SmallVec<[FieldId; 16]> = SmallVec::new();
        let mut live_fields = 0u32;
        let wanted = |g: u32| report == Report::Hits || g != REST;
        let lists = |l: &'s Postings| (l.slots.as_slice(), l.records.as_slice());
        if scratch.seen.len() < self.field_ids.end() as usize {
            scratch
                .seen
                .resize(self.field_ids.end() as usize, Seen::ABSENT);
        }
        for (name, value) in message.iter() {
            let Some(fi) = self.fields.get(name) else {
                continue;
            };
            ids.push(fi.id);
            let before = (runs.len(), pending.len());
            runs.extend(fi.present.iter().map(|(g, l)| (g, lists(l).0, lists(l).1)));
            let mut value_id = None;
            if let Some(v) = value {
                if let Some(entry) = fi.eq.get(v) {
                    value_id = Some(entry.id);
                    runs.extend(entry.lists.iter().map(|(g, l)| (g, lists(l).0, lists(l).1)));
                }
                if let Some(x) = v.number() {
                    for (i, &op) in COMPARISONS.iter().enumerate() {
                        for (g, th) in fi.cmp[i].iter().filter(|(g, _)| wanted(*g)) {
                            let (run, records, more) = th.satisfied(op, x);
                            runs.push((g, run, records));
                            if g == PIVOT && report == Report::Matches {
                                pivots.extend(
                                    more.map(|(s, r)| (s, r.expect("a pivot has its record"))),
                                );
                            } else {
                                pending.extend(more.map(|(s, _)| (g, s)));
                            }
                        }
                    }
                }
            }
            scratch.seen[fi.id as usize] = Seen::new(value, value_id);
            let counted = |g: u32| g < REST;
            let hit = runs[before.0..]
                .iter()
                .any(|(g, r, _)| counted(*g) && !r.is_empty())
                || pending[before.1..].iter().any(|(g, _)| counted(*g));
            live_fields += u32::from(hit);
        }
        // k-index pruning: a slot needing more fields than hit anything cannot match. The
        // pivoted groups are above any number of fields: matches verify them instead.
        let max_group = match report {
            Report::Matches => live_fields,
            Report::Hits => u32::MAX,
        };
        if report == Report::Matches {
            let need = |s: Slot| u32::from(self.need[s as usize]);
            for (_, run, records) in runs.iter().filter(|(g, ..)| *g == PIVOT) {
                self.checks
                    .verify_each(run, records, &scratch.seen, |s| visit(s, need(s)));
            }
            for &(s, r) in &pivots {
                if r.verify(s, &scratch.seen, &self.checks) {
                    visit(s, need(s));
                }
            }
        }
        for id in ids {
            scratch.seen[id as usize] = Seen::ABSENT;
        }
        runs.retain(|(g, ..)| *g <= max_group);
        pending.retain(|(g, _)| *g <= max_group);
        let singles: SmallVec<[Slot; 256]> = pending.iter().map(|(_, s)| *s).collect();
        let lists = runs
            .iter()
            .map(|(_, r, _)| *r)
            .chain(std::iter::once(&singles[..]));
        self.count(scratch, lists, report, visit);
    }

    /// Counts the slots of `lists` and visits those `report` asks for.
    fn count<'a>(
        &self,
        scratch: &mut Scratch,
        lists: impl Iterator<Item = &'a [Slot]> + Clone,
        report: Report,
        visit: &mut impl FnMut(Slot, u32),
    ) {
        let total: usize = lists.clone().map(<[Slot]>::len).sum();
        if total == 0 {
            return;
        }
        if scratch.counts.len() < self.need.len() {
            scratch.counts.resize(self.need.len(), 0);
        }
        let counts = &mut scratch.counts[..self.need.len()];
        if total * DENSE_RATIO > self.need.len() {
            for run in lists {
                for &s in run {
                    counts[s as usize] += 1;
                }
            }
            sweep(counts, &self.need, report, visit);
            counts.fill(0);
        } else {
            // Each slot is recorded at its first hit without a branch: it is always written
            // and kept only if its count was zero.
            let touched = &mut scratch.touched;
            if touched.len() < total {
                touched.resize(total, 0);
            }
            let mut n = 0;
            for run in lists {
                for &s in run {
                    let c = &mut counts[s as usize];
                    touched[n] = s;
                    n += usize::from(*c == 0);
                    *c += 1;
                }
            }
            for &s in &touched[..n] {
                let c = std::mem::take(&mut counts[s as usize]);
                let wanted = match report {
                    Report::Matches => c >= self.need[s as usize],
                    Report::Hits => true,
                };
                if wanted {
                    visit(s, u32::from(c));
                }
            }
        }
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
