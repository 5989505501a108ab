//! Plain and `where=` subscriptions on every algorithm against `naive`, and `naive` against
//! the harness's own evaluation of each filter. See `topicmatch_fuzz::filtered`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| topicmatch_fuzz::filtered(data));
