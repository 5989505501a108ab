//! A filter compiled against one state of the trie: its literal words resolved to what labels
//! and runs hold ([`Lit`]: the first bytes, the length, the interned id if any), plus the
//! dialect's rules the walk needs.

use crate::dialect::Dialect;
use crate::pattern::{Pattern, Word};

use super::label::{Label, Lit};
use super::words::{WordId, Words};

/// One word of a compiled filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step<'p> {
    /// A literal word, with its text.
    Word(Lit, &'p str),
    /// `*` / `+`: exactly one word.
    One,
    /// `#` / `>`: see [`Query::nats`] for how many words.
    Multi,
}

/// A word of the trie, as a filter step reads it: a label, or a word of a run.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Token {
    Label(Label),
    Word(WordId),
}

impl Token {
    #[inline]
    fn is(self, lit: &Lit) -> bool {
        match self {
            Token::Label(label) => label.is(lit),
            Token::Word(word) => lit.word == Some(word),
        }
    }
}

/// A compiled filter.
#[derive(Debug)]
pub(crate) struct Query<'p> {
    pub(crate) steps: Vec<Step<'p>>,
    /// NATS `>` takes one or more words and no `#` takes zero; otherwise (AMQP, MQTT) `#` takes
    /// zero or more.
    pub(crate) nats: bool,
    /// MQTT: the filter starts with a wildcard, so topics whose first level starts with `$`
    /// are not its to match.
    pub(crate) hides_dollar: bool,
    /// Position of a last `#`/`>`: a node reached in that state has its whole subtree matched.
    pub(crate) trailing: Option<u32>,
}

impl<'p> Query<'p> {
    pub(crate) fn new(pattern: &'p Pattern, words: &Words) -> Self {
        let steps: Vec<Step<'p>> = pattern
            .words()
            .iter()
            .map(|w| match w {
                Word::Literal(text) => Step::Word(Lit::new(words, text), text),
                Word::One => Step::One,
                Word::Multi => Step::Multi,
            })
            .collect();
        let trailing = (steps.last() == Some(&Step::Multi)).then(|| steps.len() as u32 - 1);
        Query {
            nats: pattern.dialect() == Dialect::Nats,
            hides_dollar: pattern.dialect() == Dialect::Mqtt
                && pattern.words().first().is_some_and(Word::is_wildcard),
            trailing,
            steps,
        }
    }

    /// The accepting state: every word of the filter consumed.
    pub(crate) fn end(&self) -> u32 {
        self.steps.len() as u32
    }

    /// Appends `state` to `out` and, where `#` may match zero words (AMQP, MQTT), the states
    /// that follow it; `out` stays sorted and without duplicates if states come in order.
    #[inline]
    pub(crate) fn close_into(&self, mut state: u32, out: &mut Vec<u32>) {
        loop {
            if out.last().is_some_and(|&last| last >= state) {
                // Already there, with everything its closure adds.
                return;
            }
            out.push(state);
            if self.nats || self.steps.get(state as usize) != Some(&Step::Multi) {
                return;
            }
            state += 1;
        }
    }

    /// Appends to `buf` the states reached by one word `word` from the sorted states
    /// `buf[start..end]` (the end of `buf`), with their closure, sorted and without duplicates.
    #[inline]
    pub(crate) fn step_into(&self, buf: &mut Vec<u32>, start: usize, end: usize, word: Token) {
        debug_assert_eq!(buf.len(), end);
        for i in start..end {
            let s = buf[i];
            match self.steps.get(s as usize) {
                Some(Step::Word(lit, _)) if word.is(lit) => self.close_from(end, s + 1, buf),
                None | Some(Step::Word(..)) => {}
                Some(Step::One) => self.close_from(end, s + 1, buf),
                Some(Step::Multi) => {
                    // `#`/`>` takes this word and may take more.
                    self.close_from(end, s, buf);
                    if self.nats {
                        // `>` has its one word: it may also stop here.
                        self.close_from(end, s + 1, buf);
                    }
                }
            }
        }
    }

    #[inline]
    fn close_from(&self, start: usize, state: u32, out: &mut Vec<u32>) {
        if out.len() > start {
            self.close_into(state, out);
        } else {
            // The first state of this set: nothing before it in `out` belongs to the set.
            out.push(state);
            if !self.nats && self.steps.get(state as usize) == Some(&Step::Multi) {
                self.close_into(state + 1, out);
            }
        }
    }
}
