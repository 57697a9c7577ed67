//! Which Warning Events a cause reads, and what is kept of them.

use opc_core::pod::{EventKind, MESSAGE_CAP, PodEvent};

#[test]
fn only_the_events_a_cause_reads_are_kept() {
    let pull = "Failed to pull image \"x:1\": rpc error: code = NotFound desc = not found";
    let attach = "AttachVolume.Attach failed for volume \"pv\"";
    let cases = [
        ("Failed", pull, Some(EventKind::PullFailed)),
        ("Failed", "Error: ImagePullBackOff", None),
        ("Failed", "Error: ErrImagePull", None),
        // A readiness failure restarts nothing: it says why a running pod is not Ready.
        (
            "Unhealthy",
            "Readiness probe failed: HTTP probe failed",
            Some(EventKind::ReadinessFailed),
        ),
        (
            "FailedCreatePodSandBox",
            "Failed to create pod sandbox: rpc error",
            Some(EventKind::SandboxFailed),
        ),
        ("FailedAttachVolume", attach, Some(EventKind::FailedAttach)),
        (
            "Unhealthy",
            "Liveness probe failed: HTTP probe failed",
            Some(EventKind::ProbeFailed),
        ),
        ("BackOff", "Back-off restarting failed container", None),
    ];
    for (reason, message, kind) in cases {
        assert_eq!(EventKind::of(reason, message), kind, "{reason}: {message}");
    }
}

#[test]
fn long_messages_are_cut_on_a_character() {
    let long = "é".repeat(MESSAGE_CAP);
    let kept = PodEvent::new(EventKind::PullFailed, &long, 1, None);
    assert!(kept.message.len() <= MESSAGE_CAP);
    assert!(long.starts_with(&*kept.message));
}
