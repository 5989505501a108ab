//! A message's fields, as criteria see them.

use std::fmt;

use arrayvec::ArrayString;

use crate::fields::value::Value;

/// The fields of one message: distinct names, each with a value or, for a value of a kind no
/// criterion can name (a Python `None`, bytes, a list...), `None`: such a field is present
/// (it meets `Present`) but equals nothing and compares with nothing.
///
/// The names share one buffer, held in the message itself while they take up to 32 bytes: a
/// message of a few short names costs one allocation (its fields), one of long names two,
/// however many fields it has.
#[derive(Clone, Default, PartialEq)]
pub struct Message {
    /// Every field's name, one after the other.
    names: Names,
    /// Per field, where its name ends in `names` (it starts where the one before ends), and
    /// its value.
    fields: Vec<(usize, Option<Value>)>,
}

impl Message {
    /// A message without fields.
    pub fn new() -> Self {
        Message::default()
    }

    /// Sets `field` to `value`, replacing an earlier value of the same field.
    pub fn set(&mut self, field: &str, value: Option<Value>) {
        match self.position(field) {
            Some(at) => self.fields[at].1 = value,
            None => self.push(field, value),
        }
    }

    /// A message without fields, with room for `fields` of them.
    pub fn with_capacity(fields: usize) -> Self {
        Message {
            names: Names::default(),
            fields: Vec::with_capacity(fields),
        }
    }

    /// Adds `field`, which the caller knows is not set yet (a key of a mapping whose keys are
    /// distinct), without looking for it: [`set`](Self::set) compares it with every field
    /// before, a quadratic cost on a message of many fields. A name given twice is kept twice,
    /// and lookups find its first value.
    #[inline]
    pub fn push_new(&mut self, field: &str, value: Option<Value>) {
        debug_assert!(self.get(field).is_none(), "{field:?} is set already");
        self.push(field, value);
    }

    /// This message with `field` set to `value`.
    #[must_use]
    pub fn with(mut self, field: &str, value: impl Into<Value>) -> Self {
        self.set(field, Some(value.into()));
        self
    }

    /// This message with `field` present but of a value no criterion can name.
    #[must_use]
    pub fn with_opaque(mut self, field: &str) -> Self {
        self.set(field, None);
        self
    }

    /// The field's value: `None` if absent, `Some(None)` if present but opaque.
    #[inline]
    pub fn get(&self, field: &str) -> Option<Option<&Value>> {
        self.position(field).map(|at| self.fields[at].1.as_ref())
    }

    /// Every field, in the order set.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = (&str, Option<&Value>)> {
        let (names, mut start) = (self.names.as_str(), 0);
        self.fields.iter().map(move |(end, v)| {
            let name = &names[start..*end];
            start = *end;
            (name, v.as_ref())
        })
    }

    /// The index of the first field named `field`.
    #[inline]
    fn position(&self, field: &str) -> Option<usize> {
        let (names, field) = (self.names.as_str().as_bytes(), field.as_bytes());
        let mut start = 0;
        for (at, &(end, _)) in self.fields.iter().enumerate() {
            if same(&names[start..end], field) {
                return Some(at);
            }
            start = end;
        }
        None
    }

    /// Adds `field` after the others.
    #[inline]
    fn push(&mut self, field: &str, value: Option<Value>) {
        self.names.push_str(field);
        self.fields.push((self.names.as_str().len(), value));
    }

    /// How many fields.
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// Whether there are no fields.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }
}

/// The bytes of names a message holds in itself.
const INLINE: usize = 32;

/// A message's field names, one after the other: in place up to [`INLINE`] bytes, then on the
/// heap.
#[derive(Clone)]
enum Names {
    Inline(ArrayString<INLINE>),
    Heap(String),
}

impl Names {
    #[inline]
    fn as_str(&self) -> &str {
        match self {
            Names::Inline(names) => names,
            Names::Heap(names) => names,
        }
    }

    #[inline]
    fn push_str(&mut self, name: &str) {
        match self {
            Names::Inline(names) => {
                if names.try_push_str(name).is_err() {
                    let mut heap = String::with_capacity(2 * (names.len() + name.len()));
                    heap.push_str(names);
                    heap.push_str(name);
                    *self = Names::Heap(heap);
                }
            }
            Names::Heap(names) => names.push_str(name),
        }
    }
}

impl Default for Names {
    fn default() -> Self {
        Names::Inline(ArrayString::new())
    }
}

impl PartialEq for Names {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Whether two field names are equal: a loop for short ones (a call to `memcmp` costs more
/// than comparing a name of a few bytes).
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len()
        && if a.len() <= 16 {
            a.iter().zip(b).all(|(x, y)| x == y)
        } else {
            a == b
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_any_length_read_back_in_order() {
        let mut m = Message::with_capacity(1);
        m.push_new("currency", Some(Value::from("EUR")));
        m.push_new("", Some(Value::from(1)));
        m.push_new("a-much-longer-name-than-eight-bytes", None);
        m.set("x", Some(Value::from(true)));
        m.set("", Some(Value::from(2)));
        let fields: Vec<_> = m.iter().map(|(n, v)| (n.to_owned(), v.cloned())).collect();
        assert_eq!(
            fields,
            [
                ("currency".to_owned(), Some(Value::from("EUR"))),
                (String::new(), Some(Value::from(2))),
                ("a-much-longer-name-than-eight-bytes".to_owned(), None),
                ("x".to_owned(), Some(Value::from(true))),
            ]
        );
        assert_eq!(m.get("currency"), Some(Some(&Value::from("EUR"))));
        assert_eq!(m.get("a-much-longer-name-than-eight-bytes"), Some(None));
        assert_eq!(m.get("currenc"), None);
        assert_eq!(m.get("y"), None);
        assert_eq!(
            format!("{m:?}"),
            r#"{"currency": Some("EUR"), "": Some(2), "a-much-longer-name-than-eight-bytes": None, "x": Some(true)}"#
        );

        let mut short = Message::new();
        short.push_new("b", Some(Value::from(3)));
        assert_eq!(
            short.iter().collect::<Vec<_>>(),
            [("b", Some(&Value::from(3)))]
        );
        assert_eq!(short, Message::new().with("b", 3));
        assert_ne!(short, m);
    }
}
