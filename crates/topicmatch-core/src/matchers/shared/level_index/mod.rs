//! The level index: wildcard patterns as bitmap columns in one set of rows per topic level,
//! looked up by a bitwise AND of one row per topic word ("High-speed message matching"; "Fast
//! Topic Matching Algorithm Implementation For WSO2 Message Broker"). `optimized_bitmap`
//! answers every lookup with it; `inverted_bitmap` compiles the row of each topic it caches
//! with it.
//!
//! - Direct (wildcard-free) subscriptions live in one hash map keyed by topic (as WSO2 and
//!   EMQX do, [`direct`]); only wildcard patterns take a bitmap column ([`slots`]), freed
//!   columns are reused.
//! - Lookup ANDs at most one row per topic level plus one length ("null") row ([`levels`]),
//!   64-bit words in AVX2 batches when the CPU has them ([`simd`]), stops as soon as nothing is
//!   left, and reads the set bits with trailing-zero counts ([`bits`]).
//! - AMQP patterns with `#` before their last word go to a small word trie keyed by column.
//! - Small indexes (rows of at most 256 slots, no trie-held pattern) answer `lookup_into` and
//!   `matches_any` in one pass over the topic's bytes that validates, splits, keys each word
//!   and ANDs its row as the word ends ([`Index::lookup_small`]); the rest split first.

pub(crate) mod bits;
pub(crate) mod direct;
pub(crate) mod index;
pub(crate) mod keys;
pub(crate) mod levels;
pub(crate) mod packed;
pub(crate) mod shape;
pub mod simd;
pub(crate) mod slots;
pub(crate) mod words;

pub(crate) use bits::{ones, Acc};
pub(crate) use index::{Change, Index};
pub(crate) use keys::{topic_hash, WordKey};
pub(crate) use words::with_keys;
