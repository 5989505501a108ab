//! Content-based routing: criteria on message fields, matched by inverted index and hit
//! counting (the "Field Matching Example" of "Fast topic matching" and of "High-speed message
//! matching").
//!
//! A subscription's [`Filter`] holds [`Criterion`]s on named fields and a [`Mode`]: all of them
//! (AND), any (OR) or at least `k`. A [`Message`] carries field values ([`Value`]: str, exact
//! number, bool). [`FieldMatcher`] indexes every filter and answers a message by counting, per
//! subscription, the criteria its fields meet; the [`Engine`](crate::Engine) combines topic
//! patterns with filters (`subscribe_where`, `lookup_fields_into`).
//!
//! ```
//! use topicmatch_core::fields::{Criterion, FieldMatcher, Filter, Message, Mode};
//! use topicmatch_core::Subscriber;
//!
//! let fm = FieldMatcher::new();
//! let usd_urgent = Filter::new(
//!     vec![("currency".into(), Criterion::Eq("USD".into())), ("urgent".into(), Criterion::Present)],
//!     Mode::All,
//! )?;
//! fm.subscribe(&usd_urgent, &Subscriber::from("alice"))?;
//! let message = Message::new().with("currency", "USD").with("urgent", true);
//! assert_eq!(fm.lookup(&message), vec![Subscriber::from("alice")]);
//! # Ok::<(), topicmatch_core::Error>(())
//! ```

mod criteria;
mod field;
pub(crate) mod filtered;
mod ids;
mod index;
mod matcher;
mod message;
mod pivot;
mod postings;
mod value;

pub use criteria::{Comparison, Criterion, Filter, Mode, MAX_CRITERIA};
pub use matcher::{FieldMatcher, FieldSubscription};
pub use message::Message;
pub use value::{Number, Text, Value};
