//! `demo-eu`: a shop and its payments; every abnormal category at once, a lost node, and
//! churn that keeps evicting and stranding pods.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::shape::{Fault, ImageFault};
use super::{Churn, Scenario, SimCluster, failed_job, stamp, typed, unschedulable};
use crate::json::Fields;
use crate::pull::{PullError, Runtime};

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
        ("platform", "edge-cache", 1, "varnish:7.6"),
        (
            "payments",
            "fraud-scorer",
            1,
            "registry.internal.example/payments/fraud-scorer:2.4.0",
        ),
        ("shop", "reviews", 2, "registry.local/shop/reviews:3.1.0"),
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
            runtime: Runtime::Containerd,
            error: PullError::NotFound,
            back_off: false,
        },
    ),
    // Docker Hub's anonymous pull limit: only the kubelet's Failed Event says so.
    (
        "varnish:",
        Fault::ImagePull {
            runtime: Runtime::Containerd,
            error: PullError::RateLimited,
            back_off: true,
        },
    ),
    (
        "registry.internal.example/",
        Fault::ImagePull {
            runtime: Runtime::Containerd,
            error: PullError::NoSuchHost,
            back_off: true,
        },
    ),
    (
        "ledger-worker",
        Fault::CrashLoop {
            restarts: 6,
            last_reason: "OOMKilled",
            exit_code: 137,
            memory_limit: Some("256Mi"),
        },
    ),
    (
        "shop/reviews",
        Fault::Liveness {
            restarts: 5,
            output: "HTTP probe failed with statuscode: 503",
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
        for (n, (suffix, minutes)) in [("k2x8p", 95), ("q7m4t", 41), ("z9c2w", 7)]
            .into_iter()
            .enumerate()
        {
            let message = super::eviction_message("web", n as u64);
            pods.push(evicted(
                (&format!("{rs}-{suffix}"), "shop"),
                (&rs, &uid),
                &ago(minutes),
                &message,
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
    // The scheduler's verdicts (pkg/scheduler/framework/types.go, FitError): reasons counted
    // per node and sorted; the lost node fails on its taint first. Then preemption's.
    let mut trainer = unschedulable(
        ("ml", "trainer-gpu-0"),
        ("trainer", "registry.local/ml/trainer:0.9"),
        &ago(25),
        "0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, \
         2 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 1 Preemption is not \
         helpful for scheduling, 2 No preemption victims found for incoming pod.",
    );
    trainer.set_in(
        "/spec/containers/0",
        "resources",
        json!({"limits": {"nvidia.com/gpu": "4"}}),
    );
    pods.push(trainer);
    let mut analytics = unschedulable(
        ("data", "analytics-db-0"),
        ("clickhouse", "registry.local/data/clickhouse:24.8"),
        &ago(18),
        "0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, \
         2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: \
         3 Preemption is not helpful for scheduling.",
    );
    analytics.field("spec").set(
        "nodeSelector",
        json!({"node.kubernetes.io/instance-type": "r6i.4xlarge"}),
    );
    pods.push(analytics);
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
    let now = cluster.now();
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

fn evicted((name, ns): (&str, &str), (rs, rs_uid): (&str, &str), at: &str, message: &str) -> Value {
    json!({
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": at, "labels": {"app": "web"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs, "uid": rs_uid,
                                          "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"nodeName": "sim-node-2", "containers": [{"name": "web", "image": "registry.local/shop/web:2.3.1"}]},
        "status": {"phase": "Failed", "reason": "Evicted", "startTime": at,
                   "message": message},
    })
}
