//! Nodes, reduced to what a cause and the header read: whether the node reports, and since
//! when. A cluster has few of them, but every watch event of one is decoded here, so only the
//! Ready condition and two taints are kept; the rest of the object is skipped unread.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::Deserialize;

use crate::pod::nullable;

/// What a node's Ready condition says of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Readiness {
    Ready,
    /// `False`: the kubelet reports, and says the node cannot run pods.
    NotReady,
    /// `Unknown`: the kubelet stopped reporting; the node lifecycle controller said so.
    NotReporting,
    /// No Ready condition yet (a node just registered): nothing to say.
    Unreported,
}

/// One node as the cache keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeState {
    pub name: Arc<str>,
    pub readiness: Readiness,
    /// When the Ready condition last changed.
    pub since: Option<DateTime<Utc>>,
    /// When the kubelet last reported: for a node that stopped, when it stopped.
    pub heartbeat: Option<DateTime<Utc>>,
    /// Tainted `node.kubernetes.io/out-of-service`: an operator confirmed the node is down.
    pub out_of_service: bool,
}

impl NodeState {
    /// Since when the node has been as it is: a silent node since its last word.
    pub fn as_of(&self) -> Option<DateTime<Utc>> {
        match self.readiness {
            Readiness::NotReporting => self.heartbeat.or(self.since),
            _ => self.since,
        }
    }

    /// Whether what a cause reads of it differs from `other`: a heartbeat alone changes no
    /// pod's cause, so a ready node's periodic status writes re-examine no pod.
    pub fn says_more_than(&self, other: &NodeState) -> bool {
        (self.readiness, self.as_of(), self.out_of_service)
            != (other.readiness, other.as_of(), other.out_of_service)
    }
}

type Time = Option<DateTime<Utc>>;

/// A node as it arrives from the API, reduced to the fields read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct WireNode {
    pub metadata: NodeMeta,
    spec: NodeSpec,
    status: NodeStatus,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct NodeMeta {
    pub name: String,
    pub uid: String,
    pub resource_version: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct NodeSpec {
    #[serde(deserialize_with = "nullable")]
    taints: Vec<Taint>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct Taint {
    key: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct NodeStatus {
    #[serde(deserialize_with = "nullable")]
    conditions: Vec<Condition>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Condition {
    #[serde(rename = "type")]
    kind: String,
    status: String,
    last_heartbeat_time: Time,
    last_transition_time: Time,
}

/// The taint an operator puts on a node confirmed down (non-graceful node shutdown).
const OUT_OF_SERVICE: &str = "node.kubernetes.io/out-of-service";

impl WireNode {
    pub fn into_state(self) -> NodeState {
        let ready = self.status.conditions.iter().find(|c| c.kind == "Ready");
        let readiness = match ready.map(|c| c.status.as_str()) {
            Some("True") => Readiness::Ready,
            Some("False") => Readiness::NotReady,
            Some(_) => Readiness::NotReporting,
            None => Readiness::Unreported,
        };
        NodeState {
            name: Arc::from(self.metadata.name),
            readiness,
            since: ready.and_then(|c| c.last_transition_time),
            heartbeat: ready.and_then(|c| c.last_heartbeat_time),
            out_of_service: self.spec.taints.iter().any(|t| t.key == OUT_OF_SERVICE),
        }
    }
}
