//! Every algorithm against `naive` on an arbitrary operation sequence. See
//! `topicmatch_fuzz::differential`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| topicmatch_fuzz::differential(data));
