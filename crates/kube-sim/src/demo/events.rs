//! The Events a real cluster shows for the demo's abnormal pods: the kubelet's for pulls,
//! probes, crash loops, config errors and evictions, the scheduler's for pods it cannot place.
//! Recorded once a pod is abnormal (at seed, or when churn or a controller makes one), then
//! again every few ticks as the kubelet and the scheduler retry, so counts and times grow.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use k8s_openapi::api::core::v1::Pod;

use super::shape::{Fault, ImageFault, fault_of, first_image, pod_ref};
use super::{ns_name, waiting_reason};
use crate::pull::runtime_error;
use crate::{PodEvent, SimCluster};

/// Record the Events of every abnormal pod not recorded yet (`seen` holds their uids).
pub(super) fn catch_up(cluster: &SimCluster, faults: &[ImageFault], seen: &mut BTreeSet<String>) {
    let now = cluster.now();
    for pod in cluster.pods() {
        let Some(uid) = pod.metadata.uid.clone() else {
            continue;
        };
        if seen.contains(&uid) {
            continue;
        }
        let events = events_of(&pod, faults, now);
        if events.is_empty() {
            continue;
        }
        if let Some((ns, name)) = ns_name(&pod) {
            for event in events {
                cluster.record_pod_event(&ns, &name, event);
            }
            seen.insert(uid);
        }
    }
}

/// Another round of retries: each recurring Event recorded once more (aggregated into the
/// stored one). An eviction happens once.
pub(super) fn retry(cluster: &SimCluster, faults: &[ImageFault]) {
    let now = cluster.now();
    for pod in cluster.pods() {
        let Some((ns, name)) = ns_name(&pod) else {
            continue;
        };
        for mut event in events_of(&pod, faults, now) {
            if event.reason != "Evicted" {
                event.count = 1;
                cluster.record_pod_event(&ns, &name, event);
            }
        }
    }
}

/// What the kubelet and the scheduler have said about `pod` by `now`, with counts that fit
/// how long it has been in trouble. Empty for a pod they have nothing to say about.
pub(super) fn events_of(pod: &Pod, faults: &[ImageFault], now: DateTime<Utc>) -> Vec<PodEvent> {
    let since = pod
        .metadata
        .creation_timestamp
        .as_ref()
        .and_then(|t| DateTime::from_timestamp(t.0.as_second(), 0))
        .unwrap_or(now);
    // One more retry every five minutes or so, as the kubelet's back-off settles there.
    let retries = 1 + u32::try_from((now - since).num_minutes() / 5).unwrap_or(0);
    let status = pod.status.as_ref();
    if status.and_then(|s| s.reason.as_deref()) == Some("Evicted") {
        let message = status.and_then(|s| s.message.as_deref()).unwrap_or("");
        return vec![PodEvent::warning("Evicted", message).since(evicted_at(pod).unwrap_or(since))];
    }
    if let Some(verdict) = unschedulable(pod) {
        let event = PodEvent::warning("FailedScheduling", &verdict).from_scheduler();
        return vec![event.since(since).times(retries)];
    }
    let image = first_image(pod);
    let (Some(fault), Some(_)) = (fault_of(faults, &image), waiting_reason(pod)) else {
        return Vec::new();
    };
    let container = pod
        .spec
        .as_ref()
        .and_then(|s| s.containers.first())
        .map(|c| c.name.clone())
        .unwrap_or_default();
    let restarts = status
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|c| c.first())
        .map_or(0, |c| c.restart_count.max(0) as u32);
    let (warning, normal) = (PodEvent::warning, PodEvent::normal);
    let said: Vec<(PodEvent, u32)> = match fault {
        // pkg/kubelet/images/image_manager.go; the `Error: ...` ones from
        // kuberuntime/kuberuntime_container.go (startContainer).
        Fault::ImagePull { runtime, error, .. } => {
            let pulled = format!("\"{image}\"");
            let why = runtime_error(runtime, error, &image);
            vec![
                (
                    normal("Pulling", &format!("Pulling image {pulled}")),
                    retries,
                ),
                (
                    warning("Failed", &format!("Failed to pull image {pulled}: {why}")),
                    retries,
                ),
                (warning("Failed", "Error: ErrImagePull"), retries),
                (
                    normal("BackOff", &format!("Back-off pulling image {pulled}")),
                    retries * 3,
                ),
                (warning("Failed", "Error: ImagePullBackOff"), retries * 3),
            ]
        }
        Fault::CrashLoop { .. } => vec![(back_off(pod, &container), restarts + 1)],
        // pkg/kubelet/prober/prober.go writes Unhealthy on each failure (three before a
        // restart); kuberuntime_manager.go the Killing with its reason.
        Fault::Liveness { output, .. } => vec![
            (
                warning("Unhealthy", &format!("Liveness probe failed: {output}")),
                restarts * 3 + 1,
            ),
            (
                normal(
                    "Killing",
                    &format!("Container {container} failed liveness probe, will be restarted"),
                ),
                restarts.max(1),
            ),
            (back_off(pod, &container), restarts + 1),
        ],
        Fault::Config { message, .. } => {
            vec![(warning("Failed", &format!("Error: {message}")), retries)]
        }
    };
    said.into_iter()
        .map(|(event, n)| event.container(&container).since(since).times(n))
        .collect()
}

/// kuberuntime_manager.go (doBackOff): `Back-off restarting failed container NAME in pod
/// POD_NAMESPACE(UID)`.
fn back_off(pod: &Pod, container: &str) -> PodEvent {
    let message = format!(
        "Back-off restarting failed container {container} in pod {}",
        pod_ref(pod)
    );
    PodEvent::warning("BackOff", &message)
}

/// The scheduler's verdict on a pod it could not place, from its PodScheduled condition.
fn unschedulable(pod: &Pod) -> Option<String> {
    let conditions = pod.status.as_ref()?.conditions.as_ref()?;
    let c = conditions.iter().find(|c| c.type_ == "PodScheduled")?;
    if c.status != "False" || c.reason.as_deref() != Some("Unschedulable") {
        return None;
    }
    c.message.clone()
}

/// When the eviction manager killed the pod: its container's end, when recorded.
fn evicted_at(pod: &Pod) -> Option<DateTime<Utc>> {
    let statuses = pod.status.as_ref()?.container_statuses.as_ref()?;
    let finished = statuses
        .iter()
        .find_map(|c| c.state.as_ref()?.terminated.as_ref()?.finished_at.as_ref())?;
    DateTime::from_timestamp(finished.0.as_second(), 0)
}
