//! Tier 5: a pod stuck Terminating on a node that stopped reporting takes its cause from the
//! node's own Ready condition, not from the pod alone. Always on the simulated cluster; on a
//! real one with `OPC_E2E_KUBECONFIG=<kubeconfig> cargo test --test suite e2e_nodes --
//! --ignored`. Needs, beyond `e2e`'s: create and delete nodes and write their status (the
//! scenario's Node stands for a machine that went silent), list and watch nodes.

use crate::support;

use futures::FutureExt;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, DeleteParams};
use opc_core::cluster::Scope;
use opc_core::rules::CauseClass;
use support::e2e::Target;

use crate::causes::at_once;
use crate::node_causes::{node, put_node, stuck_on, told};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_that_stopped_reporting_on_the_simulated_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let target = Target::simulated(dir.path()).await;
    run(&target).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real cluster: OPC_E2E_KUBECONFIG=<kubeconfig> cargo test --test suite e2e_nodes -- --ignored"]
async fn a_node_that_stopped_reporting_on_a_real_cluster() {
    let target = Target::real().await;
    run(&target).await;
}

async fn run(target: &Target) {
    target
        .in_namespaces(1, |names| async move {
            let ns = &names[0];
            // Named after the namespace: runs at the same time never share a node.
            let lost = format!("{ns}-lost");
            put_node(&target.client, node(&lost, "Unknown", 10)).await;
            let outcome = std::panic::AssertUnwindSafe(scenario(target, ns, &lost))
                .catch_unwind()
                .await;
            clean_up(&target.client, ns, &lost).await;
            if let Err(panic) = outcome {
                std::panic::resume_unwind(panic);
            }
        })
        .await;
}

/// The pod deleted with a grace period on the silent node, as a session sees it.
async fn scenario(target: &Target, ns: &str, lost: &str) {
    stuck_on(&target.client, ns, "web-1", lost).await;
    let scopes = [Scope::Namespace(ns.to_string())];
    let session = support::sim::open_session(&target.client, &scopes, &at_once());
    let cause = target
        .wait_for(
            "the pod classed from its node's Ready condition",
            || async { told(&session, "web-1").filter(|c| c.class == CauseClass::NodeUnreachable) },
        )
        .await;
    assert!(
        cause
            .detail
            .contains(&format!("node {lost} stopped reporting 1")),
        "{cause:?}"
    );
    let said = cause.evidence.iter().find(|e| e.source.contains("[Ready]"));
    assert!(
        said.is_some_and(|e| e.text.starts_with("Unknown")),
        "{cause:?}"
    );
    assert!(session.cache.nodes_not_reporting() >= 1);
}

/// No kubelet will finish the pod's deletion: it is forced, so the namespace can go, and the
/// Node goes with it.
async fn clean_up(client: &kube::Client, ns: &str, lost: &str) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    if let Err(e) = pods
        .delete("web-1", &DeleteParams::default().grace_period(0))
        .await
    {
        eprintln!("cleanup: could not force-delete {ns}/web-1: {e}");
    }
    let nodes: Api<Node> = Api::all(client.clone());
    if let Err(e) = nodes.delete(lost, &DeleteParams::default()).await {
        eprintln!("cleanup: could not delete node {lost}: {e}; delete it by hand");
    }
}
