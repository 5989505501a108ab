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
//! The other criteria are kept as [`Check`]s in one flat array ([`Checks`]), values replaced by
//! their [`ValueId`]: verifying a candidate reads one short run of that array and compares
//! integers, with no pointer to follow and no string to compare.

use crate::fields::criteria::{Comparison, Criterion};
use crate::fields::field::{FieldId, FieldIndex, ValueId};
use crate::fields::postings::Slot;
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
    /// The field is a number comparing as asked with a threshold that is not an integer
    /// (kept as `f64` rather than [`Number`], which keeps a check in 16 bytes).
    CmpFloat(FieldId, Comparison, f64),
}

impl Check {
    /// The field id, or for an [`Check::Of`] the value id: a word of the check to load.
    fn key(self) -> u32 {
        match self {
            Check::Present(f)
            | Check::Eq(f, _)
            | Check::In(f, _)
            | Check::Of(f)
            | Check::CmpInt(f, _, _)
            | Check::CmpFloat(f, _, _) => f,
        }
    }
}

/// What a lookup knows of one field of the message, by field id.
#[derive(Debug, Clone, Copy)]
pub struct Seen {
    present: bool,
    value: ValueId,
    number: Option<Number>,
}

impl Seen {
    /// A field the message lacks.
    pub const ABSENT: Seen = Seen {
        present: false,
        value: NO_VALUE,
        number: None,
    };

    /// A field with `value` (`None` for a value of a kind no criterion names), whose id is
    /// `id` if some criterion names it.
    pub fn new(value: Option<&Value>, id: Option<ValueId>) -> Self {
        Seen {
            present: true,
            value: id.unwrap_or(NO_VALUE),
            number: value.and_then(Value::number),
        }
    }
}

/// The criteria to verify of every pivoted slot, in one flat array.
#[derive(Debug, Default)]
pub struct Checks {
    all: Vec<Check>,
    /// Per slot: where its checks start in `all`, and how many.
    at: Vec<(u32, u32)>,
    /// Entries of `all` no slot refers to any more; compacted away when they are most.
    dead: usize,
}

impl Checks {
    /// Appends the checks of `criterion`, on the field `field` indexes, to `out`.
    pub fn of(field: &FieldIndex, criterion: &Criterion, out: &mut Vec<Check>) {
        let id = |v: &Value| field.eq.get(v).expect("a posted value").id;
        let f = field.id;
        match criterion {
            Criterion::Present => out.push(Check::Present(f)),
            Criterion::Eq(v) => out.push(Check::Eq(f, id(v))),
            Criterion::In(vs) => {
                out.push(Check::In(f, u32::try_from(vs.len()).expect("capped")));
                out.extend(vs.iter().map(|v| Check::Of(id(v))));
            }
            _ => {
                let (op, t) = criterion.comparison().expect("validated as numeric");
                out.push(match t.as_i64() {
                    Some(i) => Check::CmpInt(f, op, i),
                    None => Check::CmpFloat(f, op, t.as_f64()),
                });
            }
        }
    }

    /// Gives `slot`, which has none, the checks `checks`.
    pub fn set(&mut self, slot: Slot, checks: &[Check]) {
        let slot = slot as usize;
        if self.at.len() <= slot {
            self.at.resize(slot + 1, (0, 0));
        }
        debug_assert_eq!(self.at[slot].1, 0, "a slot's checks are cleared first");
        if self.dead > 1024 && self.dead * 2 > self.all.len() {
            self.compact();
        }
        let start = u32::try_from(self.all.len()).expect("at most 2^32 checks");
        let len = u32::try_from(checks.len()).expect("at most 2^32 checks");
        self.all.extend_from_slice(checks);
        self.at[slot] = (start, len);
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

    /// Calls `pass` for each of `slots` whose checks the message `seen` describes (indexed by
    /// field id) meets.
    ///
    /// Candidates are scattered over the arrays, so each costs cache misses; they are taken
    /// in batches whose loads are issued together before any is used (independent loads
    /// overlap, where verifying one candidate after the other would wait for each in turn).
    pub fn verify_each(&self, slots: &[Slot], seen: &[Seen], mut pass: impl FnMut(Slot)) {
        const BATCH: usize = 16;
        let mut at = [(0u32, 0u32); BATCH];
        for batch in slots.chunks(BATCH) {
            for (a, &s) in at.iter_mut().zip(batch) {
                *a = self.at[s as usize];
            }
            // Reading each candidate's first check now, its value feeding nothing but
            // `black_box`, issues the batch's loads of `checks` side by side.
            let mut touch = 0u32;
            for &(start, len) in &at[..batch.len()] {
                if len > 0 {
                    touch ^= self.all[start as usize].key();
                }
            }
            std::hint::black_box(touch);
            for (&s, &(start, len)) in batch.iter().zip(&at) {
                if verify(&self.all[start as usize..(start + len) as usize], seen) {
                    pass(s);
                }
            }
        }
    }
}

/// Whether the message `seen` describes meets every one of `checks`.
fn verify(checks: &[Check], seen: &[Seen]) -> bool {
    let mut i = 0;
    while i < checks.len() {
        let met = match checks[i] {
            Check::Present(f) => seen[f as usize].present,
            Check::Eq(f, v) => seen[f as usize].value == v,
            Check::In(f, n) => {
                let x = seen[f as usize].value;
                let values = &checks[i + 1..=i + n as usize];
                i += n as usize;
                values.iter().any(|c| matches!(c, Check::Of(v) if *v == x))
            }
            Check::Of(_) => unreachable!("skipped with its In"),
            Check::CmpInt(f, op, t) => compare(seen[f as usize], op, Number::int(t)),
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
