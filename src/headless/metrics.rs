//! `/metrics` in the Prometheus text format and the `/healthz` verdict: pure functions of a
//! snapshot, so the numbers are tested without a server.

use std::collections::BTreeMap;
use std::fmt::{Display, Write};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use opc_core::cluster::{Health, ScopeHealth, WatchState};
use opc_core::rules::{CauseClass, RuleKind};
use opc_core::worker::{Blocked, WorkerStatus};

#[derive(Debug, Clone)]
pub struct Snapshot {
    pub pods: usize,
    /// Nodes whose Ready condition is Unknown: their kubelet stopped reporting.
    pub nodes_not_reporting: usize,
    /// Events about pods the cache does not hold, dropped at the bound of their namespace.
    pub events_dropped: u64,
    pub findings: BTreeMap<(RuleKind, CauseClass), u64>,
    pub actions: BTreeMap<(RuleKind, &'static str), u64>,
    pub deliveries: BTreeMap<(String, &'static str), u64>,
    pub health: Health,
    pub worker: WorkerStatus,
    pub leader: bool,
}

pub fn render(s: &Snapshot, now: Instant) -> String {
    let mut out = String::new();
    cache_metrics(&mut out, s);
    rule_metrics(&mut out, s);
    watch_metrics(&mut out, &s.health, now);
    worker_metrics(&mut out, s);
    out
}

/// What the cache holds: pods, silent nodes, abnormal pods by category and cause.
fn cache_metrics(out: &mut String, s: &Snapshot) {
    single(out, "opc_pods", "gauge", "Pods in the watch cache.", s.pods);
    single(
        out,
        "opc_nodes_not_reporting",
        "gauge",
        "Nodes whose Ready condition is Unknown (their kubelet stopped reporting).",
        s.nodes_not_reporting,
    );
    single(
        out,
        "opc_events_dropped_total",
        "counter",
        "Warning Events about pods the cache does not hold, dropped at the bound of their \
         namespace (a namespace writing Events about pods that do not exist).",
        s.events_dropped,
    );
    metric(
        out,
        "opc_abnormal_pods",
        "gauge",
        "Abnormal pods by category and cause (sum by category for the totals).",
    );
    for rule in RuleKind::ALL {
        let mut causes = s
            .findings
            .iter()
            .filter(|((r, _), _)| *r == rule)
            .peekable();
        // A category with none keeps a series, at 0.
        if causes.peek().is_none() {
            let _ = writeln!(out, "opc_abnormal_pods{{category=\"{rule}\"}} 0");
        }
        for ((_, cause), count) in causes {
            let _ = writeln!(
                out,
                "opc_abnormal_pods{{category=\"{rule}\",cause=\"{cause}\"}} {count}"
            );
        }
    }
}

/// What each rule's auto-clean did and why it waits.
fn rule_metrics(out: &mut String, s: &Snapshot) {
    metric(
        out,
        "opc_actions_total",
        "counter",
        "Automatic actions by rule and outcome.",
    );
    for ((rule, outcome), count) in &s.actions {
        let _ = writeln!(
            out,
            "opc_actions_total{{rule=\"{rule}\",outcome=\"{outcome}\"}} {count}"
        );
    }
    metric(
        out,
        "opc_rule_paused",
        "gauge",
        "Pauses the mass-failure breaker holds a rule by, per scope: a namespace, a registry \
         (bursts in several namespaces pulling from it), a node; which ones is in the log.",
    );
    for (rule, status) in &s.worker.rules {
        for scope in ["namespace", "registry", "node"] {
            let count = status
                .paused
                .iter()
                .filter(|p| p.scope.kind() == scope)
                .count();
            let _ = writeln!(
                out,
                "opc_rule_paused{{rule=\"{rule}\",scope=\"{scope}\"}} {count}"
            );
        }
    }
    metric(
        out,
        "opc_auto_held_targets",
        "gauge",
        "Targets auto-clean refused for a lasting reason (an opt-out, a bad rollout with \
         available replicas, finalizers) and waits to retry; the reason is in the log.",
    );
    for (rule, status) in &s.worker.rules {
        let _ = writeln!(
            out,
            "opc_auto_held_targets{{rule=\"{rule}\"}} {}",
            status.held
        );
    }
}

/// Report deliveries, the Lease, and whether the worker can act.
fn worker_metrics(out: &mut String, s: &Snapshot) {
    metric(
        out,
        "opc_report_deliveries_total",
        "counter",
        "Report deliveries by sink and result.",
    );
    for ((sink, result), count) in &s.deliveries {
        let _ = writeln!(
            out,
            "opc_report_deliveries_total{{sink=\"{sink}\",result=\"{result}\"}} {count}"
        );
    }
    let leader = u8::from(s.leader);
    let help = "1 when this replica holds the lease and may act.";
    single(out, "opc_leader", "gauge", help, leader);
    let blocked = u8::from(s.worker.blocked.is_some());
    let help = "1 while no automatic action can run.";
    single(out, "opc_worker_blocked", "gauge", help, blocked);
    let audit_failing = matches!(s.worker.blocked, Some(Blocked::AuditLog(_)));
    single(
        out,
        "opc_audit_failing",
        "gauge",
        "1 while the audit log cannot be written (nothing acts unrecorded, so nothing acts).",
        u8::from(audit_failing),
    );
}

fn watch_metrics(out: &mut String, health: &Health, now: Instant) {
    let help = "Watch reconnects by scope.";
    per_scope(
        out,
        health,
        "opc_watch_restarts_total",
        "counter",
        help,
        |scope| scope.restarts,
    );
    per_scope(
        out,
        health,
        "opc_watch_forbidden",
        "gauge",
        "1 while the API server refuses this identity the list or watch of a scope (403): its \
         pods cannot be seen, and the counts above are not zero but unknown.",
        |scope| u64::from(matches!(scope.state, WatchState::Forbidden(_))),
    );
    let help = "Relists after 410 Gone by scope.";
    per_scope(
        out,
        health,
        "opc_watch_relists_total",
        "counter",
        help,
        |scope| scope.relists,
    );
    metric(
        out,
        "opc_wire_format",
        "gauge",
        "1 for the format (protobuf or json) the API server last sent a scope's pods in, by list or watch.",
    );
    for scope in &health.scopes {
        if let Some(format) = scope.format {
            let _ = writeln!(
                out,
                "opc_wire_format{{scope=\"{}\",format=\"{}\"}} 1",
                scope.scope,
                format.name()
            );
        }
    }
    let stale = health.stale_for(now).unwrap_or_default();
    single(
        out,
        "opc_watch_stale_seconds",
        "gauge",
        "Age of the stalest view (seconds since it was last proved in sync with the API server) once past the freshness bound; 0 while fresh.",
        format!("{:.1}", stale.as_secs_f64()),
    );
    let help = "1 once every scope has been listed completely.";
    single(out, "opc_synced", "gauge", help, u8::from(health.synced()));
}

fn metric(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// A metric of one series, without labels.
fn single(out: &mut String, name: &str, kind: &str, help: &str, value: impl Display) {
    metric(out, name, kind, help);
    let _ = writeln!(out, "{name} {value}");
}

/// A metric with a series per watched scope.
fn per_scope(
    out: &mut String,
    health: &Health,
    name: &str,
    kind: &str,
    help: &str,
    value: impl Fn(&ScopeHealth) -> u64,
) {
    metric(out, name, kind, help);
    for scope in &health.scopes {
        let _ = writeln!(out, "{name}{{scope=\"{}\"}} {}", scope.scope, value(scope));
    }
}

/// The worker loop starts a pass every tick (10 s); one that has not started a pass for this
/// long is stuck. Generous: a pass may hold many actions, each bounded by its own deadline.
pub const WORKER_STALL: Duration = Duration::from_secs(600);

/// Liveness: 503 only when the worker loop has not started a pass within `stall`, which a
/// restart can fix; never for the API server being down or slow, which relisting only loads.
pub fn healthz(
    worker: &WorkerStatus,
    started: DateTime<Utc>,
    stall: Duration,
    now: DateTime<Utc>,
) -> (u16, String) {
    let since = worker
        .last_pass
        .max(worker.last_progress)
        .unwrap_or(started);
    let idle = (now - since).to_std().unwrap_or_default();
    if idle > stall {
        let secs = idle.as_secs();
        let why = format!("the auto-clean worker has not started a pass for {secs}s\n");
        return (503, why);
    }
    (200, "ok\n".into())
}

/// Readiness: 200 when synced and not stale longer than `max_stale`; 503 with the reason.
pub fn readyz(health: &Health, max_stale: Duration, now: Instant) -> (u16, String) {
    if !health.synced() {
        return (
            503,
            "not synced yet: waiting for the first complete list of pods\n".into(),
        );
    }
    match stale_past(health, max_stale, now) {
        Some(why) => (503, format!("{why}\n")),
        None => (200, "ok\n".into()),
    }
}

/// Why the cache is too stale to act on (stale longer than `max_stale`), if it is.
pub(crate) fn stale_past(health: &Health, max_stale: Duration, now: Instant) -> Option<Blocked> {
    let stale = health.stale_for(now).filter(|s| *s > max_stale)?;
    Some(Blocked::Stale {
        stale,
        cause: health.last_error(),
    })
}
