//! What a pod's Warning Events add to its status: the few that carry a reason the status
//! leaves out. A pull in back-off says only `Back-off pulling image "x"`; the kubelet's
//! `Failed` Event says why. Everything else an Event says is dropped on arrival.

use chrono::{DateTime, Utc};
use k8s_openapi::api::core::v1::Event;

use super::{MESSAGE_CAP, cut};

/// The Events a cause can rest on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// The kubelet's `Failed` with `Failed to pull image "x": <the runtime's error>`; not its
    /// `Error: ErrImagePull` or `Error: ImagePullBackOff`, which say nothing new.
    PullFailed,
    /// The scheduler's `FailedScheduling`: its per-reason node counts.
    FailedScheduling,
    /// The kubelet's `Unhealthy` for a liveness or startup probe: a failure that restarts the
    /// container. Readiness failures restart nothing and are dropped.
    ProbeFailed,
    /// The kubelet's `FailedMount`: a Secret, ConfigMap or claim a volume needs.
    FailedMount,
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
            "FailedMount" => Some(EventKind::FailedMount),
            _ => None,
        }
    }

    /// The Event's reason, as `kubectl describe` shows it.
    pub fn reason(self) -> &'static str {
        match self {
            EventKind::PullFailed => "Failed",
            EventKind::FailedScheduling => "FailedScheduling",
            EventKind::ProbeFailed => "Unhealthy",
            EventKind::FailedMount => "FailedMount",
        }
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
            message: cap(message).into(),
            count: count.max(1),
            last,
        }
    }
}

/// A Warning Event about a pod that a cause reads: the pod's UID and what it says. Both the
/// old (core/v1) and the new (events.k8s.io, the scheduler's) way of writing are read.
pub fn pod_event(event: &Event) -> Option<(Box<str>, PodEvent)> {
    let object = &event.involved_object;
    if object.kind.as_deref() != Some("Pod") || event.type_.as_deref() != Some("Warning") {
        return None;
    }
    let uid = object.uid.as_deref().filter(|u| !u.is_empty())?;
    let message = event.message.as_deref().unwrap_or("");
    let kind = EventKind::of(event.reason.as_deref()?, message)?;
    let series = event.series.as_ref();
    let count = series
        .and_then(|s| s.count)
        .or(event.count)
        .unwrap_or(1)
        .max(1);
    let last = series
        .and_then(|s| s.last_observed_time.as_ref())
        .map(|t| t.0)
        .or_else(|| event.last_timestamp.as_ref().map(|t| t.0))
        .or_else(|| event.event_time.as_ref().map(|t| t.0))
        .or_else(|| event.first_timestamp.as_ref().map(|t| t.0))
        .or_else(|| event.metadata.creation_timestamp.as_ref().map(|t| t.0))
        .and_then(|t| DateTime::from_timestamp(t.as_second(), t.subsec_nanosecond().max(0) as u32));
    let count = u32::try_from(count).unwrap_or(u32::MAX);
    Some((uid.into(), PodEvent::new(kind, message, count, last)))
}

fn cap(message: &str) -> &str {
    cut(message, MESSAGE_CAP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_events_a_cause_reads_are_kept() {
        let pull = "Failed to pull image \"x:1\": rpc error: code = NotFound desc = not found";
        assert_eq!(EventKind::of("Failed", pull), Some(EventKind::PullFailed));
        assert_eq!(EventKind::of("Failed", "Error: ImagePullBackOff"), None);
        assert_eq!(EventKind::of("Failed", "Error: ErrImagePull"), None);
        assert_eq!(
            EventKind::of("Unhealthy", "Readiness probe failed: HTTP probe failed"),
            None
        );
        assert_eq!(
            EventKind::of("Unhealthy", "Liveness probe failed: HTTP probe failed"),
            Some(EventKind::ProbeFailed)
        );
        assert_eq!(
            EventKind::of("BackOff", "Back-off restarting failed container"),
            None
        );
    }

    #[test]
    fn long_messages_are_cut_on_a_character() {
        let long = "é".repeat(MESSAGE_CAP);
        let kept = PodEvent::new(EventKind::PullFailed, &long, 1, None);
        assert!(kept.message.len() <= MESSAGE_CAP);
        assert!(long.starts_with(&*kept.message));
    }
}
