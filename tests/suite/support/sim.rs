//! The tier-3 harness: a simulated cluster served on loopback, with a live watch cache on it.

use opc_core::cluster::ClusterName;
use std::time::Duration;

use kube_sim::{SimCluster, SimServer};
use opc_core::cluster::{Cache, Scope, WatchSettings, spawn_watches};
use tokio::task::JoinHandle;

pub struct Watched {
    pub sim: SimCluster,
    pub server: SimServer,
    /// The client the watches use; what a test acts through.
    pub client: kube::Client,
    pub cache: Cache,
    _watches: Vec<JoinHandle<()>>,
}

impl Watched {
    /// Serve `sim`, watch every namespace, and wait for the first complete list.
    pub async fn start(sim: SimCluster) -> Watched {
        let server = SimServer::start(sim.clone()).await.unwrap();
        let client = server.client();
        Watched::over(sim, server, client, Cache::new()).await
    }

    /// The same without a socket, on a cache whose clock follows tokio's: for tests on paused
    /// time.
    pub async fn in_process(sim: SimCluster) -> Watched {
        let server = SimServer::start(sim.clone()).await.unwrap();
        let client = server.in_process_client().0;
        let clock = opc_core::clock::Clock::starting_at(chrono::Utc::now());
        let cache = Cache::for_cluster(
            ClusterName::new(""),
            opc_core::rules::default_chain(),
            clock,
        );
        Watched::over(sim, server, client, cache).await
    }

    async fn over(
        sim: SimCluster,
        server: SimServer,
        client: kube::Client,
        cache: Cache,
    ) -> Watched {
        let mut watches = spawn_watches(&client, &[Scope::All], &cache, &quick_watch());
        // As a session does: rules that mature with time are promoted by the cache's task.
        watches.push(cache.spawn_promotion());
        eventually("the first sync", || cache.health().synced()).await;
        Watched {
            sim,
            server,
            client,
            cache,
            _watches: watches,
        }
    }
}

/// Small pages and short backoff, so tests see paging and recovery quickly. The simulated
/// server sends a bookmark every second, so five silent seconds mean a dead watch.
pub fn quick_watch() -> WatchSettings {
    WatchSettings {
        page_size: 100,
        watch_timeout: Duration::from_secs(30),
        stale_after: Duration::from_secs(5),
        min_backoff: Duration::from_millis(50),
        max_backoff: Duration::from_millis(200),
        ..WatchSettings::default()
    }
}

/// Wait up to 10 s for `check`, or fail naming what was awaited.
pub async fn eventually(what: &str, check: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !check() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub fn typed<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).expect("test objects are valid")
}

/// A session named `sim` on `client` over `scopes`, as every mode opens one: its pods and
/// their Events watched into its cache, an executor under `policy`, no audit.
pub fn open_session(
    client: &kube::Client,
    scopes: &[Scope],
    policy: &opc_core::policy::Policy,
) -> opc_core::session::ClusterSession {
    let cluster = opc_core::cluster::Cluster {
        name: ClusterName::new("sim"),
        client: client.clone(),
    };
    opc_core::session::ClusterSession::open(
        cluster,
        scopes,
        &quick_watch(),
        policy,
        opc_core::actions::Audit::Off,
        opc_core::clock::Clock::real(),
    )
}

/// A workload of `kind` in `default` whose pods carry `app: <name>`, as a person applies it.
/// A workload whose image can never be pulled: its pods fail in ImagePullBackOff, the evidence
/// a scale to zero needs.
pub fn unpullable(kind: &str, name: &str, replicas: i32) -> serde_json::Value {
    let mut w = workload(kind, name, replicas);
    w["spec"]["template"]["spec"]["containers"][0]["image"] =
        serde_json::json!("registry.invalid/app:1");
    w
}

pub fn workload(kind: &str, name: &str, replicas: i32) -> serde_json::Value {
    let mut w = serde_json::json!({"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": "default"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": name, "image": "registry.local/app:1"}]}}}});
    if kind == "StatefulSet" {
        w["spec"]["serviceName"] = serde_json::json!(name);
    }
    w
}
