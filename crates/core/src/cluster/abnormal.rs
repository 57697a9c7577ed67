//! An abnormal pod as every reader gets it: the record, what the chain found and why.

use std::sync::Arc;

use super::name::ClusterName;
use crate::fleet::held::Held;
use crate::node::NodeState;
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
    /// What the cluster's own worker said of the pod, when the finding came from it. It read
    /// the pod's Events and node, which this process did not: its cause (`cause` is its class)
    /// is not worked out again from the slim record, and its words are asked of it when shown.
    pub told: Option<Arc<Told>>,
}

/// What a worker told of one abnormal pod besides the record, the finding and the cause class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Told {
    /// Why its action would be refused, told from the pod alone.
    pub held: Option<Held>,
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
            told: None,
        }
    }

    /// The state of the pod's node that the cause read.
    pub fn node(&self) -> Option<&NodeState> {
        self.node.as_deref()
    }

    /// The pod's Warning Events that a cause reads.
    pub fn events(&self) -> &[PodEvent] {
        self.events.as_deref().unwrap_or(&[])
    }

    pub fn in_cluster(mut self, cluster: impl Into<ClusterName>) -> Abnormal {
        self.cluster = cluster.into();
        self
    }

    /// Why, what it rests on and what next, at `now`, from what this process read; none for
    /// a pod its cluster's worker told of, whose words are the worker's to give
    /// ([`crate::fleet::ask_worker`]).
    pub fn full_cause(&self, now: chrono::DateTime<chrono::Utc>) -> Option<Cause> {
        match &self.told {
            Some(_) => None,
            None => Some(crate::rules::cause(
                &self.pod,
                &self.finding,
                self.events(),
                self.node(),
                now,
            )),
        }
    }

    /// One word for why the planned action would be refused, for a table drawn every frame:
    /// [`Abnormal::held`] without writing the reason out.
    pub fn held_label(&self) -> Option<&'static str> {
        match &self.told {
            Some(told) => told.held.as_ref().map(Held::label),
            None => crate::actions::Suspect::of(&self.pod, self.finding.action).map(|s| s.label()),
        }
    }

    /// Why the planned action would be refused, from the pod alone: the worker's word when it
    /// told one, else read from the record.
    pub fn held(&self) -> Option<Held> {
        match &self.told {
            Some(told) => told.held.clone(),
            None => crate::actions::Suspect::of(&self.pod, self.finding.action).map(Held::from),
        }
    }
}
