//! What the screen holds for each open cluster (`src/ui/cluster_view.rs`), as the screen shows
//! it: the clusters' list (`C`), the rows, the actions a 403 left unavailable, the worker's
//! switches in the header, and what undo (`u`) restores.

use crate::ui_support;

use opc_core::actions::{
    Action, Change, Denied, Outcome, PodRef, Refusal, ScalableWorkload, WorkloadKind,
};
use opc_core::cluster::ClusterName;
use opc_core::config::{KeyBinding, UiConfig};
use opc_core::rules::{RuleKind, default_chain};
use opc_core::worker::WorkerStatus;
use ops_pod_cleaner::ui::{ClusterLine, Effect, Event, Routed, Snapshot, State, WatchLine, update};
use ui_support::{abnormal, now, seen};

fn press(state: &mut State, keys: &str) -> Vec<Effect> {
    keys.split_whitespace()
        .flat_map(|k| update(state, Event::Key(KeyBinding::parse(k).unwrap())))
        .collect()
}

fn line(name: &ClusterName, watch: WatchLine) -> ClusterLine {
    ClusterLine {
        watch,
        pods: 3,
        ..ClusterLine::listing(name)
    }
}

fn deployment(name: &str) -> ScalableWorkload {
    ScalableWorkload::new(WorkloadKind::Deployment, "shop", name)
}

fn c(name: &str) -> ClusterName {
    ClusterName::new(name)
}

/// A screen on `first` alone, listing.
fn screen_on(first: &str) -> State {
    let mut s = State::new(
        &c(first),
        "all namespaces",
        default_chain(),
        UiConfig::default(),
    );
    update(&mut s, Event::Resize { table_height: 8 });
    s
}

/// `name` opened next to the others.
fn open(s: &mut State, name: &str) {
    update(s, Event::Added(Ok(c(name))));
}

/// A worker's report for `cluster`, its master switch on: the header says whose it takes.
fn worker_of(s: &mut State, cluster: &str) {
    let status = WorkerStatus {
        master_auto: true,
        ..WorkerStatus::default()
    };
    update(
        s,
        Event::Worker {
            cluster: c(cluster),
            status,
        },
    );
}

/// Whether the header shows a worker's master switch on.
fn auto_on(s: &State) -> bool {
    seen(s).all().lines().nth(1).unwrap().starts_with("AUTO ON")
}

/// The open clusters as the clusters' list (`C`) names them, in its order.
fn names(s: &mut State) -> Vec<String> {
    press(s, "C");
    let all = seen(s).all();
    press(s, "Esc");
    let lines: Vec<Vec<char>> = all.lines().map(|l| l.chars().collect()).collect();
    let (top, x) = (lines.iter().enumerate())
        .find_map(|(y, l)| {
            let text: String = l.iter().collect();
            let at = text.find("┌ Clusters (C or Esc closes) ")?;
            Some((y, text[..at].chars().count()))
        })
        .expect("the clusters' list");
    (lines[top + 1..].iter())
        .take_while(|l| l.get(x) != Some(&'└'))
        .filter(|l| l.get(x + 1).is_some_and(|c| !c.is_whitespace()))
        .map(|l| {
            let inside: String = l[x + 1..].iter().collect();
            inside.split_whitespace().next().unwrap().to_string()
        })
        .collect()
}

/// `cluster`'s API refuses to delete `pod` with 403; what the screen will say of it.
fn forbid_delete(s: &mut State, cluster: &str, pod: PodRef) -> String {
    let refusal = Refusal::Forbidden(Denied {
        verb: "delete",
        resource: "pods",
        namespace: pod.namespace.clone(),
        message: "403".into(),
        context: Some(c(cluster)),
    });
    let said = refusal.to_string();
    update(
        s,
        Event::Outcome {
            action: Routed::new(&c(cluster), Action::Delete(pod)),
            outcome: Outcome::Refused(refusal),
        },
    );
    said
}

/// `workload` on `cluster` was scaled to zero from this screen.
fn scaled(s: &mut State, cluster: &str, workload: ScalableWorkload) {
    let pod = PodRef {
        namespace: "shop".into(),
        name: format!("{}-0", workload.name()),
        uid: format!("{cluster}-{}", workload.name()),
    };
    update(
        s,
        Event::Outcome {
            action: Routed::new(&c(cluster), Action::ScaleToZero(pod)),
            outcome: Outcome::Done(Change::Scaled {
                workload,
                from: 2,
                annotation: None,
            }),
        },
    );
}

/// `workload` on `cluster` has its replicas back.
fn restored(s: &mut State, cluster: &str, workload: &ScalableWorkload) {
    update(
        s,
        Event::Outcome {
            action: Routed::new(&c(cluster), Action::UndoScale(workload.clone())),
            outcome: Outcome::Done(Change::Restored {
                workload: workload.clone(),
                replicas: 2,
                left: None,
            }),
        },
    );
}

/// `name` closed from the context list (Space on an open context drops it).
fn close(s: &mut State, name: &str) {
    let open: Vec<ClusterName> = names(s).iter().map(|n| c(n)).collect();
    let at = open.iter().position(|n| n.as_str() == name).unwrap();
    // The list opens on the first open context: here, the first listed.
    update(s, Event::Contexts(Ok(open)));
    for _ in 0..at {
        press(s, "Down");
    }
    press(s, "Space");
}

#[test]
fn a_sync_keeps_what_listed_clusters_hold_in_the_lists_order() {
    let mut clusters = screen_on("eu");
    open(&mut clusters, "us");
    // A pod of each, to see what a sync keeps of them.
    let (eu_pod, us_pod) = (
        abnormal(RuleKind::Evicted, "shop", "web-1", "Evicted", 5).in_cluster(c("eu")),
        abnormal(RuleKind::Evicted, "shop", "web-2", "Evicted", 3).in_cluster(c("us")),
    );
    let us_ref = PodRef::of(&us_pod.pod);
    update(
        &mut clusters,
        Event::Snapshot(Snapshot {
            findings: vec![eu_pod.into(), us_pod.into()],
            total_pods: 6,
            clusters: vec![
                line(&c("eu"), WatchLine::Synced),
                line(&c("us"), WatchLine::Synced),
            ],
            at: now(),
            in_default_order: false,
        }),
    );
    worker_of(&mut clusters, "us");
    let refused = forbid_delete(&mut clusters, "us", us_ref);
    update(
        &mut clusters,
        Event::Tick {
            now: now(),
            clusters: vec![
                line(&c("us"), WatchLine::Synced),
                line(&c("ap"), WatchLine::Listing),
            ],
        },
    );
    let rows = seen(&clusters).rows();
    assert!(
        rows.len() == 1 && rows[0].contains("web-2"),
        "eu is no longer listed: {rows:?}"
    );
    assert_eq!(names(&mut clusters), ["us", "ap"]);
    press(&mut clusters, "d");
    let dialog = seen(&clusters).dialog().expect("a dialog");
    assert_eq!(
        dialog.unavailable,
        Some(format!("the API of us refused this before: {refused}"))
    );
    press(&mut clusters, "Esc");
    assert!(auto_on(&clusters), "us's worker is kept");
}

#[test]
fn a_worker_of_a_cluster_not_open_is_not_kept() {
    let mut clusters = screen_on("eu");
    worker_of(&mut clusters, "us");
    assert!(!auto_on(&clusters));
}

#[test]
fn undo_finds_the_newest_scaling_whichever_cluster_it_is_on() {
    let mut clusters = screen_on("eu");
    open(&mut clusters, "us");
    scaled(&mut clusters, "us", deployment("a"));
    scaled(&mut clusters, "eu", deployment("b"));
    scaled(&mut clusters, "us", deployment("c"));
    // Undo checks the newest scaling against its cluster: the effect names which it is.
    let last = |clusters: &mut State| {
        let effects = press(clusters, "u");
        press(clusters, "Esc");
        let [Effect::CheckUndo(last)] = effects.as_slice() else {
            panic!("{effects:?}");
        };
        Some((last.cluster.clone(), last.item.name().to_string()))
    };
    assert_eq!(last(&mut clusters), Some((c("us"), "c".to_string())));
    restored(&mut clusters, "us", &deployment("c"));
    assert_eq!(last(&mut clusters), Some((c("eu"), "b".to_string())));
    close(&mut clusters, "eu");
    assert_eq!(last(&mut clusters), Some((c("us"), "a".to_string())));
}
