//! Why a rule is paused: the figures the breaker saw when it paused it. Worded only where it
//! is shown, so a test compares figures, not sentences.

use std::fmt;
use std::time::Duration;

use chrono::TimeDelta;

use crate::config::format_duration;
use crate::place::PauseScope;
use crate::pod::WorkloadId;
use crate::rules::{RuleKind, format_age};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PauseCause {
    /// The rule matches too large a share of a group's pods at once; lifts by itself.
    #[error("{0}")]
    Burst(Burst),
    /// Acting would reach more distinct workloads than `safety.breaker.maxWorkloads`; only a
    /// person lifts it.
    #[error("{0}")]
    Workloads(Bound),
}

/// A share of a group's pods matching one rule at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Burst {
    pub rule: RuleKind,
    pub matched: u32,
    pub total: u32,
    /// The worst group that tripped.
    pub group: Group,
    pub reach: Reach,
    /// The group's node, when it is one and stopped reporting: the confirmed cause.
    pub silent_node: Option<SilentNode>,
}

/// Where the burst is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Group {
    Namespace(String),
    Workload(WorkloadId),
    Node(String),
}

/// How far the bursts reach, which says where their cause likely is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// One namespace: its own cause, or a tenant's doing.
    OneNamespace,
    /// Bursts in these namespaces: a cause the cluster shares.
    Namespaces(Vec<String>),
}

/// A node whose Ready condition is Unknown, and for how long it was when the pause was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SilentNode {
    pub name: String,
    pub silent_for: Option<TimeDelta>,
}

/// How a pause of the workload bound is lifted.
const RESUME: &str = "resume it from the TUI once understood (safety.breaker.maxWorkloads)";

/// The bound on distinct workloads acted on within the breaker's window.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Bound {
    /// One workload more in a namespace that reached the bound.
    #[error(
        "{rule} would act on a {nth} workload ({next}) in {ns} within {within} after {names}: \
         one namespace only (a tenant's throw-away workloads, or its own outage), other \
         namespaces still act; {RESUME}",
        nth = ordinal(acted.len() + 1),
        ns = next.namespace,
        within = format_duration(*window),
        names = joined(acted)
    )]
    InNamespace {
        rule: RuleKind,
        next: WorkloadId,
        acted: Vec<WorkloadId>,
        window: Duration,
    },
    /// A workload in one namespace more, after one each in as many as the bound, all sharing
    /// `shared` (a registry, a node): a cause they share, spread thin.
    #[error(
        "{rule} would act on a workload in a {nth} namespace ({next}) within {within} after \
         {names}, all {shared}: likely an outage of what they share, spread thin; {RESUME}",
        nth = ordinal(acted.len() + 1),
        within = format_duration(*window),
        names = joined(acted)
    )]
    SpreadThin {
        rule: RuleKind,
        next: WorkloadId,
        /// The first acted on in each namespace.
        acted: Vec<WorkloadId>,
        window: Duration,
        shared: PauseScope,
    },
}

impl fmt::Display for Burst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Burst {
            rule,
            matched,
            total,
            group,
            reach,
            silent_node,
        } = self;
        write!(f, "{rule} matches {matched} of {total} pods {group}")?;
        match (reach, silent_node) {
            (Reach::Namespaces(namespaces), _) => {
                let names = listed(namespaces.iter().map(String::as_str));
                let n = namespaces.len();
                let plural = if n == 1 { "" } else { "s" };
                write!(f, ", bursts in {n} namespace{plural} ({names}): ")?;
                match silent_node {
                    Some(node) => node.fmt(f)?,
                    None => f.write_str(likely_cause(*rule))?,
                }
            }
            (Reach::OneNamespace, Some(node)) => write!(f, ": {node}")?,
            (Reach::OneNamespace, None) => f.write_str(
                ": one namespace only (its own cause, or a tenant's doing), other namespaces \
                 still act",
            )?,
        }
        f.write_str("; resumes by itself once fewer match (safety.breaker.share)")
    }
}

impl fmt::Display for Group {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Group::Namespace(ns) => write!(f, "in {ns}"),
            Group::Workload(w) => write!(f, "of {} in {}", w.label(), w.namespace),
            Group::Node(node) => write!(f, "on node {node}"),
        }
    }
}

/// Explained is not safe: a node only cut off from the API server still runs its pods, and a
/// force delete starts second copies elsewhere. So the pause holds as for any burst; its words
/// name the confirmed cause and what makes acting safe.
impl fmt::Display for SilentNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ago = self
            .silent_for
            .map(|d| format!(" {} ago", format_age(d)))
            .unwrap_or_default();
        write!(
            f,
            "node {} stopped reporting{ago} (Ready Unknown); its pods may still run if it is \
             only cut off: confirm it gone (delete the Node, or taint it \
             node.kubernetes.io/out-of-service)",
            self.name
        )
    }
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

fn joined(workloads: &[WorkloadId]) -> String {
    let names: Vec<String> = workloads.iter().map(|w| w.to_string()).collect();
    names.join(", ")
}

fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// Namespaces for a message: the first few, then how many more.
fn listed<'a>(namespaces: impl ExactSizeIterator<Item = &'a str>) -> String {
    const SHOWN: usize = 4;
    let more = namespaces.len().saturating_sub(SHOWN);
    let mut names: Vec<&str> = namespaces.take(SHOWN).collect();
    let tail = format!("{more} more");
    if more > 0 {
        names.push(&tail);
    }
    names.join(", ")
}
