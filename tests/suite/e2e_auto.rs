//! Auto mode an engineer can leave running, end to end. `headless --once` on the
//! binary, against the simulated cluster always and against `OPC_E2E_KUBECONFIG` with `--ignored`.
//!
//! - A StatefulSet's pod stuck Terminating on a node that stopped reporting is never
//!   force-deleted until the node is confirmed gone (tainted out-of-service); then it is.
//! - A pod held by finalizers is held, not failed: the run exits 0.

use crate::support;

use std::path::{Path, PathBuf};

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;
use support::e2e::Target;
use support::sim::typed;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_statefulset_pod_on_a_lost_node_waits_for_the_node_to_be_confirmed_gone_simulated() {
    let dir = tempfile::tempdir().unwrap();
    statefulset_on_a_lost_node(&Target::simulated(dir.path()).await, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_held_by_finalizers_is_held_not_failed_simulated() {
    let dir = tempfile::tempdir().unwrap();
    held_by_finalizers(&Target::simulated(dir.path()).await, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real cluster: OPC_E2E_KUBECONFIG=<kubeconfig> cargo test --test suite e2e_auto:: -- --ignored"]
async fn auto_mode_scenarios_on_a_real_cluster() {
    let target = Target::real().await;
    let dir = tempfile::tempdir().unwrap();
    statefulset_on_a_lost_node(&target, dir.path()).await;
    held_by_finalizers(&target, dir.path()).await;
}

/// The terminating rule on auto, at once, in `namespace`; the audit log in the scratch dir.
fn terminating_config(scratch: &Path, namespace: &str) -> PathBuf {
    let path = scratch.join(format!("terminating-{namespace}.yaml"));
    let text = format!(
        "rules:\n  - rule: terminating\n    auto: true\n    after: 0\n    namespaces: {{include: [{namespace}]}}\n\
         safety:\n  maxActionsPerMinute: 1000\n  maxActionsPerNamespacePerMinute: 1000\n\
         audit:\n  path: {}\n  events: false\n",
        scratch.join(format!("audit-{namespace}.jsonl")).display()
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// A node whose kubelet stopped reporting: Ready Unknown (on the simulator, a lost node).
async fn lost_node(target: &Target, name: &str) {
    let nodes: Api<Node> = Api::all(target.client.clone());
    if let Some(sim) = target.sim() {
        sim.set_node_alive(name, false);
        return;
    }
    let node: Node = typed(json!({ "metadata": { "name": name, "labels": {
        "app.kubernetes.io/created-by": "ops-pod-cleaner-e2e" } } }));
    nodes.create(&PostParams::default(), &node).await.unwrap();
    let unknown = json!({ "status": { "conditions": [{ "type": "Ready", "status": "Unknown",
        "reason": "NodeStatusUnknown", "message": "Kubelet stopped posting node status.",
        "lastHeartbeatTime": "2026-01-01T00:00:00Z", "lastTransitionTime": "2026-01-01T00:00:00Z" }] } });
    nodes
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&unknown))
        .await
        .unwrap();
}

async fn statefulset_on_a_lost_node(target: &Target, scratch: &Path) {
    let node = format!("opc-e2e-lost-{}", std::process::id());
    lost_node(target, &node).await;
    let node_for_scenario = node.clone();
    target
        .in_namespaces(1, |names| async move {
            let node = node_for_scenario;
            let ns = &names[0];
            let sets: Api<StatefulSet> = Api::namespaced(target.client.clone(), ns);
            let set: StatefulSet = typed(json!({
                "metadata": { "name": "db" },
                "spec": { "replicas": 1, "serviceName": "db",
                          "selector": { "matchLabels": { "app": "db" } },
                          "template": { "metadata": { "labels": { "app": "db" } },
                                        "spec": { "nodeName": node, "terminationGracePeriodSeconds": 30,
                                                  "containers": [{ "name": "db", "image": "registry.k8s.io/pause:3.10" }] } } },
            }));
            sets.create(&PostParams::default(), &set).await.unwrap();
            let pods: Api<Pod> = Api::namespaced(target.client.clone(), ns);
            let uid = target
                .wait_for("db-0 from its StatefulSet", || async {
                    pods.get_opt("db-0").await.ok().flatten()?.metadata.uid
                })
                .await;
            pods.delete("db-0", &DeleteParams::default().grace_period(1))
                .await
                .unwrap();
            tokio::time::sleep(std::time::Duration::from_secs(2)).await;
            let config = terminating_config(scratch, ns);

            let (code, out) = target.headless_once(&config, &names);
            assert_eq!(code, Some(0), "{out}");
            assert!(out.contains("holds pod"), "{out}");
            assert!(out.contains("not confirmed gone"), "{out}");
            assert!(out.contains("node.kubernetes.io/out-of-service"), "{out}");
            let still = pods.get_opt("db-0").await.unwrap().and_then(|p| p.metadata.uid);
            assert_eq!(still.as_deref(), Some(uid.as_str()), "the only copy stays");

            // Confirmed gone: the next run force-deletes it, and the StatefulSet replaces it.
            let nodes: Api<Node> = Api::all(target.client.clone());
            let taint = json!({ "spec": { "taints": [{ "key": "node.kubernetes.io/out-of-service",
                "value": "nodeshutdown", "effect": "NoExecute" }] } });
            nodes
                .patch(&node, &PatchParams::default(), &Patch::Merge(&taint))
                .await
                .unwrap();
            let (code, out) = target.headless_once(&config, &names);
            assert_eq!(code, Some(0), "{out}");
            assert!(out.contains("auto terminating: deleted pod"), "{out}");
            target
                .wait_for("db-0 force-deleted and replaced", || async {
                    match pods.get_opt("db-0").await.ok()? {
                        None => Some(()),
                        Some(p) => (p.metadata.uid.as_deref() != Some(uid.as_str())).then_some(()),
                    }
                })
                .await;
        })
        .await;
    if target.sim().is_none() {
        let nodes: Api<Node> = Api::all(target.client.clone());
        if let Err(e) = nodes.delete(&node, &DeleteParams::default()).await {
            eprintln!("cleanup: could not delete node {node}: {e}; delete it by hand");
        }
    }
}

async fn held_by_finalizers(target: &Target, scratch: &Path) {
    target
        .in_namespaces(1, |names| async move {
            let ns = &names[0];
            let pods: Api<Pod> = Api::namespaced(target.client.clone(), ns);
            let pod: Pod = typed(json!({
                "metadata": { "name": "stuck-1", "finalizers": ["example.com/keep"] },
                "spec": { "schedulingGates": [{ "name": support::e2e::GATE }],
                          "containers": [{ "name": "app", "image": "registry.k8s.io/pause:3.10" }] },
            }));
            pods.create(&PostParams::default(), &pod).await.unwrap();
            pods.delete("stuck-1", &DeleteParams::default().grace_period(0))
                .await
                .unwrap();
            let config = terminating_config(scratch, ns);
            let (code, out) = target.headless_once(&config, &names);
            assert_eq!(code, Some(0), "held, not failed: {out}");
            assert!(out.contains("0 failed"), "{out}");
            assert!(out.contains("held by finalizers"), "{out}");
            assert!(pods.get_opt("stuck-1").await.unwrap().is_some());
        })
        .await;
}
