use std::time::{Duration, Instant};

use chrono::Utc;
use opc_core::cluster::{Abnormal, ClusterName};
use opc_core::config::SafetyConfig;
use opc_core::place::{PauseScope, Place};
use opc_core::pod::{Interner, decode_pod};
use opc_core::rules::{RuleKind, classify, default_chain};
use opc_core::worker::{
    Bound, Gate, Guards, Hold, Limited, Pause, PauseCause, Pauses, Toggles, plan,
};

fn pause(scope: PauseScope) -> Pause {
    let web = opc_core::pod::WorkloadId::new("shop", "Deployment", "web");
    let bound = Bound::InNamespace {
        rule: RuleKind::ImagePull,
        next: web.clone(),
        acted: vec![web],
        window: std::time::Duration::from_secs(600),
    };
    Pause::new(scope, PauseCause::Workloads(bound))
}

fn place(namespace: &str, shared: Option<PauseScope>) -> Place {
    Place {
        namespace: namespace.into(),
        shared,
    }
}

#[test]
fn a_pause_holds_only_the_pods_that_share_its_scope() {
    let shop = PauseScope::Namespace("shop".into());
    let quay = PauseScope::Registry("quay.io".into());
    let mut pauses = Pauses::default();
    pauses.add(RuleKind::ImagePull, pause(shop.clone()));
    let from_quay = place("web", Some(quay.clone()));
    assert!(
        pauses
            .holding(RuleKind::ImagePull, &place("shop", None))
            .is_some()
    );
    assert!(pauses.holding(RuleKind::ImagePull, &from_quay).is_none());
    assert!(
        pauses
            .holding(RuleKind::Evicted, &place("shop", None))
            .is_none()
    );
    pauses.add(RuleKind::ImagePull, pause(quay.clone()));
    let held = pauses.holding(RuleKind::ImagePull, &from_quay).unwrap();
    assert_eq!(held.scope, quay);
    // Another registry, another namespace: nothing in common, nothing held.
    let hub = place("db", Some(PauseScope::Registry("docker.io".into())));
    assert!(pauses.holding(RuleKind::ImagePull, &hub).is_none());
    let mut theirs = pause(shop);
    theirs.cluster = Some(ClusterName::new("demo-us"));
    assert!(theirs.to_string().starts_with("paused in shop: demo-us: "));
    assert!(
        held.to_string()
            .starts_with("paused for images from quay.io: ")
    );
}

/// An evicted pod of `namespace`: deleting it disrupts nothing, so only the rate limits hold it.
fn evicted(namespace: &str) -> Abnormal {
    let pod = serde_json::json!({
        "metadata": {"name": "web-1", "namespace": namespace, "uid": format!("{namespace}-web-1")},
        "status": {"phase": "Failed", "reason": "Evicted", "startTime": "2026-11-20T08:00:01Z"}});
    let pod = decode_pod(pod.to_string().as_bytes(), &mut Interner::default()).unwrap();
    let finding = classify(&pod, &default_chain(), Utc::now()).unwrap();
    Abnormal::new(pod, finding)
}

/// Takes a rate-limit slot for an action in `namespace` at `now`, as the worker does right
/// before it sends one, or says which limit is reached.
fn try_acquire(guards: &mut Guards, namespace: &str, now: Instant) -> Result<(), Limited> {
    let toggles = Toggles {
        master: true,
        rules: [(RuleKind::Evicted, true)].into(),
    };
    let gate = Gate {
        synced: true,
        ..Gate::default()
    };
    let pass = plan(
        &[evicted(namespace)],
        &toggles,
        &Pauses::default(),
        &gate,
        guards,
        now,
    );
    match guards.admit(&pass.planned[0], now, Utc::now()) {
        Ok(()) => Ok(()),
        Err(Hold::RateLimited(limited)) => Err(limited),
        Err(other) => panic!("held for another reason: {other}"),
    }
}

#[test]
fn limits_per_namespace_then_globally_and_frees_slots_after_a_minute() {
    let start = Instant::now();
    let mut limiter = Guards::new(SafetyConfig {
        max_actions_per_minute: 3,
        max_actions_per_namespace_per_minute: 2,
        ..SafetyConfig::default()
    });
    assert!(try_acquire(&mut limiter, "a", start).is_ok());
    assert!(try_acquire(&mut limiter, "a", start).is_ok());
    let refused = try_acquire(&mut limiter, "a", start).unwrap_err();
    assert_eq!(
        refused,
        Limited::Namespace {
            namespace: "a".into(),
            per_minute: 2
        }
    );
    assert!(try_acquire(&mut limiter, "b", start).is_ok());
    let refused = try_acquire(&mut limiter, "c", start).unwrap_err();
    assert_eq!(refused, Limited::Cluster { per_minute: 3 });
    assert!(refused.to_string().contains("across the cluster"));
    let later = start + Duration::from_secs(61);
    assert!(try_acquire(&mut limiter, "a", later).is_ok());
}
