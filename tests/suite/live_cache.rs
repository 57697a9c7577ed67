//! Tier 3: the real list/watch path into the live cache, against the simulated API server.

use crate::support;

use std::time::Duration;

use k8s_openapi::api::core::v1::{ContainerState, ContainerStateWaiting, Pod};
use kube::api::{Api, DeleteParams, PostParams};
use kube_sim::{SimCluster, SimServer};
use opc_core::cluster::{Cache, ConnectOptions, Scope, connect, list_pods, spawn_watches};
use opc_core::rules::{RuleKind, default_chain};
use support::pods::pod;
use support::sim::{Watched, eventually, quick_watch};

fn typed(builder: support::pods::PodBuilder) -> Pod {
    serde_json::from_value(builder.json()).unwrap()
}

/// What each pod is found to be, with every rule at once: pods just made have had no time
/// for a rule to mature.
fn categories(cache: &Cache) -> Vec<(String, RuleKind)> {
    let mut chain = default_chain();
    chain.iter_mut().for_each(|r| r.after = Duration::ZERO);
    if cache.chain() != chain {
        cache.set_chain(chain);
    }
    let mut found: Vec<_> = cache
        .findings()
        .into_iter()
        .map(|a| (a.pod.name.to_string(), a.finding.rule))
        .collect();
    found.sort();
    found
}

#[tokio::test]
async fn watch_syncs_then_follows_adds_updates_and_deletes() {
    let sim = SimCluster::new();
    sim.create_pod(typed(pod("ok-1").on_node("sim-node-1")));
    sim.create_pod(typed(pod("gone-1").evicted().on_node("sim-node-1")));
    let watched = Watched::start(sim.clone()).await;
    let (server, cache) = (&watched.server, &watched.cache);
    assert_eq!(cache.len(), 2);
    assert_eq!(
        categories(cache),
        vec![("gone-1".to_string(), RuleKind::Evicted)]
    );

    sim.update_pod_status("default", "ok-1", |status| {
        let c = &mut status.container_statuses.as_mut().unwrap()[0];
        c.ready = false;
        c.state = Some(ContainerState {
            waiting: Some(ContainerStateWaiting {
                reason: Some("ImagePullBackOff".into()),
                message: None,
            }),
            ..Default::default()
        });
    });
    eventually("the update", || categories(cache).len() == 2).await;
    assert!(categories(cache).contains(&("ok-1".to_string(), RuleKind::ImagePull)));

    let api: Api<Pod> = Api::namespaced(server.client(), "default");
    api.create(&PostParams::default(), &typed(pod("new-1")))
        .await
        .unwrap();
    eventually("the new pod", || cache.len() == 3).await;
    api.delete("gone-1", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the deletion", || cache.len() == 2).await;
    assert!(cache.health().synced());
}

#[tokio::test]
async fn a_paged_list_sees_every_pod_once() {
    let sim = SimCluster::new();
    for i in 0..1234 {
        sim.create_pod(typed(pod(&format!("p-{i:04}")).ns(if i % 2 == 0 {
            "a"
        } else {
            "b"
        })));
    }
    let server = SimServer::start(sim.clone()).await.unwrap();
    let listed = list_pods(
        &server.client(),
        &Scope::All,
        100,
        opc_core::config::WireFormat::default(),
    )
    .await
    .unwrap();
    assert_eq!(listed.pods.len(), 1234);
    let mut names: Vec<_> = listed.pods.iter().map(|p| p.name.to_string()).collect();
    names.dedup();
    assert_eq!(names.len(), 1234, "no pod twice");
    let only_a = list_pods(
        &server.client(),
        &Scope::Namespace("a".into()),
        100,
        opc_core::config::WireFormat::default(),
    )
    .await
    .unwrap();
    assert_eq!(only_a.pods.len(), 617);
    assert!(!listed.resource_version.is_empty());
}

#[tokio::test]
async fn a_dropped_watch_reconnects_and_misses_nothing() {
    let sim = SimCluster::new();
    sim.create_pod(typed(pod("before")));
    let watched = Watched::start(sim.clone()).await;
    let cache = &watched.cache;
    sim.faults().drop_watches();
    sim.create_pod(typed(pod("during")));
    sim.create_pod(typed(pod("after")));
    eventually("pods created around the drop", || cache.len() == 3).await;
}

#[tokio::test]
async fn an_expired_version_relists() {
    let sim = SimCluster::new();
    sim.create_pod(typed(pod("before")));
    let watched = Watched::start(sim.clone()).await;
    let cache = &watched.cache;
    sim.faults().expire_next_watch();
    sim.faults().drop_watches();
    sim.create_pod(typed(pod("after")));
    eventually("a relist", || cache.health().scopes[0].relists >= 1).await;
    eventually("the pod created meanwhile", || cache.len() == 2).await;
}

#[tokio::test]
async fn a_forbidden_list_is_shown_forbidden_until_it_is_allowed() {
    let sim = SimCluster::new();
    sim.create_pod(typed(pod("p")));
    // A streaming list is authorised as the watch it is: deny both ways of listing.
    sim.faults().deny("list", "pods", None);
    sim.faults().deny("watch", "pods", None);
    let server = SimServer::start(sim.clone()).await.unwrap();
    let cache = Cache::new();
    let _tasks = spawn_watches(&server.client(), &[Scope::All], &cache, &quick_watch());
    eventually("the error to show", || {
        cache.health().last_error().is_some()
    })
    .await;
    let health = cache.health();
    assert!(!health.synced());
    let error = health.last_error().unwrap();
    assert!(error.contains("forbidden"), "the server's words: {error}");
    assert!(
        error.contains("kubectl auth can-i list pods -A") && !error.contains("Status {"),
        "what to do, not a Debug dump: {error}"
    );
    sim.faults().allow_all();
    eventually("recovery", || cache.health().synced() && cache.len() == 1).await;
    assert!(cache.health().last_error().is_none());
}

#[test]
fn findings_of_keeps_chain_precedence() {
    let cache = Cache::new();
    let now = chrono::Utc::now();
    // Evicted and terminating at once: the evicted rule claims it, first in the chain.
    let both = pod("both")
        .evicted()
        .terminating_since("2026-01-01T00:00:00Z")
        .wire();
    cache.upsert(both, now);
    cache.upsert(
        pod("stuck")
            .terminating_since("2026-01-01T00:00:00Z")
            .wire(),
        now,
    );
    let terminating = cache.findings_of(|rule| rule == RuleKind::Terminating);
    let names: Vec<&str> = terminating.iter().map(|a| &*a.pod.name).collect();
    assert_eq!(
        names,
        ["stuck"],
        "a pod claimed earlier in the chain stays claimed"
    );
    assert_eq!(cache.findings().len(), 2);
}

#[tokio::test]
async fn a_refused_connection_says_what_failed_and_what_to_check() {
    let server = SimServer::start(SimCluster::new()).await.unwrap();
    let client = server.client();
    server.shutdown().await;
    let error = list_pods(
        &client,
        &Scope::Namespace("shop".into()),
        100,
        opc_core::config::WireFormat::default(),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("list pods in namespace shop failed"),
        "{error}"
    );
    assert!(
        error.to_lowercase().contains("connect"),
        "the cause: {error}"
    );
    assert!(
        error.contains("Check that the API server is reachable"),
        "{error}"
    );
}

#[tokio::test]
async fn an_unknown_context_lists_the_ones_there_are() {
    let server = SimServer::start(SimCluster::new()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubeconfig");
    server.write_kubeconfig(&path).unwrap();
    let options = ConnectOptions {
        kubeconfig: Some(path),
        context: Some("prod".into()),
        ..ConnectOptions::default()
    };
    let Err(error) = connect(&options).await else {
        panic!("connected to a context that does not exist");
    };
    let error = error.to_string();
    assert!(
        error.contains("no context \"prod\"") && error.contains("the contexts there are: sim"),
        "{error}"
    );
}
