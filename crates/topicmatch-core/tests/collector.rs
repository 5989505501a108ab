//! What a departure hands the epoch collector, seen through pins alone (a thread that only
//! looks up, never flushing a bag of its own): the registry's release of the id, a lowered
//! count of subscribers held twice, and what an unsubscribe's `left` callback defers (a
//! binding's release of the subscriber's object) each reach the collector's global queue, so
//! later pins run them. One test in its own binary: the collector's queue is the process's,
//! and other tests' garbage in it would be collected first.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use topicmatch_core::fields::{Criterion, FieldMatcher, Filter, Mode, Value};
use topicmatch_core::{Algorithm, Dialect, Engine, Limits, Registry, Subscriber};

/// Pins (and unpins) until `done` says so, at most a bound far above what an empty queue
/// needs (a collection runs every 128 pins).
fn pins_until(mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..1_000_000 {
        if done() {
            return true;
        }
        drop(crossbeam_epoch::pin());
    }
    done()
}

/// A `left` callback that defers setting a flag, as the binding defers releasing an object.
fn deferring(flag: &Arc<AtomicBool>) -> impl FnMut(u64) + '_ {
    move |_| {
        let flag = Arc::clone(flag);
        crossbeam_epoch::pin().defer(move || flag.store(true, Ordering::SeqCst));
    }
}

#[test]
fn a_departure_reaches_the_collector_without_a_flush_of_the_looking_up_thread() {
    // The registry: a second-to-last release lowers `several`, a last one frees the id.
    let mut registry = Registry::default();
    let a = Subscriber::from("a");
    let id = registry.acquire(&a);
    registry.acquire(&a);
    let several = registry.several();
    assert_eq!(several.load(Ordering::SeqCst), 1);
    assert!(!registry.release(id));
    assert!(
        pins_until(|| several.load(Ordering::SeqCst) == 0),
        "several stays raised"
    );
    assert!(registry.release(id));
    let mut next = 0;
    assert!(
        pins_until(|| {
            next += 1;
            let (got, _) = registry.acquire_new(&Subscriber::Int(next));
            got == id
        }),
        "the departed id is never reused"
    );

    // The engine: the callback's deferred function runs too, on every algorithm.
    for &algorithm in Algorithm::ALL {
        let engine = Engine::new(Dialect::Mqtt, algorithm, Limits::for_dialect(Dialect::Mqtt))
            .expect("an engine");
        let sub = engine.subscribe("a/+", &a).expect("a valid pattern");
        engine
            .subscribe("b/#", &Subscriber::Int(1))
            .expect("a valid pattern");
        let released = Arc::new(AtomicBool::new(false));
        assert!(engine.unsubscribe_with(sub, &mut deferring(&released)));
        assert!(
            pins_until(|| released.load(Ordering::SeqCst)),
            "{algorithm}: the callback's release never ran"
        );
    }

    // The field matcher alike.
    let fields = FieldMatcher::new();
    let filter = Filter::new(vec![("n".into(), Criterion::Eq(Value::from(1)))], Mode::All)
        .expect("a valid filter");
    let sub = fields.subscribe(&filter, &a).expect("a subscription");
    let released = Arc::new(AtomicBool::new(false));
    assert!(fields.unsubscribe_with(sub, &mut deferring(&released)));
    assert!(
        pins_until(|| released.load(Ordering::SeqCst)),
        "the field matcher's callback's release never ran"
    );
}
