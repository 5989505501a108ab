//! Criteria on message fields, their modes, and [`Filter`]: a validated, canonical set of
//! criteria with a mode, which also evaluates itself directly against a message.

use std::fmt;

use crate::error::{Error, Result};
use crate::fields::message::Message;
use crate::fields::value::{Number, Value};
use crate::hint::prefetch;

/// One criterion on one field.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Criterion {
    /// The field is present, whatever its value.
    Present,
    /// The field equals this value.
    Eq(Value),
    /// The field equals one of these values ("currency = USD or GBP").
    In(Vec<Value>),
    /// The field is a number less than this one.
    Lt(Value),
    /// The field is a number at most this one.
    Le(Value),
    /// The field is a number greater than this one.
    Gt(Value),
    /// The field is a number at least this one.
    Ge(Value),
}

/// How many of a filter's criteria must be met.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Every criterion (AND).
    All,
    /// At least one criterion (OR).
    Any,
    /// At least `k` criteria, `1 <= k <= n`.
    AtLeast(usize),
}

impl Mode {
    /// Parses `"all"` or `"any"`.
    pub fn parse(text: &str) -> Result<Self> {
        match text {
            "all" => Ok(Mode::All),
            "any" => Ok(Mode::Any),
            _ => Err(Error::InvalidCriteria(format!(
                "unknown mode {text:?}: expected \"all\", \"any\" or a number of criteria"
            ))),
        }
    }
}

/// Which comparison a numeric criterion makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Comparison {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl Comparison {
    /// Whether `x` (the message's value) compares as asked to `t` (the threshold).
    pub fn holds(self, x: Number, t: Number) -> bool {
        match self {
            Comparison::Lt => x < t,
            Comparison::Le => x <= t,
            Comparison::Gt => x > t,
            Comparison::Ge => x >= t,
        }
    }

    /// The operator's name, as `tm.lt` and friends spell it.
    pub fn name(self) -> &'static str {
        match self {
            Comparison::Lt => "lt",
            Comparison::Le => "le",
            Comparison::Gt => "gt",
            Comparison::Ge => "ge",
        }
    }
}

impl Criterion {
    /// The comparison and its threshold, for a numeric criterion.
    pub fn comparison(&self) -> Option<(Comparison, Number)> {
        let (op, v) = match self {
            Criterion::Lt(v) => (Comparison::Lt, v),
            Criterion::Le(v) => (Comparison::Le, v),
            Criterion::Gt(v) => (Comparison::Gt, v),
            Criterion::Ge(v) => (Comparison::Ge, v),
            Criterion::Present | Criterion::Eq(_) | Criterion::In(_) => return None,
        };
        v.number().map(|n| (op, n))
    }

    /// The criterion comparing with `op` against `n`.
    pub fn compare(op: Comparison, n: Number) -> Self {
        let v = Value::Num(n);
        match op {
            Comparison::Lt => Criterion::Lt(v),
            Comparison::Le => Criterion::Le(v),
            Comparison::Gt => Criterion::Gt(v),
            Comparison::Ge => Criterion::Ge(v),
        }
    }

    /// Whether a field with `value` meets this criterion; `None` is a field that is present
    /// with a value of a kind no criterion can name.
    pub fn met_by(&self, value: Option<&Value>) -> bool {
        match self {
            Criterion::Present => true,
            Criterion::Eq(v) => value == Some(v),
            Criterion::In(vs) => value.is_some_and(|x| vs.contains(x)),
            _ => {
                let (op, t) = self.comparison().expect("validated as numeric");
                value
                    .and_then(Value::number)
                    .is_some_and(|x| op.holds(x, t))
            }
        }
    }

    /// Checks the criterion and puts it in canonical form (an `In` set sorted, without
    /// repeats; a one-value `In` becomes `Eq`).
    fn canonical(self, field: &str) -> Result<Self> {
        match self {
            Criterion::In(mut vs) => {
                vs.sort_unstable();
                vs.dedup();
                match vs.len() {
                    0 => Err(Error::InvalidCriteria(format!(
                        "field {field:?}: an \"in\" set needs at least one value"
                    ))),
                    1 => Ok(Criterion::Eq(vs.pop().expect("one value"))),
                    _ => Ok(Criterion::In(vs)),
                }
            }
            Criterion::Lt(ref v)
            | Criterion::Le(ref v)
            | Criterion::Gt(ref v)
            | Criterion::Ge(ref v)
                if v.number().is_none() =>
            {
                Err(Error::InvalidCriteria(format!(
                    "field {field:?}: a comparison needs a number, not the {} {v:?}",
                    v.kind()
                )))
            }
            other => Ok(other),
        }
    }
}

/// The most criteria one filter may hold (the index counts hits in 16 bits).
pub const MAX_CRITERIA: usize = 65_534;

/// A validated set of criteria with a mode: what a content subscription asks of a message.
///
/// Canonical: criteria are sorted, `In` sets sorted and deduplicated, and the mode is
/// normalised by its threshold (`AtLeast(n)` is `All`, `AtLeast(1)` is `Any`, and with one
/// criterion every mode is `All`), so two filters that accept the same messages by
/// construction compare equal and an identical subscription is recognised as such.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Filter {
    criteria: Box<[(Box<str>, Criterion)]>,
    mode: Mode,
}

impl Filter {
    /// Validates `criteria` under `mode`. Errors: no criteria, an empty `In` set, a
    /// comparison with a non-number, `k` outside `1..=n`.
    pub fn new(criteria: Vec<(Box<str>, Criterion)>, mode: Mode) -> Result<Self> {
        if criteria.is_empty() {
            return Err(Error::InvalidCriteria(
                "criteria must name at least one field".into(),
            ));
        }
        if criteria.len() > MAX_CRITERIA {
            return Err(Error::InvalidCriteria(format!(
                "{} criteria in one subscription: at most {MAX_CRITERIA}",
                criteria.len()
            )));
        }
        let mut criteria = criteria
            .into_iter()
            .map(|(field, c)| {
                let c = c.canonical(&field)?;
                Ok((field, c))
            })
            .collect::<Result<Vec<_>>>()?;
        criteria.sort_unstable();
        let n = criteria.len();
        let threshold = match mode {
            Mode::All => n,
            Mode::Any => 1,
            Mode::AtLeast(k) if (1..=n).contains(&k) => k,
            Mode::AtLeast(k) => {
                return Err(Error::InvalidCriteria(format!(
                    "mode asks for at least {k} of {n} criteria: k must be between 1 and {n}"
                )))
            }
        };
        let mode = if threshold == n {
            Mode::All
        } else if threshold == 1 {
            Mode::Any
        } else {
            Mode::AtLeast(threshold)
        };
        Ok(Filter {
            criteria: criteria.into_boxed_slice(),
            mode,
        })
    }

    /// The criteria, in canonical order.
    pub fn criteria(&self) -> &[(Box<str>, Criterion)] {
        &self.criteria
    }

    /// The mode, normalised.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// How many criteria must be met.
    pub fn threshold(&self) -> usize {
        match self.mode {
            Mode::All => self.criteria.len(),
            Mode::Any => 1,
            Mode::AtLeast(k) => k,
        }
    }

    /// The fewest distinct message fields that can meet the threshold: each field meets at
    /// most the criteria that name it. With one criterion per field this is the threshold.
    pub fn min_fields(&self) -> usize {
        let mut per_field: Vec<usize> = Vec::new();
        for (i, (field, _)) in self.criteria.iter().enumerate() {
            if i > 0 && self.criteria[i - 1].0 == *field {
                *per_field.last_mut().expect("pushed for the first") += 1;
            } else {
                per_field.push(1);
            }
        }
        per_field.sort_unstable_by(|a, b| b.cmp(a));
        let mut met = 0;
        for (fields, count) in per_field.iter().enumerate() {
            met += count;
            if met >= self.threshold() {
                return fields + 1;
            }
        }
        unreachable!("the threshold is at most the number of criteria")
    }

    /// Asks for the criteria's first cache line without waiting (a caller about to evaluate
    /// many filters: [`crate::fields::filtered`]).
    #[inline]
    pub(crate) fn prefetch(&self) {
        prefetch(self.criteria.as_ptr().cast());
    }

    /// How many criteria `message` meets, evaluated directly (no index).
    pub fn hits(&self, message: &Message) -> usize {
        self.criteria
            .iter()
            .filter(|(field, c)| message.get(field).is_some_and(|v| c.met_by(v)))
            .count()
    }

    /// Whether `message` meets the threshold.
    pub fn matches(&self, message: &Message) -> bool {
        self.hits(message) >= self.threshold()
    }
}

impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} of {{", self.mode)?;
        for (i, (field, c)) in self.criteria.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{field:?}: {c:?}")?;
        }
        f.write_str("}")
    }
}
