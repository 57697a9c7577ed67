//! The worker on the simulated cluster: real watch cache, real executor, real API calls.

use crate::support;
use opc_core::cluster::ClusterName;

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ContainerState, ContainerStateRunning, Pod};
use kube_sim::{SimCluster, SimServer};
use opc_core::actions::{Audit, AuditLog, Executor, Target};
use opc_core::cluster::{Cache, Scope, WatchSettings, spawn_watches};
use opc_core::config::Config;
use opc_core::policy::{Flags, Policy};
use opc_core::rules::RuleKind;
use opc_core::worker::{
    self, Blocked, Standby, WorkerCommand, WorkerHandle, WorkerOptions, WorkerStatus,
};
use serde_json::json;
use support::log::Captured;
use support::pods::pod;
use support::policy::{audit_config, quick_retry};
use support::sim::{Watched, eventually};

struct Harness(Watched);

impl std::ops::Deref for Harness {
    type Target = Watched;
    fn deref(&self) -> &Watched {
        &self.0
    }
}

impl Harness {
    async fn start(sim: SimCluster) -> Harness {
        Harness(Watched::start(sim).await)
    }

    /// On paused time: see [`Watched::in_process`].
    async fn in_process(sim: SimCluster) -> Harness {
        Harness(Watched::in_process(sim).await)
    }

    /// A worker under `policy`, unaudited, with `options` as a mode would set them.
    fn spawn(&self, policy: &Policy, options: WorkerOptions) -> WorkerHandle {
        let executor = Executor::new(
            self.client.clone(),
            self.cache.clone(),
            policy,
            ClusterName::new("sim"),
            Audit::Off,
        );
        // As a session does: the cache classifies under the worker's policy.
        self.cache.set_chain(policy.chain().to_vec());
        worker::spawn(self.cache.clone(), Arc::new(executor), policy, options)
    }

    /// The terminating rule's automatic force delete of `default/name`, as the worker runs it.
    async fn auto_force_delete(&self, name: &str, uid: &str) -> opc_core::actions::Outcome {
        use opc_core::actions::{Action, Origin, PodRef};
        let policy = Policy::new(
            Flags::default(),
            &config_with_auto(&[RuleKind::Terminating]),
        );
        let executor = Executor::new(
            self.client.clone(),
            self.cache.clone(),
            &policy,
            ClusterName::new("sim"),
            Audit::Off,
        );
        let target = PodRef {
            namespace: "default".into(),
            name: name.into(),
            uid: uid.into(),
        };
        executor
            .run(
                &Action::ForceDelete(target),
                Origin::Auto(RuleKind::Terminating),
            )
            .await
    }

    fn worker(&self, config: &Config, dry_run: bool, audit: Option<AuditLog>) -> WorkerHandle {
        let flags = Flags {
            dry_run,
            ..Flags::default()
        };
        let policy = Policy::new(flags, config);
        let executor = Executor::new(
            self.client.clone(),
            self.cache.clone(),
            &policy,
            ClusterName::new("sim"),
            audit.map_or(Audit::Off, Audit::Log),
        )
        .with_retry(quick_retry());
        let options = WorkerOptions {
            master_auto: true,
            tick: Duration::from_millis(50),
            cluster: ClusterName::new("sim"),
            ..WorkerOptions::default()
        };
        // As a session does: the cache classifies under the worker's policy.
        self.cache.set_chain(policy.chain().to_vec());
        worker::spawn(self.cache.clone(), Arc::new(executor), &policy, options)
    }
}

async fn status_where(
    handle: &WorkerHandle,
    what: &str,
    check: impl Fn(&WorkerStatus) -> bool,
) -> WorkerStatus {
    let mut rx = handle.status.clone();
    let waited = tokio::time::timeout(Duration::from_secs(10), rx.wait_for(|s| check(s))).await;
    match waited {
        Ok(Ok(status)) => status.clone(),
        _ => panic!(
            "timed out waiting for status: {what}; last: {:?}",
            handle.status.borrow()
        ),
    }
}

/// Wait for two more whole passes: one may have begun before what the test just did, the
/// second saw it. What a negative assertion then finds is what the worker decided, not what
/// it had no time to do.
async fn two_more_passes(handle: &WorkerHandle) {
    let from = handle.status.borrow().passes;
    status_where(handle, "two more passes", |s| s.passes >= from + 2).await;
}

fn config_with_auto(rules: &[RuleKind]) -> Config {
    let mut config = Config::default();
    for rule in &mut config.rules {
        rule.auto = rules.contains(&rule.kind);
        rule.after = Duration::ZERO;
    }
    config
}

fn typed(builder: support::pods::PodBuilder) -> Pod {
    serde_json::from_value(builder.json()).unwrap()
}

#[tokio::test]
async fn toggles_sent_through_the_channel_start_and_stop_auto_clean() {
    let sim = SimCluster::new();
    sim.create_pod(typed(pod("old-1").ns("shop").evicted()));
    let h = Harness::start(sim.clone()).await;
    let config = config_with_auto(&[]);
    let handle = h.worker(&config, false, None);

    let status = status_where(&handle, "a pass", |s| s.last_pass.is_some()).await;
    assert!(!status.rules[&RuleKind::Evicted].auto);
    two_more_passes(&handle).await;
    assert!(
        sim.pod("shop", "old-1").is_some(),
        "nothing acts while the rule's auto is off"
    );

    handle
        .commands
        .send(WorkerCommand::SetAuto {
            rule: RuleKind::Evicted,
            on: true,
        })
        .await
        .unwrap();
    let status = status_where(&handle, "one action", |s| {
        s.rules[&RuleKind::Evicted].actions_taken == 1
    })
    .await;
    assert!(status.rules[&RuleKind::Evicted].auto);
    eventually("the evicted pod deleted", || {
        sim.pod("shop", "old-1").is_none()
    })
    .await;

    handle
        .commands
        .send(WorkerCommand::SetMasterAuto(false))
        .await
        .unwrap();
    status_where(&handle, "master off", |s| !s.master_auto).await;
    sim.create_pod(typed(pod("old-2").ns("shop").evicted()));
    eventually("the new pod cached", || h.cache.len() == 1).await;
    handle.commands.send(WorkerCommand::RunNow).await.unwrap();
    two_more_passes(&handle).await;
    assert!(
        sim.pod("shop", "old-2").is_some(),
        "the master switch holds everything"
    );
}

/// A switch turned while a pass acts holds the pass's next action, and is logged as one
/// turned between passes is: the log is where the on-call reads when auto-clean went off.
#[tokio::test]
async fn the_master_switch_turned_mid_pass_stops_the_next_action_and_is_logged() {
    let (log, _guard) = Captured::this_thread();
    let sim = SimCluster::new();
    sim.create_pod(typed(pod("old-1").ns("shop").evicted()));
    sim.create_pod(typed(pod("old-2").ns("blog").evicted()));
    let h = Harness::start(sim.clone()).await;
    sim.faults().hang(Some("delete"), "/api/v1/namespaces/");
    let handle = h.worker(&config_with_auto(&[RuleKind::Evicted]), false, None);
    eventually("the pass's first delete sent", || {
        sim.faults().hung_requests() == 1
    })
    .await;
    handle
        .commands
        .send(WorkerCommand::SetMasterAuto(false))
        .await
        .unwrap();
    sim.faults().unhang(Some("delete"), "/api/v1/namespaces/");
    status_where(&handle, "master off", |s| !s.master_auto).await;
    two_more_passes(&handle).await;
    let left = ["shop/old-1", "blog/old-2"]
        .into_iter()
        .filter(|p| {
            let (ns, name) = p.split_once('/').unwrap();
            sim.pod(ns, name).is_some()
        })
        .count();
    assert_eq!(
        left, 1,
        "the first delete went through, the second was held"
    );
    assert_eq!(
        handle.status.borrow().rules[&RuleKind::Evicted].actions_taken,
        1
    );
    let text = log.text();
    assert!(text.contains("auto-clean (master): off"), "{text}");
}

#[tokio::test]
async fn dry_run_records_but_changes_nothing() {
    let sim = SimCluster::new();
    sim.create_pod(typed(pod("old-1").ns("shop").evicted()));
    let h = Harness::start(sim.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let audit = AuditLog::open(&audit_config(&dir.path().join("audit.jsonl"))).unwrap();
    let handle = h.worker(&config_with_auto(&[RuleKind::Evicted]), true, Some(audit));

    let status = status_where(&handle, "a dry-run action", |s| {
        s.rules[&RuleKind::Evicted].actions_taken >= 1
    })
    .await;
    assert!(status.dry_run);
    let log = std::fs::read_to_string(dir.path().join("audit.jsonl")).unwrap();
    assert!(log.contains(r#""outcome":"dryRun""#), "{log}");
    assert!(log.contains(r#""by":"auto","rule":"evicted""#), "{log}");
    assert!(sim.pod("shop", "old-1").is_some());
}

#[tokio::test]
async fn standby_holds_actions_until_released() {
    let sim = SimCluster::new();
    sim.create_pod(typed(pod("old-1").ns("shop").evicted()));
    let h = Harness::start(sim.clone()).await;
    let handle = h.worker(&config_with_auto(&[RuleKind::Evicted]), false, None);
    handle
        .commands
        .send(WorkerCommand::SetStandby(Some(run_by_b())))
        .await
        .unwrap();
    // The first tick may already have acted; make a fresh target after standby is in force.
    status_where(&handle, "standby", |s| {
        s.blocked == Some(Blocked::Standby(run_by_b()))
    })
    .await;
    sim.create_pod(typed(pod("old-2").ns("shop").evicted()));
    eventually("cached", || {
        h.cache.findings().iter().any(|a| &*a.pod.name == "old-2")
    })
    .await;
    two_more_passes(&handle).await;
    assert!(
        sim.pod("shop", "old-2").is_some(),
        "a standby replica never acts"
    );
    handle
        .commands
        .send(WorkerCommand::SetStandby(None))
        .await
        .unwrap();
    eventually("deleted after release", || {
        sim.pod("shop", "old-2").is_none()
    })
    .await;
}

fn deployment(name: &str, replicas: i32, image: &str) -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "app", "image": image}]}}}
    }))
    .unwrap()
}

fn replicas(sim: &SimCluster, name: &str) -> i32 {
    sim.deployment("shop", name)
        .and_then(|d| d.spec)
        .and_then(|s| s.replicas)
        .unwrap_or(-1)
}

#[tokio::test]
async fn the_breaker_holds_during_a_registry_outage_and_resumes_when_it_ends() {
    let sim = SimCluster::new();
    // The registry is down: every pod of this image fails to pull (and is not Ready).
    sim.create_deployment(deployment("web", 40, "registry.invalid/shop/web:1"));
    let h = Harness::start(sim.clone()).await;
    let config = config_with_auto(&[RuleKind::ImagePull]);
    h.cache.set_chain(config.rules.clone());
    eventually("40 failing pods cached", || h.cache.findings().len() == 40).await;
    let handle = h.worker(&config, false, None);

    let status = status_where(&handle, "paused", |s| {
        !s.rules[&RuleKind::ImagePull].paused.is_empty()
    })
    .await;
    let paused: Vec<String> = status.rules[&RuleKind::ImagePull]
        .paused
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        paused,
        [
            "paused in shop: imagePull matches 40 of 40 pods in shop: one namespace only (its own cause, or a tenant's doing), other namespaces still act; resumes by itself once fewer match (safety.breaker.share)"
        ]
    );
    two_more_passes(&handle).await;
    assert_eq!(
        replicas(&sim, "web"),
        40,
        "the breaker kept the Deployment at 40"
    );

    // The registry recovers for most pods: the share drops and the rule resumes by itself. The
    // Deployment now serves 36 replicas: scaling it to 0 would cause an outage, so it is held.
    let names: Vec<String> = sim
        .pods()
        .iter()
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    for name in names.iter().skip(4) {
        sim.update_pod_status("shop", name, |s| {
            s.phase = Some("Running".into());
            if let Some(c) = s.container_statuses.as_mut().and_then(|c| c.first_mut()) {
                c.ready = true;
                c.state = Some(ContainerState {
                    running: Some(ContainerStateRunning::default()),
                    ..Default::default()
                });
            }
            for c in s.conditions.iter_mut().flatten() {
                if c.type_ == "Ready" || c.type_ == "ContainersReady" {
                    c.status = "True".into();
                }
            }
        });
    }
    let status = status_where(&handle, "resumed, and the workload held", |s| {
        let rule = &s.rules[&RuleKind::ImagePull];
        rule.paused.is_empty() && rule.held > 0
    })
    .await;
    let why = status.rules[&RuleKind::ImagePull]
        .held_reason
        .as_ref()
        .unwrap()
        .to_string();
    assert!(
        why.starts_with("bad rollout: 36 replicas still available in Deployment shop/web"),
        "{why}"
    );
    two_more_passes(&handle).await;
    assert_eq!(replicas(&sim, "web"), 40, "still serving");
}

#[tokio::test]
async fn blocked_follows_the_watch_between_passes() {
    let sim = SimCluster::new();
    sim.create_pod(serde_json::from_value(pod("web-1").evicted().json()).unwrap());
    let server = SimServer::start(sim).await.unwrap();
    let cache = Cache::new();
    let config = Config::builtin();
    let policy = Policy::new(Flags::default(), &config);
    let executor = Executor::new(
        server.client(),
        cache.clone(),
        &policy,
        ClusterName::new("sim"),
        Audit::Off,
    );
    // A tick far away: only the cache's own changes can clear "blocked".
    let options = WorkerOptions {
        tick: Duration::from_secs(3600),
        ..WorkerOptions::default()
    };
    // As a session does: the cache classifies under the worker's policy.
    cache.set_chain(policy.chain().to_vec());
    let handle = worker::spawn(cache.clone(), Arc::new(executor), &policy, options);
    let blocked = |h: &WorkerHandle| h.status.borrow().blocked.clone();
    eventually("the first pass to report waiting for sync", || {
        blocked(&handle).is_some()
    })
    .await;
    let _watches = spawn_watches(
        &server.client(),
        &[Scope::All],
        &cache,
        &WatchSettings::default(),
    );
    eventually("blocked to clear once the cache syncs", || {
        blocked(&handle).is_none()
    })
    .await;
}

/// A leader may act only until its renew deadline: a request that hangs past it is cut off
/// and recorded as failed then, not at the client's 30 s deadline, so it cannot land after
/// another replica has taken the lease.
#[tokio::test]
async fn an_action_is_cut_off_where_the_lease_ends() {
    let sim = SimCluster::new();
    sim.create_pod(typed(pod("old-1").ns("shop").evicted()));
    let h = Harness::start(sim.clone()).await;
    sim.faults()
        .hang(Some("delete"), "/api/v1/namespaces/shop/pods");
    let config = config_with_auto(&[RuleKind::Evicted]);
    let policy = Policy::new(Flags::default(), &config);
    let lease_ends = std::time::Instant::now() + Duration::from_millis(800);
    let (_lease, acting_until) = tokio::sync::watch::channel(Some(lease_ends));
    let options = WorkerOptions {
        master_auto: true,
        tick: Duration::from_millis(50),
        acting_until: Some(acting_until),
        ..WorkerOptions::default()
    };
    let handle = h.spawn(&policy, options);
    let status = status_where(&handle, "the hung delete to fail", |s| {
        s.rules[&RuleKind::Evicted].failures == 1
    })
    .await;
    let cut_at = std::time::Instant::now();
    assert!(
        cut_at < lease_ends + Duration::from_millis(300),
        "cut {:?} after the lease's end",
        cut_at.saturating_duration_since(lease_ends)
    );
    assert_eq!(status.rules[&RuleKind::Evicted].actions_taken, 0);
    // Past the lease nothing new starts, even with the hang lifted.
    sim.faults()
        .unhang(Some("delete"), "/api/v1/namespaces/shop/pods");
    two_more_passes(&handle).await;
    assert!(sim.pod("shop", "old-1").is_some());
}

/// What the previous leader sent (inherited through the Lease) still holds its slot: with one
/// action a minute allowed and one sent a moment ago elsewhere, the new leader waits.
#[tokio::test]
async fn a_new_leader_keeps_the_rate_limit_its_predecessor_spent() {
    let sim = SimCluster::new();
    sim.create_pod(typed(pod("old-1").ns("shop").evicted()));
    let h = Harness::start(sim.clone()).await;
    let mut config = config_with_auto(&[RuleKind::Evicted]);
    config.safety.max_actions_per_minute = 1;
    let policy = Policy::new(Flags::default(), &config);
    let inherited = vec![opc_core::actions::PastAction {
        at: chrono::Utc::now() - chrono::Duration::seconds(5),
        rule: RuleKind::Evicted,
        namespace: "shop".into(),
        target: Target::Pod("uid-of-another-pod".into()),
        workload: None,
        shared: None,
    }];
    let options = WorkerOptions {
        master_auto: true,
        tick: Duration::from_millis(50),
        inherited,
        ..WorkerOptions::default()
    };
    let handle = h.spawn(&policy, options);
    status_where(&handle, "a few passes", |s| s.passes >= 3).await;
    assert!(
        sim.pod("shop", "old-1").is_some(),
        "the predecessor's action still holds the only slot this minute"
    );
    assert_eq!(handle.recent.borrow().len(), 1, "and it is passed on again");
}

/// Two replicas, one report: a worker standing by (another replica leads) skips the schedule.
#[tokio::test]
async fn only_the_leader_sends_scheduled_reports() {
    use opc_core::config::{CronSchedule, FileFormat, ReportConfig, Sink};
    use opc_core::report::{DeliveryPolicy, Reporter};
    let sim = SimCluster::new();
    sim.create_pod(typed(pod("crashy").ns("shop").restarts(9, "Error")));
    let h = Harness::start(sim).await;
    let dir = tempfile::tempdir().unwrap();
    let reporter = |name: &str| {
        let config = ReportConfig {
            sinks: vec![Sink::File {
                path: dir.path().join(format!("{name}-%H%M%S.md")),
                format: FileFormat::Markdown,
            }],
            spool_dir: dir.path().join(format!("{name}-spool")),
            state_file: dir.path().join(format!("{name}-state.json")),
            ..ReportConfig::default()
        };
        Some(Arc::new(
            Reporter::new(&config, DeliveryPolicy::default()).unwrap(),
        ))
    };
    let config = config_with_auto(&[]);
    let policy = Policy::new(Flags::default(), &config);
    let every_second = CronSchedule::parse("* * * * * *").unwrap();
    let replica = |name: &str, standby: Option<Standby>| {
        let options = WorkerOptions {
            tick: Duration::from_millis(50),
            standby,
            reporter: reporter(name),
            report_schedule: Some(every_second.clone()),
            ..WorkerOptions::default()
        };
        h.spawn(&policy, options)
    };
    let _leader = replica("leader", None);
    let run_by_leader = Standby::RunBy {
        holder: "leader".into(),
        lease: "ops/ops-pod-cleaner".into(),
    };
    let _follower = replica("follower", Some(run_by_leader));
    let sent = |name: &str| {
        let files = std::fs::read_dir(dir.path()).unwrap().flatten();
        files
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&format!("{name}-")) && n.ends_with(".md"))
            .count()
    };
    // Two schedules fired for the leader: the follower had both chances too.
    support::sim::eventually("the leader sending on schedule, twice", || {
        sent("leader") >= 2
    })
    .await;
    assert_eq!(sent("follower"), 0, "a standby replica never does");
}

/// A worker whose first pass found the cache not yet synced acts as soon as it syncs, not a
/// whole tick later.
#[tokio::test]
async fn the_worker_acts_as_soon_as_the_cache_syncs() {
    let sim = SimCluster::new();
    sim.create_pod(typed(pod("old-1").ns("shop").evicted()));
    let server = SimServer::start(sim.clone()).await.unwrap();
    let cache = Cache::new();
    let config = config_with_auto(&[RuleKind::Evicted]);
    let policy = Policy::new(Flags::default(), &config);
    let executor = Executor::new(
        server.client(),
        cache.clone(),
        &policy,
        ClusterName::new("sim"),
        Audit::Off,
    );
    let options = WorkerOptions {
        master_auto: true,
        tick: Duration::from_secs(3600),
        ..WorkerOptions::default()
    };
    // As a session does: the cache classifies under the worker's policy.
    cache.set_chain(policy.chain().to_vec());
    let handle = worker::spawn(cache.clone(), Arc::new(executor), &policy, options);
    status_where(&handle, "the first pass, blocked", |s| {
        s.passes >= 1 && s.blocked.is_some()
    })
    .await;
    let _watches = spawn_watches(
        &server.client(),
        &[Scope::All],
        &cache,
        &WatchSettings::default(),
    );
    eventually("the pod deleted right after the sync", || {
        sim.pod("shop", "old-1").is_none()
    })
    .await;
}

fn statefulset(name: &str, replicas: i32) -> k8s_openapi::api::apps::v1::StatefulSet {
    serde_json::from_value(json!({
        "metadata": { "name": name, "namespace": "default" },
        "spec": { "replicas": replicas, "serviceName": name,
                  "selector": { "matchLabels": { "app": name } },
                  "template": { "metadata": { "labels": { "app": name } },
                                "spec": { "containers": [{ "name": name, "image": "postgres:16" }] } } },
    }))
    .unwrap()
}

/// A StatefulSet's pod stuck Terminating on a node that stopped reporting may
/// still run there; force-deleting it starts a second `db-0` at once. The worker holds it,
/// saying how to confirm the node is gone; once it is (tainted out-of-service), the same
/// automatic force delete goes through.
#[tokio::test]
async fn a_statefulset_pod_on_a_node_that_stopped_reporting_is_not_force_deleted() {
    use k8s_openapi::api::core::v1::Node;
    use kube::api::{Api, DeleteParams, Patch, PatchParams};
    use opc_core::actions::Outcome;

    let sim = SimCluster::new();
    sim.create_statefulset(statefulset("db", 1));
    let first = sim.pod("default", "db-0").expect("db-0");
    let node = first
        .spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .expect("a node");
    let uid = first.metadata.uid.clone().expect("a uid");
    let h = Harness::start(sim.clone()).await;
    sim.set_node_alive(&node, false);
    let pods: Api<Pod> = Api::default_namespaced(h.server.client());
    pods.delete("db-0", &DeleteParams::default().grace_period(1))
        .await
        .unwrap();
    eventually("db-0 terminating in the cache", || {
        h.cache.get(&uid).is_some_and(|p| p.deletion.is_some())
    })
    .await;

    let handle = h.worker(&config_with_auto(&[RuleKind::Terminating]), false, None);
    let status = status_where(&handle, "the force delete held", |s| {
        s.rules[&RuleKind::Terminating]
            .held_reason
            .as_ref()
            .is_some_and(|why| why.to_string().contains("not confirmed gone"))
    })
    .await;
    let why = status.rules[&RuleKind::Terminating]
        .held_reason
        .as_ref()
        .unwrap()
        .to_string();
    assert!(why.contains("is a StatefulSet's"), "{why}");
    assert!(why.contains("Ready Unknown"), "{why}");
    assert!(
        why.contains(&format!(
            "kubectl taint nodes {node} node.kubernetes.io/out-of-service"
        )),
        "{why}"
    );
    assert_eq!(
        sim.pod("default", "db-0").and_then(|p| p.metadata.uid),
        Some(uid.clone()),
        "the first copy is still the only one"
    );
    drop(handle);

    // The node confirmed gone: the same automatic force delete goes through.
    let nodes: Api<Node> = Api::all(h.server.client());
    let taint = json!({ "spec": { "taints": [{ "key": "node.kubernetes.io/out-of-service",
        "value": "nodeshutdown", "effect": "NoExecute" }] } });
    nodes
        .patch(&node, &PatchParams::default(), &Patch::Merge(taint))
        .await
        .unwrap();
    let outcome = h.auto_force_delete("db-0", &uid).await;
    assert!(matches!(outcome, Outcome::Done(_)), "{outcome:?}");
    eventually("a new db-0 in place of the old", || {
        sim.pod("default", "db-0")
            .and_then(|p| p.metadata.uid)
            .is_some_and(|new| new != uid)
    })
    .await;
}

/// The same for a pod that is nobody's but mounts a claim (the volume may be ReadWriteOnce);
/// a person is asked in the dialog instead (`ui_keys`).
#[tokio::test(start_paused = true)]
async fn a_pod_with_a_volume_claim_on_a_node_that_stopped_reporting_is_not_force_deleted() {
    use kube::api::{Api, DeleteParams};
    use opc_core::actions::{Outcome, Refusal};

    let sim = SimCluster::new();
    let created = sim.create_pod(
        serde_json::from_value(json!({
            "metadata": { "name": "cache-0", "namespace": "default" },
            "spec": { "nodeName": "sim-node-2", "containers": [{ "name": "c", "image": "redis:7" }],
                      "volumes": [{ "name": "data", "persistentVolumeClaim": { "claimName": "data-cache-0" } }] },
            "status": { "phase": "Running" },
        }))
        .unwrap(),
    );
    let uid = created.metadata.uid.clone().expect("a uid");
    sim.set_node_alive("sim-node-2", false);
    let h = Harness::in_process(sim.clone()).await;
    let pods: Api<Pod> = Api::default_namespaced(h.client.clone());
    pods.delete("cache-0", &DeleteParams::default().grace_period(1))
        .await
        .unwrap();
    eventually("cache-0 terminating in the cache", || {
        h.cache.get(&uid).is_some_and(|p| p.deletion.is_some())
    })
    .await;
    // Past the 1 s grace on paused time; the margin covers the server's stamps, which are on
    // the machine's clock, running slower than the paused one.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let outcome = h.auto_force_delete("cache-0", &uid).await;
    match &outcome {
        Outcome::Refused(Refusal::SecondCopy(copy)) => {
            assert_eq!(copy.why, "holds a volume claim that may be ReadWriteOnce");
            assert_eq!(copy.node, "sim-node-2");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(sim.pod("default", "cache-0").is_some());
}

/// A sink that never answers holds up its report, not auto-clean: delivery runs
/// in a task of its own. (It ran inside the worker loop: about 2.5 minutes per report with no
/// pass.)
#[tokio::test]
async fn a_dead_report_sink_does_not_stop_auto_clean() {
    use opc_core::config::{CronSchedule, ReportConfig, Sink};
    use opc_core::report::{DeliveryPolicy, Reporter};
    // Accepts, reads, never answers; counts who came.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let reached = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counting = reached.clone();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            counting.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            held.push(stream);
        }
    });
    let sim = SimCluster::new();
    sim.create_pod(typed(pod("crashy").ns("shop").restarts(9, "Error")));
    let h = Harness::start(sim.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let config = ReportConfig {
        sinks: vec![Sink::Webhook {
            url: opc_core::config::Secret::new(url),
        }],
        spool_dir: dir.path().join("spool"),
        state_file: dir.path().join("state.json"),
        ..ReportConfig::default()
    };
    let slow = DeliveryPolicy {
        attempts: 3,
        first_wait: Duration::from_secs(1),
        max_wait: Duration::from_secs(1),
        timeout: Duration::from_secs(60),
        ..DeliveryPolicy::default()
    };
    let reporter = Arc::new(Reporter::new(&config, slow).unwrap());
    let config = config_with_auto(&[RuleKind::Evicted]);
    let policy = Policy::new(Flags::default(), &config);
    let options = WorkerOptions {
        master_auto: true,
        tick: Duration::from_millis(50),
        cluster: ClusterName::new("sim"),
        reporter: Some(reporter),
        report_schedule: Some(CronSchedule::parse("* * * * * *").unwrap()),
        ..WorkerOptions::default()
    };
    let handle = h.spawn(&policy, options);
    eventually("the first report to reach the sink, and hang there", || {
        reached.load(std::sync::atomic::Ordering::SeqCst) > 0
    })
    .await;
    sim.create_pod(typed(pod("gone-1").ns("shop").evicted()));
    eventually("the evicted pod deleted while the report hangs", || {
        sim.pod("shop", "gone-1").is_none()
    })
    .await;
    let passes = status_where(&handle, "passes going on while the report hangs", |s| {
        s.passes > 10
    })
    .await
    .passes;
    assert!(passes > 10, "passes went on: {passes}");
}

/// A cluster dropped from the screen (or a headless shutting down) stops its
/// worker first: the worker stands by before the watches stop, so it never acts on a cache
/// that no longer follows the cluster.
#[tokio::test]
async fn dropping_a_session_stands_its_worker_by_first() {
    let sim = SimCluster::new();
    let server = SimServer::start(sim.clone()).await.unwrap();
    let policy = Policy::new(Flags::default(), &config_with_auto(&[RuleKind::Evicted]));
    let session = support::sim::open_session(&server.client(), &[Scope::All], &policy);
    let options = WorkerOptions {
        master_auto: true,
        tick: Duration::from_millis(50),
        ..WorkerOptions::default()
    };
    let handle = session.spawn_worker(&policy, options);
    status_where(&handle, "acting", |s| {
        s.last_pass.is_some() && s.blocked.is_none()
    })
    .await;
    drop(session);
    let status = status_where(&handle, "standing by", |s| s.blocked.is_some()).await;
    assert_eq!(
        status.blocked,
        Some(Blocked::Standby(Standby::Closed)),
        "{status:?}"
    );
    // Nothing acts any more: a pod made now stays, whatever the worker's next passes see.
    sim.create_pod(support::sim::typed(pod("late").ns("shop").evicted().json()));
    two_more_passes(&handle).await;
    assert!(sim.pod("shop", "late").is_some());
}

fn run_by_b() -> Standby {
    Standby::RunBy {
        holder: "replica-b".into(),
        lease: "ops/ops-pod-cleaner".into(),
    }
}
