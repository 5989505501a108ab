//! Memory of a `TopicStore` per stored topic, from a counting global allocator (the bytes the
//! program asked for, live after building minus live before; not allocator overhead or RSS),
//! against the topics' own bytes and against a hash map from topic text to value id (the
//! scan's store). Values are `u64` ids. The `large` shape, 1M topics by default:
//!
//! ```text
//! cargo run --release -p topicmatch-benches --example store_memory [-- topics]
//! ```

use rustc_hash::FxHashMap;
use topicmatch_benches::alloc::{self, Counting};
use topicmatch_benches::stored_topics;
use topicmatch_core::{Dialect, TopicStore};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Bytes `build` leaves allocated while its result lives, and the result.
fn held<T>(build: impl FnOnce() -> T) -> (f64, T) {
    let before = alloc::live();
    let value = build();
    #[allow(clippy::cast_precision_loss)]
    let bytes = (alloc::live() - before) as f64;
    (bytes, value)
}

#[allow(clippy::cast_precision_loss)]
fn main() {
    let count: usize = std::env::args()
        .nth(1)
        .map_or(1_000_000, |a| a.parse().expect("a topic count"));
    let topics = stored_topics(count, 24);
    let n = count as f64;
    let text: usize = topics.iter().map(String::len).sum();
    println!(
        "{count} topics of the large shape, {:.1} bytes of text per topic",
        text as f64 / n
    );
    let (store_bytes, store) = held(|| {
        let store = TopicStore::new(Dialect::Amqp);
        for (id, topic) in (0u64..).zip(&topics) {
            store.insert(topic, id).expect("valid topic");
        }
        store
    });
    let stats = store.stats();
    println!(
        "TopicStore<u64>:          {:6.1} bytes/topic ({:.2}x the text; {} nodes, {} words)",
        store_bytes / n,
        store_bytes / text as f64,
        stats.nodes,
        stats.words
    );
    let (compacted, ()) = held(|| store.compact());
    println!(
        "  after compact():        {:6.1} bytes/topic",
        (store_bytes + compacted) / n
    );
    drop(store);
    let (map_bytes, map) = held(|| {
        let mut map = FxHashMap::default();
        for (id, topic) in (0u64..).zip(&topics) {
            map.insert(topic.clone(), id);
        }
        map
    });
    println!(
        "FxHashMap<String, u64>:   {:6.1} bytes/topic ({:.2}x the text)",
        map_bytes / n,
        map_bytes / text as f64
    );
    drop(map);
}
