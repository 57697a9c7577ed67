//! `headless`'s HTTP server on a free port, over a cache, as the endpoint tests start it.

use std::net::SocketAddr;
use std::time::Duration;

use chrono::Utc;
use opc_core::cluster::{Cache, CacheReader, ClusterName};
use opc_core::report::LiveReport;
use opc_core::worker::WorkerStatus;
use ops_pod_cleaner::headless::{FleetSettings, Listeners, Sources, bind};
use tokio::sync::watch;

/// The server's two doors (the probes and `/metrics`; the findings under `/v1/`), and the
/// worker status it reports.
pub struct Served {
    pub addr: SocketAddr,
    pub findings: SocketAddr,
    pub status: watch::Sender<WorkerStatus>,
}

/// Serve `cache` with `fleet`'s settings, as a replica that leads (`leader`) or not.
pub async fn serve_cache(cache: CacheReader, leader: bool, fleet: FleetSettings) -> Served {
    serve(cache, leader, fleet, None).await
}

/// [`serve_cache`] of a worker that also serves its restart report, built from `cache` with
/// the built-in report settings.
pub async fn serve_reporting(cache: Cache, fleet: FleetSettings) -> Served {
    let config = opc_core::config::ReportConfig::default();
    let reader = cache.reader();
    let live = opc_core::report::live_report(
        None,
        &config,
        &ClusterName::new(ClusterName::IN_CLUSTER),
        cache,
    );
    serve(reader, true, fleet, Some(live)).await
}

async fn serve(
    cache: CacheReader,
    leader: bool,
    fleet: FleetSettings,
    restarts: Option<LiveReport>,
) -> Served {
    let listeners = Listeners {
        probes: bind("127.0.0.1:0".parse().unwrap()).await.unwrap(),
        findings: bind("127.0.0.1:0".parse().unwrap()).await.unwrap(),
    };
    let addr = listeners.probes.local_addr().unwrap();
    let findings = listeners.findings.local_addr().unwrap();
    let (status, worker) = watch::channel(WorkerStatus::default());
    let (leader_tx, leader) = watch::channel(leader);
    let (stop_tx, stop) = watch::channel(false);
    let (recent_tx, recent) = watch::channel(Vec::new());
    let sources = Sources {
        cache,
        max_stale: Duration::from_secs(60),
        counters: Default::default(),
        worker,
        leader,
        started: Utc::now(),
        recent,
        fleet,
        restarts,
    };
    tokio::spawn(async move {
        // The senders live as long as the server, so it sees no stop and no closed channel.
        let _senders = (leader_tx, stop_tx, recent_tx);
        ops_pod_cleaner::headless::serve(listeners, sources, stop).await;
    });
    Served {
        addr,
        findings,
        status,
    }
}
