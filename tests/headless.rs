//! Headless parts: Lease election on the simulated API, the metrics text and /healthz.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use ops_pod_cleaner::cluster::{Health, Scope, ScopeHealth, WatchState};
use ops_pod_cleaner::headless::lease::{Held, Step};
use ops_pod_cleaner::headless::metrics::{Snapshot, healthz, render};
use ops_pod_cleaner::headless::{Elector, LeaseSettings, Role, decide};
use ops_pod_cleaner::rules::RuleKind;
use ops_pod_cleaner::sim::{SimCluster, SimServer};
use ops_pod_cleaner::worker::WorkerStatus;

fn t(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

fn held(holder: &str, renewed: &str) -> Held {
    Held {
        holder: Some(holder.into()),
        renewed: Some(t(renewed)),
        duration: Duration::from_secs(15),
    }
}

#[test]
fn lease_decisions() {
    let now = t("2026-11-20T09:00:10Z");
    assert_eq!(decide(None, "a", now), Step::Create);
    assert_eq!(
        decide(Some(&held("a", "2026-11-20T09:00:00Z")), "a", now),
        Step::Renew
    );
    assert_eq!(
        decide(Some(&held("b", "2026-11-20T09:00:00Z")), "a", now),
        Step::Follow { holder: "b".into() }
    );
    assert_eq!(
        decide(Some(&held("b", "2026-11-20T08:59:50Z")), "a", now),
        Step::TakeOver,
        "expired"
    );
    let released = Held {
        holder: None,
        ..held("b", "2026-11-20T09:00:09Z")
    };
    assert_eq!(decide(Some(&released), "a", now), Step::TakeOver);
}

fn settings(identity: &str) -> LeaseSettings {
    LeaseSettings {
        namespace: "ops".into(),
        name: "ops-pod-cleaner".into(),
        identity: identity.into(),
        duration: Duration::from_secs(15),
        renew_every: Duration::from_secs(5),
    }
}

#[tokio::test]
async fn two_replicas_never_both_lead() {
    let server = SimServer::start(SimCluster::new()).await.unwrap();
    let a = Elector::new(server.client(), settings("a"));
    let b = Elector::new(server.client(), settings("b"));
    let now = Utc::now();
    assert_eq!(a.round(now).await, Ok(Role::Leader));
    assert_eq!(b.round(now).await, Ok(Role::Follower("a".into())));
    assert_eq!(a.round(now).await, Ok(Role::Leader), "renewal");
    // a stops renewing: once the lease has expired, b takes over and a must follow.
    let later = now + chrono::Duration::seconds(20);
    assert_eq!(b.round(later).await, Ok(Role::Leader));
    assert_eq!(a.round(later).await, Ok(Role::Follower("b".into())));
    b.release().await;
    assert_eq!(
        a.round(later).await,
        Ok(Role::Leader),
        "a released lease is taken at once"
    );
}

#[tokio::test]
async fn racing_replicas_are_decided_by_the_resource_version() {
    let server = SimServer::start(SimCluster::new()).await.unwrap();
    let first = Elector::new(server.client(), settings("first"));
    let now = Utc::now();
    first.round(now).await.unwrap();
    // Both see the expired lease at the same time; only one write can carry the current version.
    let later = now + chrono::Duration::seconds(30);
    let (ex, ey) = (
        Elector::new(server.client(), settings("x")),
        Elector::new(server.client(), settings("y")),
    );
    let (x, y) = tokio::join!(ex.round(later), ey.round(later));
    let leaders = [&x, &y]
        .iter()
        .filter(|r| matches!(r, Ok(Role::Leader)))
        .count();
    assert_eq!(leaders, 1, "{x:?} {y:?}");
}

fn health(synced: bool, down_for: Option<Duration>, now: Instant) -> Health {
    let state = match down_for {
        Some(d) => WatchState::Reconnecting {
            since: now - d,
            error: "connection refused".into(),
        },
        None => WatchState::Watching,
    };
    let mut scope = ScopeHealth::new(Scope::All, Duration::from_secs(120));
    scope.state = state;
    scope.synced = synced;
    scope.restarts = 3;
    scope.relists = 1;
    Health {
        scopes: vec![scope],
    }
}

#[test]
fn healthz_is_200_only_when_synced_and_fresh() {
    let now = Instant::now();
    let max = Duration::from_secs(60);
    assert_eq!(healthz(&health(true, None, now), max, now).0, 200);
    assert_eq!(
        healthz(&health(true, Some(Duration::from_secs(30)), now), max, now).0,
        200
    );
    let (code, why) = healthz(&health(true, Some(Duration::from_secs(90)), now), max, now);
    assert_eq!(code, 503);
    assert!(
        why.contains("stale for 90s (more than safety.maxStale): connection refused"),
        "{why}"
    );
    assert_eq!(healthz(&health(false, None, now), max, now).0, 503);
}

#[test]
fn metrics_text_has_every_family() {
    let now = Instant::now();
    let snapshot = Snapshot {
        pods: 120,
        findings: BTreeMap::from([(RuleKind::ImagePull, 40)]),
        actions: BTreeMap::from([
            ((RuleKind::Evicted, "done"), 7),
            ((RuleKind::Evicted, "failed"), 1),
        ]),
        deliveries: BTreeMap::from([(("slack-1a2b3c4d".to_string(), "spooled"), 2)]),
        health: health(true, Some(Duration::from_secs(12)), now),
        worker: WorkerStatus::default(),
        leader: true,
    };
    let text = render(&snapshot, now);
    for line in [
        "opc_pods 120",
        "opc_abnormal_pods{category=\"imagePull\"} 40",
        "opc_abnormal_pods{category=\"evicted\"} 0",
        "opc_actions_total{rule=\"evicted\",outcome=\"done\"} 7",
        "opc_actions_total{rule=\"evicted\",outcome=\"failed\"} 1",
        "opc_watch_restarts_total{scope=\"all namespaces\"} 3",
        "opc_watch_stale_seconds 12.0",
        "opc_report_deliveries_total{sink=\"slack-1a2b3c4d\",result=\"spooled\"} 2",
        "opc_leader 1",
        "# TYPE opc_actions_total counter",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
}
