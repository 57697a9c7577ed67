//! What the simulated kubelet reports for a demo's broken images: each scenario lists its
//! faults by image, and every pod created from such an image gets that fault's status.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use chrono::Utc;
use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateTerminated, ContainerStateWaiting, Pod,
};
use serde_json::json;

use super::stamp;

/// Why the containers of an image never run.
#[derive(Debug, Clone, Copy)]
pub(super) enum Fault {
    /// The image cannot be pulled; `detail` is the registry's answer as containerd reports
    /// it, after the reference.
    ImagePull { detail: &'static str },
    /// The container keeps dying: `restarts` so far, and how it last ended.
    CrashLoop {
        restarts: i32,
        last_reason: &'static str,
        exit_code: i32,
    },
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
) -> impl Fn(&mut Pod) + Send + Sync + 'static {
    move |pod: &mut Pod| {
        let image = pod
            .spec
            .as_ref()
            .and_then(|s| s.containers.first())
            .and_then(|c| c.image.clone())
            .unwrap_or_default();
        if let Some((_, fault)) = faults.iter().find(|(marker, _)| image.contains(marker)) {
            make_waiting(pod, *fault, &image, seeding.load(Ordering::Relaxed));
        }
    }
}

fn make_waiting(pod: &mut Pod, fault: Fault, image: &str, past: bool) {
    let (reason, message, restarts, last) = match fault {
        // What the kubelet shows while a pull fails: containerd's error, as it writes it.
        Fault::ImagePull { detail } => (
            "ErrImagePull",
            format!(
                "rpc error: code = Unknown desc = failed to pull and unpack image \"{image}\": \
                 failed to resolve reference \"{image}\": {detail}"
            ),
            0,
            None,
        ),
        Fault::CrashLoop {
            restarts,
            last_reason,
            exit_code,
        } => (
            "CrashLoopBackOff",
            "back-off 5m0s restarting failed container".to_string(),
            restarts,
            Some((last_reason, exit_code)),
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
        Utc::now() - chrono::Duration::minutes(35)
    } else {
        Utc::now()
    };
    if past {
        v["metadata"]["creationTimestamp"] = json!(stamp(since));
        v["status"]["startTime"] = json!(stamp(since));
    }
    if let Some(conditions) = v["status"]["conditions"].as_array_mut() {
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
    if let Some(statuses) = v["status"]["containerStatuses"].as_array_mut() {
        let finished = Utc::now() - chrono::Duration::minutes(2);
        for terminated in statuses
            .iter_mut()
            .filter_map(|c| c.pointer_mut("/lastState/terminated"))
        {
            terminated["startedAt"] = json!(stamp(finished - chrono::Duration::seconds(40)));
            terminated["finishedAt"] = json!(stamp(finished));
        }
    }
    v["status"]["phase"] = json!(match fault {
        Fault::CrashLoop { .. } => "Running",
        _ => "Pending",
    });
    if let Ok(shaped) = serde_json::from_value(v) {
        *pod = shaped;
    }
}
