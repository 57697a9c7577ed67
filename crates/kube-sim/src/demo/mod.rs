//! The `--demo` clusters: two simulated clusters, `demo-eu` and `demo-us`, each with healthy
//! workloads, its own mix of abnormal pods, and churn that keeps producing more.

mod eu;
mod events;
mod shape;
#[cfg(test)]
mod tests;
mod us;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};
use k8s_openapi::api::core::v1::{ContainerState, ContainerStateTerminated, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::{Error, Result, SimCluster, SimServer};
use crate::json::Fields;
use shape::{ImageFault, dress, fault_of, shaper};

/// The demo's contexts, in the order `--demo` opens them.
pub const CONTEXTS: [&str; 2] = [eu::SCENARIO.name, us::SCENARIO.name];

const TICK: Duration = Duration::from_secs(2);
/// Churn stops adding pods of a kind past this many, so a long demo stays readable.
const CAP: usize = 10;

/// `(namespace, name, replicas, image)`.
type Workload = (&'static str, &'static str, i32, &'static str);

/// One demo cluster: what runs there, what is broken, and what keeps happening.
struct Scenario {
    name: &'static str,
    deployments: &'static [Workload],
    statefulsets: &'static [Workload],
    faults: &'static [ImageFault],
    /// A node that stopped answering: its pods cannot finish terminating.
    lost_node: Option<&'static str>,
    /// PodDisruptionBudgets `(namespace, app, minAvailable)`.
    budgets: &'static [(&'static str, &'static str, i32)],
    /// The abnormal pods already there at start.
    standing: fn(&SimCluster, DateTime<Utc>) -> Vec<Value>,
    churn: Churn,
}

/// What changes on its own while the demo runs, besides crash loops restarting.
struct Churn {
    /// The Deployment `(namespace, name)` whose running pods get evicted now and then.
    evict: Option<(&'static str, &'static str)>,
    /// Adds a pod that stays Terminating.
    strand: Option<fn(&SimCluster, u64)>,
}

/// A running demo cluster; its churn stops when it is dropped.
pub struct Demo {
    name: &'static str,
    server: SimServer,
    churn: JoinHandle<()>,
}

impl Demo {
    /// The context name: one of [`CONTEXTS`].
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// A plain client of this cluster; see [`SimServer::client`].
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

/// Start the first demo cluster, `demo-eu`.
pub async fn start() -> Result<Demo> {
    start_named(CONTEXTS[0]).await
}

/// Start the demo cluster called `name` (one of [`CONTEXTS`]) with its scenario seeded and
/// churning; any other name is [`Error::UnknownDemo`].
pub async fn start_named(name: &str) -> Result<Demo> {
    let scenario = scenario(name)?;
    let cluster = SimCluster::new();
    let seen = seed(scenario, &cluster, cluster.now());
    let server = SimServer::start(cluster.clone())
        .await
        .map_err(|source| Error::Start {
            name: name.to_string(),
            source,
        })?;
    let churn = tokio::spawn(churn(scenario, cluster, seen));
    Ok(Demo {
        name: scenario.name,
        server,
        churn,
    })
}

fn scenario(name: &str) -> Result<&'static Scenario> {
    [&eu::SCENARIO, &us::SCENARIO]
        .into_iter()
        .find(|s| s.name == name)
        .ok_or_else(|| Error::UnknownDemo(name.to_string()))
}

/// Seed the scenario as it would look after the cluster has been running for a while, Events
/// included; returns the uids of the pods whose Events are recorded.
fn seed(scenario: &'static Scenario, cluster: &SimCluster, now: DateTime<Utc>) -> BTreeSet<String> {
    let seeding = Arc::new(AtomicBool::new(true));
    cluster.set_pod_shaper(shaper(scenario.faults, seeding.clone(), cluster.clock()));
    if let Some(node) = scenario.lost_node {
        cluster.set_node_alive(node, false);
    }
    let dressed = |mut workload: Value, image: &str| {
        let container = workload.pointer_mut("/spec/template/spec/containers/0");
        if let (Some(fault), Some(container)) = (fault_of(scenario.faults, image), container) {
            dress(container, fault);
        }
        workload
    };
    for &(ns, name, replicas, image) in scenario.deployments {
        if let Some(d) = typed(dressed(deployment(ns, name, replicas, image), image)) {
            cluster.create_deployment(d);
        }
    }
    for &(ns, name, replicas, image) in scenario.statefulsets {
        if let Some(set) = typed(dressed(statefulset(ns, name, replicas, image), image)) {
            cluster.create_statefulset(set);
        }
    }
    for &(ns, app, min) in scenario.budgets {
        let budget = typed(json!({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": app, "namespace": ns},
            "spec": {"minAvailable": min, "selector": {"matchLabels": {"app": app}}},
        }));
        if let Some(budget) = budget {
            cluster.create_pdb(budget);
        }
    }
    seeding.store(false, Ordering::Relaxed);
    for (i, mut pod) in (scenario.standing)(cluster, now).into_iter().enumerate() {
        pod.field("metadata")
            .set("uid", json!(format!("{}-seed-{i}", scenario.name)));
        if let Some(pod) = typed(pod) {
            cluster.create_pod(pod);
        }
    }
    let mut seen = BTreeSet::new();
    events::catch_up(cluster, scenario.faults, &mut seen);
    seen
}

/// Every tick something may happen: restarts climb, pods get evicted or stuck, kubelets and
/// the scheduler retry and say so in Events.
async fn churn(scenario: &'static Scenario, cluster: SimCluster, mut seen: BTreeSet<String>) {
    let mut tick: u64 = 0;
    let mut interval = tokio::time::interval(TICK);
    loop {
        interval.tick().await;
        tick += 1;
        if tick.is_multiple_of(5) {
            bump_restarts(&cluster);
            events::retry(&cluster, scenario.faults);
        }
        if let Some((ns, deployment)) = scenario.churn.evict
            && tick.is_multiple_of(8)
        {
            evict_one(&cluster, ns, deployment, tick);
        }
        if let Some(strand) = scenario.churn.strand
            && tick.is_multiple_of(15)
            && stranded(&cluster) < CAP
        {
            strand(&cluster, tick);
        }
        // New pods from controllers and churn get their Events as they turn abnormal.
        events::catch_up(&cluster, scenario.faults, &mut seen);
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

/// The kubelet of a node under memory pressure evicts a running pod of `deployment`; its
/// ReplicaSet replaces it.
fn evict_one(cluster: &SimCluster, ns: &str, deployment: &str, tick: u64) {
    let pods = cluster.pods();
    let evicted = pods
        .iter()
        .filter(|p| p.status.as_ref().and_then(|s| s.reason.as_deref()) == Some("Evicted"))
        .count();
    let prefix = format!("{deployment}-");
    let running: Vec<&Pod> = pods
        .iter()
        .filter(|p| p.metadata.namespace.as_deref() == Some(ns))
        .filter(|p| {
            p.metadata
                .name
                .as_deref()
                .is_some_and(|n| n.starts_with(&prefix))
        })
        .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
        .collect();
    if evicted >= CAP {
        return;
    }
    let next = (tick as usize / 8).checked_rem(running.len());
    let Some((ns, name)) = next.and_then(|i| running.get(i)).and_then(|p| ns_name(p)) else {
        return;
    };
    let message = eviction_message(deployment, tick);
    let now = Time(k8s_openapi::jiff::Timestamp::now());
    cluster.update_pod_status(&ns, &name, |status| {
        status.phase = Some("Failed".into());
        status.reason = Some("Evicted".into());
        status.message = Some(message);
        status.conditions = None;
        for c in status.container_statuses.iter_mut().flatten() {
            c.ready = false;
            c.state = Some(ContainerState {
                terminated: Some(ContainerStateTerminated {
                    reason: Some("Evicted".into()),
                    exit_code: 137,
                    finished_at: Some(now.clone()),
                    ..Default::default()
                }),
                ..Default::default()
            });
        }
    });
}

/// The eviction manager's message (pkg/kubelet/eviction/helpers.go), trailing space and all:
/// the node's signal, then the container using the most beyond its request (none here: 0).
fn eviction_message(container: &str, n: u64) -> String {
    let available = 91_340 - (n % 7) * 1_313;
    let using = 1_893_412 + (n % 5) * 20_480;
    format!(
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: \
         {available}Ki. Container {container} was using {using}Ki, request is 0, has larger \
         consumption of memory. "
    )
}

fn stranded(cluster: &SimCluster) -> usize {
    cluster
        .pods()
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_some())
        .count()
}

/// A Job's pod that failed: `(reason, exit code)` of its container, `(started, finished)`.
fn failed_job(
    (ns, name): (&str, &str),
    (container, image): (&str, &str),
    (reason, exit_code): (&str, i32),
    (started, finished): (&str, &str),
) -> Value {
    let job = name.rsplit_once('-').map_or(name, |(job, _)| job);
    json!({
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": started,
                     "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": job,
                                          "uid": format!("job-{job}"), "controller": true}]},
        "spec": {"nodeName": "sim-node-2", "restartPolicy": "Never",
                 "containers": [{"name": container, "image": image}]},
        "status": {"phase": "Failed", "startTime": started, "containerStatuses": [{"name": container, "restartCount": 0,
            "state": {"terminated": {"reason": reason, "exitCode": exit_code, "finishedAt": finished}}}]},
    })
}

/// A pod the scheduler cannot place since `since`, saying why.
fn unschedulable(
    (ns, name): (&str, &str),
    (container, image): (&str, &str),
    since: &str,
    message: &str,
) -> Value {
    json!({
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": since},
        "spec": {"containers": [{"name": container, "image": image}]},
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
            "reason": "Unschedulable", "lastTransitionTime": since, "message": message}]},
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
    set.set("kind", json!("StatefulSet"));
    set.field("spec").set("serviceName", json!(name));
    set
}

/// The demo's own literals as typed objects; one that does not decode is a bug in these
/// files (the tests that start both demo clusters would miss its pods): logged and left out.
fn typed<T: DeserializeOwned>(v: Value) -> Option<T> {
    serde_json::from_value(v)
        .map_err(|e| tracing::error!("a demo object does not decode: {e}"))
        .ok()
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
