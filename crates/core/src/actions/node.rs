//! Whether a pod's node is confirmed gone, before a force delete of a pod that must run once.
//!
//! A node that stopped reporting (Ready Unknown) may be partitioned, not down: its pods may
//! still run and write their volumes. Force-deleting a StatefulSet's pod there lets the
//! StatefulSet start a second copy with the same identity at once (Kubernetes' "Force Delete
//! StatefulSet Pods"). Only two signals confirm the node is gone: the Node object deleted, or
//! tainted `node.kubernetes.io/out-of-service` (non-graceful node shutdown). Read at the time
//! of the write, for every mode, so no older view decides.

use k8s_openapi::api::core::v1::Node;
use kube::Client;
use kube::api::Api;

use super::action::PodRef;
use crate::cluster::plain;
use crate::pod::PodRecord;

/// The taint that says a node is shut down for good and its pods may be replaced.
pub const OUT_OF_SERVICE: &str = "node.kubernetes.io/out-of-service";

/// A pod that must run once, on a node not confirmed gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecondCopy {
    pub pod: PodRef,
    pub node: String,
    /// "is a StatefulSet's", or "holds a volume claim that may be ReadWriteOnce".
    pub why: &'static str,
    /// What the Node says (`Ready Unknown: …`), or why it could not be read.
    pub state: String,
}

/// Refuse a force delete of `pod` unless its node is confirmed gone, or the pod is not one of
/// which two copies must never run (or never had a node).
pub(super) async fn confirm_node_gone(
    client: &Client,
    p: &PodRef,
    pod: &PodRecord,
) -> Result<(), Box<SecondCopy>> {
    let Some(node) = pod.node.as_deref().filter(|_| pod.must_run_once()) else {
        return Ok(());
    };
    let refuse = |state: String| {
        Err(Box::new(SecondCopy {
            pod: p.clone(),
            node: node.to_string(),
            why: if pod.claims_volume {
                "holds a volume claim that may be ReadWriteOnce"
            } else {
                "is a StatefulSet's"
            },
            state,
        }))
    };
    match Api::<Node>::all(client.clone()).get_opt(node).await {
        Ok(None) => Ok(()),
        Ok(Some(found)) if out_of_service(&found) => Ok(()),
        Ok(Some(found)) => refuse(ready_state(&found)),
        Err(e) => refuse(format!("its Node could not be read: {}", plain(&e))),
    }
}

fn out_of_service(node: &Node) -> bool {
    node.spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .is_some_and(|taints| taints.iter().any(|t| t.key == OUT_OF_SERVICE))
}

/// "Ready Unknown: Kubelet stopped posting node status."
fn ready_state(node: &Node) -> String {
    let ready = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Ready"));
    match ready {
        Some(c) => match c.message.as_deref().filter(|m| !m.is_empty()) {
            Some(message) => format!("Ready {}: {message}", c.status),
            None => format!("Ready {}", c.status),
        },
        None => "no Ready condition".to_string(),
    }
}
