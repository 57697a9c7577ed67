//! Pods in kube-apiserver's protobuf: a body is `k8s\0` and a `runtime.Unknown` envelope
//! around the object; a watch stream is frames of a 4-byte big-endian length and a bare
//! `metav1.WatchEvent` whose object is such a body. Messages are k8s-pb's generated types.
//!
//! The simulator keeps objects as JSON; this converts the fields its pods carry that a client
//! reads or a size depends on most: all of the metadata but managedFields; the spec's volumes
//! (name and kind of source), containers (name, image, resources), node, scheduler, restart
//! policy, service account and priority; the whole status a kubelet writes. Anything else
//! (env, probes, mounts, security contexts, tolerations) is left out, so a protobuf body here
//! is smaller than a real server's for the same pod: byte counts from the simulator do not
//! compare the formats. Pods only: other kinds are served as JSON, as a real server serves a
//! custom resource.

use std::collections::BTreeMap;

use k8s_pb::api::core::v1 as core;
use k8s_pb::apimachinery::pkg::api::resource::Quantity;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::{RawExtension, TypeMeta, Unknown};
use prost::Message;
use serde_json::Value;

/// The media type of protobuf bodies.
pub const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
/// What a protobuf watch answers with.
pub const PROTOBUF_WATCH: &str = "application/vnd.kubernetes.protobuf;stream=watch";
const MAGIC: &[u8; 4] = b"k8s\0";

/// Whether an `Accept` header asks for protobuf before JSON, as client-go's does.
pub fn wanted(accept: &str) -> bool {
    let first = accept.split(',').map(str::trim).find(|t| {
        let media = t.split(';').next().unwrap_or("").trim();
        media == PROTOBUF || media == "application/json" || media == "*/*"
    });
    first.is_some_and(|t| t.starts_with(PROTOBUF))
}

/// `value` as a protobuf body, if it is a kind served as protobuf: a pod, a list of pods or a
/// Status.
pub fn encode(value: &Value) -> Option<Vec<u8>> {
    let raw = match value.get("kind")?.as_str()? {
        "Pod" => pod(value).encode_to_vec(),
        "PodList" => pod_list(value).encode_to_vec(),
        "Status" => status(value).encode_to_vec(),
        _ => return None,
    };
    Some(body(value.get("kind")?.as_str()?, raw))
}

fn body(kind: &str, raw: Vec<u8>) -> Vec<u8> {
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some(
                if kind == "Status" {
                    "meta.k8s.io/v1"
                } else {
                    "v1"
                }
                .into(),
            ),
            kind: Some(kind.into()),
        }),
        raw: Some(raw),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    [&MAGIC[..], &unknown.encode_to_vec()].concat()
}

/// One watch frame: the event `kind` (ADDED, BOOKMARK, ERROR...) of `object`, a pod or a
/// Status (an object without a kind in a pod watch is a pod).
pub fn watch_frame(kind: &str, object: &Value) -> Vec<u8> {
    let object_body = match object.get("kind").and_then(Value::as_str) {
        Some("Status") => body("Status", status(object).encode_to_vec()),
        _ => body("Pod", pod(object).encode_to_vec()),
    };
    let event = meta::WatchEvent {
        r#type: Some(kind.into()),
        object: Some(RawExtension {
            raw: Some(object_body),
        }),
    }
    .encode_to_vec();
    [&(event.len() as u32).to_be_bytes()[..], &event].concat()
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key)?.as_str().map(str::to_owned)
}

fn int(v: &Value, key: &str) -> Option<i64> {
    v.get(key)?.as_i64()
}

fn flag(v: &Value, key: &str) -> Option<bool> {
    v.get(key)?.as_bool()
}

fn list<'a>(v: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    v.get(key).and_then(Value::as_array).into_iter().flatten()
}

fn strings(v: &Value, key: &str) -> BTreeMap<String, String> {
    let map = v.get(key).and_then(Value::as_object).into_iter().flatten();
    map.filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
        .collect()
}

/// A timestamp in whole seconds, as the API server keeps them.
fn time(v: &Value, key: &str) -> Option<meta::Time> {
    let at = chrono::DateTime::parse_from_rfc3339(v.get(key)?.as_str()?).ok()?;
    Some(meta::Time {
        seconds: Some(at.timestamp()),
        nanos: None,
    })
}

fn pod_list(v: &Value) -> core::PodList {
    let m = &v["metadata"];
    core::PodList {
        metadata: Some(meta::ListMeta {
            resource_version: text(m, "resourceVersion"),
            r#continue: text(m, "continue"),
            remaining_item_count: int(m, "remainingItemCount"),
            ..Default::default()
        }),
        items: list(v, "items").map(pod).collect(),
    }
}

fn pod(v: &Value) -> core::Pod {
    core::Pod {
        metadata: v.get("metadata").map(object_meta),
        spec: v.get("spec").map(pod_spec),
        status: v.get("status").map(pod_status),
    }
}

fn object_meta(m: &Value) -> meta::ObjectMeta {
    meta::ObjectMeta {
        name: text(m, "name"),
        generate_name: text(m, "generateName"),
        namespace: text(m, "namespace"),
        uid: text(m, "uid"),
        resource_version: text(m, "resourceVersion"),
        generation: int(m, "generation"),
        creation_timestamp: time(m, "creationTimestamp"),
        deletion_timestamp: time(m, "deletionTimestamp"),
        deletion_grace_period_seconds: int(m, "deletionGracePeriodSeconds"),
        labels: strings(m, "labels"),
        annotations: strings(m, "annotations"),
        owner_references: list(m, "ownerReferences")
            .map(|o| meta::OwnerReference {
                api_version: text(o, "apiVersion"),
                kind: text(o, "kind"),
                name: text(o, "name"),
                uid: text(o, "uid"),
                controller: flag(o, "controller"),
                block_owner_deletion: flag(o, "blockOwnerDeletion"),
            })
            .collect(),
        finalizers: list(m, "finalizers")
            .filter_map(|f| Some(f.as_str()?.to_owned()))
            .collect(),
        ..Default::default()
    }
}

fn pod_spec(s: &Value) -> core::PodSpec {
    core::PodSpec {
        volumes: list(s, "volumes").map(volume).collect(),
        init_containers: list(s, "initContainers").map(container).collect(),
        containers: list(s, "containers").map(container).collect(),
        node_name: text(s, "nodeName"),
        scheduler_name: text(s, "schedulerName"),
        restart_policy: text(s, "restartPolicy"),
        service_account_name: text(s, "serviceAccountName"),
        priority: int(s, "priority").map(|p| p as i32),
        termination_grace_period_seconds: int(s, "terminationGracePeriodSeconds"),
        ..Default::default()
    }
}

/// A volume's name and the kind of its source; a claim keeps its claim's name.
fn volume(v: &Value) -> core::Volume {
    let mut source = core::VolumeSource::default();
    if let Some(claim) = v.get("persistentVolumeClaim") {
        source.persistent_volume_claim = Some(core::PersistentVolumeClaimVolumeSource {
            claim_name: text(claim, "claimName"),
            read_only: flag(claim, "readOnly"),
        });
    }
    if v.get("ephemeral").is_some() {
        source.ephemeral = Some(core::EphemeralVolumeSource::default());
    }
    if v.get("emptyDir").is_some() {
        source.empty_dir = Some(core::EmptyDirVolumeSource::default());
    }
    if v.get("configMap").is_some() {
        source.config_map = Some(core::ConfigMapVolumeSource::default());
    }
    if v.get("projected").is_some() {
        source.projected = Some(core::ProjectedVolumeSource::default());
    }
    core::Volume {
        name: text(v, "name"),
        volume_source: Some(source),
    }
}

fn quantities(v: &Value, key: &str) -> BTreeMap<String, Quantity> {
    strings(v, key)
        .into_iter()
        .map(|(k, q)| (k, Quantity { string: Some(q) }))
        .collect()
}

fn container(c: &Value) -> core::Container {
    let resources = c.get("resources").map(|r| core::ResourceRequirements {
        limits: quantities(r, "limits"),
        requests: quantities(r, "requests"),
        ..Default::default()
    });
    core::Container {
        name: text(c, "name"),
        image: text(c, "image"),
        resources,
        ..Default::default()
    }
}

fn pod_status(s: &Value) -> core::PodStatus {
    core::PodStatus {
        phase: text(s, "phase"),
        conditions: list(s, "conditions").map(condition).collect(),
        message: text(s, "message"),
        reason: text(s, "reason"),
        nominated_node_name: text(s, "nominatedNodeName"),
        host_ip: text(s, "hostIP"),
        pod_ip: text(s, "podIP"),
        start_time: time(s, "startTime"),
        init_container_statuses: list(s, "initContainerStatuses")
            .map(container_status)
            .collect(),
        container_statuses: list(s, "containerStatuses").map(container_status).collect(),
        qos_class: text(s, "qosClass"),
        ..Default::default()
    }
}

fn condition(c: &Value) -> core::PodCondition {
    core::PodCondition {
        r#type: text(c, "type"),
        status: text(c, "status"),
        last_probe_time: time(c, "lastProbeTime"),
        last_transition_time: time(c, "lastTransitionTime"),
        reason: text(c, "reason"),
        message: text(c, "message"),
        ..Default::default()
    }
}

fn container_status(c: &Value) -> core::ContainerStatus {
    core::ContainerStatus {
        name: text(c, "name"),
        state: c.get("state").map(container_state),
        last_state: c.get("lastState").map(container_state),
        ready: flag(c, "ready"),
        restart_count: int(c, "restartCount").map(|n| n as i32),
        image: text(c, "image"),
        image_id: text(c, "imageID"),
        container_id: text(c, "containerID"),
        started: flag(c, "started"),
        ..Default::default()
    }
}

fn container_state(s: &Value) -> core::ContainerState {
    core::ContainerState {
        waiting: s.get("waiting").map(|w| core::ContainerStateWaiting {
            reason: text(w, "reason"),
            message: text(w, "message"),
        }),
        running: s.get("running").map(|r| core::ContainerStateRunning {
            started_at: time(r, "startedAt"),
        }),
        terminated: s.get("terminated").map(|t| core::ContainerStateTerminated {
            exit_code: int(t, "exitCode").map(|n| n as i32),
            signal: int(t, "signal").map(|n| n as i32),
            reason: text(t, "reason"),
            message: text(t, "message"),
            started_at: time(t, "startedAt"),
            finished_at: time(t, "finishedAt"),
            container_id: text(t, "containerID"),
        }),
    }
}

fn status(s: &Value) -> meta::Status {
    meta::Status {
        status: text(s, "status"),
        message: text(s, "message"),
        reason: text(s, "reason"),
        code: int(s, "code").map(|n| n as i32),
        ..Default::default()
    }
}
