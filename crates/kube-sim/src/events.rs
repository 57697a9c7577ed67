//! Events about pods, written the way the kubelet and the kube-scheduler write them, so a
//! client watching Warning Events learns what the status leaves out (an image pull in back-off
//! says only `Back-off pulling image "x"`; the kubelet's `Failed` Event says why).
//!
//! The kubelet writes core/v1 Events through client-go's `tools/record`: a repeat of the same
//! object, type, reason and message bumps `count` and `lastTimestamp` of the stored Event.
//! The scheduler writes events.k8s.io/v1 Events through `tools/events`: `eventTime` and
//! `reportingController` instead of timestamps and a source, and a `series` on repeats.

use chrono::{DateTime, SecondsFormat, Utc};
use k8s_openapi::api::core::v1::Event;
use serde_json::{Value, json};

use super::cluster::{SimCluster, State};
use super::meta;
use super::ops;
use super::resources::Res;
use crate::json::Fields;

/// An Event's `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    Normal,
    Warning,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Normal => "Normal",
            EventKind::Warning => "Warning",
        }
    }
}

/// Who writes the Event, which decides how it is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Component {
    /// The pod's node's kubelet (core/v1 recorder, `source.host` = the node).
    #[default]
    Kubelet,
    /// kube-scheduler's `default-scheduler` profile (events.k8s.io/v1 recorder).
    Scheduler,
}

/// The scheduler's host name, in its `reportingInstance` (`default-scheduler-<host>`).
pub const SCHEDULER_HOST: &str = "sim-control-plane";

/// One Event about a pod, to record with [`SimCluster::record_pod_event`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodEvent {
    pub kind: EventKind,
    pub reason: String,
    pub message: String,
    pub component: Component,
    /// The container it is about: `involvedObject.fieldPath` = `spec.containers{NAME}`.
    pub container: Option<String>,
    /// When a new Event was first seen (default: now); ignored when it aggregates.
    pub first_seen: Option<DateTime<Utc>>,
    /// How many occurrences this recording stands for (default 1).
    pub count: u32,
}

impl PodEvent {
    pub fn new(kind: EventKind, reason: &str, message: &str) -> Self {
        Self {
            kind,
            reason: reason.to_string(),
            message: message.to_string(),
            component: Component::Kubelet,
            container: None,
            first_seen: None,
            count: 1,
        }
    }

    pub fn warning(reason: &str, message: &str) -> Self {
        Self::new(EventKind::Warning, reason, message)
    }

    pub fn normal(reason: &str, message: &str) -> Self {
        Self::new(EventKind::Normal, reason, message)
    }

    pub fn from_kubelet(mut self) -> Self {
        self.component = Component::Kubelet;
        self
    }

    pub fn from_scheduler(mut self) -> Self {
        self.component = Component::Scheduler;
        self
    }

    pub fn container(mut self, name: &str) -> Self {
        self.container = Some(name.to_string());
        self
    }

    /// A new Event that has been happening since `first`, e.g. for a cluster seeded as if it
    /// had been running for a while.
    pub fn since(mut self, first: DateTime<Utc>) -> Self {
        self.first_seen = Some(first);
        self
    }

    /// Stand for `count` occurrences at once (at least 1).
    pub fn times(mut self, count: u32) -> Self {
        self.count = count.max(1);
        self
    }
}

impl SimCluster {
    /// Record `event` about pod `namespace/pod` as its writer does: a new Event, or, when an
    /// Event with the same object, type, reason and message exists, that one updated (count
    /// or series, last time) with a new resourceVersion, so watches see MODIFIED. None when
    /// the pod does not exist.
    pub fn record_pod_event(&self, namespace: &str, pod: &str, event: PodEvent) -> Option<Event> {
        let stored = self.mutate(|s| {
            let now = s.clock.now();
            record(s, namespace, pod, &event, now)
        })?;
        serde_json::from_value(stored).ok()
    }

    /// The Events about one pod (matched by its uid), in name order.
    pub fn pod_events(&self, namespace: &str, pod: &str) -> Vec<Event> {
        self.read(|s| {
            let uid = s
                .store
                .get(Res::Pod, namespace, pod)
                .map(|p| meta::uid(p).to_string())
                .unwrap_or_default();
            s.store
                .iter(Res::Event)
                .filter(|e| meta::namespace(e) == namespace)
                .filter(|e| !uid.is_empty() && meta::str_at(e, "/involvedObject/uid") == uid)
                .cloned()
                .collect::<Vec<_>>()
        })
        .into_iter()
        .filter_map(|e| serde_json::from_value(e).ok())
        .collect()
    }
}

pub(crate) fn record(
    s: &mut State,
    ns: &str,
    name: &str,
    ev: &PodEvent,
    now: DateTime<Utc>,
) -> Option<Value> {
    let pod = s.store.get(Res::Pod, ns, name)?;
    let regarding = involved_object(pod, ev.container.as_deref());
    let node = meta::str_at(pod, "/spec/nodeName").to_string();
    let existing = s
        .store
        .iter(Res::Event)
        .filter(|e| meta::namespace(e) == ns)
        .find(|e| same_event(e, &regarding, ev))
        .cloned();
    if let Some(old) = existing {
        let new = repeated(&old, ev, now);
        return ops::commit(s, Res::Event, &old, new).ok();
    }
    let mut first = ev.first_seen.unwrap_or(now).min(now);
    if first.timestamp_subsec_nanos() == 0 {
        // A time given to the second (a seeded past): the recorder's clock had a fraction.
        first += chrono::Duration::nanoseconds(i64::from(now.timestamp_subsec_nanos()));
        first = first.min(now);
    }
    let mut event = match ev.component {
        Component::Kubelet => kubelet_event(ev, &node, first, now),
        Component::Scheduler => scheduler_event(ev, first, now),
    };
    event.set("involvedObject", regarding);
    let event_name = unique_name(s, ns, name, first);
    let uid = s.store.new_uid();
    *event.field("metadata") = json!({
        "name": event_name, "namespace": ns, "uid": uid,
        "creationTimestamp": meta::timestamp(first),
    });
    let event = ops::canonical(Res::Event, event).ok()?;
    Some(s.store.insert(Res::Event, event))
}

/// The reference both recorders take from the pod (`reference.GetReference`), plus the
/// container's field path for container events.
fn involved_object(pod: &Value, container: Option<&str>) -> Value {
    let mut reference = json!({
        "apiVersion": "v1", "kind": "Pod",
        "name": meta::name(pod), "namespace": meta::namespace(pod),
        "uid": meta::uid(pod), "resourceVersion": meta::resource_version(pod),
    });
    if let Some(c) = container {
        reference.set("fieldPath", json!(format!("spec.containers{{{c}}}")));
    }
    reference
}

/// The recorders' aggregation key: the same object (uid and field), writer, type, reason and
/// message. The pod's resourceVersion moves on and is not part of it.
fn same_event(stored: &Value, regarding: &Value, ev: &PodEvent) -> bool {
    let at = |p: &str| meta::str_at(stored, p);
    at("/involvedObject/uid") == meta::str_at(regarding, "/uid")
        && at("/involvedObject/fieldPath") == meta::str_at(regarding, "/fieldPath")
        && at("/reportingComponent") == reporter(ev.component)
        && at("/type") == ev.kind.as_str()
        && at("/reason") == ev.reason
        && at("/message") == ev.message
}

fn reporter(component: Component) -> &'static str {
    match component {
        Component::Kubelet => "kubelet",
        Component::Scheduler => "default-scheduler",
    }
}

fn micro(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}

fn kubelet_event(ev: &PodEvent, node: &str, first: DateTime<Utc>, now: DateTime<Utc>) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Event",
        "reason": ev.reason, "message": ev.message, "type": ev.kind.as_str(),
        "source": {"component": "kubelet", "host": node},
        "firstTimestamp": meta::timestamp(first), "lastTimestamp": meta::timestamp(now),
        "count": ev.count,
        "reportingComponent": "kubelet", "reportingInstance": node,
    })
}

/// As an events.k8s.io/v1 Event reads through core/v1: no source, no timestamps, no count.
fn scheduler_event(ev: &PodEvent, first: DateTime<Utc>, now: DateTime<Utc>) -> Value {
    let mut event = json!({
        "apiVersion": "v1", "kind": "Event",
        "reason": ev.reason, "message": ev.message, "type": ev.kind.as_str(),
        "source": {}, "eventTime": micro(first), "action": "Scheduling",
        "reportingComponent": "default-scheduler",
        "reportingInstance": format!("default-scheduler-{SCHEDULER_HOST}"),
    });
    if ev.count > 1 {
        event.set(
            "series",
            json!({"count": ev.count, "lastObservedTime": micro(now)}),
        );
    }
    event
}

/// A repeat: the kubelet's recorder bumps count and lastTimestamp; the scheduler's starts or
/// extends a series (`tools/events` starts one at 2).
fn repeated(old: &Value, ev: &PodEvent, now: DateTime<Utc>) -> Value {
    let mut new = old.clone();
    let more = i64::from(ev.count);
    if meta::str_at(old, "/reportingComponent") == "default-scheduler" {
        let seen = old.pointer("/series/count").and_then(Value::as_i64);
        let count = seen.unwrap_or(1) + more;
        new.set(
            "series",
            json!({"count": count, "lastObservedTime": micro(now)}),
        );
    } else {
        let count = old.get("count").and_then(Value::as_i64).unwrap_or(1);
        new.set("count", json!(count + more));
        new.set("lastTimestamp", json!(meta::timestamp(now)));
    }
    new
}

/// `{pod}.{nanoseconds as hex}`, as both recorders name Events; the next free one.
fn unique_name(s: &State, ns: &str, pod: &str, at: DateTime<Utc>) -> String {
    let mut nanos = at.timestamp_nanos_opt().unwrap_or_default().max(0) as u64;
    loop {
        let name = format!("{pod}.{nanos:016x}");
        if s.store.get(Res::Event, ns, &name).is_none() {
            return name;
        }
        nanos += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Pod;

    fn cluster_with_pod() -> SimCluster {
        let cluster = SimCluster::new();
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "web-1", "namespace": "shop"},
            "spec": {"nodeName": "sim-node-2", "containers": [{"name": "web", "image": "x:1"}]},
        }))
        .unwrap();
        cluster.create_pod(pod);
        cluster
    }

    #[test]
    fn kubelet_events_aggregate_by_count() {
        let cluster = cluster_with_pod();
        let pod_uid = cluster.pod("shop", "web-1").unwrap().metadata.uid;
        let failed =
            PodEvent::warning("Failed", "Failed to pull image \"x:1\": boom").container("web");
        let first = cluster
            .record_pod_event("shop", "web-1", failed.clone())
            .unwrap();
        let name = first.metadata.name.clone().unwrap();
        let (pod, hex) = name.split_once('.').unwrap();
        assert_eq!(pod, "web-1");
        assert!(
            hex.len() == 16
                && hex
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        assert_eq!(first.count, Some(1));
        assert_eq!(first.involved_object.uid, pod_uid);
        assert_eq!(
            first.involved_object.field_path.as_deref(),
            Some("spec.containers{web}")
        );
        assert_eq!(
            first.source.as_ref().and_then(|s| s.host.as_deref()),
            Some("sim-node-2")
        );
        assert_eq!(first.reporting_instance.as_deref(), Some("sim-node-2"));

        let again = cluster.record_pod_event("shop", "web-1", failed).unwrap();
        assert_eq!(again.metadata.name.as_deref(), Some(name.as_str()));
        assert_eq!(again.count, Some(2));
        assert_ne!(
            again.metadata.resource_version,
            first.metadata.resource_version
        );
        let other = PodEvent::warning("Failed", "Error: ErrImagePull").container("web");
        cluster.record_pod_event("shop", "web-1", other).unwrap();
        assert_eq!(cluster.pod_events("shop", "web-1").len(), 2);
        assert!(
            cluster
                .record_pod_event("shop", "gone", PodEvent::normal("X", "y"))
                .is_none()
        );
    }

    #[test]
    fn scheduler_events_read_as_events_k8s_io_ones_with_a_series_on_repeat() {
        let cluster = cluster_with_pod();
        let msg = "0/3 nodes are available: 3 Insufficient cpu.";
        let ev = PodEvent::warning("FailedScheduling", msg).from_scheduler();
        let first = cluster
            .record_pod_event("shop", "web-1", ev.clone())
            .unwrap();
        let v = serde_json::to_value(&first).unwrap();
        assert_eq!(v["source"], json!({}));
        assert!(v.get("firstTimestamp").is_none() && v.get("count").is_none());
        assert!(v.get("series").is_none());
        assert_eq!(v["reportingComponent"], "default-scheduler");
        assert_eq!(
            v["reportingInstance"],
            "default-scheduler-sim-control-plane"
        );
        let time = v["eventTime"].as_str().unwrap();
        assert_eq!(time.len(), "2026-11-25T04:20:01.123456Z".len(), "{time}");
        let again = cluster.record_pod_event("shop", "web-1", ev).unwrap();
        let v = serde_json::to_value(&again).unwrap();
        assert_eq!(v["series"]["count"], 2);
        assert!(v["series"]["lastObservedTime"].is_string());
    }
}
