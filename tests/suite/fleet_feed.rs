//! A cluster read through its in-cluster worker: the feed, through kube-sim's service proxy,
//! from a stand-in worker that speaks the protocol. Real time, short bounds: the proxy reaches
//! the worker over a socket, which paused time would race.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use chrono::Utc;
use kube_sim::{SimCluster, SimServer};
use opc_core::clock::Clock;
use opc_core::cluster::{Cache, ClusterName};
use opc_core::fleet::{
    DecodeError, Epoch, FeedError, FeedHandle, FeedSettings, FeedState, FeedStatus, Limits, Resume,
    StaleWhy, ViewHealth, WorkerAddress, spawn_feed,
};
use opc_core::rules::{RuleKind, default_chain};
use ops_pod_cleaner::headless::FleetSettings;

use crate::support::fleet_worker::{FakeWorker, NS, PORT, SERVICE, expose, finding};
use crate::support::pods::pod;
use crate::support::served::serve_cache;

const HEARTBEAT: Duration = Duration::from_millis(100);
const SILENCE: Duration = Duration::from_millis(600);

fn settings() -> FeedSettings {
    FeedSettings {
        silence: SILENCE,
        min_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(100),
        limits: Limits::default(),
    }
}

async fn cluster() -> SimServer {
    SimServer::start(SimCluster::new()).await.unwrap()
}

/// A cluster whose worker (run 1) serves `findings`.
async fn cluster_with_worker(findings: &[&str]) -> (SimServer, FakeWorker) {
    let server = cluster().await;
    let worker = FakeWorker::start(1, HEARTBEAT).await;
    worker.set(rows(findings));
    expose(&server, worker.addr()).await;
    (server, worker)
}

fn rows(uids: &[&str]) -> Vec<opc_core::fleet::FindingRow> {
    uids.iter()
        .map(|u| finding(u, RuleKind::ImagePull))
        .collect()
}

fn feed(server: &SimServer, settings: FeedSettings) -> FeedHandle {
    spawn_feed(
        server.client(),
        ClusterName::default(),
        WorkerAddress::default(),
        settings,
        Clock::real(),
    )
}

/// The state once `check` holds, within 5 s.
async fn until(feed: &FeedHandle, what: &str, check: impl Fn(&FeedState) -> bool) -> FeedState {
    let mut states = feed.subscribe();
    let reached = states.wait_for(|s| check(s));
    match tokio::time::timeout(Duration::from_secs(5), reached).await {
        Ok(Ok(state)) => state.clone(),
        _ => panic!(
            "timed out waiting for {what}: {:?}",
            feed.read(|s| s.status().clone())
        ),
    }
}

fn uids(state: &FeedState) -> BTreeSet<String> {
    state
        .view()
        .findings()
        .map(|a| a.uid().to_string())
        .collect()
}

fn set(uids: &[&str]) -> BTreeSet<String> {
    uids.iter().map(|u| u.to_string()).collect()
}

async fn live_with(feed: &FeedHandle, want: &[&str]) -> FeedState {
    let want = set(want);
    until(feed, &format!("live with {want:?}"), |s| {
        *s.status() == FeedStatus::Live && uids(s) == want
    })
    .await
}

#[tokio::test]
async fn a_snapshot_then_its_changes_reach_the_state() {
    let (server, worker) = cluster_with_worker(&["a", "b"]).await;
    let feed = feed(&server, settings());
    let first = live_with(&feed, &["a", "b"]).await;
    assert_eq!(first.view().counts().get(&RuleKind::ImagePull), Some(&2));
    assert_eq!(feed.first_outcome().await, Ok(()));

    worker.set(rows(&["a", "c"]));
    let changed = live_with(&feed, &["a", "c"]).await;
    assert_eq!(
        changed.view().resume(),
        Some(Resume {
            epoch: Epoch(1),
            seq: worker.seq()
        })
    );
    assert_eq!(worker.requests(), vec!["/v1/watch".to_string()]);
    assert_eq!(worker.snapshots_sent(), 1);
}

#[tokio::test]
async fn a_dropped_stream_resumes_from_its_number_with_only_the_missed_frames() {
    let (server, worker) = cluster_with_worker(&["a"]).await;
    let faults = server.cluster().faults();
    let feed = feed(&server, settings());
    let before = live_with(&feed, &["a"]).await.view().resume().unwrap();

    // The next changes never reach this stream: held, then cut with it.
    faults.silence_proxies(true);
    worker.set(rows(&["a", "b"]));
    worker.set(rows(&["b", "c"]));
    faults.drop_proxies();
    faults.silence_proxies(false);

    live_with(&feed, &["b", "c"]).await;
    let requests = worker.requests();
    assert_eq!(
        requests.last().unwrap(),
        &format!("/v1/watch?since={}&epoch=1", before.seq),
        "{requests:?}"
    );
    assert_eq!(
        worker.snapshots_sent(),
        1,
        "the missed frames, not a snapshot"
    );
}

#[tokio::test]
async fn a_stream_that_ends_cleanly_resumes_without_showing_stale() {
    let (server, worker) = cluster_with_worker(&["a"]).await;
    // Long enough that a stale state between the streams would be seen.
    let slow = FeedSettings {
        min_backoff: Duration::from_millis(300),
        max_backoff: Duration::from_millis(300),
        ..settings()
    };
    let feed = feed(&server, slow);
    live_with(&feed, &["a"]).await;
    let mut states = feed.subscribe();
    let seen = tokio::spawn(async move {
        let mut seen = Vec::new();
        while states.changed().await.is_ok() {
            seen.push(states.borrow_and_update().status().clone());
        }
        seen
    });

    worker.end_streams();
    until(&feed, "a second stream", |_| worker.requests().len() == 2).await;
    worker.set(rows(&["a", "b"]));
    live_with(&feed, &["a", "b"]).await;
    drop(feed);
    let seen = seen.await.unwrap();
    assert!(seen.iter().all(|s| *s == FeedStatus::Live), "{seen:?}");
    assert!(worker.requests()[1].starts_with("/v1/watch?since="));
    assert_eq!(worker.snapshots_sent(), 1);
}

#[tokio::test]
async fn a_worker_restart_replaces_the_rows() {
    let (server, worker) = cluster_with_worker(&["a", "b"]).await;
    let feed = feed(&server, settings());
    live_with(&feed, &["a", "b"]).await;

    worker.restart(2, rows(&["c"]));
    let after = live_with(&feed, &["c"]).await;
    assert_eq!(after.view().resume().map(|r| r.epoch), Some(Epoch(2)));
    assert_eq!(worker.snapshots_sent(), 2);
    let requests = worker.requests();
    assert!(
        requests.last().unwrap().ends_with("&epoch=1"),
        "asked to resume the old run, sent a snapshot of the new: {requests:?}"
    );
}

#[tokio::test]
async fn a_silent_stream_is_stale_within_the_bound_and_live_again_after() {
    let (server, worker) = cluster_with_worker(&["a"]).await;
    let faults = server.cluster().faults();
    let feed = feed(&server, settings());
    live_with(&feed, &["a"]).await;

    let silenced = Instant::now();
    faults.silence_proxies(true);
    let stale = until(&feed, "stale", |s| {
        matches!(s.status(), FeedStatus::Stale { .. })
    })
    .await;
    let FeedStatus::Stale { since, why } = stale.status() else {
        unreachable!()
    };
    assert_eq!(
        why,
        &StaleWhy::Lost(FeedError::Silent { after: SILENCE }),
        "{stale:?}"
    );
    // Stale since the last word heard, and the bound counts from it. (Not `since <=
    // silenced`: a heartbeat already on its way may land just after the silence begins.)
    assert!(since.elapsed() >= SILENCE, "stale since the last word");
    // The slack is for scheduling: a full suite on two loaded cores once took 500 ms more.
    assert!(
        silenced.elapsed() < SILENCE + Duration::from_millis(1000),
        "stale after {:?}",
        silenced.elapsed()
    );
    assert_eq!(uids(&stale), set(&["a"]), "the rows stay on show, stale");

    faults.silence_proxies(false);
    worker.set(rows(&["a", "b"]));
    live_with(&feed, &["a", "b"]).await;
}

#[tokio::test]
async fn a_worker_whose_own_view_is_stale_is_shown_stale() {
    let (server, worker) = cluster_with_worker(&["a"]).await;
    let feed = feed(&server, settings());
    live_with(&feed, &["a"]).await;

    worker.set_view(ViewHealth {
        synced: true,
        stale: true,
        age_seconds: Some(40),
        error: Some("watch: connection refused".into()),
    });
    let stale = until(&feed, "stale", |s| {
        matches!(s.status(), FeedStatus::Stale { .. })
    })
    .await;
    let FeedStatus::Stale { since, why } = stale.status() else {
        unreachable!()
    };
    assert_eq!(why, &StaleWhy::WorkerStale);
    assert!(since.elapsed() >= Duration::from_secs(40), "{since:?}");

    worker.set_view(ViewHealth {
        synced: true,
        age_seconds: Some(1),
        ..ViewHealth::default()
    });
    live_with(&feed, &["a"]).await;
}

/// The first outcome of a feed on `server`.
async fn first_failure(server: &SimServer, settings: FeedSettings) -> FeedError {
    let feed = feed(server, settings);
    match feed.first_outcome().await {
        Err(error) => {
            assert_eq!(
                feed.read(|s| s.status().clone()),
                FeedStatus::Failing(error.clone())
            );
            error
        }
        Ok(()) => panic!("answered: {:?}", feed.read(|s| s.status().clone())),
    }
}

#[tokio::test]
async fn a_forbidden_proxy_names_the_permission_to_ask_for() {
    let (server, _worker) = cluster_with_worker(&["a"]).await;
    server
        .cluster()
        .faults()
        .deny("get", "services/proxy", Some(NS));
    let error = first_failure(&server, settings()).await;
    assert_eq!(
        error,
        FeedError::Forbidden {
            verb: "get",
            resource: "services/proxy",
            namespace: NS.to_string(),
            name: format!("{SERVICE}:9091"),
        }
    );
    assert!(error.means_no_worker());
    let said = error.to_string();
    assert!(
        said.contains("may not get services/proxy \"ops-pod-cleaner:9091\""),
        "{said}"
    );
    assert!(
        said.contains(
            "kubectl auth can-i get services/ops-pod-cleaner:9091 --subresource=proxy \
             -n ops-pod-cleaner"
        ),
        "{said}"
    );
}

#[tokio::test]
async fn no_service_is_no_worker_and_no_ready_endpoint_is_not_ready() {
    let server = cluster().await;
    let missing = first_failure(&server, settings()).await;
    assert_eq!(
        missing,
        FeedError::NoWorker {
            namespace: NS.into(),
            service: SERVICE.into()
        }
    );
    assert!(missing.means_no_worker());

    let worker = FakeWorker::start(1, HEARTBEAT).await;
    expose(&server, worker.addr()).await;
    assert!(server.cluster().set_endpoints_ready(NS, SERVICE, false));
    let not_ready = first_failure(&server, settings()).await;
    assert_eq!(
        not_ready,
        FeedError::NotReady {
            namespace: NS.into(),
            service: SERVICE.into()
        }
    );
    assert!(not_ready.means_no_worker());
}

#[tokio::test]
async fn a_worker_nobody_listens_for_is_unreachable_and_retried() {
    let server = cluster().await;
    let worker = FakeWorker::start(1, HEARTBEAT).await;
    expose(&server, worker.addr()).await;
    server
        .cluster()
        .unserve_endpoint("10.0.0.9".parse().unwrap(), PORT);
    let error = first_failure(&server, settings()).await;
    assert!(
        matches!(&error, FeedError::Unreachable { message } if message.contains("connection refused")),
        "{error:?}"
    );
    assert!(!error.means_no_worker(), "a worker that hiccups");
}

#[tokio::test]
async fn an_over_long_line_is_a_protocol_error() {
    let server = cluster().await;
    let worker = FakeWorker::start(1, HEARTBEAT).await;
    let mut long = finding("a", RuleKind::CrashLoop);
    long.message = Some("x".repeat(8192));
    worker.set(vec![long]);
    expose(&server, worker.addr()).await;
    let max_line = 4096;
    let error = first_failure(
        &server,
        FeedSettings {
            limits: Limits {
                max_line,
                ..Limits::default()
            },
            ..settings()
        },
    )
    .await;
    assert_eq!(
        error,
        FeedError::Protocol(DecodeError::LineTooLong { max: max_line })
    );
    assert!(!error.means_no_worker());
}

/// The client reads `headless`'s own server through the proxy: its snapshot, then a change.
#[tokio::test]
async fn the_real_worker_is_read_through_the_proxy() {
    let cache = Cache::for_cluster(ClusterName::new("east"), default_chain(), Clock::real());
    let evicted = |name: &str| cache.upsert(pod(name).ns("shop").evicted().wire(), Utc::now());
    evicted("old");
    let fleet = FleetSettings {
        coalesce: Duration::from_millis(20),
        heartbeat: HEARTBEAT,
        ..FleetSettings::default()
    };
    let worker = serve_cache(cache.reader(), true, fleet).await;
    let server = cluster().await;
    expose(&server, worker.findings).await;
    let feed = feed(&server, settings());
    let names = |s: &FeedState| -> BTreeSet<String> {
        s.view().findings().map(|a| a.name().to_string()).collect()
    };
    until(&feed, "the worker's snapshot", |s| {
        names(s) == set(&["old"])
    })
    .await;
    evicted("new");
    let both = until(&feed, "the change", |s| names(s) == set(&["new", "old"])).await;
    assert_eq!(both.view().counts().get(&RuleKind::Evicted), Some(&2));
}
