//! Nodes: alive ones run a kubelet; lost ones go NotReady and strand their pods.

use serde_json::{Value, json};

use super::cluster::State;
use super::meta;
use super::resources::Res;
use crate::json::Fields;

pub fn add_node(s: &mut State, name: &str) {
    s.nodes.insert(name.to_string(), true);
    let uid = s.store.new_uid();
    let node = json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": uid,
            "creationTimestamp": s.clock.stamp(),
            "labels": { "kubernetes.io/hostname": name, "kubernetes.io/os": "linux" },
        },
        "spec": {},
        "status": { "conditions": [ready_condition(true, &s.clock.stamp())] },
    });
    s.store.insert(Res::Node, node);
}

fn ready_condition(alive: bool, now: &str) -> Value {
    if alive {
        json!({
            "type": "Ready", "status": "True", "reason": "KubeletReady",
            "message": "kubelet is posting ready status",
            "lastHeartbeatTime": now, "lastTransitionTime": now,
        })
    } else {
        json!({
            "type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
            "message": "Kubelet stopped posting node status.",
            "lastHeartbeatTime": now, "lastTransitionTime": now,
        })
    }
}

/// Flip a node; unknown names become new nodes. Pods on a lost node turn NotReady,
/// as the node lifecycle controller marks them.
pub fn set_alive(s: &mut State, name: &str, alive: bool) {
    if !s.nodes.contains_key(name) {
        add_node(s, name);
    }
    if s.nodes.insert(name.to_string(), alive) == Some(alive) {
        return;
    }
    if let Some(mut node) = s.store.get(Res::Node, "", name).cloned() {
        node.field("status").set(
            "conditions",
            json!([ready_condition(alive, &s.clock.stamp())]),
        );
        if !alive {
            node.field("spec").set(
                "taints",
                json!([{ "key": "node.kubernetes.io/unreachable", "effect": "NoExecute" }]),
            );
        } else if let Some(spec) = node.get_mut("spec").and_then(Value::as_object_mut) {
            spec.remove("taints");
        }
        s.store.update(Res::Node, node);
    }
    let on_node: Vec<Value> = s
        .store
        .iter(Res::Pod)
        .filter(|p| {
            meta::str_at(p, "/spec/nodeName") == name
                && meta::str_at(p, "/status/phase") == "Running"
        })
        .cloned()
        .collect();
    for mut pod in on_node {
        if set_ready(&mut pod, alive, &s.clock.stamp()) {
            s.store.update(Res::Pod, pod);
        }
    }
}

/// Set the Ready and ContainersReady conditions; true if anything changed.
fn set_ready(pod: &mut Value, ready: bool, now: &str) -> bool {
    let want = if ready { "True" } else { "False" };
    let mut changed = false;
    let Some(conditions) = pod
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
    else {
        return false;
    };
    for c in conditions.iter_mut() {
        let t = meta::str_at(c, "/type");
        if (t == "Ready" || t == "ContainersReady") && meta::str_at(c, "/status") != want {
            c["status"] = json!(want);
            c["lastTransitionTime"] = json!(now);
            if !ready {
                c["reason"] = json!("NodeNotReady");
            } else if let Some(m) = c.as_object_mut() {
                m.remove("reason");
            }
            changed = true;
        }
    }
    changed
}
