//! `Engine::subscriber_of`: the subscriber id behind a subscription id, for plain and filtered
//! subscriptions, and nothing once the subscription is gone.

use topicmatch_core::fields::{Criterion, Filter, Mode, Value};
use topicmatch_core::{Algorithm, Dialect, Engine, Limits, Subscriber};

#[test]
fn subscriber_of_names_the_real_subscriber_until_unsubscribed() {
    for &algorithm in Algorithm::ALL {
        let e = Engine::new(Dialect::Amqp, algorithm, Limits::for_dialect(Dialect::Amqp)).unwrap();
        let alice = Subscriber::from("alice");
        let plain = e.subscribe("a.*", &alice).unwrap();
        let filter =
            Filter::new(vec![("n".into(), Criterion::Eq(Value::from(1)))], Mode::All).unwrap();
        let filtered = e.subscribe_where("b.*", &alice, &filter).unwrap();
        let bob = e.subscribe("a.*", &Subscriber::Int(7)).unwrap();
        let alice_id = e.with_registry(|r| r.id_of(&alice)).unwrap();
        assert_eq!(e.subscriber_of(plain), Some(alice_id), "{algorithm:?}");
        assert_eq!(e.subscriber_of(filtered), Some(alice_id), "{algorithm:?}");
        assert_ne!(e.subscriber_of(bob), Some(alice_id), "{algorithm:?}");
        assert!(e.unsubscribe(filtered));
        assert_eq!(e.subscriber_of(filtered), None);
        assert_eq!(e.subscriber_of(plain), Some(alice_id));
        assert_eq!(e.subscriber_of(12_345), None);
    }
}
