//! The worker's pure decisions: every guard, shown to stop an action that runs without it.

mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use ops_pod_cleaner::actions::Action;
use ops_pod_cleaner::cluster::Abnormal;
use ops_pod_cleaner::config::{BreakerConfig, SafetyConfig};
use ops_pod_cleaner::pod::{Interner, PodRecord};
use ops_pod_cleaner::rules::{RuleKind, classify, default_chain};
use ops_pod_cleaner::worker::breaker::{needs_census, trips};
use ops_pod_cleaner::worker::{Census, Decision, Gate, Guards, Hold, Pass, Toggles, plan};
use support::pods::{PodBuilder, pod};

fn now() -> DateTime<Utc> {
    "2026-11-20T12:00:00Z".parse().unwrap()
}

fn record(builder: PodBuilder) -> PodRecord {
    builder.wire().into_record(&mut Interner::default())
}

fn abnormal(builder: PodBuilder) -> Abnormal {
    let pod = record(builder);
    let finding = classify(&pod, &default_chain(), now()).expect("the pod is abnormal");
    Abnormal { pod, finding }
}

fn evicted(name: &str, ns: &str) -> Abnormal {
    abnormal(pod(name).ns(ns).evicted())
}

fn all_on() -> Toggles {
    Toggles {
        master: true,
        rules: RuleKind::ALL.into_iter().map(|r| (r, true)).collect(),
    }
}

fn open_gate() -> Gate {
    Gate {
        synced: true,
        ..Gate::default()
    }
}

fn run(findings: &[Abnormal], toggles: &Toggles, gate: &Gate, safety: SafetyConfig) -> Pass {
    let mut guards = Guards::new(safety);
    plan(
        findings,
        toggles,
        &BTreeMap::new(),
        gate,
        &mut guards,
        Instant::now(),
    )
}

fn ran(pass: &Pass) -> usize {
    pass.actions().count()
}

fn holds(pass: &Pass) -> Vec<Hold> {
    pass.planned
        .iter()
        .filter_map(|p| match &p.decision {
            Decision::Held(h) => Some(h.clone()),
            Decision::Run(_) => None,
        })
        .collect()
}

#[test]
fn an_evicted_pod_is_deleted_when_every_guard_passes() {
    let pass = run(
        &[evicted("e", "shop")],
        &all_on(),
        &open_gate(),
        SafetyConfig::default(),
    );
    let actions: Vec<_> = pass.actions().collect();
    assert!(pass.blocked.is_none());
    assert!(
        matches!(actions.as_slice(), [(RuleKind::Evicted, Action::Delete(p))] if p.name == "e")
    );
}

#[test]
fn gate_guards_block_the_whole_pass() {
    let findings = [evicted("e", "shop")];
    let safety = SafetyConfig::default();
    let cases: [(&str, Gate, &str); 4] = [
        ("not synced", Gate::default(), "first complete list"),
        (
            "stale",
            Gate {
                stale_for: Some(Duration::from_secs(61)),
                ..open_gate()
            },
            "disconnected for 61s",
        ),
        (
            "readonly",
            Gate {
                readonly: true,
                ..open_gate()
            },
            "read-only",
        ),
        (
            "standby",
            Gate {
                standby: Some("replica b holds the lease".into()),
                ..open_gate()
            },
            "holds the lease",
        ),
    ];
    for (name, gate, says) in cases {
        let pass = run(&findings, &all_on(), &gate, safety.clone());
        assert_eq!(ran(&pass), 0, "{name}");
        let blocked = pass.blocked.unwrap_or_default();
        assert!(blocked.contains(says), "{name}: {blocked}");
    }
    let briefly_stale = Gate {
        stale_for: Some(Duration::from_secs(59)),
        ..open_gate()
    };
    assert_eq!(ran(&run(&findings, &all_on(), &briefly_stale, safety)), 1);
}

#[test]
fn toggles_master_and_per_rule_decide_what_is_planned() {
    let findings = [evicted("e", "shop")];
    let mut toggles = all_on();
    toggles.master = false;
    assert!(
        run(&findings, &toggles, &open_gate(), SafetyConfig::default())
            .planned
            .is_empty()
    );
    toggles.master = true;
    toggles.rules.insert(RuleKind::Evicted, false);
    assert!(
        run(&findings, &toggles, &open_gate(), SafetyConfig::default())
            .planned
            .is_empty()
    );
}

#[test]
fn protected_namespaces_are_left_alone_unless_included() {
    let findings = [evicted("e", "kube-system")];
    let pass = run(&findings, &all_on(), &open_gate(), SafetyConfig::default());
    assert_eq!(holds(&pass), [Hold::Protected("kube-system".into())]);
    let included = SafetyConfig {
        include_protected: vec!["kube-system".into()],
        ..SafetyConfig::default()
    };
    assert_eq!(ran(&run(&findings, &all_on(), &open_gate(), included)), 1);
}

#[test]
fn the_ignore_annotation_holds_a_pod() {
    let ignored = abnormal(
        pod("e")
            .ns("shop")
            .evicted()
            .annotate("ops-pod-cleaner.io/ignore", "true"),
    );
    let pass = run(&[ignored], &all_on(), &open_gate(), SafetyConfig::default());
    assert_eq!(holds(&pass), [Hold::Ignored]);
}

#[test]
fn a_paused_rule_holds_its_pods_with_the_breaker_reason() {
    let findings = [evicted("e", "shop")];
    let paused = BTreeMap::from([(
        RuleKind::Evicted,
        "evicted matches 9 of 10 pods in shop".to_string(),
    )]);
    let mut guards = Guards::new(SafetyConfig::default());
    let pass = plan(
        &findings,
        &all_on(),
        &paused,
        &open_gate(),
        &mut guards,
        Instant::now(),
    );
    assert_eq!(
        holds(&pass),
        [Hold::Paused("evicted matches 9 of 10 pods in shop".into())]
    );
}

#[test]
fn rate_limits_hold_the_newest_per_namespace_and_globally() {
    let safety = SafetyConfig {
        max_actions_per_minute: 5,
        max_actions_per_namespace_per_minute: 3,
        ..SafetyConfig::default()
    };
    let mut findings: Vec<Abnormal> = (0..4).map(|i| evicted(&format!("a{i}"), "a")).collect();
    let pass = run(&findings, &all_on(), &open_gate(), safety.clone());
    assert_eq!(ran(&pass), 3);
    assert!(matches!(holds(&pass).as_slice(), [Hold::RateLimited(why)] if why.contains("in a")));

    findings.extend((0..4).map(|i| evicted(&format!("b{i}"), "b")));
    let pass = run(&findings, &all_on(), &open_gate(), safety.clone());
    assert_eq!(ran(&pass), 5, "3 in a, then 2 in b before the global limit");

    // The window slides: a minute later the held pods go.
    let mut guards = Guards::new(safety);
    let start = Instant::now();
    let first = plan(
        &findings,
        &all_on(),
        &BTreeMap::new(),
        &open_gate(),
        &mut guards,
        start,
    );
    let later = start + Duration::from_secs(61);
    let rest: Vec<Abnormal> = findings
        .iter()
        .filter(|f| {
            !first
                .actions()
                .any(|(_, a)| a.pod().is_some_and(|p| p.uid == *f.pod.uid))
        })
        .cloned()
        .collect();
    let second = plan(
        &rest,
        &all_on(),
        &BTreeMap::new(),
        &open_gate(),
        &mut guards,
        later,
    );
    assert_eq!(ran(&second), 3);
}

#[test]
fn one_scale_per_workload_and_no_repeat_within_the_cooldown() {
    let failing = |name: &str| {
        abnormal(
            pod(name)
                .ns("shop")
                .owned_by("apps/v1", "ReplicaSet", "web-7d9f8c6b5")
                .waiting("ImagePullBackOff"),
        )
    };
    let findings = [failing("web-1"), failing("web-2"), failing("web-3")];
    let mut guards = Guards::new(SafetyConfig::default());
    let start = Instant::now();
    let pass = plan(
        &findings,
        &all_on(),
        &BTreeMap::new(),
        &open_gate(),
        &mut guards,
        start,
    );
    assert_eq!(ran(&pass), 1);
    assert_eq!(holds(&pass), [Hold::RecentlyActed, Hold::RecentlyActed]);
    let again = plan(
        &findings,
        &all_on(),
        &BTreeMap::new(),
        &open_gate(),
        &mut guards,
        start,
    );
    assert_eq!(ran(&again), 0);
    let after = start + Duration::from_secs(121);
    let later = plan(
        &findings,
        &all_on(),
        &BTreeMap::new(),
        &open_gate(),
        &mut guards,
        after,
    );
    assert_eq!(ran(&later), 1);
}

fn census(pods: &[PodRecord]) -> Census {
    let mut census = Census::default();
    pods.iter().for_each(|p| census.add(p));
    census
}

fn web_pod(i: usize, broken: bool) -> PodBuilder {
    let p = pod(&format!("web-{i}"))
        .ns("shop")
        .owned_by("apps/v1", "ReplicaSet", "web-7d9f8c6b5");
    if broken {
        p.waiting("ImagePullBackOff")
    } else {
        p
    }
}

#[test]
fn the_breaker_trips_on_a_registry_outage_and_names_it() {
    let pods: Vec<PodRecord> = (0..40).map(|i| record(web_pod(i, true))).collect();
    let findings: Vec<Abnormal> = (0..40).map(|i| abnormal(web_pod(i, true))).collect();
    let config = BreakerConfig {
        min_pods: 5,
        share: 0.5,
    };
    let paused = trips(&findings, &census(&pods), &config);
    assert_eq!(
        paused.get(&RuleKind::ImagePull).map(String::as_str),
        Some("imagePull matches 40 of 40 pods in shop: paused, likely a registry outage")
    );
}

#[test]
fn the_breaker_holds_below_share_or_min_pods() {
    let config = BreakerConfig {
        min_pods: 5,
        share: 0.5,
    };
    // 6 broken of 40, spread over a namespace and one workload: 15 %.
    let pods: Vec<PodRecord> = (0..40).map(|i| record(web_pod(i, i < 6))).collect();
    let findings: Vec<Abnormal> = (0..6).map(|i| abnormal(web_pod(i, true))).collect();
    assert!(trips(&findings, &census(&pods), &config).is_empty());
    // 4 of 4: every pod, but fewer than minPods.
    let pods: Vec<PodRecord> = (0..4).map(|i| record(web_pod(i, true))).collect();
    let findings: Vec<Abnormal> = (0..4).map(|i| abnormal(web_pod(i, true))).collect();
    assert!(trips(&findings, &census(&pods), &config).is_empty());
}

#[test]
fn the_breaker_sees_one_workload_inside_a_big_namespace() {
    let config = BreakerConfig {
        min_pods: 5,
        share: 0.5,
    };
    let mut pods: Vec<PodRecord> = (0..6).map(|i| record(web_pod(i, true))).collect();
    pods.extend((0..50).map(|i| record(pod(&format!("other-{i}")).ns("shop"))));
    let findings: Vec<Abnormal> = (0..6).map(|i| abnormal(web_pod(i, true))).collect();
    let paused = trips(&findings, &census(&pods), &config);
    let why = paused.get(&RuleKind::ImagePull).expect("paused");
    assert!(
        why.contains("6 of 6 pods of Deployment/web in shop"),
        "{why}"
    );
}

#[test]
fn the_census_is_needed_only_once_a_namespace_reaches_min_pods() {
    let config = BreakerConfig {
        min_pods: 5,
        share: 0.5,
    };
    let findings =
        |n: usize| -> Vec<Abnormal> { (0..n).map(|i| abnormal(web_pod(i, true))).collect() };
    assert!(!needs_census(&findings(4), &config));
    assert!(needs_census(&findings(5), &config));
    // Below minPods nothing can trip, whatever the census says: skipping it loses nothing.
    let pods: Vec<PodRecord> = (0..4).map(|i| record(web_pod(i, true))).collect();
    assert!(trips(&findings(4), &census(&pods), &config).is_empty());
}
