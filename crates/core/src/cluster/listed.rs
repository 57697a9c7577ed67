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
    /// What `watched` reads of a cache's row, or `fed` of a worker's.
    fn either<'a, T>(
        &'a self,
        watched: impl FnOnce(&'a Abnormal) -> T,
        fed: impl FnOnce(&'a FedRow) -> T,
    ) -> T {
        match self {
            Listed::Watched(found) => watched(found),
            Listed::Fed(row) => fed(row),
        }
    }

    /// The cache's record, for a pod this process watches.
    pub fn watched(&self) -> Option<&Abnormal> {
        self.either(Some, |_| None)
    }

    pub fn cluster(&self) -> &ClusterName {
        self.either(|a| &a.cluster, FedRow::cluster)
    }

    pub fn uid(&self) -> &str {
        self.either(|a| &a.pod.uid, FedRow::uid)
    }

    pub fn namespace(&self) -> &str {
        self.either(|a| &a.pod.namespace, FedRow::namespace)
    }

    pub fn name(&self) -> &str {
        self.either(|a| &a.pod.name, FedRow::name)
    }

    pub fn node(&self) -> Option<&str> {
        self.either(|a| a.pod.node.as_deref(), FedRow::node)
    }

    /// The owner's kind and name.
    pub fn owner(&self) -> Option<(&str, &str)> {
        self.either(
            |a| a.pod.owner.as_ref().map(|o| (&*o.kind, &*o.name)),
            FedRow::owner,
        )
    }

    /// The workload the engineer thinks in: the Deployment, not its ReplicaSet.
    pub fn workload(&self) -> WorkloadId {
        self.either(|a| WorkloadId::of(&a.pod), FedRow::workload)
    }

    pub fn pod_ref(&self) -> PodRef {
        PodRef {
            namespace: self.namespace().to_string(),
            name: self.name().to_string(),
            uid: self.uid().to_string(),
        }
    }

    pub fn rule(&self) -> RuleKind {
        self.either(|a| a.finding.rule, FedRow::rule)
    }

    pub fn reason(&self) -> &str {
        self.either(|a| &a.finding.reason, FedRow::reason)
    }

    pub fn message(&self) -> Option<&str> {
        self.either(|a| a.finding.message.as_deref(), FedRow::message)
    }

    /// The container the reason belongs to, when it is a container's.
    pub fn container(&self) -> Option<&str> {
        self.either(|a| a.finding.container.as_deref(), FedRow::container)
    }

    /// Best evidence of when the pod entered its state.
    pub fn since(&self) -> DateTime<Utc> {
        self.either(|a| a.finding.since, FedRow::since)
    }

    pub fn time_in_state(&self, now: DateTime<Utc>) -> chrono::Duration {
        now - self.since()
    }

    pub fn action(&self) -> ActionKind {
        self.either(|a| a.finding.action, FedRow::action)
    }

    pub fn restarts(&self) -> u32 {
        self.either(|a| a.pod.total_restarts(), FedRow::restarts)
    }

    /// Deletion has begun: no action of a screen is what happens next.
    pub fn deleting(&self) -> bool {
        self.either(|a| a.pod.deletion.is_some(), FedRow::deleting)
    }

    pub fn finalizers(&self) -> Vec<&str> {
        self.either(
            |a| a.pod.finalizers.iter().map(|f| &**f).collect(),
            FedRow::finalizers,
        )
    }

    /// Two copies of the pod must never run at once (a StatefulSet's, or one holding a claim
    /// that may be ReadWriteOnce).
    pub fn must_run_once(&self) -> bool {
        self.either(|a| a.pod.must_run_once(), FedRow::must_run_once)
    }

    pub fn cause(&self) -> CauseClass {
        self.either(|a| a.cause, FedRow::cause)
    }

    /// Why, what it rests on and what next, at `now`, from what this process read; none for
    /// a pod its worker told of, whose words are the worker's to give.
    pub fn full_cause(&self, now: DateTime<Utc>) -> Option<Cause> {
        self.watched().map(|a| a.full_cause(now))
    }

    /// One word for why the planned action would be refused, for a table drawn every frame.
    pub fn held_label(&self) -> Option<&'static str> {
        self.either(Abnormal::held_label, |row| row.held().map(Held::label))
    }

    /// Why the planned action would be refused, from the pod alone: the worker's word when it
    /// told the row, else read from the record.
    pub fn held(&self) -> Option<Held> {
        self.either(Abnormal::held, |row| row.held().cloned())
    }
}
