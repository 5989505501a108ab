//! A message's fields, as criteria see them.

use crate::fields::value::Value;

/// The fields of one message: distinct names, each with a value or, for a value of a kind no
/// criterion can name (a Python `None`, bytes, a list...), `None`: such a field is present
/// (it meets `Present`) but equals nothing and compares with nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Message {
    fields: Vec<(Box<str>, Option<Value>)>,
}

impl Message {
    /// A message without fields.
    pub fn new() -> Self {
        Message::default()
    }

    /// Sets `field` to `value`, replacing an earlier value of the same field.
    pub fn set(&mut self, field: &str, value: Option<Value>) {
        match self.fields.iter_mut().find(|(f, _)| &**f == field) {
            Some(slot) => slot.1 = value,
            None => self.fields.push((field.into(), value)),
        }
    }

    /// A message without fields, with room for `fields` of them.
    pub fn with_capacity(fields: usize) -> Self {
        Message {
            fields: Vec::with_capacity(fields),
        }
    }

    /// Adds `field`, which the caller knows is not set yet (a key of a mapping whose keys are
    /// distinct), without looking for it: [`set`](Self::set) compares it with every field
    /// before, a quadratic cost on a message of many fields. A name given twice is kept twice,
    /// and lookups find its first value.
    pub fn push_new(&mut self, field: &str, value: Option<Value>) {
        debug_assert!(self.get(field).is_none(), "{field:?} is set already");
        self.fields.push((field.into(), value));
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
    pub fn get(&self, field: &str) -> Option<Option<&Value>> {
        self.fields
            .iter()
            .find(|(f, _)| &**f == field)
            .map(|(_, v)| v.as_ref())
    }

    /// Every field, in the order set.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Option<&Value>)> {
        self.fields.iter().map(|(f, v)| (&**f, v.as_ref()))
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
