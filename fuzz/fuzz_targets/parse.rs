//! The pattern and topic parsers of every dialect: never a panic, only typed errors, and
//! agreement with `matches`. See `topicmatch_fuzz::parse`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| topicmatch_fuzz::parse(data));
