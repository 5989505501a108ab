//! The algorithms, one module each, and the names they go by.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;
use crate::matcher::{Config, Matcher};

pub mod auto;
pub mod cstrie;
pub mod inverted_bitmap;
pub mod naive;
pub mod optimized_bitmap;
pub(crate) mod shared;
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
    /// One cached bitmap row per topic seen ("Fast topic matching", OpenAMQ), bounded, updated
    /// in place.
    InvertedBitmap,
    /// Per-level bitmap rows combined with vector AND instructions ("High-speed message
    /// matching").
    OptimizedBitmap,
    /// The optimized bitmap while wildcard patterns are few, the trie beyond the crossover.
    Auto,
}

impl Algorithm {
    /// Every algorithm, in the order their names are listed.
    pub const ALL: &'static [Algorithm] = &[
        Algorithm::Naive,
        Algorithm::Trie,
        Algorithm::Cstrie,
        Algorithm::InvertedBitmap,
        Algorithm::OptimizedBitmap,
        Algorithm::Auto,
    ];

    /// The algorithm's name.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Naive => "naive",
            Algorithm::Trie => "trie",
            Algorithm::Cstrie => "cstrie",
            Algorithm::InvertedBitmap => "inverted_bitmap",
            Algorithm::OptimizedBitmap => "optimized_bitmap",
            Algorithm::Auto => "auto",
        }
    }

    /// A new, empty matcher of this algorithm.
    pub fn build(self, config: Config) -> Box<dyn Matcher> {
        match self {
            Algorithm::Naive => Box::new(naive::NaiveMatcher::new(config)),
            Algorithm::Trie => Box::new(trie::TrieMatcher::new(config)),
            Algorithm::Cstrie => Box::new(cstrie::CsTrieMatcher::new(config)),
            Algorithm::InvertedBitmap => {
                Box::new(inverted_bitmap::InvertedBitmapMatcher::new(config))
            }
            Algorithm::OptimizedBitmap => {
                Box::new(optimized_bitmap::OptimizedBitmapMatcher::new(config))
            }
            Algorithm::Auto => Box::new(auto::AutoMatcher::new(config)),
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
