//! The dense numbers the field index hands out: fields, values and subscription slots.

/// A dense number for a field, reused after the field goes.
pub type FieldId = u32;

/// A number for one (field, value) that some criterion names, reused after the last goes.
pub type ValueId = u32;

/// Hands out dense ids and takes them back.
#[derive(Debug, Default)]
pub struct Ids {
    next: u32,
    free: Vec<u32>,
}

impl Ids {
    /// A free id.
    pub fn take(&mut self) -> u32 {
        self.free.pop().unwrap_or_else(|| {
            self.next += 1;
            self.next - 1
        })
    }

    /// Gives `id` back.
    pub fn give(&mut self, id: u32) {
        self.free.push(id);
    }

    /// One more than the highest id handed out.
    pub fn end(&self) -> u32 {
        self.next
    }
}

/// A subscription's index in the counter array.
pub type Slot = u32;
