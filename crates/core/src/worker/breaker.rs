//! The mass-failure breaker: when a rule matches a large share of a namespace or a workload at
//! once, the cause is outside the pods (a registry outage), so acting on each pod would only
//! do damage. Pure: counts in, reasons out.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, Utc};

use super::pause::{Pause, Pauses};
use super::pause_cause::{Burst, Group, PauseCause, Reach, SilentNode};
use crate::cluster::Abnormal;
use crate::config::BreakerConfig;
use crate::node::{NodeState, Readiness::NotReporting};
use crate::place::{PauseScope, node_bound};
use crate::pod::WorkloadId;
use crate::rules::{ActionKind, RuleKind};

use crate::cluster::Census;

/// A group that trips the breaker, for the message.
struct Trip<'a> {
    matched: u32,
    total: u32,
    group: Group,
    /// Where its pods are: one namespace for a namespace or a workload, any for a node.
    namespaces: BTreeSet<&'a str>,
    /// What its pods share with other namespaces' (the registries they pull from).
    shared: BTreeSet<PauseScope>,
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

/// The rules to pause, each with a loud, specific reason: in the namespaces that burst, on the
/// node whose pods burst, and, once bursts in `min_namespaces` namespaces pull from one
/// registry, for that registry. Never wider than what the failing pods share.
pub fn trips(
    findings: &[Abnormal],
    census: &Census,
    config: &BreakerConfig,
    now: DateTime<Utc>,
) -> Pauses {
    // A pod that finished (evicted) before the window is a leftover, not part of a failure
    // happening now: it neither counts as a match nor dilutes the share.
    let window = chrono::Duration::from_std(config.window).unwrap_or(chrono::Duration::MAX);
    let recent = |f: &&Abnormal| !f.pod.phase.finished() || f.finding.time_in_state(now) <= window;
    let mut by_namespace: HashMap<(RuleKind, &str), Count> = HashMap::new();
    let mut by_workload: HashMap<(RuleKind, &str, WorkloadId), Count> = HashMap::new();
    // A node in trouble strands one or two pods per namespace, under every breaker above:
    // its pods are counted per node, where the cause is.
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
        let registry = found
            .place()
            .shared
            .filter(|s| matches!(s, PauseScope::Registry(_)));
        let finished = u32::from(found.pod.phase.finished());
        let count = |c: &mut Count| {
            c.matched += 1;
            c.finished += finished;
            c.shared.extend(registry.clone());
        };
        count(by_namespace.entry((rule, namespace)).or_default());
        let key = (rule, namespace, WorkloadId::of(&found.pod));
        count(by_workload.entry(key).or_default());
    }
    let namespaces = by_namespace.into_iter().map(|((rule, ns), c)| {
        let total = census.namespace(ns) + c.finished;
        let group = Group::Namespace(ns.to_string());
        (rule, c, total, group, [ns].into(), None)
    });
    let workloads = by_workload.into_iter().map(|((rule, ns, w), c)| {
        let total = census.workload(&w) + c.finished;
        (rule, c, total, Group::Workload(w), [ns].into(), None)
    });
    // Every matching pod of a node is the node's trouble: the share is the whole.
    let nodes = by_node
        .into_iter()
        .map(|((rule, node), (matched, ns, silent))| {
            let count = Count {
                matched,
                ..Count::default()
            };
            let group = Group::Node(node.to_string());
            (rule, count, matched, group, ns, silent)
        });
    let mut tripped: BTreeMap<RuleKind, Vec<Trip>> = BTreeMap::new();
    let groups = namespaces.chain(workloads).chain(nodes);
    for (rule, count, total, group, namespaces, silent) in groups {
        let matched = count.matched;
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
            shared: count.shared,
            silent,
        });
    }
    tripped
        .into_iter()
        .flat_map(|(rule, mut trips)| {
            // Counted in maps: put them in an order of their own, for the same words each pass.
            trips.sort_by_cached_key(|t| (t.namespaces.first().copied(), t.group.to_string()));
            scoped(rule, &trips, config.shared_namespaces(), now)
        })
        .collect()
}

/// A group's matches, of which finished, and the registries its pods pull from.
#[derive(Default)]
struct Count {
    matched: u32,
    finished: u32,
    shared: BTreeSet<PauseScope>,
}

/// A node's matches, the namespaces they are in, and the node if it stopped reporting.
type NodeCount<'a> = (u32, BTreeSet<&'a str>, Option<&'a NodeState>);

/// One rule's pauses, per node, namespace and registry as [`trips`] says, each named by its
/// worst trip.
fn scoped(
    rule: RuleKind,
    trips: &[Trip],
    shared_namespaces: usize,
    now: DateTime<Utc>,
) -> Vec<(RuleKind, Pause)> {
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
    // The first of the biggest: a namespace before one of its workloads.
    let worst = |keep: &dyn Fn(&Trip) -> bool| {
        trips
            .iter()
            .rev()
            .filter(|t| keep(t))
            .max_by_key(|t| t.matched)
    };
    let listed = |namespaces: &BTreeSet<&str>| namespaces.iter().map(|ns| ns.to_string()).collect();
    let of_namespaces = |t: &Trip| !matches!(t.group, Group::Node(_));
    let mut pauses = Vec::new();
    for t in trips {
        // A node is what its pods share only on the node's own word (it stopped reporting)
        // or once pods of enough namespaces fail there: one tenant's pods are its own.
        let shared = t.silent.is_some() || t.namespaces.len() >= shared_namespaces;
        if let (Group::Node(node), true) = (&t.group, shared) {
            let reach = Reach::Namespaces(listed(&t.namespaces));
            pauses.push(pause(PauseScope::Node(node.clone()), t, reach));
        }
    }
    let namespaces: BTreeSet<&str> = trips
        .iter()
        .filter(|t| of_namespaces(t))
        .flat_map(|t| t.namespaces.iter().copied())
        .collect();
    for ns in namespaces {
        if let Some(t) = worst(&|t| of_namespaces(t) && t.namespaces.contains(ns)) {
            let scope = PauseScope::Namespace(ns.to_string());
            pauses.push(pause(scope, t, Reach::OneNamespace));
        }
    }
    let registries: BTreeSet<&PauseScope> = trips.iter().flat_map(|t| &t.shared).collect();
    for registry in registries {
        let sharing = |t: &Trip| of_namespaces(t) && t.shared.contains(registry);
        let namespaces: BTreeSet<&str> = trips
            .iter()
            .filter(|t| sharing(t))
            .flat_map(|t| t.namespaces.iter().copied())
            .collect();
        if namespaces.len() < shared_namespaces {
            continue;
        }
        if let Some(t) = worst(&sharing) {
            let reach = Reach::Namespaces(listed(&namespaces));
            pauses.push(pause(registry.clone(), t, reach));
        }
    }
    pauses
}
