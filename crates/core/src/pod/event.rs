//! What a pod's Warning Events add to its status: the few that carry a reason the status
//! leaves out. A pull in back-off says only `Back-off pulling image "x"`; the kubelet's
//! `Failed` Event says why. Everything else an Event says is dropped on arrival.

use super::wire_event::{WireEvent, field_text};
use super::{MESSAGE_CAP, cut};
use chrono::{DateTime, Utc};

/// The Events a cause can rest on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr)]
pub enum EventKind {
    /// The kubelet's `Failed` with `Failed to pull image "x": <the runtime's error>`; not its
    /// `Error: ErrImagePull` or `Error: ImagePullBackOff`, which say nothing new.
    #[strum(serialize = "Failed")]
    PullFailed,
    /// The scheduler's `FailedScheduling`: its per-reason node counts.
    FailedScheduling,
    /// The kubelet's `Unhealthy` for a liveness or startup probe: one that restarts the container.
    #[strum(serialize = "Unhealthy")]
    ProbeFailed,
    /// The kubelet's `FailedMount`: a Secret, ConfigMap or claim a volume needs.
    FailedMount,
    /// The attach/detach controller's `FailedAttachVolume`: a volume not attached to the node.
    #[strum(serialize = "FailedAttachVolume")]
    FailedAttach,
    /// The kubelet's `FailedCreatePodSandBox`: the runtime or the network plugin refused the
    /// pod's sandbox.
    #[strum(serialize = "FailedCreatePodSandBox")]
    SandboxFailed,
    /// The kubelet's `Unhealthy` for a readiness probe: the pod runs but takes no traffic.
    #[strum(serialize = "Unhealthy")]
    ReadinessFailed,
}

impl EventKind {
    /// The kind of a Warning Event with this reason and message, if a cause reads it.
    pub fn of(reason: &str, message: &str) -> Option<EventKind> {
        match reason {
            "Failed" if message.starts_with("Failed to pull image") => Some(EventKind::PullFailed),
            "FailedScheduling" => Some(EventKind::FailedScheduling),
            "Unhealthy"
                if message.starts_with("Liveness probe failed")
                    || message.starts_with("Startup probe failed") =>
            {
                Some(EventKind::ProbeFailed)
            }
            "Unhealthy" if message.starts_with("Readiness probe failed") => {
                Some(EventKind::ReadinessFailed)
            }
            "FailedMount" => Some(EventKind::FailedMount),
            "FailedAttachVolume" => Some(EventKind::FailedAttach),
            "FailedCreatePodSandBox" => Some(EventKind::SandboxFailed),
            _ => None,
        }
    }

    /// The Event's reason, as `kubectl describe` shows it.
    pub fn reason(self) -> &'static str {
        self.into()
    }
}

/// The latest Event of one kind about one pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodEvent {
    pub kind: EventKind,
    pub message: Box<str>,
    /// How many times it happened, as aggregated by its writer.
    pub count: u32,
    pub last: Option<DateTime<Utc>>,
}

impl PodEvent {
    pub fn new(kind: EventKind, message: &str, count: u32, last: Option<DateTime<Utc>>) -> Self {
        PodEvent {
            kind,
            message: cut(message, MESSAGE_CAP).into(),
            count: count.max(1),
            last,
        }
    }
}

/// The pod an Event speaks of: a pod of the Event's own namespace, by uid.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EventTarget {
    pub namespace: Box<str>,
    pub uid: Box<str>,
}

/// A Warning Event about a pod that a cause reads, core/v1 or events.k8s.io (the scheduler's).
/// A tenant may name any uid: an Event speaks only of a pod of its own namespace, and a time
/// after `now` (its arrival) is taken as `now`.
pub fn pod_event(event: &WireEvent, now: DateTime<Utc>) -> Option<(EventTarget, PodEvent)> {
    let object = &event.involved_object;
    if field_text(&object.kind) != Some("Pod") || field_text(&event.type_) != Some("Warning") {
        return None;
    }
    let namespace = field_text(&event.metadata.namespace).filter(|n| !n.is_empty())?;
    if field_text(&object.namespace).is_some_and(|n| n != namespace) {
        return None;
    }
    let uid = field_text(&object.uid).filter(|u| !u.is_empty())?;
    let message = field_text(&event.message).unwrap_or_default();
    let kind = EventKind::of(field_text(&event.reason)?, message)?;
    let series = event.series.as_ref();
    let count = series
        .and_then(|s| s.count)
        .or(event.count)
        .unwrap_or(1)
        .max(1);
    let last = series
        .and_then(|s| s.last_observed_time)
        .or(event.last_timestamp)
        .or(event.event_time)
        .or(event.first_timestamp)
        .map(|t| t.min(now));
    let count = u32::try_from(count).unwrap_or(u32::MAX);
    let target = EventTarget {
        namespace: namespace.into(),
        uid: uid.into(),
    };
    Some((target, PodEvent::new(kind, message, count, last)))
}
