//! The algorithms, one module each, and the names they go by.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;
use crate::matcher::{Config, Matcher};

pub mod cstrie;
pub mod naive;
pub mod trie;

/// The algorithms this build offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// Scan every pattern on every lookup: the executable spec and test oracle.
    Naive,
    /// A word trie behind a read-write lock.
    Trie,
    /// A lock-free concurrent subscription trie (Ctrie-style CAS on I-nodes).
    Cstrie,
}

impl Algorithm {
    /// Every algorithm, in the order their names are listed.
    pub const ALL: &'static [Algorithm] = &[Algorithm::Naive, Algorithm::Trie, Algorithm::Cstrie];

    /// The algorithm's name.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Naive => "naive",
            Algorithm::Trie => "trie",
            Algorithm::Cstrie => "cstrie",
        }
    }

    /// A new, empty matcher of this algorithm.
    pub fn build(self, config: Config) -> Box<dyn Matcher> {
        match self {
            Algorithm::Naive => Box::new(naive::NaiveMatcher::new(config)),
            Algorithm::Trie => Box::new(trie::TrieMatcher::new(config)),
            Algorithm::Cstrie => Box::new(cstrie::CsTrieMatcher::new(config)),
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Algorithm {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        Algorithm::ALL
            .iter()
            .copied()
            .find(|a| a.name() == s)
            .ok_or_else(|| {
                let names: Vec<String> = Algorithm::ALL
                    .iter()
                    .map(|a| format!("{:?}", a.name()))
                    .collect();
                Error::InvalidArgument(format!(
                    "unknown algorithm {s:?}: expected one of {}",
                    names.join(", ")
                ))
            })
    }
}
