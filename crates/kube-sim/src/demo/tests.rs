//! The demo's Events: every abnormal pod has the ones a real cluster would show.

use std::collections::BTreeSet;

use chrono::Utc;
use k8s_openapi::api::core::v1::{Event, Pod};

use super::{Scenario, deployment, eu, events, seed, typed, us, waiting_reason};
use crate::SimCluster;

fn seeded(scenario: &'static Scenario) -> (SimCluster, BTreeSet<String>) {
    let cluster = SimCluster::new();
    let seen = seed(scenario, &cluster, Utc::now());
    (cluster, seen)
}

fn name(pod: &Pod) -> (&str, &str) {
    (
        pod.metadata.namespace.as_deref().unwrap_or(""),
        pod.metadata.name.as_deref().unwrap_or(""),
    )
}

fn find<'a>(events: &'a [Event], reason: &str, starts: &str) -> Option<&'a Event> {
    events.iter().find(|e| {
        e.reason.as_deref() == Some(reason)
            && e.message.as_deref().is_some_and(|m| m.starts_with(starts))
    })
}

/// The `Failed to pull image` messages of the pods in `ImagePullBackOff`.
fn back_off_reasons(cluster: &SimCluster) -> Vec<String> {
    let mut out = Vec::new();
    for pod in cluster.pods() {
        if waiting_reason(&pod).as_deref() != Some("ImagePullBackOff") {
            continue;
        }
        let (ns, n) = name(&pod);
        let events = cluster.pod_events(ns, n);
        let failed = find(&events, "Failed", "Failed to pull image \"");
        let failed = failed.unwrap_or_else(|| panic!("{ns}/{n} has no Failed event: {events:?}"));
        assert_eq!(failed.type_.as_deref(), Some("Warning"));
        assert!(find(&events, "Failed", "Error: ImagePullBackOff").is_some());
        assert!(find(&events, "Failed", "Error: ErrImagePull").is_some());
        assert!(find(&events, "BackOff", "Back-off pulling image").is_some());
        out.push(failed.message.clone().unwrap_or_default());
    }
    out
}

#[test]
fn back_off_pulls_say_why_only_in_the_kubelets_failed_event() {
    let mut reasons = Vec::new();
    for scenario in [&eu::SCENARIO, &us::SCENARIO] {
        let (cluster, _) = seeded(scenario);
        reasons.extend(back_off_reasons(&cluster));
    }
    for needle in [
        "429 Too Many Requests - Server message: toomanyrequests",
        "no such host",
        "x509: certificate signed by unknown authority",
        "manifest unknown",
    ] {
        assert!(
            reasons.iter().any(|r| r.contains(needle)),
            "{needle}: {reasons:#?}"
        );
    }
}

#[test]
fn every_abnormal_pod_has_its_events() {
    for scenario in [&eu::SCENARIO, &us::SCENARIO] {
        let (cluster, _) = seeded(scenario);
        let nodes = cluster.nodes().len();
        for pod in cluster.pods() {
            let (ns, n) = name(&pod);
            let events = cluster.pod_events(ns, n);
            let status = pod.status.clone().unwrap_or_default();
            if status.reason.as_deref() == Some("Evicted") {
                let evicted = find(&events, "Evicted", "The node was low on resource: memory.");
                assert_eq!(evicted.and_then(|e| e.message.clone()), status.message);
            }
            let scheduled = status
                .conditions
                .iter()
                .flatten()
                .find(|c| c.type_ == "PodScheduled");
            if let Some(c) = scheduled.filter(|c| c.status == "False") {
                let verdict = c.message.clone().unwrap_or_default();
                assert!(verdict.starts_with(&format!("0/{nodes} nodes are available: ")));
                let e = find(&events, "FailedScheduling", &verdict).expect("FailedScheduling");
                assert_eq!(e.reporting_component.as_deref(), Some("default-scheduler"));
                assert!(e.event_time.is_some() && e.first_timestamp.is_none());
            }
            if waiting_reason(&pod).as_deref() == Some("CrashLoopBackOff") {
                let back_off = find(&events, "BackOff", "Back-off restarting failed container");
                assert!(back_off.is_some(), "{ns}/{n}: {events:?}");
            }
        }
    }
}

#[test]
fn the_probe_killed_deployment_and_the_oom_kills_show_their_cause() {
    let (cluster, _) = seeded(&eu::SCENARIO);
    let reviews = cluster.live_pods("reviews-");
    assert!(!reviews.is_empty());
    for pod in &reviews {
        let last = pod
            .status
            .as_ref()
            .and_then(|s| s.container_statuses.as_ref())
            .unwrap()[0]
            .last_state
            .clone()
            .and_then(|s| s.terminated)
            .unwrap();
        assert_eq!(
            (last.reason.as_deref(), last.exit_code),
            (Some("Error"), 137)
        );
        let (ns, n) = name(pod);
        let events = cluster.pod_events(ns, n);
        let unhealthy = find(
            &events,
            "Unhealthy",
            "Liveness probe failed: HTTP probe failed with statuscode: 503",
        )
        .expect("Unhealthy");
        assert_eq!(
            unhealthy.involved_object.field_path.as_deref(),
            Some("spec.containers{reviews}")
        );
        assert!(
            find(
                &events,
                "Killing",
                "Container reviews failed liveness probe, will be restarted"
            )
            .is_some()
        );
    }
    for pod in cluster.live_pods("ledger-worker-") {
        let limits = pod.spec.unwrap().containers[0]
            .resources
            .clone()
            .unwrap()
            .limits
            .unwrap();
        assert_eq!(limits["memory"].0, "256Mi");
    }
}

#[test]
fn retries_grow_the_counts_and_new_pods_get_their_events() {
    let (cluster, mut seen) = seeded(&eu::SCENARIO);
    let pod = cluster.live_pods("edge-cache-").remove(0);
    let (ns, n) = name(&pod);
    let count = |cluster: &SimCluster| {
        let events = cluster.pod_events(ns, n);
        find(&events, "Failed", "Failed to pull image").and_then(|e| e.count)
    };
    let before = count(&cluster).unwrap();
    events::retry(&cluster, eu::SCENARIO.faults);
    assert_eq!(count(&cluster), Some(before + 1));

    let scaled = typed(deployment("platform", "edge-cache", 2, "varnish:7.6")).unwrap();
    cluster.create_deployment(scaled);
    events::catch_up(&cluster, eu::SCENARIO.faults, &mut seen);
    let pods = cluster.live_pods("edge-cache-");
    assert_eq!(pods.len(), 2);
    for pod in &pods {
        let (ns, n) = name(pod);
        assert!(find(&cluster.pod_events(ns, n), "Failed", "Failed to pull image").is_some());
    }
}

/// The product's query, against a running demo cluster.
#[tokio::test]
async fn a_running_demo_serves_its_warning_events() {
    use kube::api::{Api, ListParams};
    let demo = super::start_named("demo-us").await.unwrap();
    let events: Api<Event> = Api::all(demo.client());
    let params = ListParams::default().fields("type=Warning,involvedObject.kind=Pod");
    let listed = events.list(&params).await.unwrap().items;
    assert!(listed.iter().all(|e| e.type_.as_deref() == Some("Warning")));
    let said = |needle: &str| {
        listed
            .iter()
            .any(|e| e.message.as_deref().is_some_and(|m| m.contains(needle)))
    };
    assert!(said("x509: certificate signed by unknown authority"));
    assert!(said("0/3 nodes are available: 3 Insufficient cpu."));
}
