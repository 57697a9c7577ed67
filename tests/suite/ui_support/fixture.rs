//! The screen's fixture: a fixed clock, abnormal pods, a state after the first snapshot, and
//! the screen as text. `tests/log_pane.rs` includes this file alone, so everything here is
//! what every screen test needs.

use opc_core::cluster::ClusterName;
use std::sync::Arc;

use chrono::{DateTime, Duration, TimeZone, Utc};
use opc_core::cluster::Abnormal;
use opc_core::config::UiConfig;
use opc_core::pod::{ContainerRecord, ContainerState, OwnerRef, Phase, PodRecord};
use opc_core::rules::{Finding, RuleKind, default_chain};
use opc_core::worker::{RuleStatus, WorkerStatus};
use ops_pod_cleaner::ui::{ClusterLine, Event, Snapshot, State, WatchLine, draw, update};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

pub fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 14, 9, 30, 0).unwrap()
}

/// An abnormal pod of `rule`, in that state for `minutes`.
pub fn abnormal(rule: RuleKind, ns: &str, name: &str, reason: &str, minutes: i64) -> Abnormal {
    let action = opc_core::rules::RuleSpec::default_for(rule).action;
    let pod = PodRecord {
        namespace: Arc::from(ns),
        name: name.into(),
        uid: format!("uid-{ns}-{name}").into(),
        node: Some(Arc::from("node-1")),
        phase: Phase::Running,
        reason: None,
        message: None,
        created: Some(now() - Duration::hours(5)),
        started: None,
        deletion: None,
        finalizers: Box::new([]),
        owner: Some(OwnerRef {
            api_version: Arc::from("apps/v1"),
            kind: Arc::from("ReplicaSet"),
            name: format!("{}-rs", name.rsplit_once('-').map_or(name, |(a, _)| a)).into(),
            uid: "rs-uid".into(),
        }),
        ignored: false,
        malformed: false,
        unscheduled: None,
        ready_changed: None,
        not_ready: false,
        claims_volume: false,
        disruption: None,
        containers: Box::new([ContainerRecord {
            name: "app".into(),
            init: false,
            restarts: if rule == RuleKind::CrashLoop { 12 } else { 0 },
            state: ContainerState::Waiting {
                reason: reason.into(),
                message: None,
            },
            last_termination: None,
            memory_limit: None,
        }]),
        reason_seen: None,
    };
    Abnormal::new(
        pod,
        Finding {
            rule,
            reason: reason.into(),
            message: None,
            container: Some("app".into()),
            since: now() - Duration::minutes(minutes),
            action,
        },
    )
    .in_cluster(ClusterName::new("demo"))
}

/// The one cluster the test screen shows, synced.
pub fn demo_synced() -> Vec<ClusterLine> {
    vec![demo_line(WatchLine::Synced)]
}

/// The test screen's cluster with its watch in `watch`.
pub fn demo_line(watch: WatchLine) -> ClusterLine {
    ClusterLine {
        watch,
        pods: 27,
        ..ClusterLine::listing(&ClusterName::new("demo"))
    }
}

/// The demo-like set: a few pods in several categories.
pub fn findings() -> Vec<Abnormal> {
    vec![
        abnormal(RuleKind::Evicted, "shop", "web-5f8-k2x8p", "Evicted", 95),
        abnormal(RuleKind::Evicted, "shop", "web-5f8-q7m4t", "Evicted", 41),
        abnormal(RuleKind::Evicted, "payments", "api-7c9-zz1", "Evicted", 7),
        abnormal(RuleKind::Terminating, "data", "redis-2", "Terminating", 192),
        abnormal(
            RuleKind::ImagePull,
            "shop",
            "recommender-b57-2ws6s",
            "ImagePullBackOff",
            35,
        ),
        abnormal(
            RuleKind::CrashLoop,
            "payments",
            "ledger-worker-9d-x1",
            "CrashLoopBackOff",
            64,
        ),
    ]
}

/// A state as the screen has it after the first snapshot.
pub fn state() -> State {
    state_with_keys(UiConfig::default())
}

/// [`state`], with the config's keys.
pub fn state_with_keys(keys: UiConfig) -> State {
    let mut state = State::new(
        &ClusterName::new("demo"),
        "all namespaces",
        default_chain(),
        keys,
    );
    update(
        &mut state,
        Event::Worker {
            cluster: ClusterName::new("demo"),
            status: WorkerStatus {
                rules: default_chain()
                    .iter()
                    .map(|r| (r.kind, RuleStatus::default()))
                    .collect(),
                ..Default::default()
            },
        },
    );
    update(&mut state, Event::Resize { table_height: 8 });
    update(
        &mut state,
        Event::Snapshot(Snapshot {
            findings: findings().into_iter().map(Into::into).collect(),
            total_pods: 27,
            clusters: demo_synced(),
            at: now(),
            in_default_order: false,
        }),
    );
    state
}

/// The screen as lines of text.
pub fn screen(state: &State, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| draw(state, f)).unwrap();
    let buffer = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..height {
        let line: String = (0..width)
            .map(|x| buffer[(x, y)].symbol().to_string())
            .collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
