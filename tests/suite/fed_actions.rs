//! Actions on a cluster read through its in-cluster worker go through the same write path as
//! on a watched one: the pod is read live into the session's cache, then the recheck, the owner
//! chain, the opt-outs and the audit run exactly as for a watched pod. Real time, short bounds:
//! the service proxy reaches the worker over a socket.

use opc_core::cluster::ClusterName;
use std::time::Duration;

use chrono::Utc;
use kube_sim::{SimCluster, SimServer};
use opc_core::actions::{Action, Audit, Origin, Outcome, PodRef, Refusal};
use opc_core::clock::Clock;
use opc_core::cluster::{Cache, Cluster};
use opc_core::config::Config;
use opc_core::fleet::{
    FeedSettings, FindingRow, Limits, ViewHealth, WorkerAddress, WorkerAnswer, spawn_feed,
};
use opc_core::policy::{Flags, Policy};
use opc_core::session::{ClusterSession, Feed};
use opc_core::worker::{Blocked, WorkerOptions};
use serde_json::{Value, json};

use crate::support::fleet_worker::{FakeWorker, expose};
use crate::support::pods::pod;
use crate::support::policy::audit_config;
use crate::support::sim::{eventually, typed, workload};

const HEARTBEAT: Duration = Duration::from_millis(100);

/// Rules that hold at once, Events off, the audit log at `audit` (or none).
fn policy(audit: Option<&std::path::Path>) -> Policy {
    let mut config = Config::default();
    config.audit.events = false;
    if let Some(path) = audit {
        config.audit = opc_core::config::AuditConfig {
            events: false,
            ..audit_config(path)
        };
    }
    for rule in &mut config.rules {
        rule.after = Duration::ZERO;
        rule.scale_while_available = true;
    }
    let flags = Flags {
        no_audit: audit.is_none(),
        ..Flags::default()
    };
    Policy::new(flags, &config)
}

/// A simulated cluster whose worker serves what it is given, through the service proxy.
struct Fed {
    sim: SimCluster,
    _server: SimServer,
    worker: FakeWorker,
    session: ClusterSession,
}

impl Fed {
    async fn start(sim: SimCluster, policy: &Policy) -> Fed {
        let server = SimServer::start(sim.clone()).await.unwrap();
        let worker = FakeWorker::start(1, HEARTBEAT).await;
        expose(&server, worker.addr()).await;
        let settings = FeedSettings {
            silence: Duration::from_millis(600),
            min_backoff: Duration::from_millis(20),
            max_backoff: Duration::from_millis(100),
            limits: Limits::default(),
        };
        let feed = spawn_feed(
            server.client(),
            ClusterName::new("sim"),
            WorkerAddress::default(),
            settings,
            Clock::real(),
        );
        let cluster = Cluster {
            name: ClusterName::new("sim"),
            client: server.client(),
        };
        let session =
            ClusterSession::open_fed(cluster, feed, policy, Audit::open(policy), Clock::real());
        Fed {
            sim,
            _server: server,
            worker,
            session,
        }
    }

    /// Create `pod` in the cluster and have the worker serve its row, classified as the
    /// worker would; the session lists it.
    async fn plant(&self, pod: Value) -> PodRef {
        let created = self.sim.create_pod(typed(pod));
        let target = PodRef {
            namespace: created.metadata.namespace.clone().unwrap(),
            name: created.metadata.name.clone().unwrap(),
            uid: created.metadata.uid.clone().unwrap(),
        };
        // The worker's own cache, classifying the pod as `headless` does: in its pod, it
        // calls its cluster `in-cluster`.
        let theirs = Cache::for_cluster(
            ClusterName::new("in-cluster"),
            self.session.cache.chain(),
            Clock::real(),
        );
        let wire = serde_json::from_value(serde_json::to_value(&created).unwrap()).unwrap();
        theirs.upsert(wire, Utc::now());
        let rows: Vec<FindingRow> = (theirs.findings().iter())
            .map(|found| FindingRow::of(found, Utc::now()))
            .collect();
        assert_eq!(rows.len(), 1, "the worker finds the pod abnormal");
        self.worker.set(rows);
        let Feed::WorkerFed(fed) = &self.session.feed else {
            panic!("a fed session")
        };
        eventually("the row on screen", || {
            fed.findings().iter().any(|a| a.uid() == target.uid)
        })
        .await;
        assert!(
            self.session.cache.get(&target.uid).is_none(),
            "listed from the feed, not watched"
        );
        target
    }
}

#[tokio::test]
async fn a_fed_row_is_listed_in_the_session_whatever_the_worker_calls_its_cluster() {
    let fed = Fed::start(SimCluster::new(), &policy(None)).await;
    fed.plant(pod("web-1").ns("shop").evicted().json()).await;
    let Feed::WorkerFed(feed) = &fed.session.feed else {
        panic!("a fed session")
    };
    // The screen routes a row's action, marks and parked view by its cluster.
    let clusters: Vec<String> = (feed.findings().iter())
        .map(|a| a.cluster().to_string())
        .collect();
    assert_eq!(clusters, ["sim"]);
}

#[tokio::test]
async fn the_details_of_a_fed_row_ask_its_worker_for_the_causes_words() {
    let fed = Fed::start(SimCluster::new(), &policy(None)).await;
    let target = fed.plant(pod("web-1").ns("shop").evicted().json()).await;
    let Feed::WorkerFed(feed) = &fed.session.feed else {
        panic!("a fed session")
    };
    let listed = feed.findings()[0].clone();
    assert_eq!(
        listed.full_cause(Utc::now()),
        None,
        "the row keeps the class alone"
    );
    let reading = fed.session.executor.reads().details(&target).await.unwrap();
    let Some(WorkerAnswer::Cause(told)) = reading.worker else {
        panic!("the worker's cause: {:?}", reading.worker)
    };
    assert_eq!(told.class, listed.cause());
    assert!(!told.detail.is_empty() && !told.next.is_empty(), "{told:?}");

    // The pod is abnormal no more, as far as the worker knows.
    fed.worker.set(Vec::new());
    let reading = fed.session.executor.reads().details(&target).await.unwrap();
    assert_eq!(reading.worker, Some(WorkerAnswer::NotAbnormal));
}

#[tokio::test]
async fn an_action_on_a_fed_row_reads_the_pod_live_deletes_it_and_is_audited() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let policy = policy(Some(&path));
    let fed = Fed::start(SimCluster::new(), &policy).await;
    let target = fed.plant(pod("web-1").ns("shop").evicted().json()).await;
    // The details pane reads the pod and its owners on demand, without a watch.
    let reading = fed.session.executor.reads().details(&target).await.unwrap();
    assert!(reading.inspection.is_ok(), "{:?}", reading.inspection);
    let outcome = (fed.session.executor)
        .run(&Action::Delete(target.clone()), Origin::Manual)
        .await;
    assert!(matches!(outcome, Outcome::Done(_)), "{outcome:?}");
    assert!(
        fed.sim.live_pods("web-1").is_empty(),
        "deleted in the cluster"
    );
    let audit = std::fs::read_to_string(&path).unwrap();
    let records: Vec<&str> = audit.lines().filter(|l| l.contains(&*target.uid)).collect();
    assert_eq!(records.len(), 2, "an intent and an outcome: {audit}");
    assert!(
        records.iter().all(|r| r.contains("\"cluster\":\"sim\"")),
        "{audit}"
    );

    // Again: the pod is gone, and the live read says so before anything is sent.
    let again = (fed.session.executor)
        .run(&Action::Delete(target), Origin::Manual)
        .await;
    assert_eq!(again, Outcome::AlreadyGone);
}

#[tokio::test]
async fn a_forged_owner_arriving_through_a_fed_row_is_still_not_scaled() {
    let sim = SimCluster::new();
    sim.create_deployment(typed(workload("Deployment", "checkout", 2)));
    let uid = (sim.deployment("default", "checkout").unwrap().metadata.uid).unwrap();
    let fed = Fed::start(sim, &policy(None)).await;
    let mut evil = pod("evil").waiting("ErrImagePull").json();
    evil["metadata"]["ownerReferences"] = json!([{
        "apiVersion": "apps/v1", "kind": "Deployment", "name": "checkout", "uid": uid,
        "controller": true,
    }]);
    evil["metadata"].as_object_mut().unwrap().remove("uid");
    let target = fed.plant(evil).await;
    let Feed::WorkerFed(feed) = &fed.session.feed else {
        panic!("a fed session")
    };
    let listed = feed.findings()[0].clone();
    assert_eq!(listed.held().map(|h| h.label()), Some("unproven"));
    let outcome = (fed.session.executor)
        .run(&Action::ScaleToZero(target), Origin::Manual)
        .await;
    assert!(
        matches!(&outcome, Outcome::Refused(Refusal::Unscalable(_))),
        "{outcome:?}"
    );
    let replicas =
        (fed.sim.deployment("default", "checkout").unwrap().spec).and_then(|s| s.replicas);
    assert_eq!(replicas, Some(2), "the Deployment keeps its replicas");
}

#[tokio::test]
async fn a_fed_cluster_whose_worker_is_stale_blocks_auto_as_a_stale_watch_does() {
    let policy = policy(None);
    let fed = Fed::start(SimCluster::new(), &policy).await;
    fed.plant(pod("web-1").ns("shop").evicted().json()).await;
    let options = WorkerOptions {
        tick: Duration::from_millis(50),
        ..WorkerOptions::default()
    };
    let worker = fed.session.spawn_worker(&policy, options);
    fed.worker.set_view(ViewHealth {
        synced: true,
        stale: true,
        age_seconds: Some(120),
        error: Some("watch of pods: connection refused".into()),
    });
    let cache = fed.session.cache.clone();
    eventually("the cache stale as its feed", || {
        cache
            .health()
            .stale_for(std::time::Instant::now())
            .is_some()
    })
    .await;
    let status = worker.status.clone();
    eventually("the worker blocked as stale", || {
        matches!(status.borrow().blocked, Some(Blocked::Stale { .. }))
    })
    .await;
}

/// A worker (compromised, or impersonated by whoever made its Service) serves a row for a
/// healthy pod, worded as an evicted one: a person's delete on that row is refused with what
/// the live read says, and the pod stays.
#[tokio::test]
async fn a_row_a_worker_claims_is_judged_again_on_the_pod_read_live() {
    let fed = Fed::start(SimCluster::new(), &policy(None)).await;
    let healthy = fed.sim.create_pod(typed(pod("web-1").ns("shop").json()));
    let target = PodRef {
        namespace: "shop".into(),
        name: "web-1".into(),
        uid: healthy.metadata.uid.clone().unwrap(),
    };
    let mut claimed = serde_json::to_value(&healthy).unwrap();
    claimed["status"] = pod("web-1").evicted().json()["status"].clone();
    let theirs = Cache::for_cluster(
        ClusterName::new("in-cluster"),
        fed.session.cache.chain(),
        Clock::real(),
    );
    theirs.upsert(serde_json::from_value(claimed).unwrap(), Utc::now());
    let rows: Vec<FindingRow> = (theirs.findings().iter())
        .map(|found| FindingRow::of(found, Utc::now()))
        .collect();
    fed.worker.set(rows);
    let Feed::WorkerFed(feed) = &fed.session.feed else {
        panic!("a fed session")
    };
    eventually("the claimed row on screen", || {
        feed.findings().iter().any(|a| a.uid() == target.uid)
    })
    .await;
    // The dialog reads the pod live and says it matches no rule.
    let inspection = fed.session.executor.reads().inspect(&target, false).await;
    assert_eq!(inspection.unwrap().live, None);
    let outcome = (fed.session.executor)
        .run(&Action::Delete(target.clone()), Origin::Manual)
        .await;
    let Outcome::Refused(Refusal::NotAbnormal { pod, now }) = &outcome else {
        panic!("refused on the live read: {outcome:?}")
    };
    assert_eq!((pod, now.as_str()), (&target, "Running; app running"));
    assert!(
        outcome
            .detail()
            .contains("as read just now, matches no rule"),
        "{outcome:?}"
    );
    assert!(fed.sim.pod("shop", "web-1").is_some(), "the pod stays");
}
