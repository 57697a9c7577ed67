//! Headless parts: Lease election on the simulated API, the metrics text and /healthz.

use crate::support;
use opc_core::cluster::ClusterName;

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::support::metrics::METRIC_NAMES;
use chrono::{DateTime, Utc};
use kube_sim::{SimCluster, SimServer};
use opc_core::actions::{PastAction, Target};
use opc_core::clock::Clock;
use opc_core::cluster::{Health, Scope, ScopeHealth, WatchState};
use opc_core::lease::{self, Elector, Held, LeaseSettings, Observed, Role, Step, Wiring, decide};
use opc_core::pod::WorkloadId;
use opc_core::rules::{CauseClass, RuleKind};
use opc_core::worker::{Blocked, Standby, WorkerCommand, WorkerStatus};
use ops_pod_cleaner::headless::metrics::{Snapshot, healthz, readyz, render};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};

use support::pods::pod;
use support::policy::audit_config;
use support::sim::eventually;

fn t(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

fn held(holder: &str, renewed: &str) -> Held {
    Held {
        holder: Some(holder.into()),
        renewed: Some(t(renewed)),
        duration: Duration::from_secs(15),
    }
}

#[test]
fn lease_decisions_judge_expiry_by_how_long_the_record_stayed_unchanged() {
    let secs = Duration::from_secs;
    // The renewTime says nothing about expiry: a skewed clock could put it anywhere.
    let b = held("b", "2001-01-01T00:00:00Z");
    assert_eq!(decide(None, "a", secs(0)), Step::Create);
    assert_eq!(
        decide(Some(&held("a", "2026-11-20T09:00:00Z")), "a", secs(60)),
        Step::Renew
    );
    assert_eq!(
        decide(Some(&b), "a", secs(14)),
        Step::Follow { holder: "b".into() }
    );
    assert_eq!(decide(Some(&b), "a", secs(15)), Step::TakeOver, "expired");
    let released = Held {
        holder: None,
        ..b.clone()
    };
    assert_eq!(decide(Some(&released), "a", secs(0)), Step::TakeOver);
}

#[test]
fn an_observation_counts_from_the_last_change_on_the_local_clock() {
    let start = Instant::now();
    let at = |ms: u64| start + Duration::from_millis(ms);
    let mut observed = Observed::default();
    let first = held("b", "2026-11-20T09:00:00Z");
    assert_eq!(observed.see(Some(&first), at(0)), Duration::ZERO);
    assert_eq!(
        observed.see(Some(&first), at(900)),
        Duration::from_millis(900)
    );
    let renewed = held("b", "2026-11-20T09:00:02Z");
    assert_eq!(
        observed.see(Some(&renewed), at(1000)),
        Duration::ZERO,
        "a renewal"
    );
    assert_eq!(
        observed.see(Some(&renewed), at(1500)),
        Duration::from_millis(500)
    );
}

/// Short enough for tests; the Lease stores whole seconds.
fn settings(identity: &str) -> LeaseSettings {
    LeaseSettings {
        namespace: "ops".into(),
        name: "ops-pod-cleaner".into(),
        identity: identity.into(),
        duration: Duration::from_secs(1),
        renew_deadline: Duration::from_millis(600),
        retry_period: Duration::from_millis(100),
    }
}

/// A little more than the lease duration of [`settings`].
const EXPIRY: Duration = Duration::from_millis(1100);

#[tokio::test(start_paused = true)]
async fn a_follower_takes_over_only_after_the_record_stayed_unchanged() {
    let server = SimServer::start(SimCluster::new()).await.unwrap();
    let mut a = Elector::new(in_process(&server), settings("a"), Clock::real());
    let mut b = Elector::new(in_process(&server), settings("b"), Clock::real());
    let now = Utc::now();
    assert_eq!(a.round(now).await, Ok(Role::Leader));
    assert_eq!(b.round(now).await, Ok(Role::Follower("a".into())));
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(a.round(Utc::now()).await, Ok(Role::Leader), "renewal");
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        b.round(Utc::now()).await,
        Ok(Role::Follower("a".into())),
        "renewed 600 ms ago: not expired, though first seen 1.2 s ago"
    );
    // a stops renewing: once b has seen the same record for the lease duration, b takes over.
    tokio::time::sleep(EXPIRY).await;
    assert_eq!(b.round(Utc::now()).await, Ok(Role::Leader));
    assert_eq!(a.round(Utc::now()).await, Ok(Role::Follower("b".into())));
    b.release().await;
    assert_eq!(
        a.round(Utc::now()).await,
        Ok(Role::Leader),
        "a released lease is taken at once"
    );
}

#[tokio::test(start_paused = true)]
async fn racing_replicas_are_decided_by_the_resource_version() {
    let server = SimServer::start(SimCluster::new()).await.unwrap();
    let mut first = Elector::new(in_process(&server), settings("first"), Clock::real());
    first.round(Utc::now()).await.unwrap();
    let mut ex = Elector::new(in_process(&server), settings("x"), Clock::real());
    let mut ey = Elector::new(in_process(&server), settings("y"), Clock::real());
    assert!(matches!(ex.round(Utc::now()).await, Ok(Role::Follower(_))));
    assert!(matches!(ey.round(Utc::now()).await, Ok(Role::Follower(_))));
    // Both see the lease expire at the same time; only one write can carry the current version.
    tokio::time::sleep(EXPIRY).await;
    let (x, y) = tokio::join!(ex.round(Utc::now()), ey.round(Utc::now()));
    let leaders = [&x, &y]
        .iter()
        .filter(|r| matches!(r, Ok(Role::Leader)))
        .count();
    assert_eq!(leaders, 1, "{x:?} {y:?}");
}

#[tokio::test(start_paused = true)]
async fn a_skewed_renew_time_neither_expires_a_live_holder_nor_keeps_a_dead_one() {
    let cluster = SimCluster::new();
    let server = SimServer::start(cluster.clone()).await.unwrap();
    let mut a = Elector::new(in_process(&server), settings("a"), Clock::real());
    let mut b = Elector::new(in_process(&server), settings("b"), Clock::real());
    assert_eq!(a.round(Utc::now()).await, Ok(Role::Leader));
    // The holder's clock is an hour slow: by the wall clock, its lease looks long expired.
    cluster
        .faults()
        .skew_lease_clock(chrono::TimeDelta::hours(-1));
    assert_eq!(b.round(Utc::now()).await, Ok(Role::Follower("a".into())));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(a.round(Utc::now()).await, Ok(Role::Leader));
    assert_eq!(b.round(Utc::now()).await, Ok(Role::Follower("a".into())));
    // An hour fast: by the wall clock it would look valid for an hour after a stops renewing.
    cluster
        .faults()
        .skew_lease_clock(chrono::TimeDelta::hours(1));
    assert_eq!(b.round(Utc::now()).await, Ok(Role::Follower("a".into())));
    tokio::time::sleep(EXPIRY).await;
    assert_eq!(b.round(Utc::now()).await, Ok(Role::Leader));
}

/// A client of `server` that runs on paused time with it.
fn in_process(server: &SimServer) -> kube::Client {
    server.in_process_client().0
}

/// One replica's election loop, as `headless` runs it.
struct Replica {
    leader: watch::Receiver<bool>,
    /// What the election told the worker.
    commands: mpsc::Receiver<WorkerCommand>,
    _stop: watch::Sender<bool>,
}

fn replica(client: kube::Client, identity: &str) -> Replica {
    let (to_worker, commands) = mpsc::channel(64);
    let (leader_tx, leader) = watch::channel(false);
    let (_stop, stop) = watch::channel(false);
    let elector = Elector::new(client, settings(identity), Clock::real());
    let wiring = Wiring {
        worker: to_worker,
        recent: watch::channel(Vec::new()).1,
        leader: leader_tx,
        acting_until: watch::channel(None).0,
    };
    tokio::spawn(lease::run(elector, wiring, stop, None));
    Replica {
        leader,
        commands,
        _stop,
    }
}

#[tokio::test(start_paused = true)]
async fn a_leader_that_cannot_renew_stops_before_another_can_take_over() {
    let server = SimServer::start(SimCluster::new()).await.unwrap();
    let (client, link) = server.in_process_client();
    let a = replica(client, "a");
    eventually("a to lead", || *a.leader.borrow()).await;
    let mut b = replica(in_process(&server), "b");
    // b's first round decided: it stands by, naming a.
    let told = tokio::time::timeout(Duration::from_secs(5), b.commands.recv()).await;
    assert!(
        matches!(&told, Ok(Some(WorkerCommand::SetStandby(Some(Standby::RunBy { holder, .. })))) if holder == "a"),
        "{told:?}"
    );
    assert!(!*b.leader.borrow(), "b follows while a renews");

    // a's renewals now hang (sent, never answered); b still reaches the server.
    link.cut();
    let cut_at = tokio::time::Instant::now();
    eventually("a to step down", || !*a.leader.borrow()).await;
    let a_stopped = cut_at.elapsed();
    eventually("b to take over", || *b.leader.borrow()).await;
    let b_took = cut_at.elapsed();
    let s = settings("a");
    assert!(
        a_stopped <= s.renew_deadline + s.retry_period + Duration::from_millis(200),
        "a stops acting within the renew deadline: {a_stopped:?}"
    );
    // b counts the lease duration from a's last renewal, which came up to one retry period
    // before the cut (a loaded machine showed 995 ms against a 1 s lease).
    assert!(
        a_stopped < b_took && b_took >= s.duration - s.retry_period,
        "never two leaders: a stopped after {a_stopped:?}, b took over after {b_took:?}"
    );
    eprintln!(
        "hung renewal (lease {:?}, renew deadline {:?}): a stopped acting after {a_stopped:?}, \
         b took over after {b_took:?}",
        s.duration, s.renew_deadline
    );
}

/// A whole replica: its own cache, worker, audit log and election loop, all on `client`.
struct Acting {
    leader: watch::Receiver<bool>,
    audit: std::path::PathBuf,
    _worker: opc_core::worker::WorkerHandle,
    _watches: Vec<tokio::task::JoinHandle<()>>,
    _stop: watch::Sender<bool>,
}

/// `clock`: shared by the replicas, so that their audit times compare on paused time.
fn acting(client: kube::Client, identity: &str, dir: &std::path::Path, clock: Clock) -> Acting {
    use opc_core::actions::{Audit, AuditLog, Executor, RetryPolicy};
    use opc_core::cluster::{Cache, WatchSettings, spawn_watches};
    use opc_core::config::Config;
    use opc_core::policy::{Flags, Policy};
    let cache = Cache::for_cluster(
        ClusterName::new("sim"),
        opc_core::rules::default_chain(),
        clock,
    );
    let watch_settings = WatchSettings {
        stale_after: Duration::from_secs(5),
        min_backoff: Duration::from_millis(50),
        max_backoff: Duration::from_millis(200),
        ..WatchSettings::default()
    };
    let watches = spawn_watches(&client, &[Scope::All], &cache, &watch_settings);
    let mut config = Config::default();
    for rule in &mut config.rules {
        rule.auto = rule.kind == RuleKind::Evicted;
    }
    config.safety.max_actions_per_minute = 1000;
    config.safety.max_actions_per_namespace_per_minute = 1000;
    config.safety.breaker.min_pods = 1000;
    config.audit.events = false;
    let policy = Policy::new(Flags::default(), &config);
    let audit = dir.join(format!("{identity}.jsonl"));
    let executor = Executor::new(
        client.clone(),
        cache.clone(),
        &policy,
        ClusterName::new("sim"),
        Audit::Log(AuditLog::open(&audit_config(&audit)).unwrap()),
    )
    .with_retry(RetryPolicy {
        attempts: 1,
        ..RetryPolicy::default()
    });
    let (acting_tx, acting_until) = watch::channel(None);
    let options = opc_core::worker::WorkerOptions {
        master_auto: true,
        tick: Duration::from_millis(50),
        standby: Some(Standby::Electing),
        acting_until: Some(acting_until),
        ..Default::default()
    };
    // As a session does: the cache classifies under the worker's policy.
    cache.set_chain(policy.chain().to_vec());
    let worker = opc_core::worker::spawn(cache, std::sync::Arc::new(executor), &policy, options);
    let (leader_tx, leader) = watch::channel(false);
    let (_stop, stop) = watch::channel(false);
    let elector = Elector::new(client, settings_for_overlap(identity), clock);
    let wiring = Wiring {
        worker: worker.commands.clone(),
        recent: worker.recent.clone(),
        leader: leader_tx,
        acting_until: acting_tx,
    };
    tokio::spawn(lease::run(elector, wiring, stop, None));
    Acting {
        leader,
        audit,
        _worker: worker,
        _watches: watches,
        _stop,
    }
}

/// A 2 s lease with a 1 s renew deadline: an action is cut off at the renew deadline.
fn settings_for_overlap(identity: &str) -> LeaseSettings {
    LeaseSettings {
        duration: Duration::from_secs(2),
        renew_deadline: Duration::from_secs(1),
        retry_period: Duration::from_millis(200),
        ..settings(identity)
    }
}

/// The times of the actions a replica's audit log records, in order.
fn acted_at(audit: &std::path::Path) -> Vec<DateTime<Utc>> {
    std::fs::read_to_string(audit)
        .unwrap_or_default()
        .lines()
        .map(|line| {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            t(record["time"].as_str().unwrap())
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_partitioned_leader_and_its_successor_never_act_at_the_same_time() {
    let sim = SimCluster::new();
    let server = SimServer::start(sim.clone()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    // a's requests have no deadline of their own: only the lease's time left can cut its
    // action short when the partition hits mid-request.
    let (client, link) = server.in_process_client();
    let clock = Clock::starting_at(Utc::now());
    let a = acting(client, "a", dir.path(), clock);
    eventually("a to lead", || *a.leader.borrow()).await;
    let b = acting(in_process(&server), "b", dir.path(), clock);
    // Evicted pods keep coming; whoever leads deletes them.
    let feeder = tokio::spawn({
        let sim = sim.clone();
        async move {
            for i in 0.. {
                let p = pod(&format!("evicted-{i}")).ns("shop").evicted().json();
                sim.create_pod(serde_json::from_value(p).unwrap());
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    });
    eventually("a to act", || !acted_at(&a.audit).is_empty()).await;
    link.cut();
    eventually("a to step down", || !*a.leader.borrow()).await;
    eventually("b to take over", || *b.leader.borrow()).await;
    eventually("b to act", || !acted_at(&b.audit).is_empty()).await;
    feeder.abort();
    let (a_times, b_times) = (acted_at(&a.audit), acted_at(&b.audit));
    let a_last = *a_times.iter().max().unwrap();
    let b_first = *b_times.iter().min().unwrap();
    assert!(
        a_last < b_first,
        "a's last record at {a_last} must come before b's first at {b_first}"
    );
    eprintln!(
        "no overlap: a's last action {a_last}, b's first {b_first} ({} ms apart)",
        (b_first - a_last).num_milliseconds()
    );
}

/// One scope; `down_for`: reconnecting, its view last proved that long ago.
fn health(synced: bool, down_for: Option<Duration>, now: Instant) -> Health {
    let state = match down_for {
        Some(_) => WatchState::Reconnecting {
            error: "connection refused".into(),
        },
        None => WatchState::Watching,
    };
    let mut scope = ScopeHealth::new(Scope::All, Duration::from_secs(10));
    scope.proved = Some(now - down_for.unwrap_or_default());
    scope.state = state;
    scope.synced = synced;
    scope.restarts = 3;
    scope.relists = 1;
    scope.format = Some(opc_core::config::WireFormat::Protobuf);
    Health {
        scopes: vec![scope],
    }
}

#[test]
fn readyz_is_200_only_when_synced_and_fresh() {
    let now = Instant::now();
    let max = Duration::from_secs(60);
    assert_eq!(readyz(&health(true, None, now), max, now).0, 200);
    assert_eq!(
        readyz(&health(true, Some(Duration::from_secs(30)), now), max, now).0,
        200,
        "stale, but not past maxStale"
    );
    let (code, why) = readyz(&health(true, Some(Duration::from_secs(90)), now), max, now);
    assert_eq!(code, 503);
    assert!(
        why.contains("stale for 90s: connection refused (more than safety.maxStale)"),
        "{why}"
    );
    assert_eq!(readyz(&health(false, None, now), max, now).0, 503);
}

#[test]
fn healthz_fails_only_when_the_worker_loop_is_stuck() {
    let started = t("2026-11-20T09:00:00Z");
    let stall = Duration::from_secs(600);
    let at = |s: &str| t(s);
    let fresh = WorkerStatus::default();
    assert_eq!(
        healthz(&fresh, started, stall, at("2026-11-20T09:09:00Z")).0,
        200,
        "no pass yet, but within the bound of the start"
    );
    let (code, why) = healthz(&fresh, started, stall, at("2026-11-20T09:11:00Z"));
    assert_eq!(code, 503);
    assert!(why.contains("has not started a pass for 660s"), "{why}");
    let passed = WorkerStatus {
        last_pass: Some(at("2026-11-20T09:10:30Z")),
        ..WorkerStatus::default()
    };
    assert_eq!(
        healthz(&passed, started, stall, at("2026-11-20T09:11:00Z")).0,
        200
    );
}

#[test]
fn metrics_text_has_every_family() {
    let now = Instant::now();
    let snapshot = Snapshot {
        pods: 120,
        nodes_not_reporting: 3,
        events_dropped: 0,
        findings: BTreeMap::from([
            ((RuleKind::ImagePull, CauseClass::ImageNotFound), 30),
            ((RuleKind::ImagePull, CauseClass::RegistryAuth), 10),
        ]),
        actions: BTreeMap::from([
            ((RuleKind::Evicted, "done"), 7),
            ((RuleKind::Evicted, "failed"), 1),
        ]),
        deliveries: BTreeMap::from([(("slack-1a2b3c4d".to_string(), "spooled"), 2)]),
        health: health(true, Some(Duration::from_secs(12)), now),
        worker: WorkerStatus {
            rules: BTreeMap::from([(
                RuleKind::ImagePull,
                opc_core::worker::RuleStatus {
                    held: 2,
                    held_reason: Some(crate::support::pauses::bad_rollout("shop", "web", 3)),
                    ..Default::default()
                },
            )]),
            ..WorkerStatus::default()
        },
        leader: true,
    };
    let text = render(&snapshot, now);
    for line in [
        "opc_pods 120",
        "opc_nodes_not_reporting 3",
        "opc_abnormal_pods{category=\"imagePull\",cause=\"imageNotFound\"} 30",
        "opc_abnormal_pods{category=\"imagePull\",cause=\"registryAuth\"} 10",
        "opc_abnormal_pods{category=\"evicted\"} 0",
        "opc_actions_total{rule=\"evicted\",outcome=\"done\"} 7",
        "opc_actions_total{rule=\"evicted\",outcome=\"failed\"} 1",
        "opc_watch_restarts_total{scope=\"all namespaces\"} 3",
        "opc_wire_format{scope=\"all namespaces\",format=\"protobuf\"} 1",
        "opc_watch_stale_seconds 12.0",
        "opc_report_deliveries_total{sink=\"slack-1a2b3c4d\",result=\"spooled\"} 2",
        "opc_leader 1",
        "opc_auto_held_targets{rule=\"imagePull\"} 2",
        "# TYPE opc_actions_total counter",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
}

/// A synced replica's snapshot with nothing found and nothing done, but `worker`.
fn idle_snapshot(worker: WorkerStatus, now: Instant) -> Snapshot {
    Snapshot {
        pods: 0,
        nodes_not_reporting: 0,
        events_dropped: 0,
        findings: BTreeMap::new(),
        actions: BTreeMap::new(),
        deliveries: BTreeMap::new(),
        health: health(true, None, now),
        worker,
        leader: true,
    }
}

fn has_line(text: &str, line: &str) -> bool {
    text.lines().any(|l| l == line)
}

/// An alert on "the audit log fails" needs its own series: `opc_worker_blocked` is 1 on every
/// follower too, and for a stale view, so it cannot tell.
#[test]
fn an_audit_log_that_cannot_be_written_has_its_own_metric() {
    let now = Instant::now();
    let failing = WorkerStatus {
        blocked: Some(Blocked::AuditLog(
            "the audit log /var/lib/ops-pod-cleaner/audit.jsonl cannot be written".into(),
        )),
        ..WorkerStatus::default()
    };
    let text = render(&idle_snapshot(failing, now), now);
    assert!(has_line(&text, "opc_audit_failing 1"), "{text}");
    assert!(has_line(&text, "opc_worker_blocked 1"), "{text}");
    let waiting = WorkerStatus {
        blocked: Some(Blocked::NotSynced),
        ..WorkerStatus::default()
    };
    let text = render(&idle_snapshot(waiting, now), now);
    assert!(has_line(&text, "opc_audit_failing 0"), "{text}");
    assert!(has_line(&text, "opc_worker_blocked 1"), "{text}");
}

/// The list the shipped alert rules and dashboard are checked against is what `/metrics` has.
#[test]
fn the_list_of_metric_names_is_what_render_writes() {
    let now = Instant::now();
    let text = render(&idle_snapshot(WorkerStatus::default(), now), now);
    let written: BTreeSet<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split(' ').next())
        .collect();
    assert_eq!(written, BTreeSet::from(METRIC_NAMES));
}

/// The endpoints on a free port, over `cache`.
async fn serve_cache(cache: opc_core::cluster::CacheReader) -> SocketAddr {
    support::served::serve_cache(cache, false, Default::default())
        .await
        .addr
}

async fn serve_empty() -> SocketAddr {
    serve_cache(opc_core::cluster::Cache::new().reader()).await
}

/// One HTTP/1.1 request on `stream`, kept alive; the status and body of the answer.
async fn ask(stream: &mut TcpStream, path: &str) -> std::io::Result<(u16, String)> {
    let request = format!("GET {path} HTTP/1.1\r\nHost: probe\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    let mut answer = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        answer.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&answer);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length: ")?
                        .parse()
                        .ok()
                })
                .unwrap_or(0usize);
            if body.len() >= length {
                let status = head
                    .split(' ')
                    .nth(1)
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                return Ok((status, body.to_string()));
            }
        }
    }
}

/// A liveness probe as the kubelet sends it: a new connection, answered within `deadline`.
async fn probe(addr: SocketAddr, deadline: Duration) -> Result<u16, String> {
    let asked = async {
        let mut stream = TcpStream::connect(addr).await?;
        ask(&mut stream, "/healthz").await
    };
    match tokio::time::timeout(deadline, asked).await {
        Ok(Ok((status, _))) => Ok(status),
        Ok(Err(e)) => Err(format!("failed: {e}")),
        Err(_) => Err(format!("no answer within {deadline:?}")),
    }
}

#[tokio::test]
async fn the_endpoints_answer_from_the_start() {
    let addr = serve_empty().await;
    let get = |path: &'static str| async move {
        let response = reqwest::get(format!("http://{addr}{path}")).await?;
        Ok::<u16, reqwest::Error>(response.status().as_u16())
    };
    assert_eq!(get("/healthz").await.unwrap(), 200, "live before any sync");
    assert_eq!(
        get("/readyz").await.unwrap(),
        503,
        "not ready before the first list"
    );
}

/// Keep-alive clients that each asked once and hold on, and clients that connect and say
/// nothing, more of them than the server keeps connections: the kubelet's probe, on a
/// connection of its own, is still answered in time (a failed probe restarts the pod and
/// relists every pod).
#[tokio::test]
async fn idle_clients_holding_every_connection_cannot_starve_the_liveness_probe() {
    let addr = serve_empty().await;
    let mut held = Vec::new();
    for _ in 0..40 {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        // Some are turned away once the server is full; those are not held.
        if let Ok(Ok((200, _))) =
            tokio::time::timeout(Duration::from_secs(1), ask(&mut stream, "/healthz")).await
        {
            held.push(stream);
        }
    }
    for _ in 0..40 {
        held.push(TcpStream::connect(addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    for round in 0..3 {
        assert_eq!(
            probe(addr, Duration::from_secs(2)).await,
            Ok(200),
            "probe {round} with {} idle clients connected",
            held.len()
        );
    }
}

/// A kept-alive connection that asks nothing more is closed after the header timeout (5 s),
/// so even without newer connections pushing it out it holds its slot only that long.
#[tokio::test]
async fn an_idle_kept_alive_connection_is_closed_within_the_header_timeout() {
    let addr = serve_empty().await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    assert_eq!(ask(&mut stream, "/healthz").await.unwrap().0, 200);
    let started = Instant::now();
    let mut rest = [0u8; 64];
    let closed = tokio::time::timeout(Duration::from_secs(8), stream.read(&mut rest)).await;
    assert!(
        matches!(closed, Ok(Ok(0) | Err(_))),
        "still open after {:?}: {closed:?}",
        started.elapsed()
    );
}

/// A scrape reads the cache and never writes it: the watches' writes must not wait behind
/// scrapes, nor a scrape behind a relist. A rule that matured since the index last moved on is
/// counted all the same, and the cache does not change (a write would wake its readers).
#[tokio::test]
async fn a_scrape_counts_a_matured_rule_without_writing_to_the_cache() {
    let chain = opc_core::rules::default_chain();
    let cache =
        opc_core::cluster::Cache::for_cluster(ClusterName::default(), chain.clone(), Clock::real());
    let created = Utc::now() - chrono::Duration::hours(2);
    let stamp = created.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let web = pod("web-1").created_at(&stamp).waiting("ImagePullBackOff");
    // Seen when it began waiting: imagePull has not matured yet.
    cache.upsert(web.wire(), created);
    let mut changes = cache.subscribe();
    changes.mark_unchanged();
    let addr = serve_cache(cache.reader()).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let (status, metrics) = ask(&mut stream, "/metrics").await.unwrap();
    assert_eq!(status, 200);
    assert!(
        metrics.lines().any(
            |l| l.starts_with("opc_abnormal_pods{category=\"imagePull\",") && l.ends_with(" 1")
        ),
        "the matured pod is counted:\n{metrics}"
    );
    assert!(
        !changes.has_changed().unwrap(),
        "the scrape wrote to the cache"
    );
}

/// The leader writes its recent actions on the Lease; whoever takes over inherits them, so a
/// failover gives no fresh rate-limit budget and no cooldown is forgotten.
#[tokio::test]
async fn a_successor_inherits_the_recent_actions_written_on_the_lease() {
    let server = SimServer::start(SimCluster::new()).await.unwrap();
    let mut a = Elector::new(in_process(&server), settings("a"), Clock::real());
    let sent = vec![PastAction {
        at: Utc::now(),
        rule: RuleKind::ImagePull,
        namespace: "shop".into(),
        target: Target::Workload(WorkloadId::new("shop", "Deployment", "web")),
        workload: Some(WorkloadId::new("shop", "Deployment", "web")),
        shared: None,
    }];
    a.set_recent(sent.clone());
    assert_eq!(a.round(Utc::now()).await, Ok(Role::Leader));
    a.release().await;
    let mut b = Elector::new(in_process(&server), settings("b"), Clock::real());
    assert_eq!(b.round(Utc::now()).await, Ok(Role::Leader));
    assert_eq!(b.take_inherited(), Some(sent));
    assert_eq!(b.take_inherited(), None, "handed over once");
}
