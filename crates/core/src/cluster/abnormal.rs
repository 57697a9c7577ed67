//! An abnormal pod as every reader gets it: the record, what the chain found and why.

use std::sync::Arc;

use super::name::ClusterName;
use crate::fleet::held::Held;
use crate::node::NodeState;
use crate::place::Place;
use crate::pod::{PodEvent, PodRecord};
use crate::rules::{Cause, CauseClass, Finding, cause_class};

/// An abnormal pod, the cluster it is in, and what the chain found. Shared with the cache, so a
/// copy for a reader costs reference counts, not the record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Abnormal {
    /// The cache's cluster (its context name); empty for a cache that was not named.
    pub cluster: ClusterName,
    pub pod: Arc<PodRecord>,
    pub finding: Arc<Finding>,
    /// Why, by class; found with the finding.
    pub cause: CauseClass,
    /// The pod's Events the cause read, if any.
    pub events: Option<Arc<[PodEvent]>>,
    /// The state of its node the cause read, if known.
    pub node: Option<Arc<NodeState>>,
}

impl Abnormal {
    pub fn new(pod: PodRecord, finding: Finding) -> Abnormal {
        let cause = cause_class(&pod, &finding, &[], None);
        Abnormal {
            cluster: ClusterName::default(),
            pod: Arc::new(pod),
            finding: Arc::new(finding),
            cause,
            events: None,
            node: None,
        }
    }

    /// Where the pod is, for the pauses that may hold it.
    pub fn place(&self) -> Place {
        let (pod, finding) = (&self.pod, &self.finding);
        let message = finding.message.as_deref();
        Place::at(finding.rule, &pod.namespace, pod.node.as_deref(), message)
    }

    pub fn node(&self) -> Option<&NodeState> {
        self.node.as_deref()
    }

    pub fn events(&self) -> &[PodEvent] {
        self.events.as_deref().unwrap_or(&[])
    }

    pub fn in_cluster(mut self, cluster: ClusterName) -> Abnormal {
        self.cluster = cluster;
        self
    }

    /// Why, what it rests on and what next, at `now`.
    pub fn full_cause(&self, now: chrono::DateTime<chrono::Utc>) -> Cause {
        crate::rules::cause(&self.pod, &self.finding, self.events(), self.node(), now)
    }

    /// One word for why the planned action would be refused, for a table drawn every frame:
    /// [`Abnormal::held`] without writing the reason out.
    pub fn held_label(&self) -> Option<&'static str> {
        crate::actions::Suspect::of(&self.pod, self.finding.action).map(|s| s.label())
    }

    /// Why the planned action would be refused, from the pod alone.
    pub fn held(&self) -> Option<Held> {
        crate::actions::Suspect::of(&self.pod, self.finding.action).map(Held::from)
    }
}
