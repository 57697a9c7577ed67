use opc_core::node::{NodeState, Readiness, WireNode};

fn decoded(json: serde_json::Value) -> NodeState {
    serde_json::from_value::<WireNode>(json)
        .unwrap()
        .into_state()
}

#[test]
fn a_node_that_stopped_reporting_is_so_since_its_last_heartbeat() {
    let node = decoded(serde_json::json!({
        "metadata": { "name": "n1", "managedFields": [{ "manager": "kubelet" }] },
        "spec": { "taints": [{ "key": "node.kubernetes.io/unreachable", "effect": "NoExecute" }] },
        "status": { "conditions": [
            { "type": "MemoryPressure", "status": "Unknown" },
            { "type": "Ready", "status": "Unknown",
              "lastHeartbeatTime": "2026-11-20T11:50:00Z",
              "lastTransitionTime": "2026-11-20T11:51:00Z" },
        ]},
    }));
    assert_eq!(node.readiness, Readiness::NotReporting);
    assert_eq!(node.as_of(), "2026-11-20T11:50:00Z".parse().ok());
    assert!(!node.out_of_service);
    let not_ready = decoded(serde_json::json!({
        "metadata": { "name": "n2" },
        "spec": { "taints": null },
        "status": { "conditions": [{ "type": "Ready", "status": "False",
            "lastHeartbeatTime": "2026-11-20T11:59:50Z",
            "lastTransitionTime": "2026-11-20T11:40:00Z" }] },
    }));
    assert_eq!(not_ready.readiness, Readiness::NotReady);
    assert_eq!(not_ready.as_of(), "2026-11-20T11:40:00Z".parse().ok());
    let fresh = decoded(serde_json::json!({ "metadata": { "name": "n3" } }));
    assert_eq!(fresh.readiness, Readiness::Unreported);
}

#[test]
fn a_heartbeat_alone_says_nothing_new() {
    let json = |beat: &str| {
        decoded(serde_json::json!({
            "metadata": { "name": "n1" },
            "status": { "conditions": [{ "type": "Ready", "status": "True",
                "lastHeartbeatTime": beat, "lastTransitionTime": "2026-11-20T10:00:00Z" }] },
        }))
    };
    let (before, after) = (json("2026-11-20T11:00:00Z"), json("2026-11-20T11:05:00Z"));
    assert!(!after.says_more_than(&before));
    let mut tainted = after.clone();
    tainted.out_of_service = true;
    assert!(tainted.says_more_than(&before));
}
