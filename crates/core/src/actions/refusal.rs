//! Why an action was refused, as values a caller can match: the screen remembers a 403 by its
//! variant, not by searching the text. `Display` is the text the log, the audit `detail` and
//! the status line show.

use super::action::PodRef;
use super::failure::Failure;
use super::node::{OUT_OF_SERVICE, SecondCopy};
use super::owner::Unscalable;
use super::owners::OptOut;
use super::retry::Denied;
use super::workload::{REPLICAS_BEFORE_ANNOTATION, ScalableWorkload, WorkloadKind};
use crate::rules::Verb;

/// Why an action cannot work as things stand; nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("read-only mode (--readonly): no actions")]
    Readonly,
    /// The worker asked for an action only a person may run.
    #[error("{0} is a manual-only action")]
    ManualOnly(Verb),
    /// The pod, an owner up its chain, or the workload to scale carries the opt-out annotation.
    #[error("{0}: left alone")]
    OptedOut(OptOut),
    #[error(
        "cannot read the owners of pod {pod}{} to check their opt-out: {cause}",
        owner.as_ref().map_or_else(String::new, |o| format!(" ({o})"))
    )]
    OwnersUnreadable {
        /// `namespace/name`.
        pod: String,
        /// `Kind name` of the pod's owner, if it has one.
        owner: Option<String>,
        cause: Box<Unreadable>,
    },
    #[error("{0}")]
    Unscalable(Unscalable),
    /// A field longer than Kubernetes allows was written to mislead: shown, never acted on.
    #[error(
        "{0} carries a field longer than Kubernetes allows for it (an owner reference's name, or \
         more containers than are kept): it is left alone"
    )]
    Malformed(PodRef),
    #[error(
        "{pod}, as read just now, matches no rule ({now}): the row was older than the pod, or \
         its source was wrong; nothing was done"
    )]
    NotAbnormal {
        pod: PodRef,
        /// The pod as read: its phase and its containers' states.
        now: String,
    },
    /// The worker leaves a workload whose replicas still serve alone.
    #[error(
        "bad rollout: {available} {} still available in {workload}; scaling to 0 would stop them \
         (rule option scaleWhileAvailable), {}",
        if *available == 1 { "replica" } else { "replicas" },
        rollback_advice(workload)
    )]
    BadRollout {
        workload: ScalableWorkload,
        available: i32,
    },
    #[error(
        "{pod} is held by finalizers ({}); a grace-0 delete cannot release it. Find out why, \
         then remove the finalizers by hand",
        finalizers.join(", ")
    )]
    HeldByFinalizers {
        pod: PodRef,
        finalizers: Vec<String>,
    },
    #[error(
        "nowhere to record the {replicas} replicas of {workload} for undo, so it was not scaled: \
         {store}, and {denied}"
    )]
    Unrecorded {
        workload: ScalableWorkload,
        replicas: i32,
        /// Why the parked ConfigMap is not available.
        store: String,
        /// The 403 on the annotation; boxed to keep every outcome small.
        denied: Box<Denied>,
    },
    /// Undo of a workload someone scaled up since.
    #[error(
        "{workload} is not at 0 replicas any more: already restored to {current}; left as it \
         is{}",
        removed.as_ref().map_or_else(String::new, |(replicas, at)| format!(
            " and its record (parked from {replicas} at {at}) removed"
        ))
    )]
    NotAtZero {
        workload: ScalableWorkload,
        current: i32,
        /// The parked record removed with it: its replicas and when it was parked.
        removed: Option<(i32, String)>,
    },
    /// Undo of a workload with no recorded count.
    #[error("{}", not_parked(workload, location, unavailable.as_deref()))]
    NotParked {
        workload: ScalableWorkload,
        /// Where the parked ConfigMap is (`ConfigMap ns/name`).
        location: String,
        /// Why that ConfigMap cannot be used here, when it cannot.
        unavailable: Option<String>,
    },
    /// The audit log cannot be opened or failed earlier: nothing acts until it is fixed.
    #[error("{0}; nothing was done. Fix it, or run with --no-audit to act without a record")]
    AuditBroken(String),
    /// Writing this action's intent to the audit log failed.
    #[error("{0}; nothing was done")]
    AuditUnwritten(String),
    #[error("{0}")]
    Forbidden(Denied),
    /// A force delete that could start a second copy of a pod that must run once: its node is
    /// not confirmed gone. Boxed to keep every outcome small.
    #[error(
        "{pod} {why} and its node {node} is not confirmed gone ({state}): a force delete could \
         start a second copy while the first may still run and write the same volume. Check the \
         node; if it is down for good, mark it with `kubectl taint nodes {node} \
         {OUT_OF_SERVICE}=nodeshutdown:NoExecute` (or delete the Node) and the pod is cleaned up \
         on a later pass",
        pod = .0.pod,
        why = .0.why,
        node = .0.node,
        state = .0.state
    )]
    SecondCopy(Box<SecondCopy>),
}

/// Why an owner could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    #[error("{0}")]
    Forbidden(Denied),
    #[error("{0}")]
    Failed(Failure),
}

impl Refusal {
    /// The 403 behind this refusal, if there is one: asking again would be refused again.
    pub fn forbidden(&self) -> Option<&Denied> {
        match self {
            Refusal::Forbidden(denied) => Some(denied),
            Refusal::Unrecorded { denied, .. } => Some(denied),
            Refusal::OwnersUnreadable { cause, .. } => match cause.as_ref() {
                Unreadable::Forbidden(denied) => Some(denied),
                Unreadable::Failed(_) => None,
            },
            _ => None,
        }
    }
}

/// What to do instead of scaling a workload whose replicas still serve.
fn rollback_advice(w: &ScalableWorkload) -> String {
    match w.kind() {
        WorkloadKind::Deployment | WorkloadKind::StatefulSet => format!(
            "consider `kubectl rollout undo {} -n {}`",
            w.kubectl_name(),
            w.namespace()
        ),
        WorkloadKind::Rollout => format!(
            "consider `kubectl argo rollouts undo {} -n {}`",
            w.name(),
            w.namespace()
        ),
        _ => "fix the failing pods' image or spec".to_string(),
    }
}

/// Why undo has no count to restore, and where else it may be.
fn not_parked(workload: &ScalableWorkload, location: &str, unavailable: Option<&str>) -> String {
    match unavailable {
        None => format!(
            "{workload} has no record in {location} and no {REPLICAS_BEFORE_ANNOTATION} \
             annotation: ops-pod-cleaner did not scale it down"
        ),
        Some(why) => format!(
            "{workload} has no {REPLICAS_BEFORE_ANNOTATION} annotation, and {location} cannot be \
             used here ({why}): if ops-pod-cleaner in the cluster parked it, the count is \
             recorded there; restore it with `kubectl scale --replicas=N {} -n {}`",
            workload.kubectl_name(),
            workload.namespace()
        ),
    }
}
