//! Field values: strings, booleans and numbers, with numbers compared exactly.
//!
//! A [`Number`] is an integer from `-2^63` to `2^64 - 1` (the values of `i64` and `u64`
//! together, as message headers carry them) or an `f64`, normalised so that each numeric value
//! has exactly one representation: a float with an integral value inside that range is stored
//! as that integer (so `1` and `1.0` are the same number and hash alike), `-0.0` is `0`, and
//! NaN is refused. Comparing an integer with a float is exact, with no rounding through `f64`:
//! `2^53 + 1` is greater than `2.0^53`.
//!
//! Booleans are their own kind: `true` is not the number `1`. A headers-exchange user who
//! sends `urgent: true` does not mean `urgent: 1`, so the two never match each other.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

use arrayvec::ArrayString;

use crate::error::{Error, Result};

/// 2^63 as an `f64`: the first float above every `i64`.
const I64_END: f64 = 9_223_372_036_854_775_808.0;

/// 2^64 as an `f64`: the first float above every `u64`.
const U64_END: f64 = 18_446_744_073_709_551_616.0;

/// A number compared exactly: integers and floats with the same value are equal.
#[derive(Clone, Copy)]
pub struct Number(Repr);

#[derive(Clone, Copy)]
enum Repr {
    Int(i64),
    /// Above `i64::MAX` only: every integer of the `i64` range is an [`Repr::Int`].
    UInt(u64),
    /// Never NaN, never an integral value from `-2^63` to `2^64 - 1`.
    Float(f64),
}

impl Number {
    /// The integer `v`.
    pub fn int(v: i64) -> Self {
        Number(Repr::Int(v))
    }

    /// The integer `v`.
    pub fn uint(v: u64) -> Self {
        i64::try_from(v).map_or(Number(Repr::UInt(v)), Number::int)
    }

    /// The float `v`; `None` for NaN, which equals nothing.
    pub fn float(v: f64) -> Option<Self> {
        if v.is_nan() {
            return None;
        }
        // The range checks make the casts exact: `v` is integral and inside `i64` or `u64`.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        if v.fract() == 0.0 {
            if (-I64_END..I64_END).contains(&v) {
                return Some(Number(Repr::Int(v as i64)));
            }
            if (I64_END..U64_END).contains(&v) {
                return Some(Number(Repr::UInt(v as u64)));
            }
        }
        Some(Number(Repr::Float(v)))
    }

    /// The value as an integer, if it is one inside the `i64` range.
    pub fn as_i64(self) -> Option<i64> {
        match self.0 {
            Repr::Int(i) => Some(i),
            Repr::UInt(_) | Repr::Float(_) => None,
        }
    }

    /// The value as an integer, if it is one inside the `u64` range.
    pub fn as_u64(self) -> Option<u64> {
        match self.0 {
            Repr::Int(i) => u64::try_from(i).ok(),
            Repr::UInt(u) => Some(u),
            Repr::Float(_) => None,
        }
    }

    /// The value as an `f64` (rounded for integers beyond 2^53).
    #[allow(clippy::cast_precision_loss)]
    pub fn as_f64(self) -> f64 {
        match self.0 {
            Repr::Int(i) => i as f64,
            Repr::UInt(u) => u as f64,
            Repr::Float(f) => f,
        }
    }
}

/// Exact order of an integer and a float that is not an integral value inside `i64`.
fn cmp_int_float(i: i64, f: f64) -> Ordering {
    if f >= I64_END {
        return Ordering::Less;
    }
    if f < -I64_END {
        return Ordering::Greater;
    }
    // In range and not integral (or ±inf, handled above): `floor` is exact as an i64, and
    // `f` lies strictly between `floor` and `floor + 1`.
    #[allow(clippy::cast_possible_truncation)]
    let floor = f.floor() as i64;
    if i <= floor {
        Ordering::Less
    } else {
        Ordering::Greater
    }
}

/// Exact order of an integer above the `i64` range and a float: the float is not integral
/// below 2^64, and every float from 2^63 up is integral, so it is below 2^63 or from 2^64 up.
fn cmp_uint_float(f: f64) -> Ordering {
    if f >= U64_END {
        Ordering::Less
    } else {
        Ordering::Greater
    }
}

impl Ord for Number {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.0, other.0) {
            (Repr::Int(a), Repr::Int(b)) => a.cmp(&b),
            (Repr::UInt(a), Repr::UInt(b)) => a.cmp(&b),
            (Repr::Float(a), Repr::Float(b)) => a.partial_cmp(&b).expect("no NaN is stored"),
            (Repr::Int(_), Repr::UInt(_)) => Ordering::Less,
            (Repr::UInt(_), Repr::Int(_)) => Ordering::Greater,
            (Repr::Int(a), Repr::Float(b)) => cmp_int_float(a, b),
            (Repr::Float(a), Repr::Int(b)) => cmp_int_float(b, a).reverse(),
            (Repr::UInt(_), Repr::Float(b)) => cmp_uint_float(b),
            (Repr::Float(a), Repr::UInt(_)) => cmp_uint_float(a).reverse(),
        }
    }
}

impl PartialOrd for Number {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Number {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Number {}

impl Hash for Number {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // Normalisation makes equal numbers share one representation.
        match self.0 {
            Repr::Int(i) => {
                state.write_u8(0);
                i.hash(state);
            }
            Repr::Float(f) => {
                state.write_u8(1);
                f.to_bits().hash(state);
            }
            Repr::UInt(u) => {
                state.write_u8(2);
                u.hash(state);
            }
        }
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Repr::Int(i) => write!(f, "{i}"),
            Repr::UInt(u) => write!(f, "{u}"),
            Repr::Float(x) => write!(f, "{x:?}"),
        }
    }
}

impl From<i64> for Number {
    fn from(v: i64) -> Self {
        Number::int(v)
    }
}

/// A field value: what a message carries and what an equality criterion names.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Value {
    /// A boolean: its own kind, never equal to a number.
    Bool(bool),
    /// A number, compared exactly.
    Num(Number),
    /// A string, compared byte for byte.
    Str(Text),
}

impl Value {
    /// A float value, refusing NaN (which could never be matched).
    pub fn float(v: f64) -> Result<Self> {
        Number::float(v)
            .map(Value::Num)
            .ok_or_else(|| Error::InvalidCriteria("NaN is not a value: it equals nothing".into()))
    }

    /// The number, if this is one.
    pub fn number(&self) -> Option<Number> {
        match self {
            Value::Num(n) => Some(*n),
            Value::Bool(_) | Value::Str(_) => None,
        }
    }

    /// The kind's name, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Bool(_) => "bool",
            Value::Num(_) => "number",
            Value::Str(_) => "str",
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Num(n) => write!(f, "{n}"),
            Value::Str(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Num(Number::int(v))
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Str(Text::from(v))
    }
}

/// The text of a [`Value::Str`]: held in place up to 14 bytes (no allocation, and a [`Value`]
/// stays 24 bytes), on the heap beyond. Compared, ordered and hashed as its `str`.
#[derive(Clone)]
pub struct Text(TextRepr);

/// The bytes of text a [`Text`] holds in itself: the most that keeps a [`Value`] 24 bytes.
const TEXT_INLINE: usize = 14;

#[derive(Clone)]
enum TextRepr {
    Inline(ArrayString<TEXT_INLINE>),
    Heap(Box<str>),
}

impl Text {
    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            TextRepr::Inline(text) => text,
            TextRepr::Heap(text) => text,
        }
    }
}

impl From<&str> for Text {
    #[inline]
    fn from(text: &str) -> Self {
        Text(match ArrayString::from(text) {
            Ok(inline) => TextRepr::Inline(inline),
            Err(_) => TextRepr::Heap(text.into()),
        })
    }
}

impl Deref for Text {
    type Target = str;

    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Text {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Text {}

impl PartialOrd for Text {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Text {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for Text {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl From<Number> for Value {
    fn from(v: Number) -> Self {
        Value::Num(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(v: f64) -> Number {
        Number::float(v).unwrap()
    }

    #[test]
    fn integral_floats_are_integers() {
        assert_eq!(f(1.0), Number::int(1));
        assert_eq!(f(-0.0), Number::int(0));
        assert_eq!(f(1.0).as_i64(), Some(1));
        assert!(Number::float(f64::NAN).is_none());
        assert!(Value::float(f64::NAN).is_err());
        let mut set = std::collections::HashSet::new();
        set.insert(Value::from(1));
        assert!(set.contains(&Value::Num(f(1.0))));
        assert_ne!(Value::from(1), Value::from(true));
        assert_ne!(Value::from(1), Value::from("1"));
    }

    #[test]
    fn int_float_order_is_exact() {
        let two53 = 1_i64 << 53;
        assert!(Number::int(two53 + 1) > f(9_007_199_254_740_992.0));
        assert!(Number::int(i64::MAX) < f(I64_END));
        assert!(Number::int(i64::MIN) == f(-I64_END));
        assert!(Number::int(i64::MIN) > f(-I64_END * 2.0));
        assert!(Number::int(2) > f(1.5));
        assert!(Number::int(1) < f(1.5));
        assert!(Number::int(-2) < f(-1.5));
        assert!(Number::int(-1) > f(-1.5));
        assert!(f(f64::INFINITY) > Number::int(i64::MAX));
        assert!(f(f64::NEG_INFINITY) < Number::int(i64::MIN));
        assert!(f(0.5) < f(0.75));
    }

    #[test]
    fn integers_past_i64_are_exact_and_ordered_with_every_number() {
        let top = 1_u64 << 63;
        assert_eq!(Number::uint(5), Number::int(5));
        assert_eq!(Number::uint(5).as_i64(), Some(5));
        assert_eq!(Number::uint(top).as_i64(), None);
        assert_eq!(Number::uint(top).as_u64(), Some(top));
        assert_eq!(Number::int(-1).as_u64(), None);
        assert_eq!(f(I64_END), Number::uint(top));
        assert_eq!(f(I64_END).as_u64(), Some(top));
        assert!(Number::float(U64_END).unwrap().as_u64().is_none());
        assert!(Number::uint(top) > Number::int(i64::MAX));
        assert!(Number::uint(top + 1) > Number::uint(top));
        assert!(Number::uint(top + 1) > f(I64_END));
        assert!(Number::uint(u64::MAX) < f(U64_END));
        assert!(Number::uint(u64::MAX) > f(1e19));
        assert!(Number::uint(top) > f(1.5));
        assert!(Number::uint(top) > f(f64::NEG_INFINITY));
        assert!(Number::uint(top) < f(f64::INFINITY));
        let mut set = std::collections::HashSet::new();
        set.insert(Value::Num(Number::uint(u64::MAX - 1)));
        assert!(set.contains(&Value::Num(Number::uint(u64::MAX - 1))));
        assert!(!set.contains(&Value::Num(Number::uint(u64::MAX))));
        assert_eq!(Number::uint(u64::MAX).to_string(), u64::MAX.to_string());
        // Sorting mixes the three kinds in the order of their values.
        let mut all = vec![
            f(U64_END),
            Number::uint(top),
            f(-1.5),
            Number::int(i64::MAX),
            f(0.5),
        ];
        all.sort();
        assert_eq!(
            all,
            [
                f(-1.5),
                f(0.5),
                Number::int(i64::MAX),
                Number::uint(top),
                f(U64_END)
            ]
        );
    }

    #[test]
    fn texts_in_place_and_on_the_heap_compare_order_and_hash_as_their_str() {
        let texts = [
            String::new(),
            "EUR".to_owned(),
            "a".repeat(14),
            "a".repeat(15),
            "é".repeat(7),
            format!("{}é", "b".repeat(13)),
            "z".repeat(40),
        ];
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let mut values: Vec<Value> = texts.iter().rev().map(|&t| Value::from(t)).collect();
        values.sort();
        let mut sorted = texts.clone();
        sorted.sort_unstable();
        let back: Vec<&str> = values
            .iter()
            .map(|v| match v {
                Value::Str(t) => t.as_str(),
                other => panic!("not a text: {other:?}"),
            })
            .collect();
        assert_eq!(back, sorted);
        let set: std::collections::HashSet<Value> = values.iter().cloned().collect();
        for t in &texts {
            assert!(set.contains(&Value::from(*t)), "{t:?}");
            assert_eq!(&*Text::from(*t), *t);
            assert_eq!(format!("{:?}", Value::from(*t)), format!("{t:?}"));
        }
        assert!(!set.contains(&Value::from("a".repeat(16).as_str())));
        assert_ne!(
            Value::from("a".repeat(14).as_str()),
            Value::from("a".repeat(15).as_str())
        );
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_value_takes_three_words_with_its_text_in_place() {
        assert_eq!(std::mem::size_of::<Value>(), 24);
        assert_eq!(std::mem::size_of::<Option<Value>>(), 24);
    }
}
