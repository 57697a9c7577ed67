//! The `--demo` cluster: a simulated server seeded with healthy workloads and with every
//! kind of abnormal pod the product handles.

use chrono::{Duration, Utc};
use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateTerminated, ContainerStateWaiting, Pod,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::{SimCluster, SimServer};

/// A running demo cluster; the server stops when this is dropped.
pub struct Demo {
    server: SimServer,
}

impl Demo {
    /// A client for the demo server (default namespace `default`).
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

/// Start a simulated server with the demo scenario seeded.
pub async fn start() -> crate::Result<Demo> {
    let cluster = SimCluster::new();
    seed(&cluster);
    let server = SimServer::start(cluster)
        .await
        .map_err(|e| crate::Error::Cluster(format!("cannot start the simulated cluster: {e}")))?;
    Ok(Demo { server })
}

/// Images whose name says how the simulated kubelet treats them (see [`image_shaper`]).
pub const BAD_IMAGE: &str = "registry.example.com/shop/checkout:does-not-exist";
pub const CRASHING_IMAGE: &str = "registry.example.com/batch/worker:crashloop";
pub const CONFIG_ERROR_IMAGE: &str = "registry.example.com/payments/ledger:config-error";

/// A pod shaper keyed on image names: `:does-not-exist` stays in ImagePullBackOff,
/// `:crashloop` crash-loops with restarts, `:config-error` fails its container config.
/// Their trouble started three hours ago, so time-in-state rules have something to show.
pub fn image_shaper(pod: &mut Pod) {
    let since = time(Duration::hours(3));
    let Some(spec) = pod.spec.as_ref() else {
        return;
    };
    let images: Vec<String> = spec
        .containers
        .iter()
        .map(|c| c.image.clone().unwrap_or_default())
        .collect();
    let Some(status) = pod.status.as_mut() else {
        return;
    };
    let mut troubled = false;
    for (cs, image) in status.container_statuses.iter_mut().flatten().zip(&images) {
        let (reason, message) = if image.ends_with(":does-not-exist") {
            (
                "ImagePullBackOff",
                format!("Back-off pulling image \"{image}\""),
            )
        } else if image.ends_with(":crashloop") {
            cs.restart_count = 14;
            cs.last_state = Some(ContainerState {
                terminated: Some(ContainerStateTerminated {
                    exit_code: 1,
                    reason: Some("Error".into()),
                    finished_at: Some(time(Duration::minutes(2))),
                    ..Default::default()
                }),
                ..Default::default()
            });
            (
                "CrashLoopBackOff",
                "back-off 5m0s restarting failed container".to_string(),
            )
        } else if image.ends_with(":config-error") {
            (
                "CreateContainerConfigError",
                "secret \"ledger-db\" not found".to_string(),
            )
        } else {
            continue;
        };
        troubled = true;
        cs.ready = false;
        cs.started = Some(false);
        cs.state = Some(ContainerState {
            waiting: Some(ContainerStateWaiting {
                reason: Some(reason.into()),
                message: Some(message),
            }),
            ..Default::default()
        });
    }
    if troubled {
        let pending = !images.iter().any(|i| i.ends_with(":crashloop"));
        if pending {
            status.phase = Some("Pending".into());
        }
        status.start_time = Some(since.clone());
        for c in status.conditions.iter_mut().flatten() {
            if c.type_ == "Ready" || c.type_ == "ContainersReady" {
                c.status = "False".into();
                c.reason = Some("ContainersNotReady".into());
                c.last_transition_time = Some(since.clone());
            }
        }
    }
}

/// Seed the demo scenario into `cluster`.
pub fn seed(cluster: &SimCluster) {
    cluster.set_pod_shaper(image_shaper);
    // Lost before anything is scheduled, so only the pod stranded on purpose is on it.
    cluster.set_node_alive("sim-node-3", false);
    healthy_workloads(cluster);
    troubled_workloads(cluster);
    odd_pods(cluster);
}

fn typed<T: DeserializeOwned>(v: Value) -> Option<T> {
    serde_json::from_value(v)
        .map_err(|e| tracing::warn!(error = %e, "demo object does not decode"))
        .ok()
}

fn workload(name: &str, ns: &str, replicas: i32, image: &str) -> Value {
    json!({
        "metadata": { "name": name, "namespace": ns, "labels": { "app": name } },
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "selector": { "matchLabels": { "app": name } },
            "template": {
                "metadata": { "labels": { "app": name } },
                "spec": {
                    "terminationGracePeriodSeconds": 5,
                    "containers": [{ "name": name, "image": image }],
                },
            },
        },
    })
}

fn healthy_workloads(cluster: &SimCluster) {
    for (name, ns, replicas) in [
        ("web", "shop", 3),
        ("cart", "shop", 2),
        ("gateway", "payments", 2),
    ] {
        if let Some(d) = typed(workload(name, ns, replicas, "nginx:1.27")) {
            cluster.create_deployment(d);
        }
    }
    if let Some(sts) = typed(workload("postgres", "payments", 2, "postgres:16")) {
        cluster.create_statefulset(sts);
    }
    let mut rollout = workload(
        "search",
        "shop",
        2,
        "registry.example.com/shop/search:2.4.1",
    );
    rollout["apiVersion"] = json!("argoproj.io/v1alpha1");
    rollout["kind"] = json!("Rollout");
    cluster.create_rollout(rollout);
    let pdb = json!({
        "metadata": { "name": "web", "namespace": "shop" },
        "spec": { "minAvailable": 2, "selector": { "matchLabels": { "app": "web" } } },
    });
    if let Some(pdb) = typed(pdb) {
        cluster.create_pdb(pdb);
    }
}

fn troubled_workloads(cluster: &SimCluster) {
    if let Some(d) = typed(workload("checkout", "shop", 2, BAD_IMAGE)) {
        cluster.create_deployment(d);
    }
    if let Some(d) = typed(workload("worker", "batch", 2, CRASHING_IMAGE)) {
        cluster.create_deployment(d);
    }
    if let Some(d) = typed(workload("ledger", "payments", 1, CONFIG_ERROR_IMAGE)) {
        cluster.create_deployment(d);
    }
}

/// A bare pod with a status, as the API would show it.
fn pod(ns: &str, name: &str, node: Option<&str>, status: Value) -> Value {
    let created = time_ago(Duration::hours(6));
    let mut spec = json!({ "containers": [{ "name": "main", "image": "busybox:1.36" }] });
    if let Some(node) = node {
        spec["nodeName"] = json!(node);
    }
    json!({
        "metadata": { "name": name, "namespace": ns, "creationTimestamp": created },
        "spec": spec,
        "status": status,
    })
}

/// A k8s `Time` that long ago.
fn time(ago: Duration) -> Time {
    let when = Utc::now() - ago;
    let ts = k8s_openapi::jiff::Timestamp::from_second(when.timestamp())
        .unwrap_or_else(|_| k8s_openapi::jiff::Timestamp::now());
    Time(ts)
}

/// A timestamp `ago` in the past, as the API writes it.
fn time_ago(ago: Duration) -> String {
    super::meta::timestamp(Utc::now() - ago)
}

/// Evicted, stuck Terminating, finalizer-held, unschedulable, failed and unknown pods.
fn odd_pods(cluster: &SimCluster) {
    let evicted = json!({
        "phase": "Failed", "reason": "Evicted",
        "message": "The node was low on resource: memory. Threshold quantity: 100Mi, available: 42Mi.",
        "startTime": time_ago(Duration::hours(5)),
    });
    let failed = json!({
        "phase": "Failed", "startTime": time_ago(Duration::hours(4)),
        "containerStatuses": [{ "name": "main", "image": "busybox:1.36", "imageID": "", "ready": false,
            "restartCount": 0, "state": { "terminated": { "exitCode": 137, "reason": "OOMKilled" } } }],
    });
    let unschedulable = json!({
        "phase": "Pending",
        "conditions": [{ "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
            "message": "0/3 nodes are available: 3 Insufficient memory.",
            "lastTransitionTime": time_ago(Duration::hours(2)) }],
    });
    let running = json!({ "phase": "Running", "startTime": time_ago(Duration::hours(6)),
        "conditions": [{ "type": "Ready", "status": "True" }] });
    let seeds = [
        pod(
            "shop",
            "web-evicted-7f9c",
            Some("sim-node-1"),
            evicted.clone(),
        ),
        pod("batch", "report-evicted-2x8k", Some("sim-node-2"), evicted),
        pod("batch", "nightly-export-oom", Some("sim-node-1"), failed),
        pod("shop", "resize-images", None, unschedulable),
        pod(
            "payments",
            "stuck-on-lost-node",
            Some("sim-node-3"),
            running.clone(),
        ),
        pod("payments", "held-by-finalizer", Some("sim-node-2"), running),
    ];
    for seed in seeds {
        if let Some(p) = typed(seed) {
            cluster.create_pod(p);
        }
    }
    let ago = time(Duration::hours(3));
    cluster.update_pod("payments", "stuck-on-lost-node", |p| {
        p.metadata.deletion_timestamp = Some(ago.clone());
        p.metadata.deletion_grace_period_seconds = Some(30);
    });
    cluster.update_pod("payments", "held-by-finalizer", |p| {
        p.metadata.finalizers = Some(vec!["example.com/backup-hook".into()]);
        p.metadata.deletion_timestamp = Some(ago.clone());
        p.metadata.deletion_grace_period_seconds = Some(0);
    });
}
