//! The `--demo` cluster: healthy workloads, every abnormal category at once, and churn that
//! keeps producing more (evictions, rising restarts, newly stuck pods).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};
use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateTerminated, ContainerStateWaiting, Pod,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::{SimCluster, SimServer};

/// The node the demo loses: pods there stay Terminating and show NodeLost.
const LOST_NODE: &str = "sim-node-3";
const TICK: Duration = Duration::from_secs(2);
/// Churn stops adding pods of a kind past this many, so a long demo stays readable.
const CAP: usize = 10;

/// A running demo cluster; its churn stops when it is dropped.
pub struct Demo {
    server: SimServer,
    churn: JoinHandle<()>,
}

impl Demo {
    pub fn client(&self) -> kube::Client {
        self.server.client()
    }

    pub fn server(&self) -> &SimServer {
        &self.server
    }

    pub fn cluster(&self) -> &SimCluster {
        self.server.cluster()
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        self.churn.abort();
    }
}

/// Start a simulated server with the demo scenario seeded and churning.
pub async fn start() -> crate::Result<Demo> {
    let cluster = SimCluster::new();
    seed(&cluster, Utc::now());
    let server = SimServer::start(cluster.clone())
        .await
        .map_err(|e| crate::Error::Cluster(format!("cannot start the simulated cluster: {e}")))?;
    let churn = tokio::spawn(churn(cluster));
    Ok(Demo { server, churn })
}

/// Seed the scenario as it would look after the cluster has been running for a while.
pub fn seed(cluster: &SimCluster, now: DateTime<Utc>) {
    let seeding = Arc::new(AtomicBool::new(true));
    cluster.set_pod_shaper(shaper(seeding.clone()));
    cluster.set_node_alive(LOST_NODE, false);
    for (ns, name, replicas, image) in [
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
    ] {
        cluster.create_deployment(typed(deployment(ns, name, replicas, image)));
    }
    cluster.create_statefulset(typed(statefulset(
        "data",
        "redis",
        3,
        "registry.local/data/redis:7.2",
    )));
    cluster.create_pdb(typed(json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "api", "namespace": "payments"},
        "spec": {"minAvailable": 3, "selector": {"matchLabels": {"app": "api"}}},
    })));
    seeding.store(false, Ordering::Relaxed);
    for (i, pod) in standing_pods(cluster, now).into_iter().enumerate() {
        let mut pod = pod;
        pod["metadata"]["uid"] = json!(format!("demo-seed-{i}"));
        cluster.create_pod(typed(pod));
    }
}

/// The abnormal pods that are already there when the demo starts.
fn standing_pods(cluster: &SimCluster, now: DateTime<Utc>) -> Vec<Value> {
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
    pods.push(json!({
        "metadata": {"name": "trainer-gpu-0", "namespace": "ml", "creationTimestamp": ago(25)},
        "spec": {"containers": [{"name": "trainer", "image": "registry.local/ml/trainer:0.9",
                                 "resources": {"limits": {"nvidia.com/gpu": "4"}}}]},
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
            "reason": "Unschedulable", "lastTransitionTime": ago(25),
            "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}]},
    }));
    pods.push(json!({
        "metadata": {"name": "nightly-report-28345-x7k2q", "namespace": "batch", "creationTimestamp": ago(300),
                     "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "nightly-report-28345",
                                          "uid": "demo-job-1", "controller": true}]},
        "spec": {"nodeName": "sim-node-2", "restartPolicy": "Never",
                 "containers": [{"name": "report", "image": "registry.local/batch/report:2.2"}]},
        "status": {"phase": "Failed", "startTime": ago(300), "containerStatuses": [{"name": "report", "restartCount": 0,
            "state": {"terminated": {"reason": "Error", "exitCode": 2, "finishedAt": ago(280)}}}]},
    }));
    pods.push(json!({
        "metadata": {"name": "etcd-proxy-2", "namespace": "data", "creationTimestamp": ago(2000)},
        "spec": {"nodeName": LOST_NODE, "containers": [{"name": "proxy", "image": "registry.local/data/etcd-proxy:3.5"}]},
        "status": {"phase": "Running", "reason": "NodeLost", "startTime": ago(2000),
            "message": format!("Node {LOST_NODE} which was running pod etcd-proxy-2 is unresponsive"),
            "conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": ago(9)}]},
    }));
    pods
}

/// Decides what the simulated kubelet reports for the demo's broken images. While seeding,
/// times are set in the past, as if the cluster had been in this state for a while.
fn shaper(seeding: Arc<AtomicBool>) -> impl Fn(&mut Pod) + Send + Sync + 'static {
    move |pod: &mut Pod| {
        let image = pod
            .spec
            .as_ref()
            .and_then(|s| s.containers.first())
            .and_then(|c| c.image.clone())
            .unwrap_or_default();
        let (reason, message, restarts) = if image.ends_with("-typo") {
            (
                "ImagePullBackOff",
                format!("Back-off pulling image \"{image}\": manifest unknown"),
                0,
            )
        } else if image.contains("ledger-worker") {
            (
                "CrashLoopBackOff",
                "back-off 5m0s restarting failed container".to_string(),
                6,
            )
        } else if image.contains("metrics-agent") {
            (
                "CreateContainerConfigError",
                "secret \"metrics-token\" not found".to_string(),
                0,
            )
        } else {
            return;
        };
        let past = seeding.load(Ordering::Relaxed);
        make_waiting(pod, reason, &message, restarts, past);
    }
}

fn make_waiting(pod: &mut Pod, reason: &str, message: &str, restarts: i32, past: bool) {
    let Some(status) = pod.status.as_mut() else {
        return;
    };
    if let Some(statuses) = status.container_statuses.as_mut() {
        for c in statuses {
            c.ready = false;
            c.restart_count = restarts;
            c.state = Some(ContainerState {
                waiting: Some(ContainerStateWaiting {
                    reason: Some(reason.into()),
                    message: Some(message.into()),
                }),
                ..Default::default()
            });
            if restarts > 0 {
                c.last_state = Some(ContainerState {
                    terminated: Some(ContainerStateTerminated {
                        reason: Some("OOMKilled".into()),
                        exit_code: 137,
                        ..Default::default()
                    }),
                    ..Default::default()
                });
            }
        }
    }
    // Conditions and times are easiest to set through JSON.
    let Ok(mut v) = serde_json::to_value(&*pod) else {
        return;
    };
    let since = if past {
        Utc::now() - chrono::Duration::minutes(35)
    } else {
        Utc::now()
    };
    if past {
        v["metadata"]["creationTimestamp"] = json!(stamp(since));
        v["status"]["startTime"] = json!(stamp(since));
    }
    if let Some(conditions) = v["status"]["conditions"].as_array_mut() {
        for c in conditions
            .iter_mut()
            .filter(|c| c["type"] == "Ready" || c["type"] == "ContainersReady")
        {
            c["status"] = json!("False");
            c["reason"] = json!("ContainersNotReady");
            c["lastTransitionTime"] = json!(stamp(since));
        }
    }
    v["status"]["phase"] = json!(if reason == "CrashLoopBackOff" {
        "Running"
    } else {
        "Pending"
    });
    if let Ok(shaped) = serde_json::from_value(v) {
        *pod = shaped;
    }
}

/// Every tick something may happen: restarts climb, pods get evicted or stuck.
async fn churn(cluster: SimCluster) {
    let mut tick: u64 = 0;
    let mut interval = tokio::time::interval(TICK);
    loop {
        interval.tick().await;
        tick += 1;
        if tick.is_multiple_of(5) {
            bump_restarts(&cluster);
        }
        if tick.is_multiple_of(8) {
            evict_one(&cluster, tick);
        }
        if tick.is_multiple_of(15) {
            strand_one(&cluster, tick);
        }
    }
}

fn bump_restarts(cluster: &SimCluster) {
    for pod in cluster.pods() {
        let Some((ns, name)) = ns_name(&pod) else {
            continue;
        };
        let crashing = waiting_reason(&pod).is_some_and(|r| r == "CrashLoopBackOff");
        if crashing {
            cluster.update_pod_status(&ns, &name, |status| {
                for c in status.container_statuses.iter_mut().flatten() {
                    c.restart_count += 1;
                }
            });
        }
    }
}

/// The kubelet of a node under memory pressure evicts a running web pod; its ReplicaSet replaces it.
fn evict_one(cluster: &SimCluster, tick: u64) {
    let pods = cluster.pods();
    let evicted = pods
        .iter()
        .filter(|p| p.status.as_ref().and_then(|s| s.reason.as_deref()) == Some("Evicted"))
        .count();
    let running: Vec<&Pod> = pods
        .iter()
        .filter(|p| p.metadata.namespace.as_deref() == Some("shop"))
        .filter(|p| {
            p.metadata
                .name
                .as_deref()
                .is_some_and(|n| n.starts_with("web-"))
        })
        .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
        .collect();
    if evicted >= CAP || running.is_empty() {
        return;
    }
    let Some((ns, name)) = ns_name(running[(tick as usize / 8) % running.len()]) else {
        return;
    };
    cluster.update_pod_status(&ns, &name, |status| {
        status.phase = Some("Failed".into());
        status.reason = Some("Evicted".into());
        status.message = Some(
            "The node was low on resource: memory. Threshold quantity: 100Mi, available: 91Mi."
                .into(),
        );
        status.conditions = None;
        for c in status.container_statuses.iter_mut().flatten() {
            c.ready = false;
            c.state = Some(ContainerState {
                terminated: Some(ContainerStateTerminated {
                    reason: Some("Evicted".into()),
                    exit_code: 137,
                    ..Default::default()
                }),
                ..Default::default()
            });
        }
    });
}

/// A pod on the lost node is deleted and cannot finish: it stays Terminating.
fn strand_one(cluster: &SimCluster, tick: u64) {
    let stranded = cluster
        .pods()
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_some())
        .count();
    if stranded >= CAP {
        return;
    }
    let now = Utc::now();
    cluster.create_pod(typed(json!({
        "metadata": {"name": format!("cart-7f9c6-s{tick}"), "namespace": "shop",
                     "creationTimestamp": stamp(now - chrono::Duration::hours(3)),
                     "deletionTimestamp": stamp(now - chrono::Duration::minutes(6)), "deletionGracePeriodSeconds": 30},
        "spec": {"nodeName": LOST_NODE, "containers": [{"name": "cart", "image": "registry.local/shop/cart:1.7.9"}]},
        "status": {"phase": "Running", "startTime": stamp(now - chrono::Duration::hours(3))},
    })));
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

fn deployment(ns: &str, name: &str, replicas: i32, image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": name, "image": image}]}}},
    })
}

fn statefulset(ns: &str, name: &str, replicas: i32, image: &str) -> Value {
    let mut set = deployment(ns, name, replicas, image);
    set["kind"] = json!("StatefulSet");
    set["spec"]["serviceName"] = json!(name);
    set
}

fn typed<T: DeserializeOwned>(v: Value) -> T {
    // The demo's own literals; a failure here is a bug in this file, caught by its test.
    serde_json::from_value(v).expect("demo objects are valid")
}

fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn ns_name(pod: &Pod) -> Option<(String, String)> {
    Some((pod.metadata.namespace.clone()?, pod.metadata.name.clone()?))
}

fn waiting_reason(pod: &Pod) -> Option<String> {
    let statuses = pod.status.as_ref()?.container_statuses.as_ref()?;
    statuses
        .iter()
        .find_map(|c| c.state.as_ref()?.waiting.as_ref()?.reason.clone())
}
