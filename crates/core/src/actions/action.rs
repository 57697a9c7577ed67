//! What a person or the worker asks for: an action on exactly one pod or workload.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::workload::ScalableWorkload;
use crate::pod::{PodRecord, WorkloadId};
use crate::rules::{ActionKind, RuleKind, Verb};

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

    /// Where the API server serves it.
    pub(crate) fn path(&self) -> String {
        format!("/api/v1/namespaces/{}/pods/{}", self.namespace, self.name)
    }
}

impl fmt::Display for PodRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pod {}/{}", self.namespace, self.name)
    }
}

/// A destructive operation, confirmed before it runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, strum::Display)]
pub enum Action {
    #[strum(to_string = "delete {0}")]
    Delete(PodRef),
    /// Delete with `gracePeriodSeconds: 0`.
    #[strum(to_string = "force delete (grace 0) {0}")]
    ForceDelete(PodRef),
    /// Through the Eviction API, honouring PodDisruptionBudgets.
    #[strum(to_string = "evict {0}")]
    Evict(PodRef),
    /// Scale the workload that owns the pod to zero, remembering its replicas.
    #[strum(to_string = "scale the workload of {0} to 0")]
    ScaleToZero(PodRef),
    #[strum(to_string = "restore the replicas of {0}")]
    UndoScale(ScalableWorkload),
    /// Manual only: lets a pod held by finalizers go.
    #[strum(to_string = "remove the finalizers of {0}")]
    RemoveFinalizers(PodRef),
}

impl Action {
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
            | Action::ScaleToZero(p)
            | Action::RemoveFinalizers(p) => Some(p),
            Action::UndoScale(_) => None,
        }
    }

    /// Never run by the auto-clean worker.
    pub(crate) fn manual_only(&self) -> bool {
        matches!(self, Action::UndoScale(_) | Action::RemoveFinalizers(_))
    }
}

/// Who asked for an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "by", content = "rule")]
pub enum Origin {
    Manual,
    Auto(RuleKind),
}

/// What cooldowns and backoff are kept by: the pod, or its workload for a scale to zero
/// (many failing pods of one workload are one scale).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, strum::Display)]
#[serde(untagged)]
pub enum Target {
    /// By uid: a new pod of the same name is another target.
    #[strum(to_string = "{0}")]
    Pod(String),
    #[strum(to_string = "{0}")]
    Workload(WorkloadId),
}

/// In JSON (the Lease's record of recent actions) as its `Display` text: a uid has no `/`.
impl<'de> Deserialize<'de> for Target {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Ok(match WorkloadId::parse(&text) {
            Some(workload) => Target::Workload(workload),
            None => Target::Pod(text),
        })
    }
}
