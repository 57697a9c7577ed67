//! The cache classifies each pod once per event and re-classifies it when one of its rules
//! matures; these tests hold that index equal to classifying every pod afresh, after any
//! sequence of adds, changes, deletions, relists and clock steps.

use crate::support;
use opc_core::cluster::ClusterName;

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use opc_core::clock::Clock;
use opc_core::cluster::{Abnormal, Cache, Scope};
use opc_core::pod::{Interner, PodRecord};
use opc_core::rules::{RuleKind, RuleSpec, cause, classify, default_chain};
use support::pods::{PodBuilder, pod};

fn t(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

/// Short `after`s so that clock steps of seconds mature rules.
fn chain() -> Vec<RuleSpec> {
    let mut chain = default_chain();
    for rule in &mut chain {
        rule.after = match rule.kind {
            RuleKind::Terminating => Duration::from_secs(20),
            RuleKind::ImagePull => Duration::from_secs(45),
            RuleKind::Pending => Duration::from_secs(30),
            RuleKind::CrashLoop => Duration::from_secs(10),
            _ => Duration::ZERO,
        };
    }
    chain
}

/// A seeded xorshift: the same sequence on every run, many sequences over the seeds.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// One of the states a pod can be in, created near `now` so that rules mature during a run.
fn state(rng: &mut Rng, name: &str, now: DateTime<Utc>) -> PodBuilder {
    let stamp = |offset: i64| (now - chrono::Duration::seconds(offset)).to_rfc3339();
    let p = pod(name)
        .ns(["shop", "pay", "kube-system"][rng.below(3) as usize])
        .created_at(&stamp(rng.below(60) as i64));
    match rng.below(8) {
        0 => p,
        1 => p.evicted(),
        2 => p.waiting("ImagePullBackOff"),
        3 => p.waiting("CrashLoopBackOff").restarts(6, "Error"),
        4 => p.terminating_since(&stamp(rng.below(40) as i64 - 20)),
        5 => p.unscheduled_since(&stamp(rng.below(50) as i64)),
        6 => p.succeeded(),
        _ => p.waiting("CreateContainerConfigError"),
    }
}

/// Every pod classified afresh: what the index must equal.
fn afresh(cache: &Cache, chain: &[RuleSpec], now: DateTime<Utc>) -> BTreeMap<String, RuleKind> {
    cache.fold(BTreeMap::new(), |mut found, p| {
        if let Some(f) = classify(p, chain, now) {
            found.insert(p.uid.to_string(), f.rule);
        }
        found
    })
}

fn indexed(cache: &Cache) -> BTreeMap<String, RuleKind> {
    cache
        .findings()
        .into_iter()
        .map(|a| (a.pod.uid.to_string(), a.finding.rule))
        .collect()
}

/// Chain position, time in state, namespace, name: the screen's default order.
/// How many pods each rule claims as of the last promotion.
fn counts(cache: &Cache) -> BTreeMap<RuleKind, usize> {
    let mut counts = BTreeMap::new();
    for found in cache.findings() {
        *counts.entry(found.finding.rule).or_default() += 1;
    }
    counts
}

fn in_default_order(found: &[Abnormal], chain: &[RuleSpec]) -> bool {
    let position = |a: &Abnormal| chain.iter().position(|r| r.kind == a.finding.rule);
    found.is_sorted_by_key(|a| {
        (
            position(a),
            a.finding.since,
            a.pod.namespace.clone(),
            a.pod.name.clone(),
        )
    })
}

fn record(builder: PodBuilder, interner: &mut Interner) -> PodRecord {
    builder.wire().into_record(interner)
}

/// A cache on a clock that reads `start` now and moves with paused time.
fn cache_at(start: DateTime<Utc>, chain: &[RuleSpec]) -> Cache {
    Cache::for_cluster(
        ClusterName::new(""),
        chain.to_vec(),
        Clock::starting_at(start),
    )
}

#[tokio::test(start_paused = true)]
async fn the_index_agrees_with_a_full_reclassification_after_any_sequence() {
    let chain = chain();
    for seed in 1..=60u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut now = t("2026-11-20T08:00:00Z");
        let cache = cache_at(now, &chain);
        let mut interner = Interner::default();
        for step in 0..120 {
            let name = format!("p{}", rng.below(12));
            match rng.below(10) {
                0..=4 => cache.upsert(state(&mut rng, &name, now).wire(), now),
                5 => cache.remove(&format!("uid-{name}")),
                6 => {
                    // A relist: a fresh, smaller set of pods replaces the scope.
                    let pods = (0..rng.below(6))
                        .map(|i| record(state(&mut rng, &format!("p{i}"), now), &mut interner))
                        .collect();
                    cache.replace_scope(&Scope::All, pods, now);
                }
                _ => {
                    let step = Duration::from_secs(rng.below(30));
                    tokio::time::advance(step).await;
                    now += step;
                }
            }
            assert_eq!(cache.clock().now(), now, "the cache reads paused time");
            // Read before anything promotes: what matured since is counted without a write.
            let read_only = cache.reader().cause_counts();
            // What the promotion task does when a rule matures; reads never promote.
            cache.promote();
            assert_eq!(
                indexed(&cache),
                afresh(&cache, &chain, now),
                "seed {seed}, step {step}, at {now}"
            );
            assert!(
                in_default_order(&cache.findings(), &chain),
                "seed {seed}, step {step}: the index hands findings over in the screen's order"
            );
            let counts = counts(&cache);
            let mut expected: BTreeMap<RuleKind, usize> = BTreeMap::new();
            for rule in afresh(&cache, &chain, now).into_values() {
                *expected.entry(rule).or_default() += 1;
            }
            counts
                .iter()
                .filter(|(_, n)| **n > 0)
                .for_each(|(rule, n)| assert_eq!(expected.get(rule), Some(n), "seed {seed}"));
            assert_eq!(
                counts.values().sum::<usize>(),
                expected.values().sum::<usize>()
            );
            // The causes kept as pods change are the causes found afresh.
            let fresh = cache.fold(BTreeMap::new(), |mut found, pod| {
                if let Some(f) = classify(pod, &chain, now) {
                    *found
                        .entry((f.rule, cause(pod, &f, &[], None, now).class))
                        .or_default() += 1;
                }
                found
            });
            assert_eq!(cache.cause_counts(), fresh, "seed {seed}, step {step}");
            assert_eq!(read_only, fresh, "seed {seed}, step {step}, read only");
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_rule_that_matures_appears_at_its_due_time_without_any_event_or_reader() {
    let start = t("2026-11-20T08:00:00Z");
    let cache = cache_at(start, &chain());
    cache.upsert(
        pod("web-1")
            .created_at("2026-11-20T08:00:00Z")
            .waiting("ImagePullBackOff")
            .wire(),
        start,
    );
    let promotion = cache.spawn_promotion();
    let mut changes = cache.subscribe();
    changes.mark_unchanged();

    tokio::time::advance(Duration::from_secs(44)).await;
    tokio::task::yield_now().await;
    assert!(!changes.has_changed().unwrap(), "not yet 45 s");
    assert!(counts(&cache).is_empty(), "not yet 45 s");

    // Nobody reads or ticks: the cache promotes on its own at the due time.
    tokio::time::timeout(Duration::from_secs(2), changes.changed())
        .await
        .expect("readers are woken when the rule matures")
        .unwrap();
    assert_eq!(cache.clock().now(), start + chrono::Duration::seconds(45));
    let found = cache.findings();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].finding.rule, RuleKind::ImagePull);
    promotion.abort();
}

#[tokio::test(start_paused = true)]
async fn a_pod_that_comes_later_is_promoted_on_time_and_promotion_ends_with_the_cache() {
    let start = t("2026-11-20T08:00:00Z");
    let cache = cache_at(start, &chain());
    let promotion = cache.spawn_promotion();
    // Nothing is due: the task sleeps its longest.
    tokio::time::advance(Duration::from_secs(5)).await;
    cache.upsert(
        pod("web-1")
            .created_at("2026-11-20T08:00:05Z")
            .waiting("ImagePullBackOff")
            .wire(),
        cache.clock().now(),
    );
    let mut changes = cache.subscribe();
    changes.mark_unchanged();
    tokio::time::timeout(Duration::from_secs(46), changes.changed())
        .await
        .expect("woken when the later pod's rule matures")
        .unwrap();
    assert_eq!(cache.clock().now(), start + chrono::Duration::seconds(50));
    assert_eq!(counts(&cache).get(&RuleKind::ImagePull), Some(&1));

    drop((cache, changes));
    tokio::time::timeout(Duration::from_secs(1), promotion)
        .await
        .expect("the task ends with the cache")
        .unwrap();
}

#[test]
fn a_new_chain_replaces_the_old_and_reclassifies_every_pod() {
    let now = t("2026-11-20T08:10:00Z");
    let cache = Cache::for_cluster(ClusterName::new(""), chain(), Clock::starting_at(now));
    cache.upsert(pod("web-1").waiting("ImagePullBackOff").wire(), now);
    assert_eq!(cache.findings().len(), 1);
    let mut changes = cache.subscribe();
    changes.mark_unchanged();

    let mut strict = chain();
    for rule in &mut strict {
        rule.enabled = rule.kind != RuleKind::ImagePull;
    }
    cache.set_chain(strict.clone());
    assert!(changes.has_changed().unwrap(), "readers redraw");
    assert_eq!(cache.chain(), strict);
    assert!(cache.findings().is_empty());
    cache.set_chain(chain());
    assert_eq!(cache.findings().len(), 1);
}

#[test]
fn a_change_the_record_leaves_out_wakes_no_reader() {
    let chain = chain();
    let cache = Cache::for_cluster(ClusterName::default(), chain.clone(), Clock::real());
    let now = t("2026-11-20T08:00:00Z");
    let crashing = || pod("web-1").crash_looping(7, "Error");
    cache.upsert(crashing().wire(), now);
    let mut changes = cache.subscribe();
    changes.mark_unchanged();

    // A patcher's annotation: nothing the cache keeps is different.
    cache.upsert(crashing().annotate("team", "shop").wire(), now);
    assert!(
        !changes.has_changed().unwrap(),
        "an unseen change woke readers"
    );

    cache.upsert(pod("web-1").crash_looping(8, "Error").wire(), now);
    assert!(
        changes.has_changed().unwrap(),
        "a new restart count must wake readers"
    );
    assert_eq!(cache.get("uid-web-1").unwrap().total_restarts(), 8);
}
