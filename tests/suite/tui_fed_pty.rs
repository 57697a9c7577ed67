//! A cluster read through its in-cluster worker, through the real binary in a pseudo-terminal.

use opc_core::cluster::ClusterName;
use std::time::Duration;

use chrono::Utc;
use kube_sim::{SimCluster, SimServer};
use opc_core::clock::Clock;
use opc_core::cluster::Cache;
use opc_core::rules::default_chain;
use ops_pod_cleaner::headless::FleetSettings;

use crate::support::contexts::kubeconfig;
use crate::support::fleet_worker::{expose, move_worker};
use crate::support::pods::pod;
use crate::support::pty::Screen;
use crate::support::served::serve_cache;
use crate::support::sim::typed;

/// A worker's feed, bounded to 4 KiB a line, its streams ended every second.
fn small_feed() -> FleetSettings {
    FleetSettings {
        coalesce: Duration::from_millis(20),
        heartbeat: Duration::from_millis(100),
        stream_lifetime: Duration::from_secs(1),
        max_line: 4096,
        ..FleetSettings::default()
    }
}

/// `auto` read a worker whose findings fitted its feed; the worker restarted holding more
/// than the feed carries. The screen stayed on it, stale, for good. Now it watches the cluster
/// directly, says why in the header and the clusters dialog, and lists every pod.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_watches_a_cluster_whose_worker_outgrew_its_feed_while_on_screen() {
    let sim = SimCluster::new();
    sim.set_bookmark_interval(Duration::from_millis(100));
    let first = pod("seen-0").ns("shop").evicted();
    sim.create_pod(typed(first.clone().json()));
    let small = Cache::for_cluster(ClusterName::new("east"), default_chain(), Clock::real());
    small.upsert(first.clone().wire(), Utc::now());
    // The same cluster, 60 evictions later, as the worker's next run sees it.
    let grown = Cache::for_cluster(ClusterName::new("east"), default_chain(), Clock::real());
    grown.upsert(first.wire(), Utc::now());
    for i in 0..60 {
        let evicted = pod(&format!("grown-{i}")).ns("shop").evicted();
        sim.create_pod(typed(evicted.clone().json()));
        grown.upsert(evicted.wire(), Utc::now());
    }
    let before = serve_cache(small.reader(), true, small_feed()).await;
    let server = SimServer::start(sim).await.unwrap();
    expose(&server, before.findings).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubeconfig");
    std::fs::write(&path, kubeconfig(&[("east", &server)])).unwrap();
    let path = path.to_string_lossy().into_owned();
    let mut screen = tokio::task::spawn_blocking(move || {
        let screen = Screen::start_with(&["--kubeconfig", &path], None);
        let fed = screen.wait_for("the worker's finding", |t| {
            t.contains("seen-0") && t.contains("via worker")
        });
        assert!(!fed.contains("grown-"), "{fed}");
        screen
    })
    .await
    .unwrap();
    // Started now, as a restarted worker is: a run of its own, which no stream resumes.
    let after = serve_cache(grown.reader(), true, small_feed()).await;
    move_worker(&server, after.findings);
    tokio::task::spawn_blocking(move || {
        let watched = screen.wait_for("the cluster watched, every pod listed", |t| {
            t.contains("watch (feed too big)") && t.contains("evicted — 61 pods")
        });
        assert!(
            watched.contains("watching the cluster directly"),
            "{watched}"
        );
        screen.keys("C");
        let dialog = screen.wait_text("Clusters (C or Esc closes)");
        assert!(
            dialog.contains("watch, since the worker's feed is over its bound"),
            "{dialog}"
        );
    })
    .await
    .unwrap();
}
