//! Pivoted subscriptions: an "all" subscription can only match a message that meets its most
//! selective criterion, so that criterion alone (its pivot) leads a lookup to it, and the
//! lookup checks the others directly instead of counting them (the counting-versus-pivot
//! trade-off of Yan and Garcia-Molina's index family: a subscription pays for one posting hit,
//! not one counter increment per criterion met).
//!
//! The pivot's posting sits in group [`PIVOT`], the other criteria's in group [`REST`]: a
//! lookup of matches skips both groups when counting (they are above any number of message
//! fields) and verifies each slot a `PIVOT` posting gives; a lookup of hit counts counts every
//! group, so it still sees every criterion met.
//!
//! The other criteria are kept as [`Check`]s, values replaced by their [`ValueId`], with no
//! pointer to follow and no string to compare: up to three presence and equality checks
//! inline in the slot's record ([`Checks`]), compared as masked integers without a branch,
//! and the rest in one flat array.

use crate::fields::criteria::Comparison;
use crate::fields::ids::{FieldId, Slot, ValueId};
use crate::fields::value::{Number, Value};

/// Group of a pivoted subscription's pivot criterion.
pub const PIVOT: u32 = u32::MAX;

/// Group of a pivoted subscription's other criteria.
pub const REST: u32 = u32::MAX - 1;

/// The value id of a field that is absent or has a value no criterion names.
const NO_VALUE: ValueId = ValueId::MAX;

/// One criterion to verify, on a field given by id.
#[derive(Debug, Clone, Copy)]
pub enum Check {
    /// The field is present.
    Present(FieldId),
    /// The field has the value with this id.
    Eq(FieldId, ValueId),
    /// The field has one of the values of the next `n` entries, each an [`Check::Of`].
    In(FieldId, u32),
    /// One value of an [`Check::In`].
    Of(ValueId),
    /// The field is a number comparing as asked with an integer threshold.
    CmpInt(FieldId, Comparison, i64),
    /// The field is a number comparing as asked with an integer threshold above `i64::MAX`.
    CmpUInt(FieldId, Comparison, u64),
    /// The field is a number comparing as asked with a threshold that is not an integer
    /// (kept as `f64` rather than [`Number`], which keeps a check in 16 bytes).
    CmpFloat(FieldId, Comparison, f64),
}

/// What a lookup knows of one field of the message, by field id.
#[derive(Debug, Clone, Copy)]
pub struct Seen {
    /// `0` for an absent field, else `1 | value << 1` with the value's id ([`NO_VALUE`] for a
    /// value no criterion names), truncated to 31 bits: what a [`Simple`] check masks and
    /// compares ([`Simple::eq`] is only made for ids below 2^31 - 1).
    key: u32,
    value: ValueId,
    number: Option<Number>,
}

impl Seen {
    /// A field the message lacks.
    pub const ABSENT: Seen = Seen {
        key: 0,
        value: NO_VALUE,
        number: None,
    };

    /// A field with `value` (`None` for a value of a kind no criterion names), whose id is
    /// `id` if some criterion names it.
    pub fn new(value: Option<&Value>, id: Option<ValueId>) -> Self {
        let id = id.unwrap_or(NO_VALUE);
        Seen {
            key: 1 | (id << 1),
            value: id,
            number: value.and_then(Value::number),
        }
    }

    fn present(self) -> bool {
        self.key & 1 == 1
    }

    fn value(self) -> ValueId {
        self.value
    }
}

/// A presence or equality check verified without a branch: met when the field's
/// [`Seen::key`] masked with `mask` is `want`. The default (mask and want zero) is always met,
/// which pads a record's inline checks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Simple {
    field: FieldId,
    mask: u32,
    want: u32,
}

impl Simple {
    fn present(f: FieldId) -> Self {
        Simple {
            field: f,
            mask: 1,
            want: 1,
        }
    }

    /// Equality with value `v`, if its id fits the key's 31 bits.
    fn eq(f: FieldId, v: ValueId) -> Option<Self> {
        (v < NO_VALUE >> 1).then_some(Simple {
            field: f,
            mask: u32::MAX,
            want: 1 | (v << 1),
        })
    }
}

/// Simple checks kept inline in a slot's record.
const INLINE: usize = 3;

/// What verifying a pivoted slot reads first, kept inline in its pivot's posting list so
/// that the lookup scanning that list reads it in sequence: up to [`INLINE`] simple checks,
/// evaluated together without branches, and whether the slot has other checks (in
/// [`Checks`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Record {
    simple: [Simple; INLINE],
    more: bool,
}

impl Record {
    /// Whether the message `seen` describes meets the record's simple checks, and the other
    /// checks of `slot` in `checks` if it has any.
    #[inline]
    pub fn verify(&self, slot: Slot, seen: &[Seen], checks: &Checks) -> bool {
        let mut ok = true;
        for c in &self.simple {
            ok &= seen[c.field as usize].key & c.mask == c.want;
        }
        if self.more && ok {
            let (start, len) = checks.at[slot as usize];
            ok = verify(&checks.all[start as usize..(start + len) as usize], seen);
        }
        ok
    }
}

/// The checks of pivoted slots that do not fit their [`Record`] (comparisons, `in` sets,
/// presence and equality beyond [`INLINE`]), in one flat array.
#[derive(Debug, Default)]
pub struct Checks {
    all: Vec<Check>,
    /// Per slot: where its checks start in `all`, and how many.
    at: Vec<(u32, u32)>,
    /// Entries of `all` no slot refers to any more; compacted away when they are most.
    dead: usize,
}

impl Checks {
    /// Takes the checks `checks` of `slot`, which has none: returns its record, with the
    /// first [`INLINE`] presence and equality checks, and keeps the others.
    pub fn set(&mut self, slot: Slot, checks: &[Check]) -> Record {
        let slot = slot as usize;
        if self.at.len() <= slot {
            self.at.resize(slot + 1, (0, 0));
        }
        debug_assert_eq!(self.at[slot].1, 0, "a slot's checks are cleared first");
        if self.dead > 1024 && self.dead * 2 > self.all.len() {
            self.compact();
        }
        let mut record = Record::default();
        let mut inline = 0;
        let start = self.all.len();
        for &c in checks {
            let simple = match c {
                Check::Present(f) => Some(Simple::present(f)),
                Check::Eq(f, v) => Simple::eq(f, v),
                _ => None,
            };
            match simple {
                Some(simple) if inline < INLINE => {
                    record.simple[inline] = simple;
                    inline += 1;
                }
                _ => self.all.push(c),
            }
        }
        let len = self.all.len() - start;
        record.more = len > 0;
        self.at[slot] = (
            u32::try_from(start).expect("at most 2^32 checks"),
            u32::try_from(len).expect("at most 2^32 checks"),
        );
        record
    }

    /// Drops the checks of `slot`.
    pub fn clear(&mut self, slot: Slot) {
        if let Some(at) = self.at.get_mut(slot as usize) {
            self.dead += at.1 as usize;
            *at = (0, 0);
        }
    }

    fn compact(&mut self) {
        let mut all = Vec::with_capacity(self.all.len() - self.dead);
        for at in &mut self.at {
            let (start, len) = (at.0 as usize, at.1 as usize);
            at.0 = u32::try_from(all.len()).expect("fewer than before");
            all.extend_from_slice(&self.all[start..start + len]);
        }
        self.all = all;
        self.dead = 0;
    }

    /// Calls `pass` for each of `slots`, whose records are `records`, that the message `seen`
    /// describes (indexed by field id) meets.
    ///
    /// The records are read in sequence; the simple checks are combined without branches and
    /// passing slots are appended without one, so the loop runs without mispredictions. Only
    /// a slot with more checks takes the general path.
    pub fn verify_each(
        &self,
        slots: &[Slot],
        records: &[Record],
        seen: &[Seen],
        mut pass: impl FnMut(Slot),
    ) {
        const BATCH: usize = 64;
        let mut passed = [0 as Slot; BATCH];
        for (batch, recs) in slots.chunks(BATCH).zip(records.chunks(BATCH)) {
            let mut n = 0;
            for (&s, r) in batch.iter().zip(recs) {
                passed[n] = s;
                n += usize::from(r.verify(s, seen, self));
            }
            passed[..n].iter().for_each(|&s| pass(s));
        }
    }
}

/// Whether the message `seen` describes meets every one of `checks`.
fn verify(checks: &[Check], seen: &[Seen]) -> bool {
    let mut i = 0;
    while i < checks.len() {
        let met = match checks[i] {
            Check::Present(f) => seen[f as usize].present(),
            Check::Eq(f, v) => seen[f as usize].value() == v,
            Check::In(f, n) => {
                let x = seen[f as usize].value();
                let values = &checks[i + 1..=i + n as usize];
                i += n as usize;
                values.iter().any(|c| matches!(c, Check::Of(v) if *v == x))
            }
            Check::Of(_) => unreachable!("skipped with its In"),
            Check::CmpInt(f, op, t) => compare(seen[f as usize], op, Number::int(t)),
            Check::CmpUInt(f, op, t) => compare(seen[f as usize], op, Number::uint(t)),
            Check::CmpFloat(f, op, t) => {
                let t = Number::float(t).expect("a threshold is never NaN");
                compare(seen[f as usize], op, t)
            }
        };
        if !met {
            return false;
        }
        i += 1;
    }
    true
}

fn compare(seen: Seen, op: Comparison, t: Number) -> bool {
    seen.number.is_some_and(|x| op.holds(x, t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_fits_in_16_bytes() {
        assert_eq!(std::mem::size_of::<Check>(), 16);
    }

    #[test]
    fn float_thresholds_survive_the_round_trip() {
        for t in [0.5, -2.5, 1e300, -1e300, f64::INFINITY, 9.3e18] {
            let n = Number::float(t).unwrap();
            assert!(n.as_i64().is_none(), "{t} is not an integer");
            assert_eq!(Number::float(n.as_f64()), Some(n));
        }
    }
}
