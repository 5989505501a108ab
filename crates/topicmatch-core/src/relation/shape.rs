//! The word-level automaton of a pattern, as the relations read it: three kinds of token, one
//! rule for a `$` first word, and the dialect's valid topics.
//!
//! - A literal matches its word; `Any` matches one word; `Star` matches zero or more words.
//!   AMQP and MQTT `#` is a `Star`; NATS `>` (one or more) is `Any` then `Star`. A run of
//!   `Star`s is one `Star` (AMQP `#.#` matches what `#` matches).
//! - MQTT: a pattern whose first word is a wildcard does not match a topic whose first word
//!   starts with `$` ([`Shape::hides_dollar`]).
//! - Topics ([`Phase`]): no dialect has a topic of one empty word, whose text would be the
//!   empty text: the AMQP empty key has no word, and an empty MQTT topic name or NATS subject
//!   is invalid. So AMQP topics are every other word list, the empty one included; MQTT topics
//!   have at least one word; NATS topics too (its literals and the fresh word are never
//!   empty). `"/"` and `"."` are two empty words.
//!
//! Words outside both patterns' literals cannot be told apart by either pattern, except by a
//! leading `$` (MQTT) and by being empty (MQTT validity), so the relations read one *fresh*
//! word, [`Sym::Fresh`]: not a literal of either pattern, not empty, no leading `$`, valid in
//! every dialect (`relation` explains why it is the only one needed).

use smallvec::SmallVec;

use crate::dialect::Dialect;
use crate::pattern::Word;

/// One token of a [`Shape`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tok<'p> {
    /// Exactly this word.
    Lit(&'p str),
    /// Any one word.
    Any,
    /// Zero or more words.
    Star,
}

/// A word a relation reads: a literal of one of the patterns, or the fresh word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sym<'p> {
    /// This literal word.
    Lit(&'p str),
    /// A word no literal of either pattern spells: non-empty, without a leading `$`.
    Fresh,
}

impl Sym<'_> {
    /// Whether the word starts with `$` (MQTT's rule for first words).
    pub(crate) fn dollar(self) -> bool {
        matches!(self, Sym::Lit(w) if w.starts_with('$'))
    }
}

/// What is known of the words read so far that decides whether the topic is valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Phase {
    /// No word yet.
    Start,
    /// One word, the empty one.
    LoneEmpty,
    /// Anything else.
    Later,
}

impl Phase {
    /// The phase after reading `word`.
    pub(crate) fn after(self, word: Sym<'_>) -> Phase {
        match (self, word) {
            (Phase::Start, Sym::Lit("")) => Phase::LoneEmpty,
            _ => Phase::Later,
        }
    }

    /// Whether a topic of this phase is valid in `dialect`.
    pub(crate) fn valid(self, dialect: Dialect) -> bool {
        match dialect {
            Dialect::Amqp => self != Phase::LoneEmpty,
            Dialect::Nats => self != Phase::Start,
            Dialect::Mqtt => self == Phase::Later,
        }
    }
}

/// A pattern's tokens: an automaton over word positions `0..=len()`, accepting at `len()`.
#[derive(Debug, Clone)]
pub(crate) struct Shape<'p> {
    pub(crate) toks: SmallVec<[Tok<'p>; 16]>,
    /// MQTT: a first word starting with `$` is not matched.
    pub(crate) hides_dollar: bool,
}

impl<'p> Shape<'p> {
    /// The shape of a pattern of `dialect` with these words.
    pub(crate) fn of(dialect: Dialect, words: &'p [Word]) -> Self {
        let mut toks: SmallVec<[Tok<'p>; 16]> = SmallVec::new();
        for word in words {
            match word {
                Word::Literal(w) => toks.push(Tok::Lit(w)),
                Word::One => toks.push(Tok::Any),
                Word::Multi => {
                    if dialect == Dialect::Nats {
                        toks.push(Tok::Any);
                    }
                    if toks.last() != Some(&Tok::Star) {
                        toks.push(Tok::Star);
                    }
                }
            }
        }
        Shape {
            toks,
            hides_dollar: dialect == Dialect::Mqtt && words.first().is_some_and(Word::is_wildcard),
        }
    }

    /// The number of tokens: the accepting position.
    pub(crate) fn len(&self) -> usize {
        self.toks.len()
    }

    /// The set holding only the start, closed.
    pub(crate) fn start(&self) -> Bits {
        let mut set = Bits::empty(self.len() + 1);
        set.insert(0);
        self.close(&mut set);
        set
    }

    /// Adds every position a `Star` reaches without reading (in increasing order, so a run of
    /// `Star`s is crossed in one pass).
    pub(crate) fn close(&self, set: &mut Bits) {
        for (i, tok) in self.toks.iter().enumerate() {
            if *tok == Tok::Star && set.contains(i) {
                set.insert(i + 1);
            }
        }
    }

    /// The closed set of positions after reading `word` from `set`; `first`: it is the
    /// topic's first word.
    pub(crate) fn step(&self, set: &Bits, word: Sym<'_>, first: bool) -> Bits {
        let mut next = Bits::empty(self.len() + 1);
        if first && self.hides_dollar && word.dollar() {
            return next;
        }
        for i in set.iter() {
            match self.toks.get(i) {
                Some(Tok::Lit(w)) if word == Sym::Lit(w) => next.insert(i + 1),
                Some(Tok::Any) => next.insert(i + 1),
                Some(Tok::Star) => next.insert(i),
                _ => {}
            }
        }
        self.close(&mut next);
        next
    }

    /// Whether `set` holds the accepting position.
    pub(crate) fn accepts(&self, set: &Bits) -> bool {
        set.contains(self.len())
    }
}

/// A set of automaton positions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Bits(SmallVec<[u64; 2]>);

impl Bits {
    /// The empty set over `n` positions.
    pub(crate) fn empty(n: usize) -> Bits {
        Bits(SmallVec::from_elem(0, n.div_ceil(64)))
    }

    pub(crate) fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    pub(crate) fn contains(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
    }

    /// Whether every position of `self` is in `other` (both over the same positions).
    pub(crate) fn is_subset(&self, other: &Bits) -> bool {
        self.0.iter().zip(&other.0).all(|(a, b)| a & !b == 0)
    }

    /// Whether the set holds no position.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    /// How many positions the set holds.
    pub(crate) fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The 64-bit words it takes.
    pub(crate) fn words(&self) -> usize {
        self.0.len()
    }

    /// The positions, in increasing order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(k, &w)| {
            let mut rest = w;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let bit = rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    k * 64 + bit
                })
            })
        })
    }
}
