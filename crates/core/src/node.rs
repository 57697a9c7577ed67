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

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(json: serde_json::Value) -> NodeState {
        serde_json::from_value::<WireNode>(json)
            .unwrap()
            .into_state()
    }

    #[test]
    fn a_node_that_stopped_reporting_is_so_since_its_last_heartbeat() {
        let node = decoded(serde_json::json!({
            "metadata": { "name": "n1", "managedFields": [{ "manager": "kubelet" }] },
            "spec": { "taints": [{ "key": "node.kubernetes.io/unreachable", "effect": "NoExecute" }] },
            "status": { "conditions": [
                { "type": "MemoryPressure", "status": "Unknown" },
                { "type": "Ready", "status": "Unknown",
                  "lastHeartbeatTime": "2026-11-20T11:50:00Z",
                  "lastTransitionTime": "2026-11-20T11:51:00Z" },
            ]},
        }));
        assert_eq!(node.readiness, Readiness::NotReporting);
        assert_eq!(node.as_of(), "2026-11-20T11:50:00Z".parse().ok());
        assert!(!node.out_of_service);
        let not_ready = decoded(serde_json::json!({
            "metadata": { "name": "n2" },
            "spec": { "taints": null },
            "status": { "conditions": [{ "type": "Ready", "status": "False",
                "lastHeartbeatTime": "2026-11-20T11:59:50Z",
                "lastTransitionTime": "2026-11-20T11:40:00Z" }] },
        }));
        assert_eq!(not_ready.readiness, Readiness::NotReady);
        assert_eq!(not_ready.as_of(), "2026-11-20T11:40:00Z".parse().ok());
        let fresh = decoded(serde_json::json!({ "metadata": { "name": "n3" } }));
        assert_eq!(fresh.readiness, Readiness::Unreported);
    }

    #[test]
    fn a_heartbeat_alone_says_nothing_new() {
        let json = |beat: &str| {
            decoded(serde_json::json!({
                "metadata": { "name": "n1" },
                "status": { "conditions": [{ "type": "Ready", "status": "True",
                    "lastHeartbeatTime": beat, "lastTransitionTime": "2026-11-20T10:00:00Z" }] },
            }))
        };
        let (before, after) = (json("2026-11-20T11:00:00Z"), json("2026-11-20T11:05:00Z"));
        assert!(!after.says_more_than(&before));
        let mut tainted = after.clone();
        tainted.out_of_service = true;
        assert!(tainted.says_more_than(&before));
    }
}
