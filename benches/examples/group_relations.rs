//! Filter relations over shared subscriptions: `covering` plus `intersecting` of a query that
//! meets every group (`g/#`) and of one that meets one group (`g/7/x`), with 1,000 and 5,000
//! MQTT groups (`$share/q{i}/g/{i}/#`) of five members each, on the `cstrie`. Best of five
//! calls, in ms.
//!
//! `cargo run --release -p topicmatch-benches --example group_relations`

use std::time::Instant;

use topicmatch_core::{Algorithm, Dialect, Engine, Limits, Subscriber};

fn main() {
    const MEMBERS: usize = 5;
    for groups in [1_000, 5_000] {
        let engine = Engine::new(
            Dialect::Mqtt,
            Algorithm::Cstrie,
            Limits::for_dialect(Dialect::Mqtt),
        )
        .expect("an engine");
        for g in 0..groups {
            for m in 0..MEMBERS {
                let member = i64::try_from(g * MEMBERS + m).expect("a small id");
                engine
                    .subscribe(&format!("$share/q{g}/g/{g}/#"), &Subscriber::Int(member))
                    .expect("a valid pattern");
            }
        }
        for query in ["g/#", "g/7/x"] {
            let mut best = f64::MAX;
            let mut found = 0;
            for _ in 0..5 {
                let start = Instant::now();
                found = engine.covering(query).expect("a valid query").len()
                    + engine.intersecting(query).expect("a valid query").len();
                best = best.min(start.elapsed().as_secs_f64());
            }
            println!(
                "{groups} groups of {MEMBERS}, {query}: {found} subscriptions found, {:.3} ms",
                best * 1e3
            );
        }
    }
}
