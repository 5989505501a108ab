//! The lookup's front end for short topics: one pass that validates a topic of fewer than 16
//! bytes, cuts its words and keys them, all in registers.
//!
//! The topic is packed into a `u128` (two loads, no byte loop); the separators and the bytes
//! that could make it invalid are found by one sixteen-byte compare per value
//! ([`positions_in`]); each word's key is the packed topic shifted to the word and masked to
//! its length, which is exactly the word's [`Key`](super::kids::Key). Anything unusual (a
//! suspicious byte, too many levels, an empty NATS token) and every longer topic returns
//! `None`: the caller then takes the general path (`topic::plain_words`), which decides
//! exactly and reports the error.

use super::kids::Probe;
use crate::bytes::pack;
#[cfg(target_arch = "x86_64")]
use crate::bytes::positions_in;
use crate::dialect::{Dialect, Limits};
use crate::topic::suspicious_values;

/// The topics this front end takes are shorter than this, in bytes.
pub(super) const SHORT: usize = 16;

/// Where [`probes`] puts each word's probe, in order.
pub(super) trait ProbeSink<'t> {
    /// The next word's probe.
    fn probe(&mut self, probe: Probe<'t>);
}

/// Bit `i` set where byte `i` of `bytes` is `byte`.
#[inline(always)]
#[allow(clippy::inline_always)] // once per value per lookup
fn positions(bytes: u128, byte: u8) -> u32 {
    #[cfg(target_arch = "x86_64")]
    return positions_in(bytes, byte);
    #[cfg(not(target_arch = "x86_64"))]
    return crate::bytes::swar_positions(&bytes.to_le_bytes(), byte);
}

/// Hands `sink` the probes of `text`'s words, in order, and returns their number, if `text` is
/// a plainly valid topic of 1 to 15 bytes within `limits` (as `topic::plain_words` decides,
/// which this must agree with); else `None`, possibly after handing over some probes (the
/// caller discards them).
#[inline(always)]
#[allow(clippy::inline_always)] // the lookup's front end
pub(super) fn probes<'t>(
    dialect: Dialect,
    limits: &Limits,
    text: &'t str,
    sink: &mut impl ProbeSink<'t>,
) -> Option<usize> {
    let bytes = text.as_bytes();
    let len = bytes.len();
    if len == 0 || len >= SHORT || len > limits.max_topic_bytes {
        return None;
    }
    let packed = pack(bytes);
    // Past `len` the packed topic is zero (U+0000 is suspicious in MQTT).
    let within = (1u32 << len) - 1;
    for &value in suspicious_values(dialect) {
        if positions(packed, value) & within != 0 {
            return None;
        }
    }
    let separators = positions(packed, dialect.separator()) & within;
    if dialect == Dialect::Nats {
        // An empty token: a separator first, last, or next to another.
        let edges = 1 | 1 << (len - 1);
        if separators & (edges | separators >> 1) != 0 {
            return None;
        }
    }
    // Each word ends at a separator or at the end. The words are counted as they are cut (no
    // `popcnt` in the x86_64 baseline).
    let mut ends = separators | 1 << len;
    let mut levels = 0;
    let mut start = 0;
    while ends != 0 {
        let end = ends.trailing_zeros() as usize;
        sink.probe(Probe::short(&bytes[start..end], packed >> (8 * start)));
        ends &= ends - 1;
        start = end + 1;
        levels += 1;
    }
    (levels <= limits.max_levels).then_some(levels)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use proptest::prelude::*;

    use super::{probes, ProbeSink, SHORT};
    use crate::dialect::{Dialect, Limits};
    use crate::matchers::cstrie::kids::Probe;
    use crate::topic::{plain_words, WordSink};

    impl<'t> ProbeSink<'t> for Vec<Probe<'t>> {
        fn probe(&mut self, probe: Probe<'t>) {
            self.push(probe);
        }
    }

    struct Plain<'t>(Vec<Probe<'t>>);

    impl<'t> WordSink<'t> for Plain<'t> {
        fn word(&mut self, word: &'t [u8]) {
            self.0.push(Probe::of(word));
        }
    }

    /// Both front ends on `text`: where the short one answers, it must answer as the general
    /// one does, word by word and key by key; it may refuse only what the general one refuses,
    /// the empty topic, and topics of [`SHORT`] bytes or more.
    fn agree(dialect: Dialect, limits: &Limits, text: &str) -> Option<usize> {
        let mut short = Vec::new();
        let got = probes(dialect, limits, text, &mut short);
        let mut plain = Plain(Vec::new());
        let expected = plain_words(dialect, limits, text, &mut plain);
        if let Some(n) = got {
            assert_eq!(Some(n), expected, "{dialect:?} {text:?}");
            assert_eq!(short.len(), n);
            for (a, b) in short.iter().zip(&plain.0) {
                assert!(a.same_as(b), "{dialect:?} {text:?}");
            }
        } else {
            assert!(
                expected.is_none() || text.is_empty() || text.len() >= SHORT,
                "{dialect:?} {text:?} refused"
            );
        }
        got
    }

    proptest! {
        #[test]
        fn short_topics_cut_and_key_as_the_general_path_does(
            text in "[a.b/*>+# \t\\x00\\x0céz0-9]{0,18}",
            max_levels in 1usize..20,
            max_topic_bytes in 1usize..20,
        ) {
            for dialect in [Dialect::Amqp, Dialect::Mqtt, Dialect::Nats] {
                let limits = Limits { max_topic_bytes, max_levels, ..Limits::for_dialect(dialect) };
                agree(dialect, &limits, &text);
            }
        }

        #[test]
        fn words_of_every_length_at_every_offset(
            words in proptest::collection::vec("[a-z0-9é]{0,16}", 1..6),
        ) {
            for dialect in [Dialect::Amqp, Dialect::Mqtt, Dialect::Nats] {
                let text = words.join(&char::from(dialect.separator()).to_string());
                let limits = Limits::for_dialect(dialect);
                let plainly_valid = dialect != Dialect::Nats || words.iter().all(|w| !w.is_empty());
                let n = agree(dialect, &limits, &text);
                prop_assert_eq!(n.is_some(), plainly_valid && !text.is_empty() && text.len() < SHORT);
            }
        }
    }

    #[test]
    fn usual_topics_take_the_short_path() {
        for (dialect, text) in [
            (Dialect::Amqp, "0.1.7"),
            (Dialect::Amqp, "a..b"),
            (Dialect::Amqp, "."),
            (Dialect::Amqp, "fifteen-bytes-x"),
            (Dialect::Mqtt, "sensors/b1/temp"),
            (Dialect::Mqtt, "/"),
            (Dialect::Nats, "foo.bar"),
            (Dialect::Nats, "x"),
        ] {
            let limits = Limits::for_dialect(dialect);
            assert!(
                agree(dialect, &limits, text).is_some(),
                "{dialect:?} {text:?}"
            );
        }
        for (dialect, text) in [
            (Dialect::Amqp, ""),
            (Dialect::Amqp, "sixteen-bytes-xy"),
            (Dialect::Mqtt, "a/+"),
            (Dialect::Mqtt, "a/b\0"),
            (Dialect::Mqtt, "a/#/c"),
            (Dialect::Nats, "a..b"),
            (Dialect::Nats, ".a"),
            (Dialect::Nats, "a."),
            (Dialect::Nats, "a.>"),
            (Dialect::Nats, "a b"),
            (Dialect::Nats, "a\x0cb"),
        ] {
            let limits = Limits::for_dialect(dialect);
            assert_eq!(agree(dialect, &limits, text), None, "{dialect:?} {text:?}");
        }
        // Limits: too many levels, too many bytes.
        let limits = Limits {
            max_levels: 2,
            ..Limits::for_dialect(Dialect::Amqp)
        };
        assert_eq!(agree(Dialect::Amqp, &limits, "a.b.c"), None);
        let limits = Limits {
            max_topic_bytes: 4,
            ..Limits::for_dialect(Dialect::Amqp)
        };
        assert_eq!(agree(Dialect::Amqp, &limits, "a.b.c"), None);
    }
}
