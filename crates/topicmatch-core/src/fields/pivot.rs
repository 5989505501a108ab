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

use crate::fields::criteria::Criterion;
use crate::fields::field::FieldId;
use crate::fields::value::Value;

/// Group of a pivoted subscription's pivot criterion.
pub const PIVOT: u32 = u32::MAX;

/// Group of a pivoted subscription's other criteria.
pub const REST: u32 = u32::MAX - 1;

/// In the per-lookup table of where each field sits in the message: the field is absent.
pub const ABSENT: u32 = u32::MAX;

/// A pivoted subscription's criteria other than its pivot, by field id.
pub type Rest = Box<[(FieldId, Criterion)]>;

/// Whether the message meets every criterion of `rest`: `at[field]` is where the field sits in
/// `values` ([`ABSENT`] if the message lacks it), and `values` holds the message's values
/// (`None` for a value of a kind no criterion can name).
pub fn verify(rest: &[(FieldId, Criterion)], at: &[u32], values: &[Option<&Value>]) -> bool {
    rest.iter().all(|(field, c)| match at[*field as usize] {
        ABSENT => false,
        i => c.met_by(values[i as usize]),
    })
}
