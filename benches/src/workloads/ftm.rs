//! `ftm`: the seed benchmark's exact throughput workload (`shared/workloads/ftm`).

use std::path::PathBuf;

use topicmatch_core::Dialect;

use crate::workload::Workload;

fn ftm_dir() -> PathBuf {
    std::env::var_os("TOPICMATCH_FTM_DIR").map_or_else(
        || {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../shared/workloads/ftm"
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
