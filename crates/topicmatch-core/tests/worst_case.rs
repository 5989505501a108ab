//! Worst cases stay fast, for every algorithm: many AMQP `#`, the adversarial `#.a.#.a...`
//! against `a.a...b` (exponential for a backtracking matcher), deep MQTT `+/+/+...`, a
//! 1,000-level topic and a 65,535-byte MQTT topic. The assertions are on the results; the
//! wall-clock guard is only a hang detector, far above the expected milliseconds.

mod common;

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use common::engine;
use topicmatch_core::{Algorithm, Dialect, Engine, Limits, Subscriber};

/// Far above any expected run time (even a debug build on a loaded machine): only a hang or an
/// exponential blow-up reaches it.
const HANG: Duration = Duration::from_secs(120);

/// Runs `work` for every algorithm, each on its own thread, failing if one does not finish
/// within [`HANG`].
fn for_every_algorithm(what: &str, work: fn(Algorithm)) {
    for &algorithm in Algorithm::ALL {
        let (done, finished) = mpsc::channel();
        let handle = thread::spawn(move || {
            work(algorithm);
            let _ = done.send(());
        });
        match finished.recv_timeout(HANG) {
            Ok(()) => handle.join().expect("no panic"),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                handle.join().expect("the worker panicked");
            }
            Err(mpsc::RecvTimeoutError::Timeout) => panic!("{algorithm}: {what} hangs"),
        }
    }
}

fn roomy(dialect: Dialect, algorithm: Algorithm) -> Engine {
    let limits = Limits {
        max_topic_bytes: 1 << 20,
        ..Limits::for_dialect(dialect)
    };
    Engine::new(dialect, algorithm, limits).unwrap()
}

fn one() -> Subscriber {
    Subscriber::Int(1)
}

#[test]
fn amqp_many_hashes() {
    for_every_algorithm("127 `#` against 127 words", |algorithm| {
        let e = engine(Dialect::Amqp, algorithm);
        let hashes = vec!["#"; 128].join(".");
        assert_eq!(hashes.len(), 255);
        e.subscribe(&hashes, &one()).unwrap();
        let words = vec!["a"; 127].join(".");
        assert_eq!(e.lookup(&words).unwrap(), vec![one()]);
        assert!(e.matches_any("").unwrap());
        let stuck = format!("{}.b", vec!["#"; 126].join("."));
        e.subscribe(&stuck, &Subscriber::Int(2)).unwrap();
        assert_eq!(e.lookup(&words).unwrap(), vec![one()]);
    });
}

#[test]
fn amqp_adversarial_backtracking() {
    for_every_algorithm("`#.a.#.a...#.c` against `a.a...a.b`", |algorithm| {
        // Within the default 255 bytes: 42 pairs `#.a` and `.c`, against 126 `a` and `b`.
        let e = engine(Dialect::Amqp, algorithm);
        let pattern = format!("{}.#.c", vec!["#.a"; 42].join("."));
        assert!(pattern.len() <= 255);
        e.subscribe(&pattern, &one()).unwrap();
        let topic = format!("{}.b", vec!["a"; 126].join("."));
        assert!(e.lookup(&topic).unwrap().is_empty());
        assert!(!e.matches_any(&topic).unwrap());
        let hit = format!("{}.c", vec!["a"; 126].join("."));
        assert_eq!(e.lookup(&hit).unwrap(), vec![one()]);

        // Beyond it, with a raised byte limit: up to 200 pairs against 400 words, several
        // lengths subscribed at once (a trie with `#` nodes all along one branch).
        let e = roomy(Dialect::Amqp, algorithm);
        for k in 1..=10 {
            let p = format!("{}.b.c", vec!["#.a"; k * 20].join("."));
            e.subscribe(&p, &int(k)).unwrap();
        }
        let topic = format!("{}.b", vec!["a"; 400].join("."));
        assert!(e.lookup(&topic).unwrap().is_empty());
        let hit = format!("{}.b.c", vec!["a"; 400].join("."));
        assert_eq!(e.lookup(&hit).unwrap().len(), 10);
    });
}

#[test]
fn mqtt_deep_plus() {
    for_every_algorithm("deep `+/+/+...`", |algorithm| {
        let e = roomy(Dialect::Mqtt, algorithm);
        let levels = 1000;
        let plus = vec!["+"; levels].join("/");
        e.subscribe(&plus, &one()).unwrap();
        let depths = [1, 2, 100, 500, levels - 1];
        for depth in depths {
            let p = format!("{}/#", vec!["+"; depth].join("/"));
            e.subscribe(&p, &int(depth + 1)).unwrap();
        }
        let topic = vec!["x"; levels].join("/");
        let found = e.lookup(&topic).unwrap();
        assert_eq!(found.len(), 1 + depths.len());
        assert!(e.matches_any(&topic).unwrap());
        assert_eq!(
            e.lookup("x").unwrap().len(),
            1,
            "only `+/#` matches one level"
        );
    });
}

#[test]
fn a_thousand_levels_in_every_dialect() {
    for_every_algorithm("a 1,000-level topic", |algorithm| {
        for dialect in Dialect::ALL {
            let e = roomy(dialect, algorithm);
            let sep = char::from(dialect.separator()).to_string();
            let (one_w, multi) = (dialect.one_wildcard(), dialect.multi_wildcard());
            let topic = vec!["w"; 1000].join(&sep);
            let exact = topic.clone();
            let wild = vec![one_w; 1000].join(&sep);
            let tail = format!("{}{sep}{multi}", vec!["w"; 500].join(&sep));
            for (i, p) in [&exact, &wild, &tail].into_iter().enumerate() {
                e.subscribe(p, &int(i)).unwrap();
            }
            assert_eq!(e.lookup(&topic).unwrap().len(), 3, "{dialect}");
            assert!(e.unsubscribe(1));
            assert_eq!(e.lookup(&topic).unwrap().len(), 2, "{dialect}");
        }
    });
}

#[test]
fn mqtt_longest_topic() {
    for_every_algorithm("a 65,535-byte MQTT topic", |algorithm| {
        let e = engine(Dialect::Mqtt, algorithm);
        e.subscribe("#", &one()).unwrap();
        let long = "x".repeat(65_535);
        e.subscribe(&long, &Subscriber::Int(2)).unwrap();
        assert_eq!(e.lookup(&long).unwrap().len(), 2);
        let deep = format!("{}/y", vec!["x"; 4095].join("/"));
        let padded = format!("{deep}{}", "z".repeat(65_535 - deep.len()));
        assert_eq!(padded.len(), 65_535);
        assert_eq!(e.lookup(&padded).unwrap(), vec![one()]);
        assert!(e.lookup(&format!("{long}x")).is_err());
    });
}

#[test]
fn deep_subscriptions_drop_without_recursion() {
    for_every_algorithm("dropping a 4,096-level trie", |algorithm| {
        for dialect in Dialect::ALL {
            let e = roomy(dialect, algorithm);
            let sep = char::from(dialect.separator()).to_string();
            let deep = vec!["d"; Limits::DEFAULT_MAX_LEVELS].join(&sep);
            let id = e.subscribe(&deep, &one()).unwrap();
            e.subscribe(&deep, &Subscriber::Int(2)).unwrap();
            assert!(e.unsubscribe(id));
            drop(e);
        }
    });
}

fn int(n: usize) -> Subscriber {
    Subscriber::Int(i64::try_from(n).expect("small"))
}
