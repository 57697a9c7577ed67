//! What the simulated kubelet reports for a demo's broken images: each scenario lists its
//! faults by image, and every pod created from such an image gets that fault's status.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use chrono::{DateTime, Utc};

use crate::SimClock;
use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateTerminated, ContainerStateWaiting, Pod,
};
use serde_json::{Value, json};

use super::stamp;
use crate::json::Fields;
use crate::pull::{PullError, Runtime, runtime_error};

/// Why the containers of an image never run.
#[derive(Debug, Clone, Copy)]
pub(super) enum Fault {
    /// The image cannot be pulled: the runtime's `error`. In `ErrImagePull` (the status says
    /// why), or in `ImagePullBackOff` (`back_off`: only the kubelet's Event says why).
    ImagePull {
        runtime: Runtime,
        error: PullError,
        back_off: bool,
    },
    /// The container keeps dying: `restarts` so far, and how it last ended; `memory_limit` is
    /// the limit an OOM kill hit.
    CrashLoop {
        restarts: i32,
        last_reason: &'static str,
        exit_code: i32,
        memory_limit: Option<&'static str>,
    },
    /// The kubelet kills the container as its liveness probe fails with `output`
    /// (SIGKILL after the grace period: `Error`, 137).
    Liveness { restarts: i32, output: &'static str },
    /// The kubelet cannot build the container.
    Config {
        reason: &'static str,
        message: &'static str,
    },
}

/// An image (any image whose name contains `image`) and its fault.
pub(super) type ImageFault = (&'static str, Fault);

/// Shapes pods created from the faulty images. While `seeding`, times are set in the past,
/// as if the cluster had been in this state for a while.
pub(super) fn shaper(
    faults: &'static [ImageFault],
    seeding: Arc<AtomicBool>,
    clock: SimClock,
) -> impl Fn(&mut Pod) + Send + Sync + 'static {
    move |pod: &mut Pod| {
        let image = first_image(pod);
        if let Some(fault) = fault_of(faults, &image) {
            let past = seeding.load(Ordering::Relaxed);
            make_waiting(pod, fault, &image, past, clock.now());
        }
    }
}

/// The fault of `image`, if it is one of the faulty ones.
pub(super) fn fault_of(faults: &[ImageFault], image: &str) -> Option<Fault> {
    faults
        .iter()
        .find(|(marker, _)| image.contains(marker))
        .map(|(_, fault)| *fault)
}

pub(super) fn first_image(pod: &Pod) -> String {
    pod.spec
        .as_ref()
        .and_then(|s| s.containers.first())
        .and_then(|c| c.image.clone())
        .unwrap_or_default()
}

/// What a workload's template says for its fault: the probe that fails, the memory limit that
/// is hit (so the pods show what killed them).
pub(super) fn dress(container: &mut Value, fault: Fault) {
    match fault {
        Fault::Liveness { .. } => {
            container["livenessProbe"] = json!({
                "httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
                "initialDelaySeconds": 10, "periodSeconds": 10, "timeoutSeconds": 1,
                "successThreshold": 1, "failureThreshold": 3,
            });
        }
        Fault::CrashLoop {
            memory_limit: Some(limit),
            ..
        } => {
            container["resources"] =
                json!({"limits": {"memory": limit}, "requests": {"memory": limit}});
        }
        _ => {}
    }
}

fn make_waiting(pod: &mut Pod, fault: Fault, image: &str, past: bool, now: DateTime<Utc>) {
    let (reason, message, restarts, last) = match fault {
        Fault::ImagePull {
            back_off: false,
            runtime,
            error,
        } => (
            "ErrImagePull",
            runtime_error(runtime, error, image),
            0,
            None,
        ),
        // The kubelet's own words while it waits to retry (images/image_manager.go).
        Fault::ImagePull { back_off: true, .. } => (
            "ImagePullBackOff",
            format!("Back-off pulling image \"{image}\""),
            0,
            None,
        ),
        Fault::CrashLoop {
            restarts,
            last_reason,
            exit_code,
            ..
        } => (
            "CrashLoopBackOff",
            back_off_message(pod),
            restarts,
            Some((last_reason, exit_code)),
        ),
        Fault::Liveness { restarts, .. } => (
            "CrashLoopBackOff",
            back_off_message(pod),
            restarts,
            Some(("Error", 137)),
        ),
        Fault::Config { reason, message } => (reason, message.to_string(), 0, None),
    };
    let Some(status) = pod.status.as_mut() else {
        return;
    };
    if let Some(statuses) = status.container_statuses.as_mut() {
        for c in statuses {
            c.ready = false;
            c.restart_count = restarts;
            c.state = Some(ContainerState {
                waiting: Some(ContainerStateWaiting {
                    reason: Some(reason.into()),
                    message: Some(message.clone()),
                }),
                ..Default::default()
            });
            if let Some((last_reason, exit_code)) = last {
                c.last_state = Some(ContainerState {
                    terminated: Some(ContainerStateTerminated {
                        reason: Some(last_reason.into()),
                        exit_code,
                        ..Default::default()
                    }),
                    ..Default::default()
                });
            }
        }
    }
    // Conditions and times are easiest to set through JSON.
    let Ok(mut v) = serde_json::to_value(&*pod) else {
        return;
    };
    let since = if past {
        now - chrono::Duration::minutes(35)
    } else {
        now
    };
    if past {
        v.field("metadata")
            .set("creationTimestamp", json!(stamp(since)));
        v.field("status").set("startTime", json!(stamp(since)));
    }
    if let Some(conditions) = v
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
    {
        for c in conditions
            .iter_mut()
            .filter(|c| c["type"] == "Ready" || c["type"] == "ContainersReady")
        {
            c["status"] = json!("False");
            c["reason"] = json!("ContainersNotReady");
            c["lastTransitionTime"] = json!(stamp(since));
        }
    }
    // A kubelet always times the run that ended: it started, ran a little, and exited a
    // back-off ago.
    if let Some(statuses) = v
        .pointer_mut("/status/containerStatuses")
        .and_then(Value::as_array_mut)
    {
        let finished = now - chrono::Duration::minutes(2);
        for terminated in statuses
            .iter_mut()
            .filter_map(|c| c.pointer_mut("/lastState/terminated"))
        {
            terminated["startedAt"] = json!(stamp(finished - chrono::Duration::seconds(40)));
            terminated["finishedAt"] = json!(stamp(finished));
        }
    }
    *v.field("status").field("phase") = json!(match fault {
        Fault::CrashLoop { .. } | Fault::Liveness { .. } => "Running",
        _ => "Pending",
    });
    if let Ok(shaped) = serde_json::from_value(v) {
        *pod = shaped;
    }
}

/// The kubelet's waiting message for a restart back-off (kuberuntime_manager.go):
/// `back-off 5m0s restarting failed container=NAME pod=POD_NAMESPACE(UID)`.
fn back_off_message(pod: &Pod) -> String {
    let container = pod
        .spec
        .as_ref()
        .and_then(|s| s.containers.first())
        .map_or("", |c| c.name.as_str());
    format!(
        "back-off 5m0s restarting failed container={container} pod={}",
        pod_ref(pod)
    )
}

/// `format.Pod`: `NAME_NAMESPACE(UID)`, how the kubelet names a pod in its messages.
pub(super) fn pod_ref(pod: &Pod) -> String {
    let m = &pod.metadata;
    format!(
        "{}_{}({})",
        m.name.as_deref().unwrap_or(""),
        m.namespace.as_deref().unwrap_or(""),
        m.uid.as_deref().unwrap_or("")
    )
}
