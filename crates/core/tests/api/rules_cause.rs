//! A cause in words: the scheduler's verdict read reason by reason, and an exit code above 128
//! named by its signal.

use chrono::{DateTime, Utc};
use opc_core::pod::{Interner, decode_pod};
use opc_core::rules::{Cause, CauseClass, cause, classify, default_chain};
use serde_json::{Value, json};

fn now() -> DateTime<Utc> {
    "2026-11-20T12:00:00Z".parse().unwrap()
}

/// The cause of the one finding on `pod`.
fn cause_of(pod: &Value) -> Cause {
    let pod = decode_pod(pod.to_string().as_bytes(), &mut Interner::default()).unwrap();
    let finding = classify(&pod, &default_chain(), now()).unwrap();
    cause(&pod, &finding, &[], None, now())
}

/// A pod the scheduler could not place, with its verdict `message`.
fn unscheduled(message: &str) -> Cause {
    cause_of(&json!({
        "metadata": {"name": "web-1", "namespace": "shop", "uid": "u",
            "creationTimestamp": "2026-11-20T08:00:00Z"},
        "spec": {"containers": [{"name": "app"}]},
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled",
            "status": "False", "reason": "Unschedulable",
            "lastTransitionTime": "2026-11-20T08:00:00Z", "message": message}]}
    }))
}

#[test]
fn a_verdict_gives_each_reason_its_count() {
    let message = "0/6 nodes are available: 2 Insufficient cpu, 4 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/6 nodes are available: 2 No preemption victims found for incoming pod, 4 Preemption is not helpful for scheduling.";
    let cause = unscheduled(message);
    assert_eq!(
        cause.detail,
        "no node fits: 2 Insufficient cpu, 4 node(s) had untolerated taint {dedicated: gpu}"
    );
    assert_eq!(cause.class, CauseClass::UntoleratedTaint);
}

#[test]
fn a_reason_without_a_count_excludes_every_node() {
    let message = "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.";
    let cause = unscheduled(message);
    assert_eq!(
        cause.detail,
        "no node fits: 3 pod has unbound immediate PersistentVolumeClaims"
    );
    assert_eq!(cause.class, CauseClass::UnboundVolume);
    // Not a verdict: no class from it, and no Event to read one from either.
    let cause = unscheduled("Unschedulable");
    assert_eq!(cause.class, CauseClass::PendingUnknown);
    assert_eq!(cause.detail, "the scheduler says: Unschedulable");
}

/// The detail of a crash loop whose last run ended with `code`.
fn crashed_with(code: i32) -> String {
    let cause = cause_of(&json!({
        "metadata": {"name": "web-1", "namespace": "shop", "uid": "u",
            "creationTimestamp": "2026-11-20T08:00:00Z"},
        "spec": {"containers": [{"name": "app"}]},
        "status": {"phase": "Running", "containerStatuses": [{"name": "app",
            "restartCount": 6, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": {"terminated": {"reason": "Error", "exitCode": code,
                "finishedAt": "2026-11-20T11:00:00Z"}}}]}
    }));
    assert_eq!(cause.class, CauseClass::ExitCode);
    cause.detail
}

#[test]
fn exit_codes_above_128_name_their_signal() {
    assert_eq!(crashed_with(137), "container app exited with 137 (SIGKILL)");
    assert_eq!(crashed_with(143), "container app exited with 143 (SIGTERM)");
    assert_eq!(crashed_with(2), "container app exited with 2");
}
