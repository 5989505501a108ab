//! `ftm`: the "Fast Topic Matching" benchmark's exact throughput workload, read from the copy
//! the Python package ships (`python/topicmatch/data/ftm`, its README says how it was made).

use std::path::PathBuf;

use topicmatch_core::Dialect;

use crate::workload::Workload;

/// `$TOPICMATCH_FTM_DIR` if set, else the in-repository copy.
fn ftm_dir() -> PathBuf {
    std::env::var_os("TOPICMATCH_FTM_DIR").map_or_else(
        || {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../python/topicmatch/data/ftm"
            ))
        },
        PathBuf::from,
    )
}

/// 1,000 subscriptions (subscriber = line number) and 100,000 topics, read from the files.
pub fn ftm() -> Workload {
    let read = |file: &str| -> Vec<String> {
        let path = ftm_dir().join(file);
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .lines()
            .map(str::to_owned)
            .collect()
    };
    Workload {
        name: "ftm".into(),
        dialect: Dialect::Amqp,
        subscriptions: read("ftm_subs.txt").into_iter().zip(0..).collect(),
        topics: read("ftm_msgs.txt"),
    }
}
