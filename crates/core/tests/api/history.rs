//! The audit log read back on start: a worker restores what was sent recently, so its limits
//! and cooldowns survive a restart.

use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use opc_core::actions::{Audit, AuditLog, AuditRecord, Executor, Origin, Stage};
use opc_core::clock::Clock;
use opc_core::cluster::{Cache, ClusterName};
use opc_core::config::{AuditConfig, Config};
use opc_core::policy::{Flags, Policy};
use opc_core::rules::{RuleKind, Verb, default_chain};
use opc_core::worker::{WorkerOptions, spawn};

use crate::cluster_list::answering;

fn open(dir: &Path) -> AuditLog {
    AuditLog::open(&AuditConfig {
        path: dir.join("audit.jsonl"),
        events: false,
        max_size_mib: 0,
        keep: 5,
    })
    .unwrap()
}

fn intent(cluster: &str, uid: &str, at: DateTime<Utc>) -> AuditRecord {
    AuditRecord {
        time: AuditRecord::stamp(at),
        id: format!("id-{uid}"),
        stage: Stage::Intent,
        cluster: ClusterName::new(cluster),
        origin: Origin::Auto(RuleKind::Evicted),
        actor: "test".into(),
        action: Verb::Delete,
        namespace: "shop".into(),
        name: uid.into(),
        uid: Some(uid.into()),
        workload: None,
        owner: None,
        pod_phase: None,
        shares: None,
        reason: None,
        dry_run: false,
        outcome: None,
        detail: None,
    }
}

fn noon() -> DateTime<Utc> {
    "2026-03-01T12:00:00Z".parse().unwrap()
}

/// What a worker of `cluster` starting at `now` on `log` restores as sent: the built-in
/// policy, not dry-run, whose longest guard window is the breaker's 600 s.
fn targets(log: &AuditLog, cluster: &str, now: DateTime<Utc>) -> Vec<String> {
    let policy = Policy::new(Flags::default(), &Config::default());
    let name = ClusterName::new(cluster);
    let cache = Cache::for_cluster(name.clone(), default_chain(), Clock::starting_at(now));
    let audit = Audit::Log(log.clone());
    let client = answering(500, b"", 1);
    let executor = Executor::new(client, cache.clone(), &policy, name, audit);
    let worker = spawn(cache, Arc::new(executor), &policy, WorkerOptions::default());
    let restored = worker.recent.borrow().clone();
    restored.into_iter().map(|p| p.target.to_string()).collect()
}

#[tokio::test]
async fn recent_actions_are_read_across_rotation_per_cluster_and_future_stamps_count() {
    let dir = tempfile::tempdir().unwrap();
    let now = noon();
    let log = open(dir.path());
    log.write(&intent(
        "eu",
        "before-rotation",
        now - chrono::Duration::seconds(30),
    ))
    .unwrap();
    drop(log);
    // A rotation, then a restart: the current file holds nothing from before.
    std::fs::rename(
        dir.path().join("audit.jsonl"),
        dir.path().join("audit.jsonl.1"),
    )
    .unwrap();
    let log = open(dir.path());
    log.write(&intent("us", "other-cluster", now)).unwrap();
    // Stamped a minute ahead: the clock was stepped back since.
    log.write(&intent("eu", "future", now + chrono::Duration::seconds(60)))
        .unwrap();
    assert_eq!(targets(&log, "eu", now), ["before-rotation", "future"]);
    assert_eq!(targets(&log, "us", now), ["other-cluster"]);
}

#[tokio::test]
async fn a_torn_last_line_does_not_swallow_the_next_record() {
    let dir = tempfile::tempdir().unwrap();
    let now = noon();
    let path = dir.path().join("audit.jsonl");
    std::fs::write(&path, r#"{"time":"2026-01-01T00:00:00Z","id":"torn","st"#).unwrap();
    let log = open(dir.path());
    log.write(&intent("eu", "after-the-tear", now)).unwrap();
    assert_eq!(targets(&log, "eu", now), ["after-the-tear"]);
}
