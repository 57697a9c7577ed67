//! Pod life: defaulting, the scheduler and kubelet stand-ins, and graceful deletion.

use chrono::{DateTime, Duration as ChronoDuration, Utc};
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use super::cluster::State;
use super::events::{self, PodEvent};
use super::meta;
use super::ops;
use super::pull::{PullError, Runtime, runtime_error};
use super::resources::Res;
use super::scheduler;
use super::status::ApiResult;
use crate::json::Fields;

const DEFAULT_GRACE: i64 = 30;

/// Defaults the API server applies, and the status every new pod starts with.
pub fn prepare_create(pod: &mut Value) {
    let spec = &mut pod["spec"];
    for (k, v) in [
        ("terminationGracePeriodSeconds", json!(DEFAULT_GRACE)),
        ("restartPolicy", json!("Always")),
        ("dnsPolicy", json!("ClusterFirst")),
        ("schedulerName", json!("default-scheduler")),
        ("securityContext", json!({})),
        ("enableServiceLinks", json!(true)),
        ("priority", json!(0)),
    ] {
        if spec.get(k).is_none() {
            spec[k] = v;
        }
    }
    for list in ["containers", "initContainers"] {
        if let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut) {
            containers.iter_mut().for_each(default_container);
        }
    }
    pod["status"] = json!({ "phase": "Pending", "qosClass": qos_class(pod) });
}

/// The defaults a workload's `spec.template` gets: its containers' as a pod's.
pub fn default_template(workload: &mut Value) {
    for list in ["containers", "initContainers"] {
        let path = format!("/spec/template/spec/{list}");
        if let Some(containers) = workload.pointer_mut(&path).and_then(Value::as_array_mut) {
            containers.iter_mut().for_each(default_container);
        }
    }
}

fn default_container(c: &mut Value) {
    let image = meta::str_at(c, "/image");
    let latest = !image.contains(':') || image.ends_with(":latest");
    let policy = if latest { "Always" } else { "IfNotPresent" };
    for (k, v) in [
        ("imagePullPolicy", json!(policy)),
        ("terminationMessagePath", json!("/dev/termination-log")),
        ("terminationMessagePolicy", json!("File")),
        ("resources", json!({})),
    ] {
        if c.get(k).is_none() {
            c[k] = v;
        }
    }
}

fn qos_class(pod: &Value) -> &'static str {
    let containers = pod.pointer("/spec/containers").and_then(Value::as_array);
    let has_resources = containers.into_iter().flatten().any(|c| {
        let r = c.get("resources");
        r.and_then(|r| r.get("requests")).is_some() || r.and_then(|r| r.get("limits")).is_some()
    });
    if has_resources {
        "Burstable"
    } else {
        "BestEffort"
    }
}

/// The scheduler binds the pod to a node, then the kubelet starts it and reports status.
pub fn start(s: &mut State, ns: &str, name: &str) {
    let Some(mut pod) = s.store.get(Res::Pod, ns, name).cloned() else {
        return;
    };
    let now = s.clock.now();
    if has_scheduling_gates(&pod) {
        pod.set("status", gated_status(now));
        s.store.update(Res::Pod, pod);
        return;
    }
    let node = match meta::str_at(&pod, "/spec/nodeName") {
        "" => scheduler::place(s, &pod),
        n => Ok(n.to_string()),
    };
    let mut said = Vec::new();
    match node {
        // Nothing runs on a lost node: the pod stays Pending there.
        Ok(node) if s.nodes.get(&node) == Some(&false) => {
            pod.field("spec").set("nodeName", json!(node))
        }
        Ok(node) => {
            pod.field("spec").set("nodeName", json!(node));
            pod.set("status", running_status(&pod, &node, s.store.rv(), now));
            said = fail_unpullable_images(&mut pod);
        }
        Err(verdict) => {
            pod.set("status", unschedulable_status(&verdict, now));
            said.push(PodEvent::warning("FailedScheduling", &verdict).from_scheduler());
        }
    }
    if let Some(shaper) = s.shaper.clone() {
        pod = shape(pod, &*shaper);
    }
    s.store.update(Res::Pod, pod);
    for event in said {
        events::record(s, ns, name, &event, now);
    }
}

fn has_scheduling_gates(pod: &Value) -> bool {
    pod.pointer("/spec/schedulingGates")
        .and_then(Value::as_array)
        .is_some_and(|g| !g.is_empty())
}

/// What the scheduler reports for a pod held by `spec.schedulingGates`.
fn gated_status(now: DateTime<Utc>) -> Value {
    json!({
        "phase": "Pending",
        "conditions": [{
            "type": "PodScheduled",
            "status": "False",
            "reason": "SchedulingGated",
            "message": "Scheduling is blocked due to non-empty scheduling gates",
            "lastTransitionTime": meta::timestamp(now),
        }],
        "qosClass": "BestEffort",
    })
}

/// Images from a registry under the reserved `.invalid` domain can never be pulled, here as on
/// a real node: the pod stays Pending, its container in ImagePullBackOff, whose message says
/// only "Back-off"; why is in the Events the kubelet writes, returned.
fn fail_unpullable_images(pod: &mut Value) -> Vec<PodEvent> {
    let images: Vec<String> = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| meta::str_at(c, "/image").to_string())
        .collect();
    let unpullable = |image: &str| {
        image
            .split('/')
            .next()
            .is_some_and(|host| host.ends_with(".invalid"))
    };
    if !images.iter().any(|i| unpullable(i)) {
        return Vec::new();
    }
    let mut said = Vec::new();
    pod.field("status").set("phase", json!("Pending"));
    if let Some(statuses) = pod
        .pointer_mut("/status/containerStatuses")
        .and_then(Value::as_array_mut)
    {
        for (status, image) in statuses.iter_mut().zip(&images) {
            if unpullable(image) {
                status["ready"] = json!(false);
                status["started"] = json!(false);
                status["state"] = json!({"waiting": {"reason": "ImagePullBackOff",
                    "message": format!("Back-off pulling image \"{image}\"")}});
                let container = meta::str_at(status, "/name").to_string();
                said.extend(
                    failed_pull(image)
                        .into_iter()
                        .map(|e| e.container(&container)),
                );
            }
        }
    }
    if let Some(conditions) = pod
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
    {
        for c in conditions
            .iter_mut()
            .filter(|c| c["type"] == "Ready" || c["type"] == "ContainersReady")
        {
            c["status"] = json!("False");
            c["reason"] = json!("ContainersNotReady");
        }
    }
    said
}

/// What the kubelet writes about a pull that cannot resolve its registry
/// (pkg/kubelet/images/image_manager.go; the `Error: …` ones from kuberuntime_container.go).
fn failed_pull(image: &str) -> Vec<PodEvent> {
    let why = runtime_error(Runtime::Containerd, PullError::NoSuchHost, image);
    vec![
        PodEvent::normal("Pulling", &format!("Pulling image \"{image}\"")),
        PodEvent::warning(
            "Failed",
            &format!("Failed to pull image \"{image}\": {why}"),
        ),
        PodEvent::warning("Failed", "Error: ErrImagePull"),
        PodEvent::normal("BackOff", &format!("Back-off pulling image \"{image}\"")),
        PodEvent::warning("Failed", "Error: ImagePullBackOff"),
    ]
}

fn shape(pod: Value, shaper: &(dyn Fn(&mut Pod) + Send + Sync)) -> Value {
    let Ok(mut typed) = serde_json::from_value::<Pod>(pod.clone()) else {
        tracing::warn!("pod does not decode; shaper skipped");
        return pod;
    };
    shaper(&mut typed);
    serde_json::to_value(typed).unwrap_or(pod)
}

/// Running, Ready, every container started.
pub fn running_status(pod: &Value, node: &str, seq: u64, now: DateTime<Utc>) -> Value {
    let t = meta::timestamp(now);
    let conditions: Vec<Value> = [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ]
    .iter()
    .map(|c| json!({ "type": c, "status": "True", "lastTransitionTime": t }))
    .collect();
    let uid_hex: String = meta::uid(pod)
        .chars()
        .filter(char::is_ascii_hexdigit)
        .collect();
    let statuses: Vec<Value> = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| {
            let image = meta::str_at(c, "/image");
            json!({
                "name": meta::str_at(c, "/name"),
                "image": image,
                "imageID": format!("{image}@sha256:{uid_hex:0>64}"),
                "containerID": format!("containerd://{i}{uid_hex:0>63}"),
                "ready": true,
                "started": true,
                "restartCount": 0,
                "state": { "running": { "startedAt": t } },
            })
        })
        .collect();
    let node_idx = node.bytes().last().map_or(0, |b| b % 200);
    json!({
        "phase": "Running",
        "conditions": conditions,
        "hostIP": format!("10.0.0.{}", node_idx + 10),
        "podIP": format!("10.244.{}.{}", node_idx, seq % 250 + 2),
        "startTime": t,
        "containerStatuses": statuses,
        "qosClass": qos_class(pod),
    })
}

fn unschedulable_status(verdict: &str, now: DateTime<Utc>) -> Value {
    json!({
        "phase": "Pending",
        "conditions": [{
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": verdict,
            "lastTransitionTime": meta::timestamp(now),
        }],
        "qosClass": "BestEffort",
    })
}

pub fn is_ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| meta::str_at(c, "/type") == "Ready" && meta::str_at(c, "/status") == "True")
}

/// Counted by controllers: not terminating and not finished.
pub fn is_active(pod: &Value) -> bool {
    let phase = meta::str_at(pod, "/status/phase");
    !meta::is_terminating(pod) && phase != "Succeeded" && phase != "Failed"
}

/// DELETE of a pod (preconditions already checked): the registry's graceful deletion.
pub fn delete(s: &mut State, pod: Value, grace: Option<i64>) -> ApiResult<Value> {
    let phase = meta::str_at(&pod, "/status/phase");
    let unbound = meta::str_at(&pod, "/spec/nodeName").is_empty();
    let spec_grace = pod
        .pointer("/spec/terminationGracePeriodSeconds")
        .and_then(Value::as_i64);
    let mut grace = grace.unwrap_or(spec_grace.unwrap_or(DEFAULT_GRACE));
    if grace < 0 {
        grace = 1;
    }
    // Nothing runs the containers of an unbound or finished pod, so there is nothing to wait for.
    if unbound || phase == "Succeeded" || phase == "Failed" {
        grace = 0;
    }
    let now = s.clock.now();
    let deadline = if meta::is_terminating(&pod) {
        let current = meta::deletion_grace(&pod).unwrap_or(0);
        if grace >= current {
            return Ok(pod);
        }
        // Keep the original request time; only the grace shrinks.
        let requested =
            meta::deletion_timestamp(&pod).unwrap_or(now) - ChronoDuration::seconds(current);
        requested + ChronoDuration::seconds(grace)
    } else {
        now + ChronoDuration::seconds(grace)
    };
    let (ns, name) = (
        meta::namespace(&pod).to_string(),
        meta::name(&pod).to_string(),
    );
    if grace == 0 && meta::finalizers(&pod).is_empty() {
        return Ok(ops::remove(s, Res::Pod, &ns, &name).unwrap_or(pod));
    }
    let mut marked = pod;
    meta::set_meta(
        &mut marked,
        "deletionTimestamp",
        json!(meta::timestamp(deadline)),
    );
    meta::set_meta(&mut marked, "deletionGracePeriodSeconds", json!(grace));
    Ok(s.store.update(Res::Pod, marked))
}

/// Kubelets on alive nodes finish deletions whose grace has run out.
pub fn kubelet_pass(s: &mut State, now: DateTime<Utc>) {
    let due: Vec<Value> = s
        .store
        .iter(Res::Pod)
        .filter(|p| meta::deletion_grace(p).unwrap_or(0) > 0)
        .filter(|p| meta::deletion_timestamp(p).is_some_and(|t| t <= now))
        .filter(|p| {
            s.nodes
                .get(meta::str_at(p, "/spec/nodeName"))
                .copied()
                .unwrap_or(false)
        })
        .cloned()
        .collect();
    for pod in due {
        let (ns, name) = (
            meta::namespace(&pod).to_string(),
            meta::name(&pod).to_string(),
        );
        tracing::debug!(pod = %name, namespace = %ns, "kubelet finished graceful deletion");
        // The kubelet's final DELETE with grace 0.
        let _ = delete(s, pod, Some(0));
    }
}
