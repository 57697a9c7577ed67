//! The quantities of a container's spec, as the API writes them: a memory limit is read in
//! bytes, a cpu request in millicores.

use chrono::{DateTime, Utc};
use opc_core::pod::{Interner, PodRecord, decode_pod};
use opc_core::rules::{cause, classify, default_chain};
use serde_json::{Value, json};

fn now() -> DateTime<Utc> {
    "2026-11-20T12:00:00Z".parse().unwrap()
}

/// A pod no node fits, its one container with `resources`.
fn unscheduled(resources: Value) -> PodRecord {
    let pod = json!({
        "metadata": {"name": "web-1", "namespace": "shop", "uid": "u",
            "creationTimestamp": "2026-11-20T08:00:00Z"},
        "spec": {"containers": [{"name": "app", "resources": resources}]},
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled",
            "status": "False", "reason": "Unschedulable",
            "lastTransitionTime": "2026-11-20T08:00:00Z",
            "message": "0/6 nodes are available: 6 Insufficient cpu."}],
            "containerStatuses": [{"name": "app", "restartCount": 0,
                "state": {"waiting": {"reason": "ContainerCreating"}}}]}
    });
    decode_pod(pod.to_string().as_bytes(), &mut Interner::default()).unwrap()
}

/// The memory limit of the container, in bytes, as the record keeps it.
fn limit(memory: &str) -> Option<u64> {
    let pod = unscheduled(json!({"limits": {"memory": memory}}));
    pod.containers[0].memory_limit
}

/// What the scheduler's cause says the pod asks for, with `cpu` requested.
fn asks(cpu: &str) -> String {
    let pod = unscheduled(json!({"requests": {"cpu": cpu}}));
    let finding = classify(&pod, &default_chain(), now()).unwrap();
    let cause = cause(&pod, &finding, &[], None, now());
    let (_, asked) = cause.detail.split_once("; it asks for ").unwrap();
    asked.to_string()
}

#[test]
fn quantities_read_as_the_api_writes_them() {
    assert_eq!(limit("256Mi"), Some(256 << 20));
    assert_eq!(limit("1G"), Some(1_000_000_000));
    assert_eq!(limit("lots"), None);
    assert_eq!(asks("500m"), "cpu 500m");
    assert_eq!(asks("2"), "cpu 2");
    assert_eq!(asks("0.25"), "cpu 250m");
}
