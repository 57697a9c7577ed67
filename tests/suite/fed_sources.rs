//! Each cluster's source, as the screen opens it: through its in-cluster worker behind the API
//! server's service proxy (a real `headless` server task there), or a watch when `auto` finds
//! no worker, and why in the clusters dialog. Real time, short bounds.

use opc_core::cluster::ClusterName;
use std::time::Duration;

use chrono::Utc;
use kube_sim::{SimCluster, SimServer};
use opc_core::actions::Audit;
use opc_core::clock::Clock;
use opc_core::cluster::{Cache, Cluster, Scope};
use opc_core::config::{KeyBinding, Source};
use opc_core::fleet::{FeedError, FeedSettings, FeedStatus, Limits, WatchWhy};
use opc_core::rules::default_chain;
use opc_core::session::{ClusterSession, Feed, SourceChoice};
use ops_pod_cleaner::headless::FleetSettings;
use ops_pod_cleaner::ui::{Event, SourceLine, State, snapshot, update};

use crate::support::fleet_worker::{NS, expose};
use crate::support::pods::pod;
use crate::support::policy::policy;
use crate::support::served::serve_cache;
use crate::support::sim::{eventually, quick_watch};
use crate::ui_support::{screen, state};

const HEARTBEAT: Duration = Duration::from_millis(100);

fn choice(source: Source) -> SourceChoice {
    SourceChoice {
        settings: FeedSettings {
            silence: Duration::from_millis(600),
            min_backoff: Duration::from_millis(20),
            max_backoff: Duration::from_millis(100),
            limits: Limits::default(),
        },
        ..SourceChoice::of(source)
    }
}

/// The screen's session on `server`'s cluster, opened as `source` says.
async fn open(server: &SimServer, source: Source) -> ClusterSession {
    let cluster = Cluster {
        name: ClusterName::new("east"),
        client: server.client(),
    };
    let policy = policy(false, false);
    let watch = quick_watch();
    ClusterSession::open_as(
        cluster,
        &choice(source),
        &[Scope::All],
        &watch,
        &policy,
        Audit::Off,
        Clock::real(),
    )
    .await
}

/// The screen after `session`'s snapshot, with the clusters dialog open.
fn clusters_dialog(session: &ClusterSession) -> String {
    let mut s: State = state();
    update(
        &mut s,
        Event::Snapshot(snapshot(&[session], session.cache.clock().now())),
    );
    update(&mut s, Event::Key(KeyBinding::parse("C").unwrap()));
    screen(&s, 160, 30)
}

/// `worker` reads the worker whatever it answers first: the screen opens at once and shows
/// the cluster connecting, rather than waiting out a silent proxy to decide nothing.
#[tokio::test]
async fn worker_opens_at_once_even_while_the_proxy_is_silent() {
    let theirs = Cache::for_cluster(ClusterName::new("east"), default_chain(), Clock::real());
    let worker = serve_cache(theirs.reader(), true, FleetSettings::default()).await;
    let sim = SimCluster::new();
    let server = SimServer::start(sim.clone()).await.unwrap();
    expose(&server, worker.findings).await;
    sim.faults().silence_proxies(true);
    let cluster = Cluster {
        name: ClusterName::new("east"),
        client: server.client(),
    };
    let patient = SourceChoice {
        settings: FeedSettings {
            silence: Duration::from_secs(3600),
            ..choice(Source::Worker).settings
        },
        ..choice(Source::Worker)
    };
    let (policy, watch) = (policy(false, false), quick_watch());
    let opening = ClusterSession::open_as(
        cluster,
        &patient,
        &[Scope::All],
        &watch,
        &policy,
        Audit::Off,
        Clock::real(),
    );
    let session = tokio::time::timeout(Duration::from_secs(5), opening)
        .await
        .expect("opened without waiting for the worker's first answer");
    assert!(session.is_fed());
}

#[tokio::test]
async fn auto_reads_the_worker_through_the_proxy_and_the_screen_lists_its_findings() {
    // The in-cluster worker: `headless`'s server on its own cache of the cluster.
    let theirs = Cache::for_cluster(ClusterName::new("east"), default_chain(), Clock::real());
    let evicted = pod("old").ns("shop").evicted();
    theirs.upsert(evicted.wire(), Utc::now());
    let fleet = FleetSettings {
        coalesce: Duration::from_millis(20),
        heartbeat: HEARTBEAT,
        ..FleetSettings::default()
    };
    let worker = serve_cache(theirs.reader(), true, fleet).await;
    let server = SimServer::start(SimCluster::new()).await.unwrap();
    expose(&server, worker.findings).await;

    let session = open(&server, Source::Auto).await;
    assert!(
        matches!(session.feed, Feed::WorkerFed(_)),
        "{:?}",
        session.feed
    );
    eventually("the worker's findings on screen", || {
        let shown = snapshot(&[&session], session.cache.clock().now());
        shown.findings.iter().any(|a| a.name() == "old")
    })
    .await;
    let shown = snapshot(&[&session], session.cache.clock().now());
    let line = &shown.clusters[0];
    assert!(matches!(line.source, SourceLine::Worker { .. }), "{line:?}");
    assert_eq!(line.pods, 1, "a fed cluster counts its abnormal pods");
    assert_eq!(session.cache.len(), 0, "no pod is watched from here");
    let mut s: State = state();
    update(&mut s, Event::Snapshot(shown));
    assert!(screen(&s, 100, 24).contains("ctx east via worker"));
}

#[tokio::test]
async fn auto_falls_back_to_a_watch_where_no_worker_runs_and_says_why() {
    let sim = SimCluster::new();
    sim.create_pod(crate::support::sim::typed(
        pod("old").ns("shop").evicted().json(),
    ));
    let server = SimServer::start(sim).await.unwrap();
    let session = open(&server, Source::Auto).await;
    let Feed::Watched(WatchWhy::NoWorker(FeedError::NoWorker { .. })) = &session.feed else {
        panic!("a watch, for want of a worker: {:?}", session.feed)
    };
    eventually("the watch's findings", || {
        snapshot(&[&session], session.cache.clock().now())
            .findings
            .iter()
            .any(|a| a.name() == "old")
    })
    .await;
    let dialog = clusters_dialog(&session);
    assert!(
        dialog.contains("watch, since no worker to read"),
        "{dialog}"
    );
}

#[tokio::test]
async fn source_worker_with_a_forbidden_proxy_names_the_missing_permission() {
    let server = SimServer::start(SimCluster::new()).await.unwrap();
    server
        .cluster()
        .faults()
        .deny("get", "services/proxy", Some(NS));
    let session = open(&server, Source::Worker).await;
    assert!(
        matches!(session.feed, Feed::WorkerFed(_)),
        "worker, as told"
    );
    eventually("the feed failing on screen", || {
        let line = snapshot(&[&session], session.cache.clock().now())
            .clusters
            .remove(0);
        matches!(
            line.source,
            SourceLine::Worker {
                status: FeedStatus::Failing(_),
                ..
            }
        )
    })
    .await;
    let dialog = clusters_dialog(&session);
    assert!(
        dialog.contains("failing, retrying: permission denied"),
        "{dialog}"
    );
    assert!(
        dialog.contains("auth can-i get services/ops-pod-cleaner:9091 --subresource=proxy"),
        "{dialog}"
    );
}

/// A worker whose findings are more bytes than the feed carries says so (413) instead of
/// serving a line no client reads; `auto` then watches the cluster directly, and says why.
#[tokio::test]
async fn auto_watches_a_cluster_whose_worker_feed_is_over_the_bound_and_says_why() {
    let sim = SimCluster::new();
    let theirs = Cache::for_cluster(ClusterName::new("east"), default_chain(), Clock::real());
    for i in 0..20 {
        let evicted = pod(&format!("old-{i}")).ns("shop").evicted();
        sim.create_pod(crate::support::sim::typed(evicted.clone().json()));
        theirs.upsert(evicted.wire(), Utc::now());
    }
    let fleet = FleetSettings {
        coalesce: Duration::from_millis(20),
        heartbeat: HEARTBEAT,
        max_line: 4096,
        ..FleetSettings::default()
    };
    let worker = serve_cache(theirs.reader(), true, fleet).await;
    let (status, body) = {
        let answer = reqwest::get(format!("http://{}/v1/snapshot", worker.findings))
            .await
            .unwrap();
        (answer.status().as_u16(), answer.text().await.unwrap())
    };
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("over the feed's bound of 4096"), "{body}");
    let server = SimServer::start(sim).await.unwrap();
    expose(&server, worker.findings).await;
    let session = open(&server, Source::Auto).await;
    let Feed::Watched(WatchWhy::OverBound(FeedError::OverBound { .. })) = &session.feed else {
        panic!("a watch, for a feed over its bound: {:?}", session.feed)
    };
    eventually("the watch's findings", || {
        snapshot(&[&session], session.cache.clock().now())
            .findings
            .len()
            == 20
    })
    .await;
    let dialog = clusters_dialog(&session);
    assert!(
        dialog.contains("watch, since the worker's feed is over its bound"),
        "{dialog}"
    );
}

/// A context that may not list pods saw zero in every category and "nothing abnormal here":
/// blind read as healthy. Now the screen says forbidden in place of the counts and the rows,
/// with the `can-i` that checks the same identity, and `/metrics` says so too.
#[tokio::test]
async fn a_context_that_may_not_list_pods_is_shown_forbidden_never_healthy() {
    let sim = SimCluster::new();
    sim.create_pod(crate::support::sim::typed(
        pod("old").ns("shop").evicted().json(),
    ));
    for verb in ["list", "watch"] {
        sim.faults().deny(verb, "pods", None);
    }
    let server = SimServer::start(sim).await.unwrap();
    let session = open(&server, Source::Watch).await;
    eventually("the list refused", || {
        session.cache.health().forbidden().is_some()
    })
    .await;
    let mut s: State = state();
    update(
        &mut s,
        Event::Snapshot(snapshot(&[&session], session.cache.clock().now())),
    );
    let shown = screen(&s, 160, 24);
    let narrow = screen(&s, 80, 24);
    assert!(
        narrow.contains("check with: kubectl auth can-i list pods -A --context east"),
        "{narrow}"
    );
    assert!(!shown.contains("nothing abnormal"), "{shown}");
    assert!(shown.contains("FORBIDDEN: cannot see the pods"), "{shown}");
    assert!(shown.contains("pods ?  abnormal ?"), "{shown}");
    assert!(shown.contains("counts unknown"), "{shown}");
    assert!(
        shown.contains("kubectl auth can-i list pods -A --context east"),
        "{shown}"
    );
    let metrics = ops_pod_cleaner::headless::metrics::render(
        &ops_pod_cleaner::headless::metrics::Snapshot {
            pods: 0,
            nodes_not_reporting: 0,
            events_dropped: 0,
            findings: Default::default(),
            actions: Default::default(),
            deliveries: Default::default(),
            health: session.cache.health(),
            worker: Default::default(),
            leader: true,
        },
        std::time::Instant::now(),
    );
    assert!(
        metrics.contains("opc_watch_forbidden{scope=\"all namespaces\"} 1"),
        "{metrics}"
    );
}

/// A cluster read through its worker: the restart report pane shows its restarts as the
/// worker counts them (`/v1/report`), named as the screen names the cluster.
#[tokio::test]
async fn a_fed_clusters_restart_report_is_the_one_its_worker_serves() {
    let theirs = Cache::for_cluster(ClusterName::new("east"), default_chain(), Clock::real());
    theirs.upsert(
        pod("web-1").ns("shop").crash_looping(9, "Error").wire(),
        Utc::now(),
    );
    let fleet = FleetSettings {
        coalesce: Duration::from_millis(20),
        heartbeat: HEARTBEAT,
        ..FleetSettings::default()
    };
    let worker = crate::support::served::serve_reporting(theirs, fleet).await;
    let served = reqwest::get(format!("http://{}/v1/report", worker.findings))
        .await
        .unwrap();
    assert_eq!(served.status().as_u16(), 200);
    assert!(served.text().await.unwrap().contains("web-1"));
    let server = SimServer::start(SimCluster::new()).await.unwrap();
    expose(&server, worker.findings).await;
    let session = open(&server, Source::Auto).await;
    let Feed::WorkerFed(fed) = &session.feed else {
        panic!("a fed session: {:?}", session.feed)
    };
    let report = opc_core::fleet::worker_report(
        server.client(),
        fed.address().clone(),
        &ClusterName::new("east"),
        session.cache.clock(),
    );
    eventually("the worker's report", || !report().groups.is_empty()).await;
    let shown = report();
    assert_eq!(shown.cluster, "east");
    let pods: Vec<&str> = (shown.groups.iter())
        .flat_map(|g| g.rows.iter().map(|r| r.pod.as_str()))
        .collect();
    assert_eq!(pods, ["web-1"]);
}
