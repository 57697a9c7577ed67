//! `demo-eu`: a shop and its payments; every abnormal category at once, a lost node, and
//! churn that keeps evicting and stranding pods.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::shape::{Fault, ImageFault};
use super::{Churn, Scenario, SimCluster, failed_job, stamp, typed, unschedulable};

/// The node this cluster loses: pods there stay Terminating and show NodeLost.
const LOST_NODE: &str = "sim-node-3";

pub(super) const SCENARIO: Scenario = Scenario {
    name: "demo-eu",
    deployments: &[
        ("shop", "web", 4, "registry.local/shop/web:2.3.1"),
        ("shop", "cart", 2, "registry.local/shop/cart:1.8.0"),
        (
            "shop",
            "recommender",
            2,
            "registry.local/shop/recommender:2.0-typo",
        ),
        ("payments", "api", 3, "registry.local/payments/api:4.2.0"),
        (
            "payments",
            "ledger-worker",
            2,
            "registry.local/payments/ledger-worker:5.1",
        ),
        (
            "platform",
            "ingress",
            2,
            "registry.local/platform/ingress:1.11",
        ),
        (
            "platform",
            "metrics-agent",
            1,
            "registry.local/platform/metrics-agent:1.9",
        ),
    ],
    statefulsets: &[("data", "redis", 3, "registry.local/data/redis:7.2")],
    faults: FAULTS,
    lost_node: Some(LOST_NODE),
    budgets: &[("payments", "api", 3)],
    standing,
    churn: Churn {
        evict: Some(("shop", "web")),
        strand: Some(strand),
    },
};

const FAULTS: &[ImageFault] = &[
    (
        "-typo",
        Fault::ImagePull {
            detail: "not found",
        },
    ),
    (
        "ledger-worker",
        Fault::CrashLoop {
            restarts: 6,
            last_reason: "OOMKilled",
            exit_code: 137,
        },
    ),
    (
        "metrics-agent",
        Fault::Config {
            reason: "CreateContainerConfigError",
            message: "secret \"metrics-token\" not found",
        },
    ),
];

/// The abnormal pods that are already there when the demo starts.
fn standing(cluster: &SimCluster, now: DateTime<Utc>) -> Vec<Value> {
    let ago = |minutes: i64| stamp(now - chrono::Duration::minutes(minutes));
    let mut pods = Vec::new();
    if let Some((rs, uid)) = replicaset_of(cluster, "shop", "web") {
        for (suffix, minutes) in [("k2x8p", 95), ("q7m4t", 41), ("z9c2w", 7)] {
            pods.push(evicted(
                &format!("{rs}-{suffix}"),
                "shop",
                &rs,
                &uid,
                &ago(minutes),
            ));
        }
    }
    pods.push(json!({
        "metadata": {"name": "cart-7f9c6-old1", "namespace": "shop", "creationTimestamp": ago(600),
                     "deletionTimestamp": ago(14), "deletionGracePeriodSeconds": 30},
        "spec": {"nodeName": LOST_NODE, "containers": [{"name": "cart", "image": "registry.local/shop/cart:1.7.9"}]},
        "status": {"phase": "Running", "startTime": ago(600)},
    }));
    pods.push(json!({
        "metadata": {"name": "backup-agent-5d8fx", "namespace": "data", "creationTimestamp": ago(900),
                     "deletionTimestamp": ago(130), "deletionGracePeriodSeconds": 30,
                     "finalizers": ["backup.example.com/snapshot-pending"]},
        "spec": {"nodeName": "sim-node-1", "containers": [{"name": "agent", "image": "registry.local/data/backup:3.0"}]},
        "status": {"phase": "Running", "startTime": ago(900)},
    }));
    let mut trainer = unschedulable(
        ("ml", "trainer-gpu-0"),
        ("trainer", "registry.local/ml/trainer:0.9"),
        &ago(25),
        "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
    );
    trainer["spec"]["containers"][0]["resources"] = json!({"limits": {"nvidia.com/gpu": "4"}});
    pods.push(trainer);
    pods.push(failed_job(
        ("batch", "nightly-report-28345-x7k2q"),
        ("report", "registry.local/batch/report:2.2"),
        ("Error", 2),
        (&ago(300), &ago(280)),
    ));
    pods.push(json!({
        "metadata": {"name": "etcd-proxy-2", "namespace": "data", "creationTimestamp": ago(2000)},
        "spec": {"nodeName": LOST_NODE, "containers": [{"name": "proxy", "image": "registry.local/data/etcd-proxy:3.5"}]},
        "status": {"phase": "Running", "reason": "NodeLost", "startTime": ago(2000),
            "message": format!("Node {LOST_NODE} which was running pod etcd-proxy-2 is unresponsive"),
            "conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": ago(9)}]},
    }));
    pods
}

/// A pod on the lost node is deleted and cannot finish: it stays Terminating.
fn strand(cluster: &SimCluster, tick: u64) {
    let now = Utc::now();
    let pod = typed(json!({
        "metadata": {"name": format!("cart-7f9c6-s{tick}"), "namespace": "shop",
                     "creationTimestamp": stamp(now - chrono::Duration::hours(3)),
                     "deletionTimestamp": stamp(now - chrono::Duration::minutes(6)), "deletionGracePeriodSeconds": 30},
        "spec": {"nodeName": LOST_NODE, "containers": [{"name": "cart", "image": "registry.local/shop/cart:1.7.9"}]},
        "status": {"phase": "Running", "startTime": stamp(now - chrono::Duration::hours(3))},
    }));
    if let Some(pod) = pod {
        cluster.create_pod(pod);
    }
}

fn replicaset_of(cluster: &SimCluster, ns: &str, deployment: &str) -> Option<(String, String)> {
    cluster.replicasets().into_iter().find_map(|rs| {
        let owned = rs
            .metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.kind == "Deployment" && o.name == deployment);
        if !owned || rs.metadata.namespace.as_deref() != Some(ns) {
            return None;
        }
        Some((rs.metadata.name.clone()?, rs.metadata.uid.clone()?))
    })
}

fn evicted(name: &str, ns: &str, rs: &str, rs_uid: &str, at: &str) -> Value {
    json!({
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": at, "labels": {"app": "web"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs, "uid": rs_uid,
                                          "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"nodeName": "sim-node-2", "containers": [{"name": "web", "image": "registry.local/shop/web:2.3.1"}]},
        "status": {"phase": "Failed", "reason": "Evicted", "startTime": at,
                   "message": "The node was low on resource: memory. Threshold quantity: 100Mi, available: 88Mi."},
    })
}
