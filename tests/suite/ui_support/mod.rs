//! Shared by the TUI tests: the screen's fixture, and ways to change what it shows.

mod fixture;
mod seen;

use opc_core::cluster::ClusterName;
use std::path::PathBuf;
use std::sync::Arc;

use opc_core::cluster::Listed;
use opc_core::pod::PodRecord;
use opc_core::rules::RuleKind;
use opc_core::worker::WorkerStatus;
use ops_pod_cleaner::ui::{ClusterLine, Event, Routed, Snapshot, State, update};

pub use fixture::*;
pub use seen::*;

/// On the one cluster the test screen shows.
pub fn on_demo<T>(item: T) -> Routed<T> {
    Routed::new(&ClusterName::new("demo"), item)
}

/// Replace the findings with `findings`.
pub fn replace(state: &mut State, findings: Vec<impl Into<Listed>>) {
    show(state, findings, demo_synced());
}

/// Replace the findings with `findings`, of the open `clusters`; every pod is abnormal.
pub fn show(state: &mut State, findings: Vec<impl Into<Listed>>, clusters: Vec<ClusterLine>) {
    let findings: Vec<Listed> = findings.into_iter().map(Into::into).collect();
    let total_pods = findings.len();
    update(
        state,
        Event::Snapshot(Snapshot {
            findings,
            total_pods,
            clusters,
            at: now(),
            in_default_order: false,
        }),
    );
}

/// Replace the findings with `n` evicted pods in one namespace, the newest named `pod-00000`.
pub fn load_evicted(state: &mut State, n: i64) {
    let many = (0..n)
        .map(|i| {
            abnormal(
                RuleKind::Evicted,
                "bulk",
                &format!("pod-{i:05}"),
                "Evicted",
                i,
            )
            .into()
        })
        .collect();
    update(
        state,
        Event::Snapshot(Snapshot {
            findings: many,
            total_pods: 150_000,
            clusters: demo_synced(),
            at: now(),
            in_default_order: false,
        }),
    );
}

/// Compare with `tests/snapshots/NAME.txt`. A missing snapshot fails like a different one:
/// `UPDATE_SNAPSHOTS=1` is the one way to write them (then review the diff and commit it).
pub fn assert_snapshot(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(format!("{name}.txt"));
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let Ok(expected) = std::fs::read_to_string(&path) else {
        panic!(
            "no snapshot {}; if this screen is right, write it with UPDATE_SNAPSHOTS=1 and \
             commit it:\n{actual}",
            path.display()
        );
    };
    assert!(
        expected == actual,
        "screen differs from {}:\n--- expected\n{expected}\n--- actual\n{actual}",
        path.display()
    );
}

/// The test screen's one worker reports its status changed by `change`.
pub fn change_worker(state: &mut State, change: impl FnOnce(&mut WorkerStatus)) {
    let mut status = state.worker();
    change(&mut status);
    update(
        state,
        Event::Worker {
            cluster: ClusterName::new("demo"),
            status,
        },
    );
}

/// A fresh snapshot of [`findings`] with `change` applied to every pod.
pub fn change_pods(state: &mut State, change: impl Fn(&mut PodRecord)) {
    let findings = findings()
        .into_iter()
        .map(|mut found| {
            let mut pod = (*found.pod).clone();
            change(&mut pod);
            found.pod = Arc::new(pod);
            found.into()
        })
        .collect();
    update(
        state,
        Event::Snapshot(Snapshot {
            findings,
            total_pods: 27,
            clusters: demo_synced(),
            at: now(),
            in_default_order: false,
        }),
    );
}

/// What the rules find on a pod that cannot pull its image, as a live read judges it.
pub fn pulling_now() -> opc_core::rules::Finding {
    opc_core::rules::Finding {
        rule: RuleKind::ImagePull,
        reason: "ImagePullBackOff".into(),
        message: None,
        container: Some("app".into()),
        since: now(),
        action: opc_core::rules::ActionKind::ScaleToZero,
    }
}
