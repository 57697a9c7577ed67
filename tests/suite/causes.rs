//! Issue 21: a cause for every abnormal pod, matched on the texts the kubelet, containerd and
//! the API server really write. Each case names where its text comes from.

use crate::support;

use chrono::{DateTime, Utc};
use opc_core::pod::PodRecord;
use opc_core::rules::{CauseClass, cause, classify, default_chain};
use support::pods::{PodBuilder, pod};

fn now() -> DateTime<Utc> {
    "2026-11-20T12:00:00Z".parse().unwrap()
}

fn record(builder: PodBuilder) -> PodRecord {
    let mut interner = opc_core::pod::Interner::default();
    builder.wire().into_record(&mut interner)
}

fn class_of(builder: PodBuilder) -> (CauseClass, opc_core::rules::Cause) {
    let pod = record(builder);
    let finding = classify(&pod, &default_chain(), now()).expect("abnormal");
    let cause = cause(&pod, &finding, now());
    (cause.class, cause)
}

fn deployment_pod(name: &str) -> PodBuilder {
    pod(name)
        .ns("shop")
        .owned_by("apps/v1", "ReplicaSet", "web-7d9f8c6b5")
}

#[test]
fn image_pull_failures_are_told_apart_by_the_runtimes_words() {
    let cases = [
        // containerd, a tag that does not exist (ErrImagePull's message, via the kubelet).
        (
            "ErrImagePull",
            "rpc error: code = NotFound desc = failed to pull and unpack image \"docker.io/library/web:v9\": failed to resolve reference \"docker.io/library/web:v9\": docker.io/library/web:v9: not found",
            CauseClass::ImageNotFound,
        ),
        // containerd, a private repository without credentials.
        (
            "ErrImagePull",
            "rpc error: code = Unknown desc = failed to pull and unpack image \"registry.example.com/team/web:1\": failed to resolve reference \"registry.example.com/team/web:1\": pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed",
            CauseClass::ImageNotFound,
        ),
        // containerd against Docker Hub's pull limit.
        (
            "ErrImagePull",
            "rpc error: code = Unknown desc = failed to pull and unpack image \"docker.io/library/nginx:1.25\": failed to copy: httpReadSeeker: failed open: unexpected status code https://registry-1.docker.io/v2/library/nginx/manifests/sha256:abc: 429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit.",
            CauseClass::RegistryRateLimit,
        ),
        // containerd, wrong credentials.
        (
            "ErrImagePull",
            "rpc error: code = Unknown desc = failed to pull and unpack image \"registry.example.com/web:1\": failed to resolve reference \"registry.example.com/web:1\": failed to authorize: failed to fetch oauth token: unexpected status: 401 Unauthorized",
            CauseClass::RegistryAuth,
        ),
        // containerd, a registry name that does not resolve.
        (
            "ErrImagePull",
            "rpc error: code = Unknown desc = failed to pull and unpack image \"registry.invalid/web:1\": failed to resolve reference \"registry.invalid/web:1\": failed to do request: Head \"https://registry.invalid/v2/web/manifests/1\": dial tcp: lookup registry.invalid on 10.96.0.10:53: no such host",
            CauseClass::RegistryUnreachable,
        ),
        // containerd, a self-signed registry.
        (
            "ErrImagePull",
            "rpc error: code = Unknown desc = failed to pull and unpack image \"registry.local/web:1\": failed to resolve reference \"registry.local/web:1\": failed to do request: Head \"https://registry.local/v2/web/manifests/1\": tls: failed to verify certificate: x509: certificate signed by unknown authority",
            CauseClass::RegistryTls,
        ),
        // The kubelet (kuberuntime_image.go): an unparsable reference.
        (
            "InvalidImageName",
            "Failed to apply default image tag \"Web:Latest\": couldn't parse image reference \"Web:Latest\": invalid reference format: repository name must be lowercase",
            CauseClass::InvalidImageName,
        ),
        // The kubelet: imagePullPolicy Never.
        (
            "ErrImageNeverPull",
            "Container image \"web:1\" is not present with pull policy of Never",
            CauseClass::ImageNeverPull,
        ),
        // The kubelet's back-off: the reason is only in the Failed Event.
        (
            "ImagePullBackOff",
            "Back-off pulling image \"registry.invalid/web:1\"",
            CauseClass::PullUnknown,
        ),
    ];
    for (reason, message, expected) in cases {
        let (class, cause) = class_of(deployment_pod("web-1").waiting_with(reason, message));
        assert_eq!(class, expected, "{message}");
        assert!(cause.evidence[0].text.contains(message), "{cause:?}");
        assert!(cause.next.contains("z scales"), "{cause:?}");
    }
    let (_, bare) =
        class_of(pod("bare").waiting_with("ImagePullBackOff", "Back-off pulling image \"x\""));
    assert!(
        bare.next.contains("d deletes"),
        "a bare pod has nothing to scale: {bare:?}"
    );
}

#[test]
fn crashes_say_how_the_last_run_ended() {
    let (class, cause) = class_of(
        deployment_pod("web-1")
            .crash_looping(6, "OOMKilled")
            .exit_code(137),
    );
    assert_eq!(class, CauseClass::OomKilled);
    assert!(cause.detail.contains("ran out of memory"), "{cause:?}");
    let (class, cause) = class_of(
        deployment_pod("web-1")
            .crash_looping(6, "Error")
            .exit_code(143),
    );
    assert_eq!(class, CauseClass::ExitCode);
    assert!(cause.detail.contains("143 (SIGTERM)"), "{cause:?}");
    assert!(cause.next.contains("--previous"), "{cause:?}");
    let (class, _) = class_of(
        deployment_pod("web-1")
            .crash_looping(6, "Completed")
            .exit_code(0),
    );
    assert_eq!(class, CauseClass::ExitZero);
}

#[test]
fn config_errors_name_what_is_missing() {
    // The kubelet (kubelet_pods.go / secret and configmap managers).
    let cases = [
        (
            "secret \"db-creds\" not found",
            CauseClass::MissingSecret,
            "secret db-creds",
        ),
        (
            "configmap \"app-config\" not found",
            CauseClass::MissingConfigMap,
            "configmap app-config",
        ),
        (
            "couldn't find key password in Secret shop/db-creds",
            CauseClass::MissingKey,
            "couldn't find key password",
        ),
    ];
    for (message, expected, named) in cases {
        let (class, cause) =
            class_of(deployment_pod("web-1").waiting_with("CreateContainerConfigError", message));
        assert_eq!(class, expected, "{message}");
        assert!(cause.detail.contains(named), "{cause:?}");
    }
}

#[test]
fn evictions_say_what_ran_short() {
    // The kubelet's eviction manager (pkg/kubelet/eviction/helpers.go).
    let cases = [
        (
            "The node was low on resource: memory. Threshold quantity: 100Mi, available: 63Mi. Container web was using 812Mi, request is 256Mi, has larger consumption of memory. ",
            CauseClass::NodeMemoryPressure,
        ),
        (
            "The node was low on resource: ephemeral-storage. Threshold quantity: 4Gi, available: 3Gi. ",
            CauseClass::NodeDiskPressure,
        ),
        (
            "The node was low on resource: pids. ",
            CauseClass::NodePidPressure,
        ),
        (
            "Container web exceeded its local ephemeral storage limit \"1Gi\". ",
            CauseClass::ContainerLimit,
        ),
        (
            "Usage of EmptyDir volume \"cache\" exceeds the limit \"500Mi\". ",
            CauseClass::ContainerLimit,
        ),
        ("evicted by someone", CauseClass::EvictedUnknown),
    ];
    for (message, expected) in cases {
        let (class, cause) = class_of(deployment_pod("web-1").evicted().status_message(message));
        assert_eq!(class, expected, "{message}");
        assert_eq!(cause.evidence[0].source, "status.message");
        assert_eq!(cause.evidence[0].text, message);
    }
}

#[test]
fn terminating_pods_say_what_holds_them_and_never_advise_against_their_state() {
    let (class, cause) = class_of(
        deployment_pod("web-1")
            .terminating_since("2026-11-20T10:00:00Z")
            .finalizers(&["example.com/backup"]),
    );
    assert_eq!(class, CauseClass::Finalizers);
    assert!(cause.next.starts_with('F'), "{cause:?}");
    let (class, cause) =
        class_of(deployment_pod("web-1").terminating_since("2026-11-20T10:00:00Z"));
    assert_eq!(class, CauseClass::PastGrace);
    assert!(cause.next.contains('D'), "{cause:?}");
    // An image pull error on a pod already deleting: no scale advice for it.
    let (_, cause) = class_of(
        deployment_pod("web-1")
            .waiting_with("ImagePullBackOff", "Back-off pulling image \"x\"")
            .terminating_since("2026-11-20T11:59:50Z"),
    );
    assert!(!cause.next.contains("z scales"), "{cause:?}");
}

#[test]
fn scan_json_carries_the_cause_on_every_row() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ops-pod-cleaner"))
        .args(["scan", "--demo", "--context", "demo-eu", "-o", "json"])
        .env_remove("OPS_POD_CLEANER_CONFIG")
        .output()
        .unwrap();
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!rows.is_empty());
    let names: Vec<&str> = CauseClass::ALL.iter().map(|c| c.name()).collect();
    for row in &rows {
        let class = row["cause"]["class"].as_str().unwrap_or_default();
        assert!(names.contains(&class), "{row}");
        assert!(row["cause"]["next"].is_string(), "{row}");
        assert!(row["cause"]["evidence"].is_array(), "{row}");
    }
}
