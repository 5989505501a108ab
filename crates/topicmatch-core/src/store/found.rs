//! [`Found`]: the topics and values a query returned, the topics' texts in one buffer.

/// Topics and their values, in the order a query returned them. The texts share one buffer,
/// so collecting a million matches allocates a few times, not a million.
#[derive(Debug, Clone)]
pub struct Found<V> {
    text: String,
    /// Topic `i` is `text[ends[i - 1]..ends[i]]` (from 0 for the first).
    ends: Vec<usize>,
    values: Vec<V>,
}

impl<V> Default for Found<V> {
    fn default() -> Self {
        Found {
            text: String::new(),
            ends: Vec::new(),
            values: Vec::new(),
        }
    }
}

impl<V> Found<V> {
    /// An empty buffer.
    pub fn new() -> Self {
        Found::default()
    }

    /// How many topics.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Empties the buffer, keeping its memory.
    pub fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
        self.values.clear();
    }

    /// Appends one topic and its value.
    pub fn push(&mut self, topic: &str, value: V) {
        self.text.push_str(topic);
        self.ends.push(self.text.len());
        self.values.push(value);
    }

    /// Topic `i`.
    pub fn topic(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }

    /// The value of topic `i`.
    pub fn value(&self, i: usize) -> &V {
        &self.values[i]
    }

    /// The last topic, if any.
    pub fn last_topic(&self) -> Option<&str> {
        self.len().checked_sub(1).map(|i| self.topic(i))
    }

    /// Every (topic, value), in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &V)> + '_ {
        (0..self.len()).map(|i| (self.topic(i), &self.values[i]))
    }

    /// The (topic, value) pairs as owned values.
    pub fn into_pairs(self) -> Vec<(String, V)> {
        let mut start = 0;
        self.ends
            .iter()
            .zip(self.values)
            .map(|(&end, value)| {
                let topic = self.text[start..end].to_owned();
                start = end;
                (topic, value)
            })
            .collect()
    }
}
