//! Liveness under faults: the view is as fresh as the last proof that it is in
//! sync with a live server, a frozen server is noticed by the age of the view, and no call
//! waits on it forever. Real HTTP on loopback with short bounds, so each test takes seconds.

use crate::support;
use opc_core::cluster::ClusterName;

use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kube_sim::{SimCluster, SimServer};
use opc_core::actions::{Audit, AuditLog, Executor, RetryPolicy};
use opc_core::cluster::{
    Cache, Deadlines, Scope, WatchSettings, client_with_deadlines, list_pods, spawn_watches,
};
use opc_core::config::Config;
use opc_core::policy::{Flags, Policy};
use opc_core::rules::RuleKind;
use opc_core::worker::{self, Counters, WorkerHandle, WorkerOptions, WorkerStatus};
use ops_pod_cleaner::headless::{Listeners, Sources, bind, serve};
use ops_pod_cleaner::ui::{WatchLine, watch_line};
use support::pods::{PodBuilder, pod};
use support::policy::audit_config;
use support::sim::{eventually, quick_watch};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A view not proved current for 600 ms is stale (bookmarks come every 100 ms unless a test
/// turns them off).
const SILENCE: Duration = Duration::from_millis(600);
const MAX_STALE: Duration = Duration::from_millis(1000);

fn typed(builder: PodBuilder) -> Pod {
    serde_json::from_value(builder.json()).unwrap()
}

fn settings() -> WatchSettings {
    WatchSettings {
        stale_after: SILENCE,
        ..quick_watch()
    }
}

/// A simulated cluster that talks often, watched with a short silence bound.
struct Fresh {
    server: SimServer,
    cache: Cache,
    _watches: Vec<JoinHandle<()>>,
}

impl Fresh {
    async fn start(sim: SimCluster) -> Fresh {
        sim.set_bookmark_interval(Duration::from_millis(100));
        let server = SimServer::start(sim.clone()).await.unwrap();
        let cache = Cache::new();
        let watches = spawn_watches(&server.client(), &[Scope::All], &cache, &settings());
        eventually("the first sync", || cache.health().synced()).await;
        Fresh {
            server,
            cache,
            _watches: watches,
        }
    }

    fn stale(&self) -> bool {
        self.cache.health().stale_for(Instant::now()).is_some()
    }

    /// The auto-clean worker with `evicted` on, a short tick and `maxStale` of `MAX_STALE`.
    fn worker(&self, client: kube::Client, audit: Option<AuditLog>) -> WorkerHandle {
        let mut config = Config::default();
        for rule in &mut config.rules {
            rule.auto = rule.kind == RuleKind::Evicted;
            rule.after = Duration::ZERO;
        }
        config.safety.max_stale = MAX_STALE;
        config.audit.events = false;
        let policy = Policy::new(Flags::default(), &config);
        let audit = audit.map_or(Audit::Off, Audit::Log);
        let executor = Executor::new(
            client,
            self.cache.clone(),
            &policy,
            ClusterName::new("sim"),
            audit,
        )
        .with_retry(RetryPolicy {
            attempts: 1,
            ..RetryPolicy::default()
        });
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

fn blocked(handle: &WorkerHandle) -> Option<String> {
    let blocked = handle.status.borrow().blocked.clone();
    blocked.map(|b| b.to_string())
}

/// Wait for `check`, and say how long it took.
async fn seconds_until(what: &str, since: Instant, check: impl Fn() -> bool) -> f64 {
    eventually(what, check).await;
    since.elapsed().as_secs_f64()
}

/// How many times a check in `for_how_long` found the scope stale, sampled every 20 ms.
async fn stale_samples(fresh: &Fresh, for_how_long: Duration) -> usize {
    let until = Instant::now() + for_how_long;
    let mut stale = 0;
    while Instant::now() < until {
        stale += usize::from(fresh.stale());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stale
}

/// As a v1.24 kube-apiserver does for a watch on a quiet namespace: no bookmark before the
/// watch's timeout (none in 75 s, measured there).
fn no_bookmarks(sim: &SimCluster) {
    sim.set_bookmark_interval(Duration::from_secs(3600));
}

#[tokio::test]
async fn a_quiet_cluster_without_bookmarks_never_looks_stale() {
    let sim = SimCluster::new();
    let fresh = Fresh::start(sim.clone()).await;
    no_bookmarks(&sim);
    sim.faults().drop_watches();
    let served = sim.watches_served();
    let stale = stale_samples(&fresh, SILENCE * 5).await;
    assert_eq!(stale, 0, "stale in {stale} samples over {:?}", SILENCE * 5);
    assert!(
        sim.watches_served() - served >= 4,
        "the quiet watch is re-made from its version to prove it is in sync"
    );
    sim.create_pod(typed(pod("late")));
    eventually("a change after the quiet spell", || fresh.cache.len() == 1).await;
}

#[tokio::test]
async fn a_stream_dropped_silently_is_replaced_before_the_view_looks_stale() {
    let sim = SimCluster::new();
    let fresh = Fresh::start(sim.clone()).await;
    let handle = fresh.worker(fresh.server.client(), None);
    eventually("the worker to run unblocked", || {
        handle.status.borrow().last_pass.is_some() && blocked(&handle).is_none()
    })
    .await;
    // A load balancer dropped the stream: the open watch says nothing, a new one gets through.
    sim.faults().silence_watches(true);
    sim.create_pod(typed(pod("old-1").ns("shop").evicted()));
    let stale = stale_samples(&fresh, SILENCE * 2).await;
    assert_eq!(stale, 0, "stale in {stale} samples");
    assert!(blocked(&handle).is_none());
    assert!(
        sim.pod("shop", "old-1").is_none(),
        "the pod made behind the silent stream was seen through a new watch and cleaned"
    );
    assert_eq!(
        watch_line(&fresh.cache.health(), Instant::now(), Some("sim")),
        WatchLine::Synced
    );
}

#[tokio::test]
async fn a_frozen_server_is_noticed_by_the_age_of_the_view_and_fresh_soon_after_the_thaw() {
    let sim = SimCluster::new();
    let fresh = Fresh::start(sim.clone()).await;
    no_bookmarks(&sim);
    let handle = fresh.worker(fresh.server.client(), None);
    eventually("the worker to run unblocked", || {
        handle.status.borrow().last_pass.is_some() && blocked(&handle).is_none()
    })
    .await;
    // Frozen right after an event: that event is the last proof the view is current.
    sim.create_pod(typed(pod("last-word")));
    eventually("the last event", || fresh.cache.len() == 1).await;
    let frozen = Instant::now();
    sim.faults().freeze(true);
    sim.create_pod(typed(pod("old-1").ns("shop").evicted()));
    let notice = seconds_until("stale", frozen, || fresh.stale()).await;
    let block = seconds_until("the worker to block", frozen, || blocked(&handle).is_some()).await;
    let slack = 0.3;
    assert!(
        (SILENCE.as_secs_f64() - slack..SILENCE.as_secs_f64() + slack).contains(&notice),
        "stale once the view is older than the bound ({notice:.2}s)"
    );
    assert!(
        block < MAX_STALE.as_secs_f64() + slack,
        "maxStale counts from the last proof, not from the end of the bound ({block:.2}s)"
    );
    let line = watch_line(&fresh.cache.health(), Instant::now(), Some("sim"));
    assert!(matches!(line, WatchLine::Reconnecting { .. }), "{line:?}");
    let from = handle.status.borrow().passes;
    let mut status = handle.status.clone();
    status.wait_for(|s| s.passes >= from + 2).await.unwrap();
    assert!(
        sim.pod("shop", "old-1").is_some(),
        "nothing acts on a frozen view"
    );

    let thawed = Instant::now();
    sim.faults().freeze(false);
    let recover = seconds_until("fresh again", thawed, || !fresh.stale()).await;
    let unblock = seconds_until("the worker to unblock", thawed, || {
        blocked(&handle).is_none()
    })
    .await;
    eventually("the pod made meanwhile to be seen and deleted", || {
        sim.pod("shop", "old-1").is_none()
    })
    .await;
    // Backoff at most 200 ms, a hung request cut at half the bound, then one settle.
    assert!(recover < 1.5, "fresh {recover:.2}s after the thaw");
    eprintln!(
        "frozen server timeline (fresh bound {SILENCE:?}, maxStale {MAX_STALE:?}, no \
         bookmarks): stale after {notice:.2}s, worker blocked after {block:.2}s; after the \
         thaw: fresh in {recover:.2}s, unblocked in {unblock:.2}s"
    );
}

#[tokio::test]
async fn a_frozen_server_shows_in_metrics_and_readyz_then_thaws() {
    let sim = SimCluster::new();
    sim.create_pod(typed(pod("p")));
    let fresh = Fresh::start(sim.clone()).await;
    let listeners = Listeners {
        probes: bind("127.0.0.1:0".parse().unwrap()).await.unwrap(),
        findings: bind("127.0.0.1:0".parse().unwrap()).await.unwrap(),
    };
    let addr = listeners.probes.local_addr().unwrap();
    let (_worker_tx, worker_rx) = watch::channel(WorkerStatus::default());
    let (_leader_tx, leader) = watch::channel(true);
    let (_stop_tx, stop) = watch::channel(false);
    let sources = Sources {
        cache: fresh.cache.reader(),
        max_stale: MAX_STALE,
        counters: Arc::new(Counters::default()),
        worker: worker_rx,
        leader,
        started: chrono::Utc::now(),
        recent: watch::channel(Vec::new()).1,
        fleet: Default::default(),
        restarts: None,
    };
    tokio::spawn(serve(listeners, sources, stop));
    let get = |path: &'static str| async move {
        let response = reqwest::get(format!("http://{addr}{path}")).await.unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    };
    let gauge = |text: &str, name: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in\n{text}"))
    };
    let (code, metrics) = get("/metrics").await;
    assert_eq!(code, 200);
    assert_eq!(gauge(&metrics, "opc_watch_stale_seconds"), 0.0);
    assert_eq!(gauge(&metrics, "opc_worker_blocked"), 0.0);

    sim.faults().freeze(true);
    tokio::time::sleep(SILENCE + MAX_STALE + Duration::from_millis(300)).await;
    let (_, metrics) = get("/metrics").await;
    assert!(gauge(&metrics, "opc_watch_stale_seconds") > MAX_STALE.as_secs_f64());
    assert_eq!(gauge(&metrics, "opc_worker_blocked"), 1.0);
    let (code, why) = get("/readyz").await;
    assert_eq!(code, 503, "{why}");
    assert!(why.contains("watch stale for"), "{why}");
    assert_eq!(
        get("/healthz").await.0,
        200,
        "liveness does not fail for a frozen API server: a restart would not help"
    );

    sim.faults().freeze(false);
    eventually("fresh after the thaw", || !fresh.stale()).await;
    let (code, metrics) = get("/metrics").await;
    assert_eq!(gauge(&metrics, "opc_watch_stale_seconds"), 0.0);
    assert_eq!(gauge(&metrics, "opc_worker_blocked"), 0.0);
    assert_eq!(code, 200);
    assert_eq!(get("/readyz").await.0, 200);
}

#[tokio::test]
async fn a_watch_closed_at_once_does_not_reconnect_in_a_hot_loop() {
    let sim = SimCluster::new();
    let fresh = Fresh::start(sim.clone()).await;
    let before = sim.watches_served();
    sim.faults().close_watches_at_once(true);
    sim.faults().drop_watches();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let opened = sim.watches_served() - before;
    // quick_watch backs off 50 ms doubling to 200 ms (jittered down to half): at most ~15 a
    // second; a hot loop opens hundreds.
    assert!((2..=20).contains(&opened), "{opened} watches in one second");
    // Closed watches say nothing, so the scope goes stale rather than pretending to be fresh.
    eventually("silence to show", || fresh.stale()).await;
    sim.faults().close_watches_at_once(false);
    eventually("fresh again", || !fresh.stale()).await;
}

#[tokio::test]
async fn an_expired_version_shows_relisting_while_the_list_is_under_way() {
    let sim = SimCluster::new();
    sim.create_pod(typed(pod("before")));
    let fresh = Fresh::start(sim.clone()).await;
    // The relist (not the watch) hangs until lifted, so the state can be seen.
    sim.faults().hang(Some("list"), "/api/v1/pods");
    sim.faults().expire_next_watch();
    sim.faults().drop_watches();
    eventually("relisting", || fresh.cache.health().relisting()).await;
    assert_eq!(
        watch_line(&fresh.cache.health(), Instant::now(), Some("sim")),
        WatchLine::Relisting { stale_secs: None }
    );
    assert_eq!(fresh.cache.len(), 1, "the last known state stays on show");
    sim.create_pod(typed(pod("after")));
    sim.faults().unhang(Some("list"), "/api/v1/pods");
    eventually("the relist to finish", || {
        !fresh.cache.health().relisting() && fresh.cache.len() == 2
    })
    .await;
    assert_eq!(fresh.cache.health().scopes[0].relists, 1);
}

fn short_deadlines() -> Deadlines {
    Deadlines {
        connect: Duration::from_secs(1),
        request: Duration::from_millis(300),
    }
}

#[tokio::test]
async fn a_hung_list_fails_at_its_deadline() {
    let sim = SimCluster::new();
    let server = SimServer::start(sim.clone()).await.unwrap();
    sim.faults().hang(Some("list"), "/api/v1/pods");
    let client = client_with_deadlines(server.config(), short_deadlines()).unwrap();
    let started = Instant::now();
    let listed = tokio::time::timeout(
        Duration::from_secs(3),
        list_pods(
            &client,
            &Scope::All,
            100,
            opc_core::config::WireFormat::default(),
        ),
    )
    .await
    .expect("the deadline ends the list, not the test's timeout");
    let error = listed.unwrap_err().to_string();
    assert!(error.contains("did not answer within 0.3s"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(1));
    // A watch is not cut by the request deadline: it lives as long as it talks.
    sim.faults().unhang(Some("list"), "/api/v1/pods");
    sim.set_bookmark_interval(Duration::from_millis(100));
    let cache = Cache::new();
    let _watches = spawn_watches(&client, &[Scope::All], &cache, &settings());
    eventually("synced through the short-deadline client", || {
        cache.health().synced()
    })
    .await;
    let (synced_at, watches) = (Instant::now(), sim.watches_served());
    // Bookmarks prove the view on the watch that stays open: a proof from well past the
    // request deadline came on a watch that deadline did not cut.
    eventually("a proof a second after the sync", || {
        cache.health().scopes[0]
            .proved
            .is_some_and(|at| at >= synced_at + Duration::from_secs(1))
    })
    .await;
    let scope = &cache.health().scopes[0];
    assert_eq!(scope.restarts, 0, "{scope:?}");
    assert_eq!(sim.watches_served(), watches, "the same watch all along");
}

#[tokio::test]
async fn a_hung_action_times_out_is_audited_and_the_worker_goes_on() {
    let sim = SimCluster::new();
    let fresh = Fresh::start(sim.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let audit_path = dir.path().join("audit.jsonl");
    let audit = AuditLog::open(&audit_config(&audit_path)).unwrap();
    sim.faults()
        .hang(Some("delete"), "/api/v1/namespaces/shop/pods/stuck-1");
    let client = client_with_deadlines(fresh.server.config(), short_deadlines()).unwrap();
    let handle = fresh.worker(client, Some(audit));
    sim.create_pod(typed(pod("stuck-1").ns("shop").evicted()));
    sim.create_pod(typed(pod("gone-1").ns("shop").evicted()));
    eventually("the other pod to be deleted", || {
        sim.pod("shop", "gone-1").is_none()
    })
    .await;
    let records = || std::fs::read_to_string(&audit_path).unwrap_or_default();
    eventually("the hung delete audited as failed", || {
        records()
            .lines()
            .any(|l| l.contains("stuck-1") && l.contains("\"outcome\":\"failed\""))
    })
    .await;
    let text = records();
    assert!(text.contains("did not answer within 0.3s"), "{text}");
    assert!(sim.pod("shop", "stuck-1").is_some());
    // The worker publishes the count after the audit record is written: wait for it.
    eventually("the failure counted", || {
        handle.status.borrow().rules[&RuleKind::Evicted].failures >= 1
    })
    .await;
}

/// A credential plugin that hangs (waiting for a login) held a runtime thread
/// with no deadline while the client was built; on a context added to the screen, the screen
/// froze. Building the client now runs off the runtime's threads, within the connect deadline.
#[tokio::test(flavor = "current_thread")]
async fn a_hanging_credential_plugin_fails_at_the_connect_deadline_without_blocking() {
    use opc_core::cluster::{ConnectOptions, connect};
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n\
         users:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      \
         command: sleep\n      args: [\"4\"]\n      interactiveMode: Never\n\
         contexts:\n- name: c\n  context:\n    cluster: c\n    user: u\ncurrent-context: c\n",
    )
    .unwrap();
    let options = ConnectOptions {
        kubeconfig: Some(kubeconfig),
        context: None,
        deadlines: Deadlines {
            connect: Duration::from_millis(800),
            request: Duration::from_secs(1),
        },
    };
    // On this one-thread runtime a blocked thread would stop the ticker too.
    let ticks = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counting = ticks.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
            counting.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    });
    let started = Instant::now();
    let error = match connect(&options).await {
        Ok(_) => panic!("a hanging plugin cannot give a client"),
        Err(e) => e.to_string(),
    };
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(error.contains("credential plugin"), "{error}");
    assert!(
        ticks.load(std::sync::atomic::Ordering::Relaxed) >= 8,
        "the runtime went on meanwhile"
    );
}
