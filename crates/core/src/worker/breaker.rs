//! The mass-failure breaker: when a rule matches a large share of a namespace or a workload at
//! once, the cause is outside the pods (a registry outage), so acting on each pod would only
//! do damage. Pure: counts in, reasons out.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, Utc};

use super::pause::{Pause, PauseScope, Pauses};
use super::pause_cause::{Burst, Group, PauseCause, Reach, SilentNode};
use crate::cluster::Abnormal;
use crate::config::BreakerConfig;
use crate::node::NodeState;
use crate::node::Readiness::NotReporting;
use crate::pod::PodRecord;
use crate::pod::WorkloadId;
use crate::rules::{ActionKind, RuleKind};

pub use crate::cluster::Census;

/// A group that trips the breaker, for the message.
struct Trip<'a> {
    matched: u32,
    total: u32,
    group: Group,
    /// Where its pods are: one namespace for a namespace or a workload, any for a node.
    namespaces: BTreeSet<&'a str>,
    /// For a node's trip, the node, when it is known to have stopped reporting.
    silent: Option<&'a NodeState>,
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

/// The rules to pause, each with a loud, specific reason: in the namespaces that burst, or
/// across the cluster once bursts span `min_namespaces` namespaces.
pub fn trips(
    findings: &[Abnormal],
    census: &Census,
    config: &BreakerConfig,
    now: DateTime<Utc>,
) -> Pauses {
    // A pod that finished (evicted) before the window is a leftover, not part of a failure
    // happening now: it neither counts as a match nor dilutes the share.
    let window = chrono::Duration::from_std(config.window).unwrap_or(chrono::Duration::MAX);
    let recent = |f: &&Abnormal| !finished(&f.pod) || f.finding.time_in_state(now) <= window;
    // (matched, of which finished): finished matches are outside the census, so they are
    // added to its total.
    let mut by_namespace: HashMap<(RuleKind, &str), (u32, u32)> = HashMap::new();
    let mut by_workload: HashMap<(RuleKind, &str, WorkloadId), (u32, u32)> = HashMap::new();
    // A node that stopped reporting strands one or two pods per namespace, under every
    // breaker above: its pods are counted per node, where the cause is.
    let mut by_node: HashMap<(RuleKind, &str), NodeCount> = HashMap::new();
    for found in findings
        .iter()
        .filter(|f| f.finding.action != ActionKind::None)
        .filter(recent)
    {
        let rule = found.finding.rule;
        let namespace = &*found.pod.namespace;
        if let Some(node) = found.pod.node.as_deref().filter(|_| node_bound(rule)) {
            let on_node = by_node.entry((rule, node)).or_default();
            on_node.0 += 1;
            on_node.1.insert(namespace);
            on_node.2 = on_node
                .2
                .or(found.node().filter(|n| n.readiness == NotReporting));
        }
        let finished = u32::from(finished(&found.pod));
        let count = |c: &mut (u32, u32)| {
            c.0 += 1;
            c.1 += finished;
        };
        count(by_namespace.entry((rule, namespace)).or_default());
        let key = (rule, namespace, WorkloadId::of(&found.pod));
        count(by_workload.entry(key).or_default());
    }
    let namespaces = by_namespace
        .into_iter()
        .map(|((rule, ns), (matched, finished))| {
            let total = census.namespace(ns) + finished;
            (
                rule,
                matched,
                total,
                Group::Namespace(ns.to_string()),
                [ns].into(),
                None,
            )
        });
    let workloads = by_workload
        .into_iter()
        .map(|((rule, ns, w), (matched, finished))| {
            let total = census.workload(&w) + finished;
            (rule, matched, total, Group::Workload(w), [ns].into(), None)
        });
    // Every matching pod of a node is the node's trouble: the share is the whole.
    let nodes = by_node
        .into_iter()
        .map(|((rule, node), (matched, ns, silent))| {
            (
                rule,
                matched,
                matched,
                Group::Node(node.to_string()),
                ns,
                silent,
            )
        });
    let mut tripped: BTreeMap<RuleKind, Vec<Trip>> = BTreeMap::new();
    let groups = namespaces.chain(workloads).chain(nodes);
    for (rule, matched, total, group, namespaces, silent) in groups {
        let total = total.max(matched);
        let share = f64::from(matched) / f64::from(total.max(1));
        if matched < config.min_pods || share < config.share {
            continue;
        }
        tripped.entry(rule).or_default().push(Trip {
            matched,
            total,
            group,
            namespaces,
            silent,
        });
    }
    tripped
        .into_iter()
        .flat_map(|(rule, trips)| scoped(rule, &trips, config.cluster_namespaces(), now))
        .collect()
}

/// A node's matches, the namespaces they are in, and the node if it stopped reporting.
type NodeCount<'a> = (u32, BTreeSet<&'a str>, Option<&'a NodeState>);

/// One rule's pauses: cluster-wide when its trips span enough namespaces, else one per
/// namespace, each named by its worst trip.
fn scoped(
    rule: RuleKind,
    trips: &[Trip],
    cluster_namespaces: usize,
    now: DateTime<Utc>,
) -> Vec<(RuleKind, Pause)> {
    let namespaces: BTreeSet<&str> = trips.iter().flat_map(|t| t.namespaces.clone()).collect();
    let worst = |ns: Option<&str>| {
        // The first of the biggest: a namespace before one of its workloads.
        trips
            .iter()
            .rev()
            .filter(|t| ns.is_none_or(|ns| t.namespaces.contains(ns)))
            .max_by_key(|t| t.matched)
    };
    let pause = |scope: PauseScope, t: &Trip, reach: Reach| {
        let burst = Burst {
            rule,
            matched: t.matched,
            total: t.total,
            group: t.group.clone(),
            reach,
            silent_node: t.silent.map(|node| SilentNode {
                name: node.name.to_string(),
                silent_for: node.as_of().map(|at| now - at),
            }),
        };
        (rule, Pause::new(scope, PauseCause::Burst(burst)))
    };
    if namespaces.len() >= cluster_namespaces {
        let reach = Reach::Namespaces(namespaces.iter().map(|ns| ns.to_string()).collect());
        return worst(None)
            .map(|t| pause(PauseScope::Cluster, t, reach))
            .into_iter()
            .collect();
    }
    namespaces
        .iter()
        .filter_map(|ns| {
            let scope = PauseScope::Namespace(ns.to_string());
            Some(pause(scope, worst(Some(ns))?, Reach::OneNamespace))
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
