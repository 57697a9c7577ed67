//! A dry run on the simulated cluster, over many passes on paused time, against a live run of
//! the same cluster: it must reach the same pods as live mode, each recorded once, and count
//! in `/metrics` what live mode did. Live mode moves on because what it deleted leaves the
//! cache; a dry run changes nothing, so it must remember what it has already "done".

use crate::support;
use opc_core::cluster::ClusterName;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use kube_sim::{SimCluster, SimServer};
use opc_core::actions::{Audit, AuditLog, Executor};
use opc_core::config::Config;
use opc_core::policy::{Flags, Policy};
use opc_core::rules::RuleKind;
use opc_core::worker::{self, Counters, WorkerHandle, WorkerOptions};
use serde_json::Value;
use support::contexts::{Scratch, run, stderr};
use support::pods::pod;
use support::policy::{audit_config, quick_retry};
use support::sim::{Watched, typed, workload};

/// More candidates than the rate limit lets through in a minute, over a few namespaces.
const CANDIDATES: usize = 40;
const NAMESPACES: usize = 4;
/// Across the cluster per minute: the cap that makes it take several minutes.
const PER_MINUTE: u32 = 6;
const TICK: Duration = Duration::from_secs(10);
/// A pass every ten seconds: four minutes, part-way through the candidates.
const PART_WAY: u64 = 24;
/// Fifteen minutes: live mode has deleted them all and then found nothing to do for a while.
const LONG_AFTER: u64 = 90;

fn candidate(i: usize) -> String {
    format!("evicted-{i:02}")
}

/// What a run reached: the pods acted on (or that would have been), the records saying so,
/// and the count `/metrics` shows.
#[derive(Debug, PartialEq, Eq)]
struct Reached {
    pods: BTreeSet<String>,
    records: usize,
    counted: u64,
}

struct Run {
    watched: Watched,
    handle: WorkerHandle,
    counters: Arc<Counters>,
    audit: tempfile::TempDir,
    dry_run: bool,
}

impl Run {
    /// The evicted candidates, spread over the namespaces.
    fn candidates() -> SimCluster {
        let sim = SimCluster::new();
        for i in 0..CANDIDATES {
            let namespace = format!("team-{}", i % NAMESPACES);
            sim.create_pod(typed(pod(&candidate(i)).ns(&namespace).evicted().json()));
        }
        sim
    }

    /// A worker on `sim` with `rule` alone on auto, audited, dry or live.
    async fn start(sim: SimCluster, rule: RuleKind, dry_run: bool) -> Run {
        let watched = Watched::start(sim).await;
        let audit = tempfile::tempdir().unwrap();
        let log = AuditLog::open(&audit_config(&audit.path().join("audit.jsonl"))).unwrap();
        let flags = Flags {
            dry_run,
            ..Flags::default()
        };
        let policy = Policy::new(flags, &config(rule));
        let executor = Executor::new(
            watched.server.client(),
            watched.cache.clone(),
            &policy,
            ClusterName::new("sim"),
            Audit::Log(log),
        )
        .with_retry(quick_retry());
        let counters = Arc::new(Counters::default());
        let options = WorkerOptions {
            master_auto: true,
            tick: TICK,
            cluster: ClusterName::new("sim"),
            counters: counters.clone(),
            ..WorkerOptions::default()
        };
        watched.cache.set_chain(policy.chain().to_vec());
        let handle = worker::spawn(watched.cache.clone(), Arc::new(executor), &policy, options);
        Run {
            watched,
            handle,
            counters,
            audit,
            dry_run,
        }
    }

    async fn until_pass(&self, passes: u64) {
        let mut status = self.handle.status.clone();
        let waited = tokio::time::timeout(
            TICK * (passes as u32 + 5),
            status.wait_for(|s| s.passes >= passes),
        )
        .await;
        assert!(
            matches!(waited, Ok(Ok(_))),
            "pass {passes} never came: {:?}",
            self.handle.status.borrow()
        );
    }

    /// The outcome this mode records for what it changed (or would have).
    fn outcome(&self) -> &'static str {
        if self.dry_run { "dryRun" } else { "done" }
    }

    /// The audit's outcome records of what was changed (or would have been), oldest first.
    fn changes(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(self.audit.path().join("audit.jsonl")).unwrap();
        text.lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .filter(|r| r["outcome"] == self.outcome())
            .collect()
    }

    /// What `/metrics` counts for `rule` in this mode.
    fn counted(&self, rule: RuleKind) -> u64 {
        let actions = self.counters.actions();
        actions.get(&(rule, self.outcome())).copied().unwrap_or(0)
    }

    fn reached(&self) -> Reached {
        let records: Vec<String> = self
            .changes()
            .iter()
            .map(|r| r["name"].as_str().unwrap().to_string())
            .collect();
        // Live mode's changes are checked on the cluster: the pods it says it deleted are gone.
        let left: BTreeSet<String> = (self.watched.sim.pods().into_iter())
            .filter_map(|p| p.metadata.name)
            .collect();
        let pods = (records.iter())
            .filter(|name| self.dry_run || !left.contains(*name))
            .cloned()
            .collect();
        Reached {
            pods,
            records: records.len(),
            counted: self.counted(RuleKind::Evicted),
        }
    }
}

fn config(auto: RuleKind) -> Config {
    let mut config = Config::default();
    for rule in &mut config.rules {
        rule.auto = rule.kind == auto;
        rule.after = Duration::ZERO;
    }
    config.safety.max_actions_per_minute = PER_MINUTE;
    config
}

#[tokio::test(start_paused = true)]
async fn a_dry_run_moves_through_the_candidates_as_live_mode_does_recording_each_once() {
    let live = Run::start(Run::candidates(), RuleKind::Evicted, false).await;
    let dry = Run::start(Run::candidates(), RuleKind::Evicted, true).await;
    for passes in [PART_WAY, LONG_AFTER] {
        live.until_pass(passes).await;
        dry.until_pass(passes).await;
        let (live, dry) = (live.reached(), dry.reached());
        assert!(
            live.pods.len() > PER_MINUTE as usize && live.records == live.pods.len(),
            "after {passes} passes live mode deleted {live:?}"
        );
        // The same pods, each recorded once, and counted so in /metrics.
        assert_eq!(
            dry, live,
            "after {passes} passes the dry run (left) reached what live mode did (right)"
        );
    }
    assert_eq!(live.reached().pods.len(), CANDIDATES);
}

/// A Deployment whose image cannot be pulled: the imagePull rule scales it to zero.
fn failing_deployment() -> SimCluster {
    let sim = SimCluster::new();
    let mut web = workload("Deployment", "web", 3);
    web["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.invalid/web:1".into();
    sim.create_deployment(typed(web));
    sim
}

#[tokio::test(start_paused = true)]
async fn a_dry_run_scales_a_failing_workload_once_as_live_mode_does() {
    let live = Run::start(failing_deployment(), RuleKind::ImagePull, false).await;
    let dry = Run::start(failing_deployment(), RuleKind::ImagePull, true).await;
    // Past two cooldowns: live mode's pods are gone, the dry run's are all still there.
    live.until_pass(LONG_AFTER / 3).await;
    dry.until_pass(LONG_AFTER / 3).await;
    assert_eq!(dry.watched.sim.live_pods("web").len(), 3);
    for run in [&live, &dry] {
        let actions: Vec<String> = (run.changes().iter())
            .map(|r| r["action"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(actions, ["scaleToZero"], "dry run: {}", run.dry_run);
        assert_eq!(
            run.counted(RuleKind::ImagePull),
            1,
            "dry run: {}",
            run.dry_run
        );
    }
}

/// A namespace where pods get evicted one a minute beside two that run. Live mode deletes
/// each as it comes, so the share breaker never sees a burst; a dry run that counted what it
/// had already "deleted" would see five of seven pods evicted and pause the rule there.
#[tokio::test(start_paused = true)]
async fn the_breaker_counts_a_dry_run_s_pods_as_live_mode_leaves_them() {
    let steady = || {
        let sim = SimCluster::new();
        for name in ["web-a", "web-b"] {
            sim.create_pod(typed(pod(name).ns("batch").json()));
        }
        sim
    };
    let live = Run::start(steady(), RuleKind::Evicted, false).await;
    let dry = Run::start(steady(), RuleKind::Evicted, true).await;
    let arriving = [
        "evicted-00",
        "evicted-01",
        "evicted-02",
        "evicted-03",
        "evicted-04",
    ];
    for (minute, name) in (1..).zip(arriving) {
        // Evicted now, as the breaker's window counts it.
        let now = chrono::Utc::now().to_rfc3339();
        let evicted = pod(name).ns("batch").evicted().created_at(&now);
        for run in [&live, &dry] {
            run.watched.sim.create_pod(typed(evicted.clone().json()));
        }
        live.until_pass(minute * 6).await;
        dry.until_pass(minute * 6).await;
    }
    for run in [&live, &dry] {
        let status = run.handle.status.borrow().clone();
        let paused = &status.rules[&RuleKind::Evicted].paused;
        assert!(paused.is_empty(), "dry run {}: {paused:?}", run.dry_run);
    }
    let (live, dry) = (live.reached(), dry.reached());
    assert_eq!(live.pods.len(), arriving.len(), "{live:?}");
    assert_eq!(
        dry, live,
        "the dry run (left) did what live mode did (right)"
    );
}

/// `headless --once` on more candidates than a pass's limit lets through, live or dry: what
/// the pass did (or would have), and the summary line.
async fn one_pass(dry_run: bool) -> (Vec<String>, String) {
    let sim = Run::candidates();
    let server = SimServer::start(sim).await.unwrap();
    let yaml = format!(
        "rules:\n  - {{rule: evicted, auto: true, after: 0}}\n\
         safety:\n  maxActionsPerMinute: {PER_MINUTE}\n"
    );
    let scratch = Scratch::new(&[("sim", &server)], &yaml);
    let mut args = vec!["headless", "--once"];
    if dry_run {
        args.push("--dry-run");
    }
    let out = run(scratch.args(&args)).await;
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let acted = text
        .lines()
        .filter(|l| l.contains("sim: auto evicted:"))
        .filter_map(|l| l.rsplit_once('/').map(|(_, name)| name.trim().to_string()))
        .collect();
    let summary = text
        .lines()
        .find(|l| l.contains("one pass:"))
        .unwrap_or_default();
    (acted, summary.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_with_dry_run_reports_what_one_live_pass_does() {
    let (live, live_summary) = one_pass(false).await;
    let (dry, dry_summary) = one_pass(true).await;
    assert_eq!(live.len(), PER_MINUTE as usize, "{live:?}");
    assert_eq!(dry, live);
    let taken = format!("one pass: {PER_MINUTE} actions taken, 0 failed");
    assert!(live_summary.contains(&taken), "{live_summary}");
    assert!(
        dry_summary.contains(&format!("{taken} (dry run: nothing was changed)")),
        "{dry_summary}"
    );
}
