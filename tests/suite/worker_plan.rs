//! The worker's pure decisions: every guard, shown to stop an action that runs without it.

use crate::support;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use opc_core::actions::{
    Action, Change, Outcome, PastAction, Refusal, ScalableWorkload, Target, WorkloadKind,
};
use opc_core::cluster::{Abnormal, Census};
use opc_core::config::{BreakerConfig, SafetyConfig};
use opc_core::place::PauseScope;
use opc_core::pod::{Interner, PodRecord, WorkloadId};
use opc_core::rules::{RuleKind, classify, default_chain};
use opc_core::worker::breaker::{needs_census, trips};
use opc_core::worker::{
    Bound, Decision, DryRunDone, Gate, Guards, Hold, Limited, Pass, Pause, PauseCause, Pauses,
    Standby, Toggles, plan,
};
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
    Abnormal::new(pod, finding)
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
        &Pauses::default(),
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
    let cases: [(&str, Gate, &str); 5] = [
        ("not synced", Gate::default(), "first complete list"),
        (
            "stale",
            Gate {
                stale_for: Some(Duration::from_secs(61)),
                ..open_gate()
            },
            "stale for 61s: the view is not proved in sync with the API server",
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
                standby: Some(Standby::RunBy {
                    holder: "replica-b".into(),
                    lease: "ops/ops-pod-cleaner".into(),
                }),
                ..open_gate()
            },
            "holds the Lease ops/ops-pod-cleaner",
        ),
        (
            "no audit log",
            Gate {
                audit: Some("the audit log /var/x cannot be written (disk full)".into()),
                ..open_gate()
            },
            "cannot be written (disk full): nothing acts until it can be written",
        ),
    ];
    for (name, gate, says) in cases {
        let pass = run(&findings, &all_on(), &gate, safety.clone());
        assert_eq!(ran(&pass), 0, "{name}");
        let blocked = pass.blocked.map(|b| b.to_string()).unwrap_or_default();
        assert!(blocked.contains(says), "{name}: {blocked}");
    }
    let briefly_stale = Gate {
        stale_for: Some(Duration::from_secs(29)),
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

/// A burst pause of evicted pods, `matched` of 10 pods in the scope's namespace.
fn pause(scope: PauseScope, matched: u32) -> Pause {
    let ns = match &scope {
        PauseScope::Namespace(ns) => ns.clone(),
        _ => "shop".into(),
    };
    Pause {
        scope,
        ..crate::support::pauses::burst_in(&ns, RuleKind::Evicted, matched, 10)
    }
}

fn shop() -> PauseScope {
    PauseScope::Namespace("shop".into())
}

#[test]
fn a_rule_paused_in_one_namespace_holds_its_pods_there_only() {
    let findings = [evicted("e", "shop"), evicted("e", "web")];
    let in_shop = pause(shop(), 9);
    let paused = Pauses::from_iter([(RuleKind::Evicted, in_shop.clone())]);
    let mut guards = Guards::new(SafetyConfig::default());
    let pass = plan(
        &findings,
        &all_on(),
        &paused,
        &open_gate(),
        &mut guards,
        Instant::now(),
    );
    assert_eq!(holds(&pass), [Hold::Paused(Box::new(in_shop))]);
    assert_eq!(ran(&pass), 1, "web's pod is deleted");
    let said = holds(&pass)[0].to_string();
    assert!(
        said.starts_with(
            "paused in shop: evicted matches 9 of 10 pods in shop: one namespace only"
        ),
        "{said}"
    );
}

/// Admit what `pass` plans to run, as the worker does right before sending each request.
fn admitted(pass: &Pass, guards: &mut Guards, at: Instant) -> Vec<String> {
    pass.planned
        .iter()
        .filter(|p| matches!(p.decision, Decision::Run(_)))
        .filter(|p| guards.admit(p, at, now()).is_ok())
        .map(|p| p.pod.name.clone())
        .collect()
}

#[test]
fn rate_limits_are_spent_on_requests_sent_and_hold_the_newest() {
    let safety = SafetyConfig {
        max_actions_per_minute: 5,
        max_actions_per_namespace_per_minute: 3,
        ..SafetyConfig::default()
    };
    let mut findings: Vec<Abnormal> = (0..4).map(|i| evicted(&format!("a{i}"), "a")).collect();
    findings.extend((0..4).map(|i| evicted(&format!("b{i}"), "b")));
    let mut guards = Guards::new(safety);
    let start = Instant::now();
    let pass = plan_at(&findings, &mut guards, start);
    assert_eq!(ran(&pass), 8, "planning spends no slot");
    assert_eq!(
        admitted(&pass, &mut guards, start),
        ["a0", "a1", "a2", "b0", "b1"],
        "3 in a, then 2 in b before the global limit"
    );
    let held = pass.planned.iter().find(|p| p.pod.name == "a3").unwrap();
    assert!(matches!(
        guards.admit(held, start, now()),
        Err(Hold::RateLimited(Limited::Cluster { .. }))
    ));
    // The window slides: a minute later the held pods go.
    let later = start + Duration::from_secs(61);
    assert_eq!(
        admitted(&pass, &mut guards, later).len(),
        5,
        "a fresh minute"
    );
}

#[test]
fn a_target_refused_before_sending_spends_nothing_and_backs_off() {
    let safety = SafetyConfig {
        max_actions_per_minute: 1,
        ..SafetyConfig::default()
    };
    let findings = [evicted("held", "shop"), evicted("fine", "shop")];
    let mut guards = Guards::new(safety);
    let start = Instant::now();
    let pass = plan_at(&findings, &mut guards, start);
    let named = |name: &str| pass.planned.iter().find(|p| p.pod.name == name).unwrap();
    let (held, fine) = (named("held"), named("fine"));
    let finalizers = Outcome::Refused(Refusal::HeldByFinalizers {
        pod: held.pod.clone(),
        finalizers: vec!["x".into()],
    });
    assert!(
        guards.refused(held, &finalizers, start),
        "a new reason is logged"
    );
    assert!(
        guards.admit(fine, start, now()).is_ok(),
        "the refusal took no slot"
    );

    let at = |secs| start + Duration::from_secs(secs);
    let holds_at = |guards: &mut Guards, secs| holds(&plan_at(&findings[..1], guards, at(secs)));
    assert_eq!(
        holds_at(&mut guards, 60),
        [Hold::BackingOff(Box::new(finalizers.clone()))]
    );
    assert!(
        holds_at(&mut guards, 121).is_empty(),
        "tried again after 2 min"
    );
    assert!(
        !guards.refused(held, &finalizers, at(121)),
        "the same reason again is not logged again"
    );
    assert!(!holds_at(&mut guards, 121 + 239).is_empty(), "then 4 min");
    assert!(holds_at(&mut guards, 121 + 241).is_empty());
    // Doubling stops at an hour.
    let mut now = 121 + 241;
    for _ in 0..10 {
        guards.refused(held, &finalizers, at(now));
        now += 3601;
    }
    assert!(holds_at(&mut guards, now).is_empty(), "capped at 1 h");
}

fn plan_at(findings: &[Abnormal], guards: &mut Guards, at: Instant) -> Pass {
    plan(
        findings,
        &all_on(),
        &Pauses::default(),
        &open_gate(),
        guards,
        at,
    )
}

/// A pod of `shop`'s Deployment `web` that cannot pull its image.
fn failing(name: &str) -> Abnormal {
    abnormal(
        pod(name)
            .ns("shop")
            .owned_by("apps/v1", "ReplicaSet", "web-7d9f8c6b5")
            .waiting("ImagePullBackOff"),
    )
}

#[test]
fn one_scale_per_workload_and_no_repeat_within_the_cooldown() {
    let findings = [failing("web-1"), failing("web-2"), failing("web-3")];
    let mut guards = Guards::new(SafetyConfig::default());
    let start = Instant::now();
    let pass = plan_at(&findings, &mut guards, start);
    assert_eq!(ran(&pass), 1);
    assert_eq!(holds(&pass), [Hold::RecentlyActed, Hold::RecentlyActed]);
    let scaled = &pass.planned[0];
    assert_eq!(
        scaled.target,
        Target::Workload(WorkloadId::new("shop", "Deployment", "web"))
    );
    let done = Outcome::Done(Change::Scaled {
        workload: ScalableWorkload::new(WorkloadKind::Deployment, "shop", "web"),
        from: 3,
        annotation: None,
    });
    guards.sent(scaled, &done, start);
    assert_eq!(ran(&plan_at(&findings, &mut guards, start)), 0);
    let after = start + Duration::from_secs(121);
    assert_eq!(ran(&plan_at(&findings, &mut guards, after)), 1);
}

fn pulling(name: &str, ns: &str) -> Abnormal {
    pulling_from(name, ns, "registry.local/app:1")
}

/// A Deployment's pod of `ns` that cannot pull `image`, in the kubelet's words.
fn pulling_from(name: &str, ns: &str, image: &str) -> Abnormal {
    abnormal(
        pod(name)
            .ns(ns)
            .owned_by("apps/v1", "ReplicaSet", &format!("{name}-7d9f8c6b5"))
            .waiting_with(
                "ImagePullBackOff",
                &format!("Back-off pulling image \"{image}\""),
            ),
    )
}

fn registry_local() -> PauseScope {
    PauseScope::Registry("registry.local".into())
}

#[test]
fn an_outage_spread_thin_pauses_after_three_workloads_and_names_them() {
    let findings: Vec<Abnormal> = (1..=8).map(|i| pulling("app", &format!("ns{i}"))).collect();
    let mut guards = Guards::new(SafetyConfig::default());
    let start = Instant::now();
    let pass = plan_at(&findings, &mut guards, start);
    assert_eq!(ran(&pass), 8, "one workload per namespace: no share trips");
    assert_eq!(admitted(&pass, &mut guards, start).len(), 3);
    let paused = guards.spread_paused();
    let [pause] = paused.of(RuleKind::ImagePull) else {
        panic!("one pause: {paused:?}");
    };
    assert_eq!(pause.scope, registry_local());
    let app = |ns: &str| WorkloadId::new(ns, "Deployment", "app");
    assert_eq!(
        pause.cause,
        PauseCause::Workloads(Bound::SpreadThin {
            rule: RuleKind::ImagePull,
            next: app("ns4"),
            acted: vec![app("ns1"), app("ns2"), app("ns3")],
            window: Duration::from_secs(600),
            shared: registry_local(),
        })
    );
    assert!(
        pause.why().starts_with("imagePull would act on a workload in a 4th namespace (ns4/Deployment/app) within 10m after ns1/Deployment/app, ns2/Deployment/app, ns3/Deployment/app, all for images from registry.local: likely an outage of what they share"),
        "{}", pause.why()
    );
    // The pause holds, within the window and after it, until the matches clear...
    let later = start + Duration::from_secs(3600);
    assert!(admitted(&pass, &mut guards, later).is_empty());
    let ns4_matches = BTreeSet::from([(RuleKind::ImagePull, findings[3].place())]);
    assert!(guards.matches_cleared(&ns4_matches).is_empty());
    assert_eq!(
        guards.matches_cleared(&BTreeSet::new()),
        [(RuleKind::ImagePull, registry_local())]
    );
    assert!(guards.spread_paused().is_empty());
    // The same three may act again within the window; a fourth pauses the rule again...
    let pass = plan_at(&findings, &mut guards, start);
    assert_eq!(admitted(&pass, &mut guards, start).len(), 3);
    assert!(!guards.spread_paused().of(RuleKind::ImagePull).is_empty());
    // ...until someone resumes it, which grants a fresh set of workloads.
    assert!(guards.resume(RuleKind::ImagePull, &registry_local()));
    let later = start + Duration::from_secs(61);
    let pass = plan_at(&findings[3..], &mut guards, later);
    assert_eq!(admitted(&pass, &mut guards, later).len(), 3);
}

/// Four throw-away workloads in one namespace paused `imagePull` everywhere; in two of a
/// tenant's namespaces, they paused it for every other namespace.
#[test]
fn throwaway_workloads_pause_their_namespace_and_two_namespaces_pause_no_one_else() {
    let tenant = |ns: &str| -> Vec<Abnormal> {
        (1..=4)
            .map(|i| pulling_from(&format!("junk-{i}"), ns, "registry-a.invalid/junk:1"))
            .collect()
    };
    let tenant_scope = PauseScope::Namespace("tenant".into());
    let mut guards = Guards::new(SafetyConfig::default());
    let start = Instant::now();
    let pass = plan_at(&tenant("tenant"), &mut guards, start);
    assert_eq!(admitted(&pass, &mut guards, start).len(), 3);
    let paused = guards.spread_paused();
    let (scope, why) = only(&paused, RuleKind::ImagePull);
    assert_eq!(scope, tenant_scope);
    assert!(
        why.contains("4th workload (tenant/Deployment/junk-4) in tenant"),
        "{why}"
    );
    // Another namespace still acts...
    let pass = plan_at(&[pulling("web", "shop")], &mut guards, start);
    assert_eq!(admitted(&pass, &mut guards, start), ["web"]);
    // ...and still does once the tenant's second namespace bursts too: the two share a
    // registry with each other, not with shop.
    let pass = plan_at(&tenant("team-b"), &mut guards, start);
    assert_eq!(admitted(&pass, &mut guards, start).len(), 3);
    let paused = guards.spread_paused();
    let scopes = scopes_of(&paused, RuleKind::ImagePull);
    let team_b = PauseScope::Namespace("team-b".into());
    assert_eq!(scopes, [&team_b, &tenant_scope]);
    let pass = plan_at(&[pulling("api", "shop")], &mut guards, start);
    assert_eq!(admitted(&pass, &mut guards, start), ["api"]);
}

#[test]
fn resuming_a_namespace_pause_lifts_that_namespace_only() {
    let mut guards = Guards::new(SafetyConfig {
        breaker: BreakerConfig {
            max_workloads: 1,
            min_namespaces: 3,
            ..BreakerConfig::default()
        },
        ..SafetyConfig::default()
    });
    let start = Instant::now();
    let findings: Vec<Abnormal> = ["a", "b"]
        .iter()
        .flat_map(|ns| [pulling("one", ns), pulling("two", ns)])
        .collect();
    let pass = plan_at(&findings, &mut guards, start);
    assert_eq!(admitted(&pass, &mut guards, start), ["one", "one"]);
    let scopes = |guards: &Guards| -> Vec<PauseScope> {
        let paused = guards.spread_paused();
        paused
            .of(RuleKind::ImagePull)
            .iter()
            .map(|p| p.scope.clone())
            .collect()
    };
    let (a, b) = (
        PauseScope::Namespace("a".into()),
        PauseScope::Namespace("b".into()),
    );
    assert_eq!(scopes(&guards), [a.clone(), b.clone()]);
    assert!(
        !guards.resume(RuleKind::ImagePull, &registry_local()),
        "not paused there"
    );
    assert!(guards.resume(RuleKind::ImagePull, &a));
    assert_eq!(scopes(&guards), [b]);
    // A fresh budget in a; b stays paused.
    let pass = plan_at(&findings[1..2], &mut guards, start);
    assert_eq!(admitted(&pass, &mut guards, start), ["two"]);
    let pass = plan_at(&findings[3..], &mut guards, start);
    assert!(admitted(&pass, &mut guards, start).is_empty());
}

#[test]
fn deleting_finished_pods_stops_nothing_and_is_not_bound_by_workloads() {
    // Evicted pods of 8 workloads: deleting them stops nothing that runs.
    let findings: Vec<Abnormal> = (1..=8)
        .map(|i| abnormal(pod(&format!("e{i}")).ns(&format!("ns{i}")).evicted()))
        .collect();
    let mut guards = Guards::new(SafetyConfig::default());
    let start = Instant::now();
    let pass = plan_at(&findings, &mut guards, start);
    assert_eq!(admitted(&pass, &mut guards, start).len(), 8);
    assert!(guards.spread_paused().is_empty());
}

#[test]
fn guards_restored_from_the_audit_log_give_no_fresh_budget() {
    let findings: Vec<Abnormal> = (1..=4).map(|i| pulling("app", &format!("ns{i}"))).collect();
    let history: Vec<PastAction> = (1..=3)
        .map(|i| PastAction {
            at: Utc::now() - chrono::Duration::seconds(30),
            rule: RuleKind::ImagePull,
            namespace: format!("ns{i}"),
            target: Target::Workload(WorkloadId::new(&format!("ns{i}"), "Deployment", "app")),
            workload: Some(WorkloadId::new(&format!("ns{i}"), "Deployment", "app")),
            shared: Some(registry_local()),
        })
        .collect();
    let safety = SafetyConfig {
        max_actions_per_minute: 4,
        ..SafetyConfig::default()
    };
    let mut guards = Guards::new(safety);
    let now = Instant::now();
    guards.restore(&history, Utc::now(), now);
    let pass = plan_at(&findings, &mut guards, now);
    assert_eq!(
        holds(&pass),
        [
            Hold::RecentlyActed,
            Hold::RecentlyActed,
            Hold::RecentlyActed
        ],
        "cooldowns survive"
    );
    let fourth = pass
        .planned
        .iter()
        .find(|p| p.pod.namespace == "ns4")
        .unwrap();
    assert!(
        matches!(guards.admit(fourth, now, self::now()), Err(Hold::Paused(p)) if matches!(p.cause, PauseCause::Workloads(Bound::SpreadThin { .. }))),
        "the workload window survives"
    );
    // A fresh restore with a bound of 10 workloads: the rate limit window survives too.
    let safety = SafetyConfig {
        max_actions_per_minute: 3,
        breaker: BreakerConfig {
            max_workloads: 10,
            ..BreakerConfig::default()
        },
        ..SafetyConfig::default()
    };
    let mut guards = Guards::new(safety);
    guards.restore(&history, Utc::now(), now);
    let pass = plan_at(&findings, &mut guards, now);
    let fourth = pass
        .planned
        .iter()
        .find(|p| p.pod.namespace == "ns4")
        .unwrap();
    assert!(matches!(
        guards.admit(fourth, now, self::now()),
        Err(Hold::RateLimited(_))
    ));
    assert!(
        guards
            .admit(fourth, now + Duration::from_secs(31), self::now())
            .is_ok()
    );
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
        ..BreakerConfig::default()
    };
    let paused = trips(&findings, &census(&pods), &config, now());
    let burst = crate::support::pauses::burst_in("shop", RuleKind::ImagePull, 40, 40);
    assert_eq!(paused.of(RuleKind::ImagePull), [burst]);
    assert_eq!(
        only(&paused, RuleKind::ImagePull),
        (
            shop(),
            "imagePull matches 40 of 40 pods in shop: one namespace only (its own cause, or a tenant's doing), other namespaces still act; resumes by itself once fewer match (safety.breaker.share)".to_string()
        )
    );
}

/// Where `rule` is paused.
fn scopes_of(paused: &Pauses, rule: RuleKind) -> Vec<&PauseScope> {
    paused.of(rule).iter().map(|p| &p.scope).collect()
}

/// The one pause of `rule`: where, and why.
fn only(paused: &Pauses, rule: RuleKind) -> (PauseScope, String) {
    match paused.of(rule) {
        [pause] => (pause.scope.clone(), pause.why()),
        other => panic!("one pause of {rule}: {other:?}"),
    }
}

fn failed_pods(namespace: &str, n: usize) -> Vec<PodBuilder> {
    (0..n)
        .map(|i| pod(&format!("job-{i}")).ns(namespace).failed_with(1))
        .collect()
}

/// A burst, as the breaker sees it: failed pods seen a minute after they failed.
fn burst_trips(builders: &[PodBuilder], config: &BreakerConfig) -> Pauses {
    let pods: Vec<PodRecord> = builders.iter().map(|b| record(b.clone())).collect();
    let findings: Vec<Abnormal> = builders.iter().map(|b| abnormal(b.clone())).collect();
    let soon = findings[0].finding.since + chrono::Duration::minutes(1);
    trips(&findings, &census(&pods), config, soon)
}

/// Five failing pods in one tenant's namespace paused `failed` everywhere.
#[test]
fn a_burst_in_one_namespace_pauses_the_rule_there_only() {
    let paused = burst_trips(&failed_pods("tenant", 5), &BreakerConfig::default());
    let (scope, why) = only(&paused, RuleKind::Failed);
    assert_eq!(scope, PauseScope::Namespace("tenant".into()));
    assert!(
        why.starts_with("failed matches 5 of 5 pods in tenant: one namespace only"),
        "{why}"
    );
}

/// Two namespaces' failed pods share nothing but the rule: each namespace pauses on its own,
/// and a third namespace still acts.
#[test]
fn bursts_in_two_namespaces_pause_each_of_them_and_no_other() {
    let mut pods = failed_pods("tenant", 5);
    pods.extend(failed_pods("shop", 6));
    let paused = burst_trips(&pods, &BreakerConfig::default());
    let scopes = scopes_of(&paused, RuleKind::Failed);
    assert_eq!(scopes, [&shop(), &PauseScope::Namespace("tenant".into())]);
    let elsewhere = abnormal(pod("job-0").ns("web").failed_with(1)).place();
    assert!(paused.holding(RuleKind::Failed, &elsewhere).is_none());
}

/// One tenant's two namespaces fail to pull from their registry; a third namespace fails to
/// pull from another. The tenant's bursts pause the rule in its namespaces and for its
/// registry, and the third namespace's workload is still cleaned.
#[test]
fn a_tenants_two_namespaces_pause_only_what_their_pods_share() {
    let config = BreakerConfig::default();
    let tenant = |ns: &str| -> Vec<Abnormal> {
        (0..6)
            .map(|i| pulling_from(&format!("app-{i}"), ns, "registry-a.invalid/app:1"))
            .collect()
    };
    let mut findings = tenant("t1");
    findings.extend(tenant("t2"));
    let other: Vec<Abnormal> = (0..2)
        .map(|i| pulling_from(&format!("other-{i}"), "t3", "registry-b.invalid/other:1"))
        .collect();
    findings.extend(other.clone());
    let pods: Vec<PodRecord> = findings.iter().map(|f| (*f.pod).clone()).collect();
    let paused = trips(&findings, &census(&pods), &config, now());
    let scopes = scopes_of(&paused, RuleKind::ImagePull);
    let registry_a = PauseScope::Registry("registry-a.invalid".into());
    let (t1, t2) = (
        PauseScope::Namespace("t1".into()),
        PauseScope::Namespace("t2".into()),
    );
    assert_eq!(scopes, [&t1, &t2, &registry_a]);
    let why = paused
        .holding(RuleKind::ImagePull, &findings[6].place())
        .unwrap();
    assert!(why.to_string().starts_with("paused in t2: "), "{why}");
    let registry = paused.of(RuleKind::ImagePull)[2].to_string();
    assert!(
        registry.starts_with("paused for images from registry-a.invalid: imagePull matches 6 of 6 pods in t1, bursts in 2 namespaces (t1, t2): likely a registry outage"),
        "{registry}"
    );
    let mut guards = Guards::new(SafetyConfig::default());
    let pass = plan(
        &other,
        &all_on(),
        &paused,
        &open_gate(),
        &mut guards,
        Instant::now(),
    );
    assert_eq!(holds(&pass), [], "t3's workloads are scaled");
    assert_eq!(ran(&pass), 2);
}

#[test]
fn the_breaker_holds_below_share_or_min_pods() {
    let config = BreakerConfig {
        min_pods: 5,
        share: 0.5,
        ..BreakerConfig::default()
    };
    // 6 broken of 40, spread over a namespace and one workload: 15 %.
    let pods: Vec<PodRecord> = (0..40).map(|i| record(web_pod(i, i < 6))).collect();
    let findings: Vec<Abnormal> = (0..6).map(|i| abnormal(web_pod(i, true))).collect();
    assert!(trips(&findings, &census(&pods), &config, now()).is_empty());
    // 4 of 4: every pod, but fewer than minPods.
    let pods: Vec<PodRecord> = (0..4).map(|i| record(web_pod(i, true))).collect();
    let findings: Vec<Abnormal> = (0..4).map(|i| abnormal(web_pod(i, true))).collect();
    assert!(trips(&findings, &census(&pods), &config, now()).is_empty());
}

#[test]
fn the_breaker_sees_one_workload_inside_a_big_namespace() {
    let config = BreakerConfig {
        min_pods: 5,
        share: 0.5,
        ..BreakerConfig::default()
    };
    let mut pods: Vec<PodRecord> = (0..6).map(|i| record(web_pod(i, true))).collect();
    pods.extend((0..50).map(|i| record(pod(&format!("other-{i}")).ns("shop"))));
    let findings: Vec<Abnormal> = (0..6).map(|i| abnormal(web_pod(i, true))).collect();
    let paused = trips(&findings, &census(&pods), &config, now());
    let (_, why) = only(&paused, RuleKind::ImagePull);
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
        ..BreakerConfig::default()
    };
    let findings =
        |n: usize| -> Vec<Abnormal> { (0..n).map(|i| abnormal(web_pod(i, true))).collect() };
    assert!(!needs_census(&findings(4), &config));
    assert!(needs_census(&findings(5), &config));
    // Below minPods nothing can trip, whatever the census says: skipping it loses nothing.
    let pods: Vec<PodRecord> = (0..4).map(|i| record(web_pod(i, true))).collect();
    assert!(trips(&findings(4), &census(&pods), &config, now()).is_empty());
}

#[test]
fn finished_pods_do_not_dilute_the_breaker_share() {
    let config = BreakerConfig::default();
    // 6 evicted pods among 4 running ones and 30 finished jobs: 6 of 10 could be healthy.
    let mut pods: Vec<PodRecord> = (0..6)
        .map(|i| record(pod(&format!("e{i}")).ns("shop").evicted()))
        .collect();
    pods.extend((0..4).map(|i| record(pod(&format!("r{i}")).ns("shop"))));
    pods.extend((0..30).map(|i| record(pod(&format!("job{i}")).ns("shop").succeeded())));
    let findings: Vec<Abnormal> = (0..6).map(|i| evicted(&format!("e{i}"), "shop")).collect();
    // Seen a minute after the evictions: a failure happening now.
    let soon = findings[0].finding.since + chrono::Duration::minutes(1);
    let paused = trips(&findings, &census(&pods), &config, soon);
    let (_, why) = only(&paused, RuleKind::Evicted);
    assert!(
        why.starts_with("evicted matches 6 of 10 pods in shop:"),
        "{why}"
    );
}

/// The same evicted pods seen hours later (the demo's, a cluster's leftovers)
/// are not a failure happening at once: cleaning them up is not paused.
#[test]
fn evictions_older_than_the_window_do_not_trip_the_breaker() {
    let config = BreakerConfig::default();
    let mut pods: Vec<PodRecord> = (0..10)
        .map(|i| record(pod(&format!("e{i}")).ns("shop").evicted()))
        .collect();
    pods.extend((0..4).map(|i| record(pod(&format!("r{i}")).ns("shop"))));
    let findings: Vec<Abnormal> = (0..10).map(|i| evicted(&format!("e{i}"), "shop")).collect();
    let later = findings[0].finding.since + chrono::Duration::hours(4);
    assert!(trips(&findings, &census(&pods), &config, later).is_empty());
}

/// A node that stopped reporting strands a pod or two per namespace; no
/// namespace or workload share trips, but its pods are counted per node.
#[test]
fn the_breaker_counts_pods_stuck_on_one_node() {
    let config = BreakerConfig::default();
    let stuck = |i: usize| {
        pod(&format!("app-{i}"))
            .ns(&format!("team-{i}"))
            .on_node("node-7")
            .terminating_since("2026-11-20T11:00:00Z")
    };
    let mut pods: Vec<PodRecord> = (0..6).map(|i| record(stuck(i))).collect();
    for i in 0..6 {
        pods.extend((0..20).map(|j| record(pod(&format!("ok-{j}")).ns(&format!("team-{i}")))));
    }
    let findings: Vec<Abnormal> = (0..6).map(|i| abnormal(stuck(i))).collect();
    let paused = trips(&findings, &census(&pods), &config, now());
    let (scope, why) = only(&paused, RuleKind::Terminating);
    assert_eq!(
        scope,
        PauseScope::Node("node-7".into()),
        "the node's pods are in six namespaces: the node is what they share"
    );
    assert!(why.contains("6 of 6 pods on node node-7"), "{why}");
    assert!(why.contains("kubectl get nodes"), "{why}");
    // The same pods spread over six nodes: nothing points at a node.
    let spread = |i: usize| stuck(i).on_node(&format!("node-{i}"));
    let findings: Vec<Abnormal> = (0..6).map(|i| abnormal(spread(i))).collect();
    assert!(trips(&findings, &census(&pods), &config, now()).is_empty());
}

/// One tenant's pods stuck on a node that reports (their own finalizers, say) are that
/// tenant's trouble: the pause reaches their namespace, never the other tenants on the node.
#[test]
fn one_namespaces_pods_stuck_on_a_reporting_node_do_not_pause_the_node() {
    let config = BreakerConfig::default();
    let stuck = |i: usize| {
        pod(&format!("app-{i}"))
            .ns("tenant")
            .on_node("node-7")
            .terminating_since("2026-11-20T11:00:00Z")
    };
    let pods: Vec<PodRecord> = (0..6).map(|i| record(stuck(i))).collect();
    let findings: Vec<Abnormal> = (0..6).map(|i| abnormal(stuck(i))).collect();
    let paused = trips(&findings, &census(&pods), &config, now());
    let (scope, _) = only(&paused, RuleKind::Terminating);
    assert_eq!(scope, PauseScope::Namespace("tenant".into()));
}

/// A node confirmed not reporting explains its pods' burst, and the pause says so in the
/// node's own words; it still pauses: a node that is only cut off still runs its pods.
#[test]
fn the_breaker_names_a_node_that_stopped_reporting_and_still_pauses() {
    let config = BreakerConfig::default();
    let silent = opc_core::node::NodeState {
        name: "node-7".into(),
        readiness: opc_core::node::Readiness::NotReporting,
        since: Some(now() - chrono::Duration::minutes(9)),
        heartbeat: Some(now() - chrono::Duration::minutes(10)),
        out_of_service: false,
    };
    let stuck = |i: usize| {
        let mut found = abnormal(
            pod(&format!("app-{i}"))
                .ns(&format!("team-{i}"))
                .on_node("node-7")
                .terminating_since("2026-11-20T11:00:00Z"),
        );
        found.node = Some(std::sync::Arc::new(silent.clone()));
        found
    };
    let findings: Vec<Abnormal> = (0..6).map(stuck).collect();
    let pods: Vec<PodRecord> = findings.iter().map(|f| (*f.pod).clone()).collect();
    let paused = trips(&findings, &census(&pods), &config, now());
    let (_, why) = only(&paused, RuleKind::Terminating);
    assert!(why.contains("6 of 6 pods on node node-7"), "{why}");
    assert!(why.contains("node-7 stopped reporting 10m"), "{why}");
    assert!(why.contains("out-of-service"), "{why}");
}

/// A dry run's would-action on each finding planned to run, as the worker records it.
fn rehearse(findings: &[Abnormal], rehearsed: &mut DryRunDone) {
    let mut guards = Guards::new(SafetyConfig::default());
    let pass = plan_at(findings, &mut guards, Instant::now());
    for planned in pass
        .planned
        .iter()
        .filter(|p| matches!(p.decision, Decision::Run(_)))
    {
        rehearsed.record(planned);
    }
}

fn names(findings: &[Abnormal]) -> Vec<&str> {
    findings.iter().map(|f| &*f.pod.name).collect()
}

#[test]
fn a_dry_run_plans_what_it_did_as_gone_until_the_pod_changes_state() {
    let mut rehearsed = DryRunDone::default();
    let failed = abnormal(pod("web-1").ns("shop").failed_with(1));
    let others = [failed.clone(), evicted("old-1", "shop")];
    rehearse(&others[..1], &mut rehearsed);
    assert_eq!(names(&rehearsed.outstanding(others.to_vec())), ["old-1"]);
    // The same pod (same uid) now stuck terminating: another state, another candidate.
    let stuck = abnormal(
        pod("web-1")
            .ns("shop")
            .failed_with(1)
            .terminating_since("2026-11-20T08:00:00Z"),
    );
    assert_ne!(stuck.finding.rule, failed.finding.rule);
    assert_eq!(
        names(&rehearsed.outstanding(vec![stuck.clone()])),
        ["web-1"]
    );
    // What it was judged in is gone: the memory lets go of it.
    rehearsed.forget_moved(&[stuck], |_| true);
    assert!(rehearsed.is_empty());
}

#[test]
fn a_dry_run_forgets_pods_that_leave_but_keeps_what_paused_rules_did() {
    let mut rehearsed = DryRunDone::default();
    let findings: Vec<Abnormal> = (0..3).map(|i| evicted(&format!("e{i}"), "shop")).collect();
    rehearse(&findings, &mut rehearsed);
    assert!(rehearsed.outstanding(findings.clone()).is_empty());
    // Auto off for the rule: its findings are not read, and nothing it did is forgotten.
    rehearsed.forget_moved(&[], |rule| rule != RuleKind::Evicted);
    assert_eq!(rehearsed.len(), 3);
    // Two pods left the cache: one entry is left, for the pod still there.
    rehearsed.forget_moved(&findings[2..], |_| true);
    assert_eq!(rehearsed.len(), 1);
    assert!(rehearsed.outstanding(findings[2..].to_vec()).is_empty());
}

#[test]
fn a_workload_a_dry_run_scaled_has_all_its_matching_pods_done() {
    let findings = [failing("web-7d9f8c6b5-a"), failing("web-7d9f8c6b5-b")];
    let mut rehearsed = DryRunDone::default();
    rehearse(&findings, &mut rehearsed);
    assert!(rehearsed.outstanding(findings.to_vec()).is_empty());
    // A pod of it found for another reason is a candidate of its own.
    let evicted = abnormal(
        pod("web-7d9f8c6b5-c")
            .ns("shop")
            .owned_by("apps/v1", "ReplicaSet", "web-7d9f8c6b5")
            .evicted(),
    );
    assert_eq!(
        names(&rehearsed.outstanding(vec![evicted])),
        ["web-7d9f8c6b5-c"]
    );
    rehearsed.forget_moved(&[], |_| true);
    assert!(rehearsed.is_empty(), "its pods recovered: forgotten");
}
