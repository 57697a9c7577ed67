//! A cluster fed by its in-cluster worker shows on screen as a watched one does: the row a
//! worker serves becomes the same table line and details text as the pod it was made from.

use opc_core::cluster::ClusterName;
use std::sync::Arc;

use opc_core::actions::{PodReading, ReadError};
use opc_core::cluster::{Abnormal, Listed};
use opc_core::config::KeyBinding;
use opc_core::fleet::{
    BlockedView, FeedError, FeedStatus, FindingRow, PausedRule, StaleWhy, WatchWhy, WorkerAnswer,
    WorkerView,
};
use opc_core::pod::{OwnerRef, PodRecord};
use opc_core::report::RestartReport;
use opc_core::rules::{ActionKind, Cause, Finding, RuleKind, cause};
use opc_core::worker::BlockedKind;
use ops_pod_cleaner::ui::{ClusterLine, Event, PodDetails, SourceLine, State, WatchLine, update};

use crate::ui_support::{abnormal, assert_snapshot, findings, now, replace, screen, show, state};

/// The cause `found`'s worker gives: what it read, which this process did not.
fn workers_cause(found: &Abnormal) -> Cause {
    cause(
        &found.pod,
        &found.finding,
        found.events(),
        found.node(),
        now(),
    )
}

/// `found` as its cluster's worker serves it, turned back into what the screen lists.
fn through_a_worker(found: &Abnormal) -> Listed {
    let told = workers_cause(found);
    FindingRow::new(&found.cluster, &found.pod, &found.finding, told, now()).into()
}

/// The screen showing `found` alone: the table wide enough for every column, then its details
/// once read, with `worker`'s word on the pod where its cluster is read through its worker.
fn screens(found: impl Into<Listed>, worker: Option<WorkerAnswer>) -> (String, String) {
    let found: Listed = found.into();
    let mut s: State = state();
    replace(&mut s, vec![found.clone()]);
    let rule = found.rule();
    while s.current_kind() != Some(rule) {
        update(&mut s, Event::Key(KeyBinding::parse("Tab").unwrap()));
    }
    let table = screen(&s, 170, 16);
    update(&mut s, Event::Key(KeyBinding::parse("Enter").unwrap()));
    let details = PodDetails::from_reading(&reading(&found, worker));
    let uid = found.uid().to_string();
    update(
        &mut s,
        Event::Details {
            uid,
            result: Ok(details),
        },
    );
    (table, screen(&s, 170, 24))
}

/// The pod of `found` as the details pane reads it, and `worker`'s word on it.
fn reading(found: &Listed, worker: Option<WorkerAnswer>) -> PodReading {
    let pod = serde_json::from_value(serde_json::json!({
        "metadata": {
            "name": found.name(),
            "namespace": found.namespace(),
            "uid": found.uid(),
        }
    }))
    .unwrap();
    let unread = ReadError::Failed {
        what: "the owners".into(),
        why: "not read here".into(),
    };
    PodReading {
        pod,
        inspection: Err(unread),
        events: Ok(Vec::new()),
        worker,
    }
}

/// `found` with its pod and finding changed, its cause class found again as a cache would.
fn changed(
    found: &Abnormal,
    pod: impl FnOnce(&mut PodRecord),
    finding: impl FnOnce(&mut Finding),
) -> Abnormal {
    let (mut record, mut found_now) = ((*found.pod).clone(), (*found.finding).clone());
    pod(&mut record);
    finding(&mut found_now);
    Abnormal::new(record, found_now).in_cluster(found.cluster.clone())
}

fn owner(api_version: &str, kind: &str, name: &str) -> OwnerRef {
    OwnerRef {
        api_version: Arc::from(api_version),
        kind: Arc::from(kind),
        name: name.into(),
        uid: "owner-uid".into(),
    }
}

fn assert_same_screens(watched: Abnormal) {
    let fed = through_a_worker(&watched);
    assert!(fed.watched().is_none(), "a fed row is what its worker told");
    let word = WorkerAnswer::Cause(workers_cause(&watched));
    let (table, details) = screens(watched, None);
    let (fed_table, fed_details) = screens(fed, Some(word));
    assert_eq!(table, fed_table, "the table line differs");
    assert_eq!(details, fed_details, "the details text differs");
}

#[test]
fn a_crash_looping_pod_of_a_deployment_reads_the_same_fed_or_watched() {
    let watched = abnormal(
        RuleKind::CrashLoop,
        "payments",
        "ledger-worker-9d-x1",
        "CrashLoopBackOff",
        64,
    );
    let watched = changed(
        &watched,
        |pod| pod.owner.as_mut().unwrap().name = "ledger-worker-7d9f8c6b5".into(),
        |_| {},
    );
    assert_same_screens(watched);
}

#[test]
fn a_stuck_deletion_with_finalizers_reads_the_same_fed_or_watched() {
    let watched = abnormal(RuleKind::Terminating, "data", "redis-2", "Terminating", 192);
    let since = watched.finding.since;
    let watched = changed(
        &watched,
        |pod| {
            pod.deletion = Some(since);
            pod.finalizers = Box::new(["kubernetes.io/pvc-protection".into(), "x/y".into()]);
            pod.owner = Some(owner("apps/v1", "StatefulSet", "redis"));
        },
        |finding| {
            finding.message = Some("finalizers: kubernetes.io/pvc-protection, x/y".into());
            finding.container = None;
        },
    );
    assert_same_screens(watched.clone());
    let fed = through_a_worker(&watched);
    let watched = Listed::from(watched);
    assert_eq!(fed.finalizers(), watched.finalizers());
    assert!(fed.deleting() && watched.deleting());
    assert_eq!(fed.since(), watched.since());
}

#[test]
fn a_pod_claiming_a_deployment_directly_reads_unproven_fed_or_watched() {
    let watched = abnormal(
        RuleKind::CrashLoop,
        "shop",
        "web-x1",
        "CrashLoopBackOff",
        30,
    );
    let watched = changed(
        &watched,
        |pod| pod.owner = Some(owner("apps/v1", "Deployment", "checkout")),
        |finding| finding.action = ActionKind::ScaleToZero,
    );
    let (table, _) = screens(watched.clone(), None);
    assert!(table.contains("unproven"), "{table}");
    assert_same_screens(watched);
}

#[test]
fn a_malformed_pod_reads_malformed_fed_or_watched() {
    let watched = abnormal(RuleKind::Evicted, "shop", "web-5f8-k2x8p", "Evicted", 95);
    let watched = changed(&watched, |pod| pod.malformed = true, |_| {});
    let fed = through_a_worker(&watched);
    assert_eq!(
        fed.held(),
        Some(opc_core::fleet::Held::Malformed),
        "a malformed pod stays one: never acted on"
    );
    assert_same_screens(watched);
}

#[test]
fn the_details_of_a_fed_row_give_the_workers_cause_not_a_weaker_one() {
    let watched = abnormal(RuleKind::Pending, "shop", "web-x1", "Unschedulable", 30);
    let mut told = cause(&watched.pod, &watched.finding, &[], None, now());
    told.detail = "the worker read the node: disk pressure".into();
    told.evidence.push(opc_core::rules::Evidence {
        source: "event FailedScheduling".into(),
        text: "0/3 nodes are available\u{1b}[2J".into(),
    });
    let fed = through_a_worker(&watched);
    let (_, details) = screens(fed, Some(WorkerAnswer::Cause(told)));
    assert!(details.contains("disk pressure"), "{details}");
    assert!(
        details.contains("event FailedScheduling: 0/3 nodes"),
        "{details}"
    );
    assert!(
        !details.contains('\u{1b}'),
        "a worker's text reaches the screen inert"
    );
}

#[test]
fn a_fed_rows_cause_is_the_workers_word_asked_when_its_details_open() {
    let watched = abnormal(RuleKind::Pending, "shop", "web-x1", "Unschedulable", 30);
    let fed = through_a_worker(&watched);
    let mut s: State = state();
    replace(&mut s, vec![fed.clone()]);
    while s.current_kind() != Some(RuleKind::Pending) {
        press(&mut s, "Tab");
    }
    press(&mut s, "Enter");
    let asking = screen(&s, 170, 24);
    assert!(
        asking.contains("asking the cluster's worker why"),
        "{asking}"
    );
    assert!(
        !asking.contains("next:"),
        "no weaker cause of its own: {asking}"
    );
    for (word, said) in [
        (
            WorkerAnswer::NotAbnormal,
            "lists the pod as abnormal no more",
        ),
        (
            WorkerAnswer::Unanswered(FeedError::Silent {
                after: std::time::Duration::from_secs(10),
            }),
            "its worker did not say why",
        ),
    ] {
        let (_, details) = screens(fed.clone(), Some(word));
        assert!(details.contains(said), "{details}");
    }
}

#[test]
fn the_report_pane_shows_a_fed_clusters_restarts_as_its_worker_counts_them() {
    let mut s = state();
    let fed: Vec<Listed> = findings().iter().map(through_a_worker).collect();
    let line = fed_line(
        "eu",
        WatchLine::Synced,
        FeedStatus::Live,
        WorkerView::default(),
    );
    show(&mut s, fed, vec![line]);
    // The worker's report says no container restarts often enough: the pane says so.
    let served = RestartReport {
        terms: None,
        title: "restarts".into(),
        cluster: "eu".into(),
        generated: now(),
        groups: Vec::new(),
        clusters: Vec::new(),
    };
    update(&mut s, Event::Report(served));
    press(&mut s, "h");
    let text = screen(&s, 120, 30);
    assert!(
        text.contains("eu is read through its worker: its restarts are as the worker counts them"),
        "{text}"
    );
    assert!(text.contains("no container restarts"), "{text}");
}

fn press(state: &mut State, keys: &str) {
    for k in keys.split_whitespace() {
        update(state, Event::Key(KeyBinding::parse(k).unwrap()));
    }
}

fn fed_line(name: &str, watch: WatchLine, status: FeedStatus, worker: WorkerView) -> ClusterLine {
    ClusterLine {
        watch,
        pods: 3,
        source: SourceLine::Worker { status, worker },
        ..ClusterLine::listing(&ClusterName::new(name))
    }
}

fn forbidden() -> FeedError {
    FeedError::Forbidden {
        verb: "get",
        resource: "services/proxy",
        namespace: "ops-pod-cleaner".into(),
        name: "ops-pod-cleaner:9091".into(),
    }
}

#[test]
fn one_fed_cluster_says_so_next_to_its_name_and_counts_at_least_its_pods() {
    let mut s = state();
    let fed: Vec<Listed> = findings().iter().map(through_a_worker).collect();
    let line = fed_line(
        "demo",
        WatchLine::Synced,
        FeedStatus::Live,
        WorkerView::default(),
    );
    show(&mut s, fed, vec![line]);
    let text = screen(&s, 100, 24);
    assert!(text.contains("ctx demo via worker"), "{text}");
    assert!(text.contains("pods ≥6"), "{text}");
    assert_snapshot("fed_one_cluster_100x24", &text);
}

#[test]
fn a_stale_fed_cluster_shows_as_a_stale_watch_does_next_to_a_watched_one() {
    let mut s = state();
    let mut all: Vec<Listed> = findings().into_iter().map(Listed::from).collect();
    all.extend(
        findings()
            .iter()
            .take(3)
            .map(|a| through_a_worker(&a.clone().in_cluster(ClusterName::new("eu")))),
    );
    let stale = WatchLine::Reconnecting {
        secs: 25,
        error: "the worker's own view of its cluster is stale".into(),
    };
    let status = FeedStatus::Stale {
        since: std::time::Instant::now(),
        why: StaleWhy::WorkerStale,
    };
    let clusters = vec![
        ClusterLine {
            watch: WatchLine::Synced,
            pods: 27,
            ..ClusterLine::listing(&ClusterName::new("demo"))
        },
        fed_line("eu", stale, status, WorkerView::default()),
    ];
    show(&mut s, all, clusters);
    let header = screen(&s, 80, 24);
    assert!(header.contains("1/2 synced · 1 via worker"), "{header}");
    assert!(header.contains("eu down 25 s"), "{header}");
    assert_snapshot("fed_header_two_clusters_one_stale_80x24", &header);
    press(&mut s, "C");
    let dialog = screen(&s, 120, 24);
    assert!(
        dialog.contains("via its worker (abnormal pods only): stale"),
        "{dialog}"
    );
    assert_snapshot("fed_clusters_dialog_120x24", &dialog);
}

#[test]
fn a_watch_that_auto_fell_back_to_says_why_in_the_clusters_dialog() {
    let mut s = state();
    let clusters = vec![
        ClusterLine {
            watch: WatchLine::Synced,
            pods: 27,
            source: SourceLine::Watch(WatchWhy::NoWorker(forbidden())),
            ..ClusterLine::listing(&ClusterName::new("demo"))
        },
        fed_line(
            "eu",
            WatchLine::Reconnecting {
                secs: 0,
                error: forbidden().to_string(),
            },
            FeedStatus::Failing(forbidden()),
            WorkerView::default(),
        ),
    ];
    show(&mut s, findings(), clusters);
    press(&mut s, "C");
    let dialog = screen(&s, 160, 24);
    assert!(
        dialog.contains("watch, since no worker to read"),
        "{dialog}"
    );
    assert!(dialog.contains("services/proxy"), "{dialog}");
    assert!(dialog.contains("failing, retrying"), "{dialog}");
}

#[test]
fn the_rules_pane_shows_the_in_cluster_workers_switches_read_only() {
    let mut s = state();
    let worker = WorkerView {
        leading: true,
        master_auto: true,
        blocked: Some(BlockedView {
            kind: BlockedKind::Stale,
            why: "watch stale for 31s".into(),
        }),
        paused: vec![PausedRule {
            rule: RuleKind::ImagePull,
            why: "burst in shop".into(),
            resumable: true,
        }],
        ..WorkerView::default()
    };
    let fed: Vec<Listed> = findings().iter().map(through_a_worker).collect();
    show(
        &mut s,
        fed,
        vec![fed_line(
            "demo",
            WatchLine::Synced,
            FeedStatus::Live,
            worker,
        )],
    );
    press(&mut s, "Right");
    let text = screen(&s, 200, 24);
    assert!(
        text.contains("demo's in-cluster worker (read-only here): leading, auto ON"),
        "{text}"
    );
    assert!(text.contains("blocked: watch stale for 31s"), "{text}");
    assert!(text.contains("imagePull PAUSED: burst in shop"), "{text}");
}
