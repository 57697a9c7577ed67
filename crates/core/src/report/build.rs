//! From pods to the restart report: filter, group by workload, sort, compare with last time.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::state::RestartState;
use super::{RestartReport, RestartRow, Terms, WorkloadGroup};
use crate::cluster::ClusterName;
use crate::config::ReportConfig;
use crate::pod::WorkloadId;
use crate::pod::{ContainerRecord, PodRecord};

/// Pods with at least `min_restarts` restarts and one of `reasons`, in the report's namespaces,
/// grouped by owning workload; the groups and rows with the most restarts come first, each
/// compared with what `previous` said of `cluster`.
pub fn build(
    pods: &[PodRecord],
    config: &ReportConfig,
    previous: &RestartState,
    cluster: &ClusterName,
    now: DateTime<Utc>,
) -> RestartReport {
    let mut groups: BTreeMap<WorkloadId, Vec<RestartRow>> = BTreeMap::new();
    for pod in pods.iter().filter(|p| qualifies(p, config)) {
        let key = WorkloadId::of(pod);
        let rows = pod
            .containers
            .iter()
            .filter(|c| c.restarts > 0)
            .map(|c| row(pod, c, config, previous.counts_of(cluster)));
        groups.entry(key).or_default().extend(rows);
    }
    let mut groups: Vec<WorkloadGroup> = groups
        .into_iter()
        .map(|(workload, mut rows)| {
            rows.sort_by(|a, b| {
                (b.restarts, &a.pod, &a.container).cmp(&(a.restarts, &b.pod, &b.container))
            });
            WorkloadGroup {
                cluster: None,
                namespace: workload.namespace.to_string(),
                workload: workload.label(),
                rows,
            }
        })
        .collect();
    let most_restarts = |g: &WorkloadGroup| g.rows.iter().map(|r| r.restarts).max().unwrap_or(0);
    groups.sort_by_key(|g| std::cmp::Reverse(most_restarts(g)));
    RestartReport {
        title: config.title.clone(),
        cluster: cluster.to_string(),
        generated: now,
        groups,
        clusters: Vec::new(),
        terms: Some(Terms {
            min_restarts: config.min_restarts.max(1),
            reasons: config.reasons.clone(),
            first: !previous.reported(cluster),
        }),
    }
}

fn qualifies(pod: &PodRecord, config: &ReportConfig) -> bool {
    config.namespaces.admits(&pod.namespace)
        && pod.total_restarts() >= config.min_restarts.max(1)
        && pod
            .containers
            .iter()
            .any(|c| reason(c, &config.reasons).is_some_and(|r| listed(&config.reasons, r)))
}

fn listed(reasons: &[String], reason: &str) -> bool {
    reasons.iter().any(|r| r == reason)
}

/// The reason to show: a listed waiting reason, else how the container last ended.
fn reason<'a>(c: &'a ContainerRecord, reasons: &[String]) -> Option<&'a str> {
    let waiting = c.waiting_reason();
    if let Some(w) = waiting.filter(|w| listed(reasons, w)) {
        return Some(w);
    }
    c.last_end().and_then(|t| t.reason.as_deref()).or(waiting)
}

fn row(
    pod: &PodRecord,
    c: &ContainerRecord,
    config: &ReportConfig,
    previous: &BTreeMap<String, u32>,
) -> RestartRow {
    let key = RestartState::key(&pod.namespace, &pod.name, &c.name);
    // A lower count than last time means a new container instance: count from zero.
    let since_previous = previous
        .get(&key)
        .map(|&before| c.restarts.checked_sub(before).unwrap_or(c.restarts));
    let ended = c.last_end();
    RestartRow {
        pod: pod.name.to_string(),
        container: c.name.to_string(),
        restarts: c.restarts,
        since_previous,
        // How the last run ended (OOMKilled, Error) says more than the back-off it is in.
        last_reason: ended
            .and_then(|t| t.reason.as_deref())
            .or_else(|| reason(c, &config.reasons))
            .map(|r| match c.memory_limit {
                // The limit it reached is the next thing anyone asks.
                Some(limit) if r == "OOMKilled" => {
                    format!("OOMKilled (limit {})", crate::rules::format_bytes(limit))
                }
                _ => r.to_string(),
            }),
        exit_code: ended.map(|t| t.exit_code),
        last_restart: ended.and_then(|t| t.finished),
        node: pod.node.as_deref().map(String::from),
    }
}
