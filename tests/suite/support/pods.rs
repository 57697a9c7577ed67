//! Builders for pods as the API returns them: `pod("web-1").evicted().on_node("n1")`.

use serde_json::{Value, json};

#[derive(Clone)]
pub struct PodBuilder(Value);

pub fn pod(name: &str) -> PodBuilder {
    PodBuilder(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"),
                     "resourceVersion": "1", "creationTimestamp": "2026-11-20T08:00:00Z"},
        "spec": {"containers": [{"name": "app", "image": "registry.local/app:1"}]},
        "status": {"phase": "Running", "startTime": "2026-11-20T08:00:01Z",
                   "containerStatuses": [{"name": "app", "restartCount": 0, "ready": true, "image": "registry.local/app:1",
                                          "state": {"running": {"startedAt": "2026-11-20T08:00:02Z"}}}]}
    }))
}

impl PodBuilder {
    pub fn ns(mut self, namespace: &str) -> Self {
        self.0["metadata"]["namespace"] = json!(namespace);
        self
    }

    pub fn uid(mut self, uid: &str) -> Self {
        self.0["metadata"]["uid"] = json!(uid);
        self
    }

    pub fn on_node(mut self, node: &str) -> Self {
        self.0["spec"]["nodeName"] = json!(node);
        self
    }

    pub fn owned_by(mut self, api_version: &str, kind: &str, name: &str) -> Self {
        self.0["metadata"]["ownerReferences"] = json!([{"apiVersion": api_version, "kind": kind, "name": name,
            "uid": format!("uid-{name}"), "controller": true, "blockOwnerDeletion": true}]);
        self
    }

    pub fn evicted(mut self) -> Self {
        self.0["status"] = json!({"phase": "Failed", "reason": "Evicted",
            "message": "The node was low on resource: memory.", "startTime": "2026-11-20T08:00:01Z"});
        self
    }

    pub fn created_at(mut self, at: &str) -> Self {
        self.0["metadata"]["creationTimestamp"] = json!(at);
        self.0["status"]["startTime"] = json!(at);
        self
    }

    /// Pending with `PodScheduled=False` since `at`, as the scheduler reports it.
    pub fn unscheduled_since(mut self, at: &str) -> Self {
        self.0["status"] = json!({"phase": "Pending", "conditions": [{"type": "PodScheduled",
            "status": "False", "reason": "Unschedulable", "lastTransitionTime": at,
            "message": "0/3 nodes are available"}]});
        self
    }

    /// The scheduler's verdict on a pod it could not place.
    pub fn unschedulable_because(mut self, verdict: &str) -> Self {
        self = self.unscheduled_since("2026-11-20T08:00:00Z");
        self.0["status"]["conditions"][0]["message"] = json!(verdict);
        self
    }

    /// `resources.limits.memory` of its container.
    pub fn memory_limit(mut self, quantity: &str) -> Self {
        self.0["spec"]["containers"][0]["resources"] = json!({"limits": {"cpu": "1", "memory": quantity}, "requests": {"cpu": "500m", "memory": "64Mi"}});
        self
    }

    /// `status.phase`, and `status.reason` when given (NodeLost, DeadlineExceeded).
    pub fn phase(mut self, phase: &str, reason: Option<&str>) -> Self {
        self.0["status"]["phase"] = json!(phase);
        if let Some(reason) = reason {
            self.0["status"]["reason"] = json!(reason);
        }
        self
    }

    /// One more pod condition.
    pub fn condition(mut self, kind: &str, status: &str, reason: &str, message: &str) -> Self {
        let condition = json!({"type": kind, "status": status, "reason": reason,
            "message": message, "lastTransitionTime": "2026-11-20T10:00:00Z"});
        match self.0["status"]["conditions"].as_array_mut() {
            Some(list) => list.push(condition),
            None => self.0["status"]["conditions"] = json!([condition]),
        }
        self
    }

    /// Failed, its container terminated with `code`.
    pub fn failed_with(mut self, code: i32) -> Self {
        self = self.phase("Failed", None);
        self.0["status"]["containerStatuses"][0]["state"] = json!({"terminated":
            {"reason": "Error", "exitCode": code, "finishedAt": "2026-11-20T09:00:00Z"}});
        self
    }

    /// The reason its container's termination gives (empty: none, as a runtime may leave it).
    pub fn terminated_reason(mut self, reason: &str) -> Self {
        let terminated = &mut self.0["status"]["containerStatuses"][0]["state"]["terminated"];
        if reason.is_empty() {
            terminated.as_object_mut().map(|t| t.remove("reason"));
        } else {
            terminated["reason"] = json!(reason);
        }
        self
    }

    pub fn succeeded(mut self) -> Self {
        self.0["status"]["phase"] = json!("Succeeded");
        self.0["status"]["containerStatuses"][0]["state"] =
            json!({"terminated": {"reason": "Completed", "exitCode": 0}});
        self
    }

    pub fn terminating_since(mut self, at: &str) -> Self {
        self.0["metadata"]["deletionTimestamp"] = json!(at);
        self.0["metadata"]["deletionGracePeriodSeconds"] = json!(30);
        self
    }

    pub fn finalizers(mut self, names: &[&str]) -> Self {
        self.0["metadata"]["finalizers"] = json!(names);
        self
    }

    pub fn waiting(mut self, reason: &str) -> Self {
        self.0["status"]["phase"] = json!("Pending");
        self.0["status"]["containerStatuses"][0]["state"] =
            json!({"waiting": {"reason": reason, "message": "back-off"}});
        self.0["status"]["containerStatuses"][0]["ready"] = json!(false);
        self
    }

    /// An init container `name` still running (since 08:00:02) and the app container waiting
    /// for it, as the kubelet reports `Init:0/1`.
    pub fn init_running(mut self, name: &str) -> Self {
        self = self.waiting("PodInitializing");
        self.0["status"]["containerStatuses"][0]["state"] =
            json!({"waiting": {"reason": "PodInitializing"}});
        self.0["spec"]["initContainers"] =
            json!([{"name": name, "image": "registry.local/migrate:1"}]);
        self.0["status"]["initContainerStatuses"] = json!([{"name": name, "restartCount": 0,
            "ready": false, "image": "registry.local/migrate:1",
            "state": {"running": {"startedAt": "2026-11-20T08:00:02Z"}}}]);
        self
    }

    /// An init container `name` in `state` (the kubelet's JSON), after `restarts` restarts;
    /// the app container waits for it.
    pub fn init_in(mut self, name: &str, state: Value, restarts: u32) -> Self {
        self = self.init_running(name);
        self.0["status"]["initContainerStatuses"][0]["state"] = state;
        self.0["status"]["initContainerStatuses"][0]["restartCount"] = json!(restarts);
        self
    }

    /// Waiting with the kubelet's (or the runtime's) own message.
    pub fn waiting_with(mut self, reason: &str, message: &str) -> Self {
        self = self.waiting(reason);
        self.0["status"]["containerStatuses"][0]["state"]["waiting"]["message"] = json!(message);
        self
    }

    /// The pod's `status.message` (an eviction's, say).
    pub fn status_message(mut self, message: &str) -> Self {
        self.0["status"]["message"] = json!(message);
        self
    }

    /// Restarted `count` times, with no record of how the last run ended.
    pub fn restart_count(mut self, count: u32) -> Self {
        self.0["status"]["containerStatuses"][0]["restartCount"] = json!(count);
        self
    }

    pub fn restarts(mut self, count: u32, last_reason: &str) -> Self {
        self.0["status"]["containerStatuses"][0]["restartCount"] = json!(count);
        self.0["status"]["containerStatuses"][0]["lastState"] = json!({"terminated": {"reason": last_reason, "exitCode": 1, "finishedAt": "2026-11-20T09:00:00Z"}});
        self
    }

    pub fn annotate(mut self, key: &str, value: &str) -> Self {
        self.0["metadata"]["annotations"][key] = json!(value);
        self
    }

    pub fn json(self) -> Value {
        self.0
    }

    pub fn wire(self) -> opc_core::pod::WirePod {
        serde_json::from_value(self.0).expect("builder makes valid pods")
    }
}

impl PodBuilder {
    /// A crash-looping container: waiting in CrashLoopBackOff after `count` restarts.
    pub fn crash_looping(self, count: u32, last_reason: &str) -> Self {
        self.waiting("CrashLoopBackOff")
            .restarts(count, last_reason)
    }

    pub fn exit_code(mut self, code: i32) -> Self {
        self.0["status"]["containerStatuses"][0]["lastState"]["terminated"]["exitCode"] =
            json!(code);
        self
    }
}
