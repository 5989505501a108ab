//! Published topics: validated and split into words in one pass (`topic::tokens`), without
//! allocating for short topics.

pub(crate) mod rules;
pub(crate) mod tokens;

use smallvec::SmallVec;

use crate::dialect::{Dialect, Limits};
use crate::error::Result;
use rules::check_rules;
pub(crate) use rules::check_size;
use tokens::{Cursor, Step};

/// How many words a topic holds inline before its word list spills to the heap.
pub const INLINE_WORDS: usize = 16;

/// The words of a topic, inline up to [`INLINE_WORDS`].
pub type Words<'a> = SmallVec<[&'a str; INLINE_WORDS]>;

/// Splits `text` on the dialect's separator. The empty text has zero words (the AMQP empty
/// routing key); every other text has one more word than separators.
pub fn split_words(dialect: Dialect, text: &str) -> SplitWords<'_> {
    SplitWords {
        rest: (!text.is_empty()).then_some(text),
        sep: dialect.separator(),
    }
}

/// The iterator of [`split_words`]: a byte scan for the (ASCII) separator, so every cut falls
/// on a character boundary. Cheaper than `str::split` on the short words of a topic.
#[derive(Debug, Clone)]
pub struct SplitWords<'a> {
    /// What is left to split; `None` once the last word was returned.
    rest: Option<&'a str>,
    sep: u8,
}

impl<'a> Iterator for SplitWords<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        let rest = self.rest?;
        if let Some(at) = rest.bytes().position(|b| b == self.sep) {
            self.rest = Some(&rest[at + 1..]);
            Some(&rest[..at])
        } else {
            self.rest = None;
            Some(rest)
        }
    }
}

/// Validates a published topic and returns its words.
pub fn parse_topic<'a>(dialect: Dialect, limits: &Limits, text: &'a str) -> Result<Words<'a>> {
    let mut words = Words::new();
    let mut cursor = tokens::tokens(dialect, limits, text);
    loop {
        match cursor.step() {
            Step::Word(token) => words.push(token.text()),
            Step::End => return Ok(words),
            Step::Invalid => return refused(dialect, limits, text),
        }
    }
}

/// Validates a published topic without collecting its words.
pub fn check_topic(dialect: Dialect, limits: &Limits, text: &str) -> Result<()> {
    let mut cursor = tokens::tokens(dialect, limits, text);
    loop {
        match cursor.step() {
            Step::Word(_) => {}
            Step::End => return Ok(()),
            Step::Invalid => return refused(dialect, limits, text).map(|_| ()),
        }
    }
}

/// What a lookup does with a topic the tokenizer refused: the rules name the rule it broke. The
/// tokenizer refuses exactly the topics the rules do (a property test holds it to that); were
/// they ever to disagree, the rules' verdict stands and the words are split without it.
#[cold]
#[inline(never)]
pub(crate) fn refused<'a>(dialect: Dialect, limits: &Limits, text: &'a str) -> Result<Words<'a>> {
    check_rules(dialect, limits, text)?;
    debug_assert!(false, "the tokenizer refused the valid topic {text:?}");
    Ok(split_words(dialect, text).collect())
}

#[cfg(test)]
mod tests {
    use super::split_words;
    use crate::dialect::Dialect;

    #[test]
    fn split_words_cuts_like_str_split_except_the_empty_text() {
        let texts = [
            "",
            ".",
            "..",
            "a",
            "a.b",
            ".a",
            "a.",
            "a..b",
            "é.ü/ß.€",
            "/a//b/",
            "日本.語",
            "a b.c",
        ];
        for dialect in [Dialect::Amqp, Dialect::Mqtt, Dialect::Nats] {
            let sep = char::from(dialect.separator());
            for text in texts {
                let expected: Vec<&str> = if text.is_empty() {
                    Vec::new()
                } else {
                    text.split(sep).collect()
                };
                let got: Vec<&str> = split_words(dialect, text).collect();
                assert_eq!(got, expected, "{dialect:?} {text:?}");
            }
        }
    }
}
