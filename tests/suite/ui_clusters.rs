//! Several clusters on one screen, on the pure state: merged counts, the cluster column, a
//! filter by cluster, actions routed to the pod's own cluster, one cluster down, add and drop.

use crate::ui_support;
use opc_core::cluster::ClusterName;

use opc_core::actions::{
    Action, Denied, Origin, Outcome, ParkedList, ParkedRow, ParkedState, PodRef, RecordedIn,
    Refusal, ScalableWorkload, Trigger, UndoPlan, WorkloadKind,
};
use opc_core::cluster::Abnormal;
use opc_core::config::{KeyBinding, WireFormat};
use opc_core::rules::RuleKind;
use opc_core::worker::{Blocked, RuleStatus, WorkerStatus};
use ops_pod_cleaner::ui::{ClusterLine, Effect, Event, Routed, Snapshot, State, WatchLine, update};
use std::time::Duration;
use ui_support::{abnormal, assert_snapshot, findings, now, screen, seen, state};

fn press(state: &mut State, keys: &str) -> Vec<Effect> {
    keys.split_whitespace()
        .flat_map(|k| update(state, Event::Key(KeyBinding::parse(k).unwrap())))
        .collect()
}

fn line(name: &str, watch: WatchLine, pods: usize) -> ClusterLine {
    ClusterLine {
        watch,
        pods,
        ..ClusterLine::listing(&ClusterName::new(name))
    }
}

/// The second cluster's findings: two evicted pods (one named like a pod of the first) and an
/// image pull error.
fn us_findings() -> Vec<Abnormal> {
    vec![
        abnormal(RuleKind::Evicted, "shop", "web-5f8-k2x8p", "Evicted", 12)
            .in_cluster(ClusterName::new("demo-us")),
        abnormal(RuleKind::Evicted, "search", "indexer-0", "Evicted", 3)
            .in_cluster(ClusterName::new("demo-us")),
        abnormal(
            RuleKind::ImagePull,
            "search",
            "query-6d4-x1",
            "ImagePullBackOff",
            20,
        )
        .in_cluster(ClusterName::new("demo-us")),
    ]
}

fn snapshot(us: WatchLine) -> Event {
    let mut all = findings();
    all.extend(us_findings());
    Event::Snapshot(Snapshot {
        findings: all.into_iter().map(Into::into).collect(),
        total_pods: 27 + 40,
        clusters: vec![line("demo", WatchLine::Synced, 27), line("demo-us", us, 40)],
        at: now(),
        in_default_order: false,
    })
}

/// The cluster and the pod each drawn row names.
fn cluster_and_pod(s: &State) -> Vec<(String, String)> {
    seen(s)
        .rows()
        .iter()
        .map(|row| {
            let mut cells = row.trim_matches('│').split_whitespace();
            let cluster = cells.next().unwrap_or_default().to_string();
            let _namespace = cells.next();
            (cluster, cells.next().unwrap_or_default().to_string())
        })
        .collect()
}

/// The test screen with a second cluster, `demo-us`, open next to `demo`.
fn two_clusters() -> State {
    let mut s = state();
    update(&mut s, snapshot(WatchLine::Synced));
    s
}

#[test]
fn counts_add_up_across_clusters_and_rows_name_their_cluster() {
    let s = two_clusters();
    assert_eq!(seen(&s).count(1), 3 + 2, "evicted in both clusters");
    assert_eq!(seen(&s).count(3), 1 + 1, "image pull in both clusters");
    let rows = cluster_and_pod(&s);
    let rows: Vec<(&str, &str)> = rows.iter().map(|(c, p)| (c.as_str(), p.as_str())).collect();
    assert_eq!(
        rows,
        [
            ("demo", "web-5f8-k2x8p"),
            ("demo", "web-5f8-q7m4t"),
            ("demo-us", "web-5f8-k2x8p"),
            ("demo", "api-7c9-zz1"),
            ("demo-us", "indexer-0"),
        ],
        "one table, longest in state first, whichever cluster"
    );
    assert_snapshot("clusters_two_80x24", &screen(&s, 80, 24));
    assert_snapshot("clusters_two_120x24", &screen(&s, 120, 24));
}

#[test]
fn one_cluster_hides_the_cluster_column() {
    let s = state();
    assert!(!screen(&s, 120, 24).contains("CLUSTER"));
    assert!(screen(&two_clusters(), 120, 24).contains("CLUSTER"));
}

#[test]
fn the_filter_matches_the_cluster_name() {
    let mut s = two_clusters();
    press(&mut s, "/ d e m o - u s Enter");
    let clusters: Vec<String> = cluster_and_pod(&s).into_iter().map(|(c, _)| c).collect();
    // Across every category: each of that cluster's rows, and no other.
    let theirs = us_findings().len();
    assert_eq!(clusters, vec!["demo-us"; theirs]);
    assert!(theirs > 2, "more than the current category's");
    // Words narrow it: the cluster and a category.
    press(&mut s, "Esc / d e m o - u s Space i m a g e p u l l Enter");
    let image_pulls_there = (us_findings().iter())
        .filter(|a| a.finding.rule == RuleKind::ImagePull)
        .count();
    let rows = cluster_and_pod(&s);
    assert!(image_pulls_there > 0);
    assert_eq!(rows.len(), image_pulls_there, "{rows:?}");
    assert!(rows.iter().all(|(c, _)| c == "demo-us"), "{rows:?}");
}

#[test]
fn an_action_on_a_pod_of_the_second_cluster_goes_to_that_cluster_only() {
    let mut s = two_clusters();
    press(&mut s, "/ i n d e x e r Enter");
    let effects = press(&mut s, "d");
    let Some(Effect::CheckOptOuts(pods)) = effects.first() else {
        panic!("expected the opt-out check, got {effects:?}");
    };
    assert_eq!(pods.len(), 1);
    assert_eq!(pods[0].cluster.as_str(), "demo-us");
    update(
        &mut s,
        Event::OptOuts(Ok(ops_pod_cleaner::ui::Checked::default())),
    );
    let dialog = seen(&s).dialog().expect("the dialog");
    assert!(
        dialog.lines[0].starts_with("demo-us  search/indexer-0"),
        "the dialog names the cluster: {:?}",
        dialog.lines
    );
    let effects = press(&mut s, "y");
    let target = us_findings()
        .into_iter()
        .find(|a| &*a.pod.name == "indexer-0");
    let pod = PodRef::of(&target.unwrap().pod);
    assert_eq!(
        effects,
        [Effect::Run(vec![Routed::new(
            &ClusterName::new("demo-us"),
            Action::Delete(pod)
        )])]
    );
}

#[test]
fn marks_across_clusters_route_each_pod_to_its_own() {
    let mut s = two_clusters();
    // The two pods named web-5f8-k2x8p, one per cluster (Space marks and moves down).
    press(&mut s, "Space Down Space");
    let effects = press(&mut s, "d");
    let Some(Effect::CheckOptOuts(pods)) = effects.first() else {
        panic!("expected the opt-out check, got {effects:?}");
    };
    let routed: Vec<(&str, &str)> = pods
        .iter()
        .map(|p| (p.cluster.as_str(), p.item.name.as_str()))
        .collect();
    assert_eq!(
        routed,
        [("demo", "web-5f8-k2x8p"), ("demo-us", "web-5f8-k2x8p")]
    );
}

/// demo-us's API refuses to delete its pod `indexer-0` with 403.
fn refuse_delete_on_us(s: &mut State) {
    let us_pod = PodRef::of(&us_findings()[1].pod);
    update(
        s,
        Event::Outcome {
            action: Routed::new(&ClusterName::new("demo-us"), Action::Delete(us_pod)),
            outcome: Outcome::Refused(Refusal::Forbidden(Denied {
                verb: "delete",
                resource: "pods",
                namespace: "search".into(),
                message: "403 forbidden: cannot delete pods".into(),
                context: Some(ClusterName::new("demo-us")),
            })),
        },
    );
}

#[test]
fn a_refusal_on_one_cluster_leaves_the_other_available() {
    let mut s = two_clusters();
    refuse_delete_on_us(&mut s);
    press(&mut s, "Home d");
    assert!(seen(&s).checking(), "a pod of demo stays deletable");
    update(&mut s, Event::Key(KeyBinding::parse("Esc").unwrap()));
    press(&mut s, "/ i n d e x e r Enter d");
    let dialog = seen(&s).dialog().expect("an unavailable dialog");
    assert!(
        dialog
            .unavailable
            .as_ref()
            .is_some_and(|why| why.contains("demo-us")),
        "{dialog:?}"
    );
}

#[test]
fn a_cluster_that_is_down_is_summarised_in_the_header_and_detailed_on_c() {
    let mut s = state();
    let down = WatchLine::Reconnecting {
        secs: 42,
        error: "connection refused (tcp connect error: 10.0.0.7:6443)".into(),
    };
    update(&mut s, snapshot(down));
    let screen80 = screen(&s, 80, 24);
    let header = screen80.lines().next().unwrap();
    assert!(header.contains("2 clusters"), "{header}");
    assert!(header.contains("1/2 synced"), "{header}");
    assert_eq!(
        seen(&s).count(1),
        5,
        "the live cluster's findings stay on screen while the other is down"
    );
    assert_snapshot("clusters_one_down_80x24", &screen80);
    press(&mut s, "C");
    assert!(seen(&s).all().contains(" Clusters (C or Esc closes) "));
    assert_snapshot("clusters_detail_100x24", &screen(&s, 100, 24));
    press(&mut s, "Esc");
    assert!(seen(&s).nothing_over_the_table());
}

#[test]
fn space_in_the_context_list_adds_and_drops_contexts() {
    let mut s = state();
    update(
        &mut s,
        Event::Contexts(Ok(vec![
            ClusterName::new("demo"),
            ClusterName::new("demo-us"),
        ])),
    );
    let effects = press(&mut s, "Down Space");
    assert_eq!(effects, [Effect::AddContext(ClusterName::new("demo-us"))]);
    update(&mut s, Event::Added(Ok(ClusterName::new("demo-us"))));
    assert_eq!(s.cluster_lines().len(), 2);
    update(&mut s, snapshot(WatchLine::Synced));
    assert_eq!(seen(&s).count(1), 5);

    update(
        &mut s,
        Event::Contexts(Ok(vec![
            ClusterName::new("demo"),
            ClusterName::new("demo-us"),
        ])),
    );
    let effects = press(&mut s, "Space");
    assert_eq!(effects, [Effect::DropContext(ClusterName::new("demo"))]);
    assert_eq!(s.cluster_lines().len(), 1);
    assert_eq!(seen(&s).count(1), 2, "only demo-us's evicted pods remain");
    let us_only: usize = seen(&s).counts().iter().sum();
    assert_eq!(us_only, us_findings().len(), "no pod of demo is left");

    update(
        &mut s,
        Event::Contexts(Ok(vec![
            ClusterName::new("demo"),
            ClusterName::new("demo-us"),
        ])),
    );
    let effects = press(&mut s, "Down Space");
    assert!(effects.is_empty(), "the last open context is not dropped");
    assert_eq!(s.cluster_lines().len(), 1);
}

#[test]
fn each_clusters_worker_is_shown_held_or_paused_with_its_name() {
    let mut s = two_clusters();
    let rules = |paused: Option<&str>| {
        let bound = |ns: &str| crate::support::pauses::fourth_workload_in(ns, RuleKind::Evicted);
        opc_core::rules::default_chain()
            .iter()
            .map(|r| {
                let status = RuleStatus {
                    auto: r.kind == RuleKind::Evicted,
                    paused: paused
                        .filter(|_| r.kind == RuleKind::Evicted)
                        .map(bound)
                        .into_iter()
                        .collect(),
                    ..Default::default()
                };
                (r.kind, status)
            })
            .collect()
    };
    for (cluster, paused) in [("demo", None), ("demo-us", Some("tenant"))] {
        update(
            &mut s,
            Event::Worker {
                cluster: ClusterName::new(cluster),
                status: WorkerStatus {
                    master_auto: true,
                    rules: rules(paused),
                    ..Default::default()
                },
            },
        );
    }
    let worker = s.worker();
    let evicted = &worker.rules[&RuleKind::Evicted];
    assert!(evicted.auto);
    let mut theirs = crate::support::pauses::fourth_workload_in("tenant", RuleKind::Evicted);
    theirs.cluster = Some(ClusterName::new("demo-us"));
    assert_eq!(evicted.paused, [theirs]);
    assert!(
        evicted.paused[0]
            .why()
            .starts_with("demo-us: evicted would act on a 4th workload"),
        "{}",
        evicted.paused[0].why()
    );
}

fn parked_row(cluster: &str, name: &str, before: i32, minutes: i64) -> ParkedRow {
    ParkedRow {
        cluster: ClusterName::new(cluster),
        workload: ScalableWorkload::new(WorkloadKind::Deployment, "search", name),
        uid: format!("uid-{name}"),
        replicas_before: before,
        parked_at: Some(now() - chrono::Duration::minutes(minutes)),
        parked_for_seconds: Some(minutes * 60),
        origin: Some(Origin::Auto(RuleKind::ImagePull)),
        actor: Some("ops-pod-cleaner-0".into()),
        trigger: Some(Trigger {
            pod: Some(format!("{name}-6d4-x1")),
            rule: Some(RuleKind::ImagePull),
            reason: Some("imagePull: ImagePullBackOff".into()),
            message: Some("manifest unknown".into()),
        }),
        recorded_in: RecordedIn::ConfigMap,
        now: ParkedState::Parked,
    }
}

#[test]
fn the_parked_view_lists_every_clusters_workloads_and_undoes_on_the_right_one() {
    let mut s = two_clusters();
    assert_eq!(press(&mut s, "P"), [Effect::ListParked]);
    let mut stale = parked_row("demo", "query", 2, 30);
    stale.now = ParkedState::ScaledUp { replicas: 2 };
    update(
        &mut s,
        Event::Parked(ParkedList {
            rows: vec![parked_row("demo-us", "indexer", 3, 125), stale],
            unread: Vec::new(),
        }),
    );
    assert_snapshot("parked_two_clusters_120x24", &screen(&s, 120, 24));

    let effects = press(&mut s, "u");
    let workload = Routed::new(
        &ClusterName::new("demo-us"),
        parked_row("demo-us", "indexer", 3, 0).workload,
    );
    assert_eq!(effects, [Effect::CheckUndo(workload.clone())]);
    update(
        &mut s,
        Event::UndoChecked {
            workload: workload.clone(),
            result: Ok(UndoPlan {
                workload: workload.item.clone(),
                restores: 3,
                recorded_in: RecordedIn::ConfigMap,
                record: None,
            }),
        },
    );
    let dialog = seen(&s).dialog().expect("the undo dialog");
    assert!(
        dialog.lines.iter().any(|l| l.contains("from 0 to 3")),
        "{dialog:?}"
    );
    assert_eq!(
        press(&mut s, "y"),
        [Effect::Run(vec![Routed::new(
            &ClusterName::new("demo-us"),
            Action::UndoScale(workload.item.clone())
        )])]
    );
}

#[test]
fn undo_of_a_workload_scaled_up_since_says_so_and_runs_nothing() {
    let mut s = two_clusters();
    press(&mut s, "P");
    update(
        &mut s,
        Event::Parked(ParkedList {
            rows: vec![parked_row("demo", "query", 2, 30)],
            unread: Vec::new(),
        }),
    );
    let effects = press(&mut s, "Enter");
    let [Effect::CheckUndo(workload)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    update(
        &mut s,
        Event::UndoChecked {
            workload: workload.clone(),
            result: Err(Outcome::Refused(Refusal::NotAtZero {
                workload: workload.item.clone(),
                current: 2,
                removed: None,
            })),
        },
    );
    let dialog = seen(&s).dialog().expect("a dialog");
    let Some(why) = &dialog.unavailable else {
        panic!("expected nothing to run: {dialog:?}");
    };
    assert!(why.contains("not at 0 replicas"), "{why}");
    assert!(press(&mut s, "y").is_empty());
}

/// Both clusters blocked: the header names both, each with its reason.
#[test]
fn every_blocked_cluster_is_named() {
    let mut s = two_clusters();
    let stale = Blocked::Stale {
        stale: Duration::from_secs(40),
        cause: None,
    };
    for (cluster, why) in [("demo", Blocked::NotSynced), ("demo-us", stale)] {
        update(
            &mut s,
            Event::Worker {
                cluster: ClusterName::new(cluster),
                status: WorkerStatus {
                    blocked: Some(why),
                    ..WorkerStatus::default()
                },
            },
        );
    }
    let blocked = s.blocked().unwrap_or_default();
    assert!(
        blocked.contains("demo: waiting for the first complete list")
            && blocked.contains("demo-us: watch stale for 40s"),
        "{blocked}"
    );
}

/// The runtime's list of open clusters is the truth: a cluster it no longer lists leaves no
/// worker, refusal or scaled workload behind, and opened again it starts afresh.
#[test]
fn a_cluster_the_runtime_no_longer_lists_leaves_nothing_behind() {
    let mut s = two_clusters();
    update(
        &mut s,
        Event::Worker {
            cluster: ClusterName::new("demo-us"),
            status: WorkerStatus {
                blocked: Some(Blocked::NotSynced),
                ..WorkerStatus::default()
            },
        },
    );
    refuse_delete_on_us(&mut s);
    update(
        &mut s,
        Event::Tick {
            now: now(),
            clusters: vec![line("demo", WatchLine::Synced, 27)],
        },
    );
    assert_eq!(
        s.blocked(),
        None,
        "demo-us's worker no longer speaks for the screen"
    );

    update(&mut s, Event::Added(Ok(ClusterName::new("demo-us"))));
    update(&mut s, snapshot(WatchLine::Synced));
    press(&mut s, "/ i n d e x e r Enter d");
    assert!(
        seen(&s).checking(),
        "demo-us opened again has no refusal from before"
    );
}

#[test]
fn the_header_counts_the_nodes_that_stopped_reporting_in_every_cluster() {
    let mut s = two_clusters();
    assert!(!screen(&s, 160, 24).contains("not reporting"));
    let Event::Snapshot(mut snap) = snapshot(WatchLine::Synced) else {
        unreachable!("a snapshot")
    };
    snap.clusters[0].nodes_not_reporting = 2;
    snap.clusters[1].nodes_not_reporting = 1;
    update(&mut s, Event::Snapshot(snap));
    let header = screen(&s, 160, 24);
    let first = header.lines().next().unwrap_or_default();
    assert!(first.contains("3 nodes not reporting"), "{header}");
}

#[test]
fn the_cluster_list_says_which_wire_format_each_cluster_speaks() {
    let mut s = two_clusters();
    let Event::Snapshot(mut snap) = snapshot(WatchLine::Synced) else {
        unreachable!("a snapshot")
    };
    snap.clusters[0].wire = Some(WireFormat::Protobuf);
    snap.clusters[1].wire = Some(WireFormat::Json);
    update(&mut s, Event::Snapshot(snap));
    press(&mut s, "C");
    let detail = screen(&s, 120, 24);
    let of = |pods: &str| {
        detail
            .lines()
            .find(|l| l.contains(pods))
            .unwrap_or_default()
    };
    assert!(of("pods 27").contains("protobuf"), "demo: {detail}");
    assert!(of("pods 40").contains("json"), "demo-us: {detail}");
}

#[test]
fn the_cluster_list_says_why_nodes_are_not_watched() {
    let mut s = two_clusters();
    let Event::Snapshot(mut snap) = snapshot(WatchLine::Synced) else {
        unreachable!("a snapshot")
    };
    snap.clusters[1].nodes_unreadable =
        Some("permission denied: list nodes at cluster scope\x1b[2J".into());
    update(&mut s, Event::Snapshot(snap));
    press(&mut s, "C");
    let detail = screen(&s, 120, 24);
    let lines: Vec<&str> = detail.lines().collect();
    let us = lines.iter().position(|l| l.contains("pods 40")).unwrap();
    assert!(
        lines[us + 1].contains("nodes not watched: permission denied: list nodes at cluster scope"),
        "under the cluster it is about: {detail}"
    );
    assert_eq!(detail.matches("nodes not watched").count(), 1, "{detail}");
    assert!(!detail.contains('\x1b'), "text from the API is made inert");
}
