//! Cleanup actions: small values that pass through a confirmation, then an executor that
//! re-checks, acts with preconditions, and records what happened.

mod append;
mod audit;
mod events;
mod execute;
mod history;
mod node;
mod owner;
mod owners;
mod parked;
mod parked_rows;
mod proof;
mod reads;
mod record;
mod refusal;
mod retry;
mod scale;
mod undo;

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};

/// The `tracing` target of the action log: every action, manual or automatic, and every hold
/// and pause of the worker, one line each. The TUI's log pane and `headless`'s default output
/// show it whatever else the log filter leaves out.
pub const ACTION_LOG: &str = "action";

pub use crate::rules::Verb;
pub use audit::{AuditLog, AuditRecord, Stage};
pub use execute::Executor;
pub use history::PastAction;
pub use node::OUT_OF_SERVICE;
pub use owner::{Resolution, Unscalable, WorkloadKind, WorkloadRef};
pub use owners::{FOLLOWED_OWNERS, OptOut};
pub use parked::{DEFAULT_NAMESPACE, PARKED_CONFIGMAP, ParkedRecord, parked_namespace};
pub use parked_rows::{ParkedList, ParkedRow, ParkedState, Trigger};
pub use parked_rows::{Unread, list_parked};
pub use proof::{Suspect, Unproven};
pub use reads::{ClusterApi, Inspection, LOG_BYTES, LOG_LINES, PodReading, ReadError};
pub use record::Audit;
pub use refusal::{Denied, Refusal, SecondCopy};
pub use retry::RetryPolicy;
pub use undo::{RecordedIn, UndoPlan};

use crate::pod::PodRecord;
use crate::rules::{ActionKind, RuleKind};

/// The annotation that remembers a workload's replicas before it was scaled to zero: where
/// earlier versions always kept it, and the fallback when the parked ConfigMap is not available
/// to the identity (see `parked.rs`).
pub const REPLICAS_BEFORE_ANNOTATION: &str = "ops-pod-cleaner.io/replicas-before";

/// Exactly one pod: a new pod with the same name is a different pod.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PodRef {
    pub namespace: String,
    pub name: String,
    pub uid: String,
}

impl PodRef {
    pub fn of(pod: &PodRecord) -> PodRef {
        PodRef {
            namespace: pod.namespace.to_string(),
            name: pod.name.to_string(),
            uid: pod.uid.to_string(),
        }
    }
}

impl fmt::Display for PodRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pod {}/{}", self.namespace, self.name)
    }
}

/// A destructive operation, confirmed before it runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Action {
    Delete(PodRef),
    /// Delete with `gracePeriodSeconds: 0`.
    ForceDelete(PodRef),
    /// Through the Eviction API, honouring PodDisruptionBudgets.
    Evict(PodRef),
    /// Scale the workload that owns the pod to zero, remembering its replicas.
    ScaleToZero(PodRef),
    UndoScale(WorkloadRef),
    /// Manual only: lets a pod held by finalizers go.
    RemoveFinalizers(PodRef),
}

impl Action {
    /// The action a rule plans for a pod, if it plans one.
    pub(crate) fn planned(kind: ActionKind, pod: PodRef) -> Option<Action> {
        match kind {
            ActionKind::None => None,
            ActionKind::Delete => Some(Action::Delete(pod)),
            ActionKind::ForceDelete => Some(Action::ForceDelete(pod)),
            ActionKind::ScaleToZero => Some(Action::ScaleToZero(pod)),
            ActionKind::Evict => Some(Action::Evict(pod)),
        }
    }

    pub fn verb(&self) -> Verb {
        match self {
            Action::Delete(_) => Verb::Delete,
            Action::ForceDelete(_) => Verb::ForceDelete,
            Action::Evict(_) => Verb::Evict,
            Action::ScaleToZero(_) => Verb::ScaleToZero,
            Action::UndoScale(_) => Verb::UndoScale,
            Action::RemoveFinalizers(_) => Verb::RemoveFinalizers,
        }
    }

    pub fn pod(&self) -> Option<&PodRef> {
        match self {
            Action::Delete(p)
            | Action::ForceDelete(p)
            | Action::Evict(p)
            | Action::ScaleToZero(p) => Some(p),
            Action::RemoveFinalizers(p) => Some(p),
            Action::UndoScale(_) => None,
        }
    }

    /// Never run by the auto-clean worker.
    pub(crate) fn manual_only(&self) -> bool {
        matches!(self, Action::UndoScale(_) | Action::RemoveFinalizers(_))
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Delete(p) => write!(f, "delete {p}"),
            Action::ForceDelete(p) => write!(f, "force delete (grace 0) {p}"),
            Action::Evict(p) => write!(f, "evict {p}"),
            Action::ScaleToZero(p) => write!(f, "scale the workload of {p} to 0"),
            Action::UndoScale(w) => write!(f, "restore the replicas of {w}"),
            Action::RemoveFinalizers(p) => write!(f, "remove the finalizers of {p}"),
        }
    }
}

/// Who asked for an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "by", content = "rule")]
pub enum Origin {
    Manual,
    Auto(RuleKind),
}

/// What became of an action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Done(String),
    /// 404: the target was already gone, which is what we wanted.
    AlreadyGone,
    DryRun(String),
    /// The target changed since it was planned; nothing was done.
    Skipped(String),
    /// The action cannot work as things stand (finalizers, nothing to scale, permission).
    Refused(Refusal),
    Failed(String),
}

impl Outcome {
    pub(crate) fn label(&self) -> &'static str {
        match self {
            Outcome::Done(_) => "done",
            Outcome::AlreadyGone => "alreadyGone",
            Outcome::DryRun(_) => "dryRun",
            Outcome::Skipped(_) => "skipped",
            Outcome::Refused(_) => "refused",
            Outcome::Failed(_) => "failed",
        }
    }

    pub fn detail(&self) -> Cow<'_, str> {
        match self {
            Outcome::AlreadyGone => Cow::Borrowed("already gone"),
            Outcome::Refused(why) => Cow::Owned(why.to_string()),
            Outcome::Done(d) | Outcome::DryRun(d) | Outcome::Skipped(d) | Outcome::Failed(d) => {
                Cow::Borrowed(d)
            }
        }
    }

    /// One line for the log and the status line; done and dry-run details already name the target.
    pub fn line(&self, action: &Action) -> String {
        match self {
            Outcome::Done(detail) | Outcome::DryRun(detail) => detail.clone(),
            other => format!("{action}: {other}"),
        }
    }

    /// This outcome of `action` on `cluster` as one line of the action log: information when it
    /// did its work, a warning otherwise. Every mode writes its actions through here.
    pub fn log(&self, cluster: &str, origin: Origin, action: &Action) {
        let by = match origin {
            Origin::Auto(rule) => format!("auto {rule}: "),
            Origin::Manual => String::new(),
        };
        let line = format!("{cluster}: {by}{}", self.line(action));
        if self.succeeded() {
            tracing::info!(target: ACTION_LOG, "{line}");
        } else {
            tracing::warn!(target: ACTION_LOG, "{line}");
        }
    }

    /// A failure, not a hold: a request was sent and did not do its work (an error, a 403), or
    /// nothing can act at all (the audit log). A target refused before anything was sent (held
    /// by finalizers, opted out, a bad rollout, a node not confirmed gone) is held, and waits.
    pub(crate) fn failed(&self) -> bool {
        match self {
            Outcome::Failed(_) => true,
            Outcome::Refused(refusal) => matches!(
                refusal,
                Refusal::Forbidden(_)
                    | Refusal::Unrecorded { .. }
                    | Refusal::AuditBroken(_)
                    | Refusal::AuditUnwritten(_)
            ),
            _ => false,
        }
    }

    pub fn succeeded(&self) -> bool {
        matches!(
            self,
            Outcome::Done(_) | Outcome::AlreadyGone | Outcome::DryRun(_)
        )
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.label(), self.detail())
    }
}
