//! A stand-in for the kubelets of a control plane that has none (`../shared/realk8s`): it
//! writes, through the status subresource, what a kubelet writes for the pods the workload
//! controllers create in the test namespaces, and the Warning Event of a failed pull. Started only where no node reports Ready, so on
//! a cluster with kubelets the real ones answer.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::e2e::BAD_IMAGE;

/// Whether some node reports Ready: then real kubelets run the pods.
pub async fn has_ready_node(client: &kube::Client) -> bool {
    let nodes: Api<Node> = Api::all(client.clone());
    let Ok(list) = nodes.list(&ListParams::default()).await else {
        return false;
    };
    list.items.iter().any(|node| {
        let conditions = node.status.as_ref().and_then(|s| s.conditions.as_ref());
        conditions
            .into_iter()
            .flatten()
            .any(|c| c.type_ == "Ready" && c.status == "True")
    })
}

/// Every half second, report on the pods that controllers made in the test namespaces and
/// that no kubelet has reported on: running and ready, or failing to pull [`BAD_IMAGE`].
pub fn stand_in(client: kube::Client) -> JoinHandle<()> {
    tokio::spawn(async move {
        let pods: Api<Pod> = Api::all(client.clone());
        let selector = ListParams::default();
        loop {
            if let Ok(list) = pods.list(&selector).await {
                for pod in list.items.iter().filter(|p| unreported(p)) {
                    report(&client, pod).await;
                }
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    })
}

/// A controller's pod in a test namespace, alive, with no container status yet.
fn unreported(pod: &Pod) -> bool {
    let in_test = pod
        .metadata
        .namespace
        .as_deref()
        .is_some_and(|ns| ns.starts_with("opc-e2e-"));
    let by_controller = pod
        .metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.controller == Some(true) && o.kind == "ReplicaSet");
    let reported = pod
        .status
        .as_ref()
        .is_some_and(|s| s.container_statuses.is_some());
    // A kubelet never starts a pod that finished (a test evicts some).
    let finished = pod
        .status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .is_some_and(|p| p == "Failed" || p == "Succeeded");
    in_test && by_controller && !reported && !finished && pod.metadata.deletion_timestamp.is_none()
}

/// What the kubelet writes once it has tried to start the pod's containers.
async fn report(client: &kube::Client, pod: &Pod) {
    let (Some(ns), Some(name)) = (&pod.metadata.namespace, &pod.metadata.name) else {
        return;
    };
    let containers = pod
        .spec
        .as_ref()
        .map(|s| s.containers.clone())
        .unwrap_or_default();
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let pulls = containers
        .iter()
        .all(|c| c.image.as_deref() != Some(BAD_IMAGE));
    let statuses: Vec<Value> = containers
        .iter()
        .map(|c| {
            let image = c.image.clone().unwrap_or_default();
            let state = match pulls {
                true => json!({"running": {"startedAt": now}}),
                // The kubelet's words after a failed pull (kuberuntime_image.go).
                false => json!({"waiting": {
                    "reason": "ImagePullBackOff",
                    "message": format!("Back-off pulling image \"{image}\""),
                }}),
            };
            json!({"name": c.name, "image": image, "imageID": "", "ready": pulls,
                   "restartCount": 0, "started": pulls, "state": state})
        })
        .collect();
    let ready = if pulls { "True" } else { "False" };
    // At the version read: a pod a test changed since (evicted it) is left as the test left
    // it, not turned Running by a stale read (a 409).
    let status = json!({"metadata": {"resourceVersion": pod.metadata.resource_version},
        "status": {
        "phase": if pulls { "Running" } else { "Pending" },
        "startTime": now,
        "conditions": [
            {"type": "Initialized", "status": "True", "lastTransitionTime": now},
            {"type": "Ready", "status": ready, "lastTransitionTime": now},
            {"type": "ContainersReady", "status": ready, "lastTransitionTime": now},
        ],
        "containerStatuses": statuses,
    }});
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let _ = pods
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await;
    if !pulls {
        for c in &containers {
            failed_pull(client, pod, &c.name, c.image.as_deref().unwrap_or_default()).await;
        }
    }
}

/// The kubelet's Warning Event for a pull whose registry does not resolve
/// (pkg/kubelet/images/image_manager.go, with containerd's error), written as its recorder
/// writes core/v1 Events.
async fn failed_pull(client: &kube::Client, pod: &Pod, container: &str, image: &str) {
    let (Some(ns), Some(name)) = (&pod.metadata.namespace, &pod.metadata.name) else {
        return;
    };
    let now = chrono::Utc::now();
    let stamp = now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let node = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .unwrap_or_else(|| "stand-in".into());
    let (host, rest) = image.split_once('/').unwrap_or(("docker.io", image));
    let (repo, tag) = rest.rsplit_once(':').unwrap_or((rest, "latest"));
    let message = format!(
        "Failed to pull image \"{image}\": rpc error: code = Unknown desc = failed to pull and \
         unpack image \"{image}\": failed to resolve reference \"{image}\": failed to do request: \
         Head \"https://{host}/v2/{repo}/manifests/{tag}\": dial tcp: lookup {host} on \
         127.0.0.53:53: no such host"
    );
    let event: k8s_openapi::api::core::v1::Event = serde_json::from_value(json!({
        "metadata": {"name": format!("{name}.{:016x}", now.timestamp_nanos_opt().unwrap_or_default()), "namespace": ns},
        "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": name, "namespace": ns,
            "uid": pod.metadata.uid, "fieldPath": format!("spec.containers{{{container}}}")},
        "reason": "Failed", "type": "Warning", "message": message, "count": 1,
        "source": {"component": "kubelet", "host": node},
        "firstTimestamp": stamp, "lastTimestamp": stamp,
        "reportingComponent": "kubelet", "reportingInstance": node,
    }))
    .expect("an Event");
    let events: Api<k8s_openapi::api::core::v1::Event> = Api::namespaced(client.clone(), ns);
    let _ = events.create(&Default::default(), &event).await;
}
