//! An abnormal pod as a screen lists it: read from a cache this process keeps, or told by the
//! cluster's worker. One type, so every screen works the same on both.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::{Abnormal, ClusterName};
use crate::actions::PodRef;
use crate::fleet::{FedRow, FindingRow, Held};
use crate::pod::WorkloadId;
use crate::rules::{ActionKind, Cause, CauseClass, RuleKind};

/// A row of the screen. Small: a screen of many clusters holds every one of their abnormal
/// pods, and each row points at what its source keeps rather than copying it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listed {
    /// From a watch cache, whose finding it shares.
    Watched(Arc<Abnormal>),
    /// From the cluster's worker, which read the pod's Events and node: its cause's words are
    /// asked of it when shown ([`crate::fleet::ask_worker`]).
    Fed(Arc<FedRow>),
}

impl From<Abnormal> for Listed {
    fn from(found: Abnormal) -> Listed {
        Listed::Watched(Arc::new(found))
    }
}

/// A row as a worker serves it, listed as the screen of its cluster lists it.
impl From<FindingRow> for Listed {
    fn from(row: FindingRow) -> Listed {
        Listed::Fed(Arc::new(row.fed_row(&row.cluster, &mut Default::default())))
    }
}

impl Listed {
    /// The cache's record, for a pod this process watches.
    pub fn watched(&self) -> Option<&Abnormal> {
        match self {
            Listed::Watched(found) => Some(found),
            Listed::Fed(_) => None,
        }
    }

    pub fn cluster(&self) -> &ClusterName {
        match self {
            Listed::Watched(a) => &a.cluster,
            Listed::Fed(row) => row.cluster(),
        }
    }

    pub fn uid(&self) -> &str {
        match self {
            Listed::Watched(a) => &a.pod.uid,
            Listed::Fed(row) => row.uid(),
        }
    }

    pub fn namespace(&self) -> &str {
        match self {
            Listed::Watched(a) => &a.pod.namespace,
            Listed::Fed(row) => row.namespace(),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Listed::Watched(a) => &a.pod.name,
            Listed::Fed(row) => row.name(),
        }
    }

    pub fn node(&self) -> Option<&str> {
        match self {
            Listed::Watched(a) => a.pod.node.as_deref(),
            Listed::Fed(row) => row.node(),
        }
    }

    /// The owner's kind and name.
    pub fn owner(&self) -> Option<(&str, &str)> {
        match self {
            Listed::Watched(a) => a.pod.owner.as_ref().map(|o| (&*o.kind, &*o.name)),
            Listed::Fed(row) => row.owner(),
        }
    }

    /// The workload the engineer thinks in: the Deployment, not its ReplicaSet.
    pub fn workload(&self) -> WorkloadId {
        match self {
            Listed::Watched(a) => WorkloadId::of(&a.pod),
            Listed::Fed(row) => row.workload(),
        }
    }

    pub fn pod_ref(&self) -> PodRef {
        PodRef {
            namespace: self.namespace().to_string(),
            name: self.name().to_string(),
            uid: self.uid().to_string(),
        }
    }

    pub fn rule(&self) -> RuleKind {
        match self {
            Listed::Watched(a) => a.finding.rule,
            Listed::Fed(row) => row.rule(),
        }
    }

    pub fn reason(&self) -> &str {
        match self {
            Listed::Watched(a) => &a.finding.reason,
            Listed::Fed(row) => row.reason(),
        }
    }

    pub fn message(&self) -> Option<&str> {
        match self {
            Listed::Watched(a) => a.finding.message.as_deref(),
            Listed::Fed(row) => row.message(),
        }
    }

    /// The container the reason belongs to, when it is a container's.
    pub fn container(&self) -> Option<&str> {
        match self {
            Listed::Watched(a) => a.finding.container.as_deref(),
            Listed::Fed(row) => row.container(),
        }
    }

    /// Best evidence of when the pod entered its state.
    pub fn since(&self) -> DateTime<Utc> {
        match self {
            Listed::Watched(a) => a.finding.since,
            Listed::Fed(row) => row.since(),
        }
    }

    pub fn time_in_state(&self, now: DateTime<Utc>) -> chrono::Duration {
        now - self.since()
    }

    pub fn action(&self) -> ActionKind {
        match self {
            Listed::Watched(a) => a.finding.action,
            Listed::Fed(row) => row.action(),
        }
    }

    pub fn restarts(&self) -> u32 {
        match self {
            Listed::Watched(a) => a.pod.total_restarts(),
            Listed::Fed(row) => row.restarts(),
        }
    }

    /// Deletion has begun: no action of a screen is what happens next.
    pub fn deleting(&self) -> bool {
        match self {
            Listed::Watched(a) => a.pod.deletion.is_some(),
            Listed::Fed(row) => row.deleting(),
        }
    }

    pub fn finalizers(&self) -> Vec<&str> {
        match self {
            Listed::Watched(a) => a.pod.finalizers.iter().map(|f| &**f).collect(),
            Listed::Fed(row) => row.finalizers(),
        }
    }

    /// Two copies of the pod must never run at once (a StatefulSet's, or one holding a claim
    /// that may be ReadWriteOnce).
    pub fn must_run_once(&self) -> bool {
        match self {
            Listed::Watched(a) => a.pod.must_run_once(),
            Listed::Fed(row) => row.must_run_once(),
        }
    }

    /// Why, by class.
    pub fn cause(&self) -> CauseClass {
        match self {
            Listed::Watched(a) => a.cause,
            Listed::Fed(row) => row.cause(),
        }
    }

    /// Why, what it rests on and what next, at `now`, from what this process read; none for
    /// a pod its worker told of, whose words are the worker's to give.
    pub fn full_cause(&self, now: DateTime<Utc>) -> Option<Cause> {
        self.watched().map(|a| a.full_cause(now))
    }

    /// One word for why the planned action would be refused, for a table drawn every frame.
    pub fn held_label(&self) -> Option<&'static str> {
        match self {
            Listed::Watched(a) => a.held_label(),
            Listed::Fed(row) => row.held().map(Held::label),
        }
    }

    /// Why the planned action would be refused, from the pod alone: the worker's word when it
    /// told the row, else read from the record.
    pub fn held(&self) -> Option<Held> {
        match self {
            Listed::Watched(a) => a.held(),
            Listed::Fed(row) => row.held().cloned(),
        }
    }
}
