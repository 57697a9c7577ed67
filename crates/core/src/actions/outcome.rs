//! What became of an action, as values that carry what they are about: the screen reads the
//! workload a scale changed from the outcome, and the words are made where they are shown.

use std::fmt;

use super::action::{Action, Origin, PodRef};
use super::failure::Failure;
use super::refusal::Refusal;
use super::retry::Stop;
use super::workload::{REPLICAS_BEFORE_ANNOTATION, ScalableWorkload};
use crate::cluster::ClusterName;
use crate::rules::RuleKind;

/// The `tracing` target of the action log: every action, manual or automatic, and every hold
/// and pause of the worker, one line each. The TUI's log pane and `headless`'s default output
/// show it whatever else the log filter leaves out.
pub const ACTION_LOG: &str = "action";

/// What became of an action; its label is the variant's name in camelCase.
#[derive(Debug, Clone, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "camelCase")]
pub enum Outcome {
    Done(Change),
    /// 404: the target was already gone, which is what we wanted.
    AlreadyGone,
    DryRun(Change),
    /// The target changed since it was planned; nothing was done.
    Skipped(Skip),
    /// The action cannot work as things stand (finalizers, nothing to scale, permission).
    Refused(Refusal),
    Failed(Failure),
}

/// A change made to the cluster (or, in a dry run, that would have been).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// `held_by`: finalizers that still keep the pod after a grace-0 delete.
    Deleted {
        pod: PodRef,
        grace: Option<u32>,
        held_by: Vec<String>,
    },
    Evicted(PodRef),
    FinalizersRemoved(PodRef),
    /// `annotation`: why the count went to the workload's annotation, not the ConfigMap.
    Scaled {
        workload: ScalableWorkload,
        from: i32,
        annotation: Option<String>,
    },
    Restored {
        workload: ScalableWorkload,
        replicas: i32,
        /// Boxed: rare, and it would make every `Outcome` larger.
        left: Option<Box<LeftBehind>>,
    },
}

/// What a restore could not tidy up after itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeftBehind {
    /// The parked record could not be removed.
    Record { location: String, why: String },
    /// The annotation written as the fallback could not be removed.
    Annotation(Box<Outcome>),
    /// An annotation an earlier version wrote, which this identity may not change.
    OldAnnotation,
}

/// Why an action was not sent after all: the target changed under it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Skip {
    #[error("the pod no longer matches rule {0}")]
    NoLongerMatches(RuleKind),
    /// A new pod took the name (a 409 on the uid precondition).
    #[error(
        "a new pod with the same name (uid {uid}) replaced {pod}; it was left alone ({conflict})"
    )]
    Replaced {
        pod: PodRef,
        uid: String,
        conflict: String,
    },
    /// Read again after a 409, it no longer matches its rule.
    #[error("{0} changed and no longer matches its rule")]
    Changed(PodRef),
    #[error("{pod} changed during eviction ({conflict}); it will be planned again")]
    ChangedDuringEviction { pod: PodRef, conflict: String },
    #[error("{0} kept changing while being deleted; it will be planned again")]
    PodKeptChanging(PodRef),
    #[error("{0} kept changing while being scaled; it will be planned again")]
    WorkloadKeptChanging(ScalableWorkload),
    #[error("{0} is already at 0 replicas")]
    AtZero(ScalableWorkload),
    #[error("conflict: {0}")]
    Conflict(String),
    #[error("cluster {0} was closed before the action ran")]
    ClusterClosed(ClusterName),
}

impl Outcome {
    pub fn label(&self) -> &'static str {
        self.into()
    }

    pub fn detail(&self) -> String {
        match self {
            Outcome::Done(change) => change.to_string(),
            Outcome::AlreadyGone => "already gone".to_string(),
            Outcome::DryRun(change) => format!("would {}", would(change)),
            Outcome::Skipped(skip) => skip.to_string(),
            Outcome::Refused(why) => why.to_string(),
            Outcome::Failed(failure) => failure.to_string(),
        }
    }

    /// The workload a scale or a restore changed (or would have, in a dry run).
    pub fn workload(&self) -> Option<&ScalableWorkload> {
        let (Outcome::Done(change) | Outcome::DryRun(change)) = self else {
            return None;
        };
        match change {
            Change::Scaled { workload, .. } | Change::Restored { workload, .. } => Some(workload),
            _ => None,
        }
    }

    /// One line for the log and the status line; done and dry-run details already name the target.
    pub fn line(&self, action: &Action) -> String {
        match self {
            Outcome::Done(_) | Outcome::DryRun(_) => self.detail(),
            other => format!("{action}: {other}"),
        }
    }

    /// One line of the action log: every mode writes its actions through here.
    pub fn log(&self, cluster: &ClusterName, origin: Origin, action: &Action) {
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
        matches!(
            self,
            Outcome::Failed(_)
                | Outcome::Refused(
                    Refusal::Forbidden(_)
                        | Refusal::Unrecorded { .. }
                        | Refusal::AuditBroken(_)
                        | Refusal::AuditUnwritten(_)
                )
        )
    }

    pub fn succeeded(&self) -> bool {
        matches!(
            self,
            Outcome::Done(_) | Outcome::AlreadyGone | Outcome::DryRun(_)
        )
    }
}

impl From<Stop> for Outcome {
    fn from(stop: Stop) -> Outcome {
        match stop {
            Stop::Gone => Outcome::AlreadyGone,
            Stop::Conflict(message) => Outcome::Skipped(Skip::Conflict(message)),
            Stop::Forbidden(denied) => Outcome::Refused(Refusal::Forbidden(denied)),
            Stop::Failed(failure) => Outcome::Failed(failure),
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.label(), self.detail())
    }
}

fn grace_note(grace: Option<u32>) -> String {
    grace
        .map(|g| format!(" with grace {g}s"))
        .unwrap_or_default()
}

/// The change as done: "deleted pod shop/web-1".
impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::Deleted {
                pod,
                grace,
                held_by,
            } => {
                write!(f, "deleted {pod}{}", grace_note(*grace))?;
                if !held_by.is_empty() {
                    write!(
                        f,
                        "; finalizers ({}) still hold it until they are removed",
                        held_by.join(", ")
                    )?;
                }
                Ok(())
            }
            Change::Evicted(pod) => write!(f, "evicted {pod}"),
            Change::FinalizersRemoved(pod) => write!(f, "removed the finalizers of {pod}"),
            Change::Scaled {
                workload,
                from,
                annotation,
            } => {
                write!(
                    f,
                    "scaled {workload} from {from} to 0 (undo restores {from})"
                )?;
                match annotation {
                    Some(why) => write!(
                        f,
                        "; recorded in its {REPLICAS_BEFORE_ANNOTATION} annotation ({why})"
                    ),
                    None => Ok(()),
                }
            }
            Change::Restored {
                workload,
                replicas,
                left,
            } => {
                write!(f, "restored {workload} to {replicas} replicas")?;
                match left.as_deref() {
                    None => Ok(()),
                    Some(LeftBehind::Record { location, why }) => write!(
                        f,
                        ", but its record stays in {location} ({why}); a second undo refuses \
                         it while it runs"
                    ),
                    Some(LeftBehind::Annotation(failed)) => write!(
                        f,
                        ", but could not remove the annotation: {}",
                        failed.detail()
                    ),
                    Some(LeftBehind::OldAnnotation) => write!(
                        f,
                        "; the {REPLICAS_BEFORE_ANNOTATION} annotation an earlier version left \
                         stays (remove it with `kubectl annotate {} {REPLICAS_BEFORE_ANNOTATION}- \
                         -n {}`)",
                        workload.kubectl_name(),
                        workload.namespace()
                    ),
                }
            }
        }
    }
}

/// The change as planned, after "would": "delete pod shop/web-1".
fn would(change: &Change) -> String {
    match change {
        Change::Deleted { pod, grace, .. } => format!("delete {pod}{}", grace_note(*grace)),
        Change::Evicted(pod) => format!("evict {pod}"),
        Change::FinalizersRemoved(pod) => format!("remove the finalizers of {pod}"),
        Change::Scaled { workload, from, .. } => format!("scale {workload} from {from} to 0"),
        Change::Restored {
            workload, replicas, ..
        } => format!("restore {workload} to {replicas} replicas"),
    }
}
