//! The ftm lookup loop, pass by pass: the floor and the named algorithms, interleaved, each pass
//! the 100,000 ftm topics once. Prints the fastest, the median and the slowest pass per row in
//! ns per lookup, and each row's ratio to the floor (fastest to fastest, median to median).
//!
//! This machine's speed drifts from pass to pass, so criterion's medians sit above what the
//! code does on a quiet core; the fastest pass shows the latter. Run it beside criterion, not
//! instead of it:
//!
//! `cargo run --release -p topicmatch-benches --example passes -- [PASSES] [ALGORITHM...]`
//! (default: 40 passes of `trie`, `cstrie` and `optimized_bitmap`; `cstrie_cached` names the
//! `cstrie` with its result cache).

use std::hint::black_box;
use std::time::Instant;

use topicmatch_benches::{ftm, passes_and_names, Floor};
use topicmatch_core::Algorithm;

fn main() {
    let (passes, names) = passes_and_names(40, &["trie", "cstrie", "optimized_bitmap"]);
    let w = ftm();
    let engines: Vec<_> = names.iter().map(|name| w.engine_named(name)).collect();
    let per_pass = f64::from(u32::try_from(w.topics.len()).expect("ftm has 100,000 topics"));
    let floor = Floor::new(&w.engine(Algorithm::Trie), &w.topics);
    let rows = 1 + engines.len();
    let mut times = vec![Vec::with_capacity(passes); rows];
    let mut out = Vec::with_capacity(64);
    for _ in 0..passes {
        for (row, row_times) in times.iter_mut().enumerate() {
            let start = Instant::now();
            for topic in &w.topics {
                out.clear();
                if row == 0 {
                    floor.lookup_into(black_box(topic), &mut out);
                } else {
                    engines[row - 1]
                        .lookup_into(black_box(topic), &mut out)
                        .expect("ftm topics are valid");
                }
                black_box(out.len());
            }
            row_times.push(start.elapsed().as_secs_f64() * 1e9 / per_pass);
        }
    }
    for row_times in &mut times {
        row_times.sort_by(f64::total_cmp);
    }
    let stats = |t: &[f64]| (t[0], t[t.len() / 2], t[t.len() - 1]);
    let (floor_best, floor_median, _) = stats(&times[0]);
    println!(
        "{passes} passes of {} ftm lookups, ns per lookup",
        w.topics.len()
    );
    for (row, row_times) in times.iter().enumerate() {
        let name = if row == 0 { "floor" } else { &names[row - 1] };
        let (best, median, worst) = stats(row_times);
        println!(
            "{name:>18}: fastest {best:6.1} ({:5.2} M/s, {:4.1}x floor)  median {median:6.1} ({:4.1}x)  slowest {worst:6.1}",
            1e3 / best,
            best / floor_best,
            median / floor_median,
        );
    }
}
