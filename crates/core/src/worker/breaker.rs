//! The mass-failure breaker: when a rule matches a large share of a namespace or a workload at
//! once, the cause is outside the pods (a registry outage), so acting on each pod would only
//! do damage. Pure: counts in, reasons out.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};

use crate::cluster::Abnormal;
use crate::config::BreakerConfig;
use crate::pod::PodRecord;
use crate::pod::workload_label;
use crate::rules::{ActionKind, RuleKind};

pub use crate::cluster::Census;

/// A group that trips the breaker, for the message.
struct Trip {
    matched: u32,
    total: u32,
    place: String,
}

/// Whether any rule matches enough pods of one namespace to possibly trip: only then is the
/// census of every pod worth taking (a workload's pods are a subset of its namespace's).
pub fn needs_census(findings: &[Abnormal], config: &BreakerConfig) -> bool {
    let mut by_namespace: HashMap<(RuleKind, &str), u32> = HashMap::new();
    findings
        .iter()
        .filter(|f| f.finding.action != ActionKind::None)
        .any(|found| {
            let count = by_namespace
                .entry((found.finding.rule, &found.pod.namespace))
                .or_default();
            *count += 1;
            *count >= config.min_pods
        })
}

/// The rules to pause, each with a loud, specific reason.
pub fn trips(
    findings: &[Abnormal],
    census: &Census,
    config: &BreakerConfig,
    now: DateTime<Utc>,
) -> BTreeMap<RuleKind, String> {
    // A pod that finished (evicted) before the window is a leftover, not part of a failure
    // happening now: it neither counts as a match nor dilutes the share.
    let window = chrono::Duration::from_std(config.window).unwrap_or(chrono::Duration::MAX);
    let recent = |f: &&Abnormal| !finished(&f.pod) || f.finding.time_in_state(now) <= window;
    // (matched, of which finished): finished matches are outside the census, so they are
    // added to its total.
    let mut by_namespace: HashMap<(RuleKind, &str), (u32, u32)> = HashMap::new();
    let mut by_workload: HashMap<(RuleKind, String, String), (u32, u32)> = HashMap::new();
    // A node that stopped reporting strands one or two pods per namespace, under every
    // breaker above: its pods are counted per node, where the cause is.
    let mut by_node: HashMap<(RuleKind, &str), u32> = HashMap::new();
    for found in findings
        .iter()
        .filter(|f| f.finding.action != ActionKind::None)
        .filter(recent)
    {
        if let Some(node) = found
            .pod
            .node
            .as_deref()
            .filter(|_| node_bound(found.finding.rule))
        {
            *by_node.entry((found.finding.rule, node)).or_default() += 1;
        }
        let rule = found.finding.rule;
        let finished = u32::from(finished(&found.pod));
        let count = |c: &mut (u32, u32)| {
            c.0 += 1;
            c.1 += finished;
        };
        count(
            by_namespace
                .entry((rule, &found.pod.namespace))
                .or_default(),
        );
        let key = (
            rule,
            found.pod.namespace.to_string(),
            workload_label(&found.pod),
        );
        count(by_workload.entry(key).or_default());
    }
    let mut worst: BTreeMap<RuleKind, Trip> = BTreeMap::new();
    let namespaces = by_namespace
        .into_iter()
        .map(|((rule, ns), (matched, finished))| {
            let total = census.namespace(ns) + finished;
            (rule, matched, total, format!("in {ns}"))
        });
    let workloads = by_workload
        .into_iter()
        .map(|((rule, ns, w), (matched, finished))| {
            let total = census.workload(&ns, &w);
            (rule, matched, total + finished, format!("of {w} in {ns}"))
        });
    // Every matching pod of a node is the node's trouble: the share is the whole.
    let nodes = by_node
        .into_iter()
        .map(|((rule, node), matched)| (rule, matched, matched, format!("on node {node}")));
    for (rule, matched, total, place) in namespaces.chain(workloads).chain(nodes) {
        let total = total.max(matched);
        let share = f64::from(matched) / f64::from(total.max(1));
        if matched < config.min_pods || share < config.share {
            continue;
        }
        let bigger = worst.get(&rule).is_none_or(|t| matched > t.matched);
        if bigger {
            worst.insert(
                rule,
                Trip {
                    matched,
                    total,
                    place,
                },
            );
        }
    }
    worst
        .into_iter()
        .map(|(rule, t)| {
            let reason = format!(
                "{rule} matches {} of {} pods {}: paused, {}; resumes by itself once fewer \
                 match (safety.breaker.share)",
                t.matched,
                t.total,
                t.place,
                likely_cause(rule)
            );
            (rule, reason)
        })
        .collect()
}

/// Rules whose matches a lost node produces: pods stuck Terminating and pods whose node is
/// lost; their action (a force delete) is the one that must not run on a node that may live.
fn node_bound(rule: RuleKind) -> bool {
    matches!(rule, RuleKind::Terminating | RuleKind::Unknown)
}

fn finished(pod: &PodRecord) -> bool {
    pod.phase.finished()
}

fn likely_cause(rule: RuleKind) -> &'static str {
    match rule {
        RuleKind::ImagePull => "likely a registry outage",
        RuleKind::Evicted => "likely node pressure",
        RuleKind::Terminating | RuleKind::Unknown => {
            "likely a node or kubelet outage (`kubectl get nodes`: a node NotReady or Unknown)"
        }
        _ => "likely a cluster-wide problem, not the pods",
    }
}
