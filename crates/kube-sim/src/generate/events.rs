//! The Warning Events a big cluster holds about the generated pods, as the API server returns
//! them (~1 KB each, managedFields included): the kubelet's `Failed` pull for each image pull
//! in back-off, the scheduler's `FailedScheduling` for each pending pod, the kubelet's
//! `BackOff` for each crash loop, and `Unhealthy` for some probes. Deterministic in `i`.

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use serde_json::{Value, json};

use super::{Ident, Shape, stamp};
use crate::json::Fields;
use crate::pull::{PullError, Runtime, runtime_error};

/// What the scheduler says about every generated pending pod (its condition and its Event).
pub(super) const SCHEDULER_VERDICT: &str = "0/500 nodes are available: 500 Insufficient memory. \
    preemption: 0/500 nodes are available: 500 No preemption victims found for incoming pod.";

/// The Warning Events about pod number `i` (most pods have none).
pub fn pod_events(i: usize, now: DateTime<Utc>) -> Vec<Value> {
    let pod = Ident::of(i, now);
    let first = now - Duration::hours(2);
    let retries = 1 + (i % 23) as i64;
    let kubelet = |n: u64, reason: &str, message: String, count: i64| {
        kubelet_event(&pod, (i, n), (reason, message), (first, count), now)
    };
    match Shape::of(i) {
        Shape::ImagePull => {
            let image = pod.image();
            let why = runtime_error(Runtime::Containerd, pull_error(i), &image);
            let message = format!("Failed to pull image \"{image}\": {why}");
            vec![kubelet(0, "Failed", message, retries)]
        }
        Shape::Pending => vec![scheduler_event(&pod, i, (first, retries * 3), now)],
        Shape::CrashLoop => {
            let message = format!(
                "Back-off restarting failed container {} in pod {}",
                pod.app,
                pod_ref(&pod)
            );
            let mut events = vec![kubelet(0, "BackOff", message, 17 * 4)];
            // One crash loop in four is also a liveness probe timing out before the kill.
            if i % 200 == 9 {
                let probe = format!(
                    "Liveness probe failed: Get \"http://10.244.{}.{}:8080/healthz\": context \
                     deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                    i / 250 % 250,
                    i % 250
                );
                events.push(kubelet(1, "Unhealthy", probe, 17 * 3));
            }
            events
        }
        // Readiness failing now and then on a healthy pod: a Warning no cause reads.
        Shape::Healthy if i % 200 == 100 => {
            let probe =
                "Readiness probe failed: HTTP probe failed with statuscode: 503".to_string();
            vec![kubelet(0, "Unhealthy", probe, retries)]
        }
        _ => Vec::new(),
    }
}

/// The Warning Events about pods `0..n`, in pod order.
pub fn warning_events(n: usize, now: DateTime<Utc>) -> Vec<Value> {
    (0..n).flat_map(|i| pod_events(i, now)).collect()
}

/// The Events about pods `0..n` as EventList pages of `page` items, like [`super::list_pages`]
/// (continue tokens `page-N`), to serve `GET /api/v1/events`.
pub fn event_list_pages(n: usize, page: usize, now: DateTime<Utc>) -> Vec<Vec<u8>> {
    hostile_event_list_pages(n, page, now, 0, 0)
}

/// [`event_list_pages`] where the first `hostile` Events each carry `bytes` bytes of message
/// and of annotations, as anyone who may create an Event can write.
pub fn hostile_event_list_pages(
    n: usize,
    page: usize,
    now: DateTime<Utc>,
    hostile: usize,
    bytes: usize,
) -> Vec<Vec<u8>> {
    let filler = "x".repeat(bytes);
    let mut events = warning_events(n, now);
    for event in events.iter_mut().take(hostile) {
        let message = format!("Failed to pull image \"x\": {filler}");
        event["message"] = Value::String(message);
        event
            .field("metadata")
            .set("annotations", serde_json::json!({"a": filler}));
    }
    let chunks: Vec<&[Value]> = events.chunks(page.max(1)).collect();
    let pages = chunks.len().max(1);
    (0..pages)
        .map(|p| {
            let items = chunks.get(p).copied().unwrap_or_default();
            super::list_page("EventList", p, pages, items.iter().cloned())
        })
        .collect()
}

/// The kubelet's waiting message for pod `i`'s restart back-off.
pub(super) fn back_off_message(i: usize, now: DateTime<Utc>) -> String {
    let pod = Ident::of(i, now);
    format!(
        "back-off 5m0s restarting failed container={} pod={}",
        pod.app,
        pod_ref(&pod)
    )
}

/// `NAME_NAMESPACE(UID)`, the kubelet's name for a pod.
fn pod_ref(pod: &Ident) -> String {
    format!("{}_{}({})", pod.name, pod.namespace, pod.uid)
}

/// The registries' answers, spread over the pulls.
fn pull_error(i: usize) -> PullError {
    match i % 5 {
        0 => PullError::NotFound,
        1 => PullError::RateLimited,
        2 => PullError::Unauthorized,
        3 => PullError::NoSuchHost,
        _ => PullError::UnknownAuthority,
    }
}

/// Event `n` about pod `i`: its name, uid and resourceVersion.
fn event_meta(pod: &Ident, (i, n): (usize, u64), first: DateTime<Utc>) -> Value {
    let nanos = first.timestamp_nanos_opt().unwrap_or_default() as u64 + (i as u64) * 7919 + n;
    json!({
        "name": format!("{}.{nanos:016x}", pod.name),
        "namespace": pod.namespace,
        "uid": format!("{:08x}-{:04x}-4{:03x}-9{:03x}-{:012x}", i, n, i % 0xfff, (i * 13) % 0xfff, i * 37 + n as usize),
        "resourceVersion": (1_500_000 + i * 4 + n as usize).to_string(),
        "creationTimestamp": stamp(first),
    })
}

fn involved(pod: &Ident, i: usize, container: Option<&str>) -> Value {
    let mut reference = json!({"kind": "Pod", "namespace": pod.namespace, "name": pod.name,
        "uid": pod.uid, "apiVersion": "v1", "resourceVersion": (1_000_000 + i).to_string()});
    if let Some(c) = container {
        reference.set("fieldPath", json!(format!("spec.containers{{{c}}}")));
    }
    reference
}

fn kubelet_event(
    pod: &Ident,
    (i, n): (usize, u64),
    (reason, message): (&str, String),
    (first, count): (DateTime<Utc>, i64),
    now: DateTime<Utc>,
) -> Value {
    let last = stamp(now - Duration::seconds((i % 300) as i64));
    let mut metadata = event_meta(pod, (i, n), first);
    *metadata.field("managedFields") = json!([{"manager": "kubelet", "operation": "Update", "apiVersion": "v1",
        "time": last, "fieldsType": "FieldsV1", "fieldsV1": {"f:count": {}, "f:firstTimestamp": {},
        "f:involvedObject": {}, "f:lastTimestamp": {}, "f:message": {}, "f:reason": {},
        "f:reportingComponent": {}, "f:reportingInstance": {}, "f:source": {"f:component": {}, "f:host": {}},
        "f:type": {}}}]);
    json!({
        "kind": "Event", "apiVersion": "v1", "metadata": metadata,
        "involvedObject": involved(pod, i, Some(pod.app)),
        "reason": reason, "message": message,
        "source": {"component": "kubelet", "host": pod.node},
        "firstTimestamp": stamp(first), "lastTimestamp": last, "count": count,
        "type": "Warning", "eventTime": null,
        "reportingComponent": "kubelet", "reportingInstance": pod.node,
    })
}

/// As kube-scheduler writes it (events.k8s.io/v1) and core/v1 reads it back.
fn scheduler_event(
    pod: &Ident,
    i: usize,
    (first, count): (DateTime<Utc>, i64),
    now: DateTime<Utc>,
) -> Value {
    let micro = |t: DateTime<Utc>| t.to_rfc3339_opts(SecondsFormat::Micros, true);
    let first = first + Duration::microseconds((i * 7_919 % 1_000_000) as i64);
    let last = micro(now - Duration::seconds((i % 300) as i64));
    let mut metadata = event_meta(pod, (i, 0), first);
    *metadata.field("managedFields") = json!([{"manager": "kube-scheduler", "operation": "Update",
        "apiVersion": "events.k8s.io/v1", "time": stamp(first), "fieldsType": "FieldsV1",
        "fieldsV1": {"f:action": {}, "f:eventTime": {}, "f:note": {}, "f:reason": {}, "f:regarding": {},
        "f:reportingController": {}, "f:reportingInstance": {},
        "f:series": {".": {}, "f:count": {}, "f:lastObservedTime": {}}, "f:type": {}}}]);
    json!({
        "kind": "Event", "apiVersion": "v1", "metadata": metadata,
        "involvedObject": involved(pod, i, None),
        "reason": "FailedScheduling", "message": SCHEDULER_VERDICT,
        "source": {}, "firstTimestamp": null, "lastTimestamp": null,
        "type": "Warning", "eventTime": micro(first),
        "series": {"count": count, "lastObservedTime": last},
        "action": "Scheduling",
        "reportingComponent": "default-scheduler",
        "reportingInstance": "default-scheduler-control-plane-1",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::realistic_pod;

    #[test]
    fn events_name_their_pods_and_look_like_the_api_servers() {
        let now = Utc::now();
        let events = warning_events(2_000, now);
        let per_pod = |shape: Shape| (0..2_000).filter(|i| Shape::of(*i) == shape).count();
        let count = |reason: &str| events.iter().filter(|e| e["reason"] == reason).count();
        assert_eq!(count("Failed"), per_pod(Shape::ImagePull));
        assert_eq!(count("FailedScheduling"), per_pod(Shape::Pending));
        assert_eq!(count("BackOff"), per_pod(Shape::CrashLoop));
        assert!(count("Unhealthy") > 0);
        for (i, e) in (0..2_000).flat_map(|i| pod_events(i, now).into_iter().map(move |e| (i, e))) {
            let pod = realistic_pod(i, now);
            assert_eq!(e["involvedObject"]["uid"], pod["metadata"]["uid"]);
            assert_eq!(e["involvedObject"]["name"], pod["metadata"]["name"]);
            assert_eq!(e["metadata"]["namespace"], pod["metadata"]["namespace"]);
            let size = serde_json::to_vec(&e).unwrap().len();
            assert!((700..2_000).contains(&size), "{size}: {e}");
            let typed: k8s_openapi::api::core::v1::Event = serde_json::from_value(e).unwrap();
            assert_eq!(typed.type_.as_deref(), Some("Warning"));
        }
        let pending = (0..).find(|i| Shape::of(*i) == Shape::Pending).unwrap();
        let pod = realistic_pod(pending, now);
        let verdict = &pod["status"]["conditions"][0]["message"];
        assert_eq!(&pod_events(pending, now)[0]["message"], verdict);
        let names: std::collections::BTreeSet<_> = events
            .iter()
            .map(|e| e["metadata"]["name"].to_string())
            .collect();
        assert_eq!(names.len(), events.len());
    }

    #[test]
    fn events_decode_as_events_and_page() {
        let now = Utc::now();
        let events = warning_events(1_000, now);
        for event in &events {
            let decoded =
                serde_json::from_value::<k8s_openapi::api::core::v1::Event>(event.clone());
            assert!(decoded.is_ok(), "{event}");
        }
        let pages = event_list_pages(1_000, 20, now);
        let items: usize = pages
            .iter()
            .map(|p| {
                serde_json::from_slice::<Value>(p).unwrap()["items"]
                    .as_array()
                    .unwrap()
                    .len()
            })
            .sum();
        assert_eq!(items, events.len());
    }
}
