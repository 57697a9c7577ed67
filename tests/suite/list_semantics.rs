//! Lists and relists served from the API server's watch cache, streaming
//! lists where the server has them, paged lists where it does not. The exact queries are
//! checked against a scripted API; the behaviour against the simulated server.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube_sim::{SimCluster, StreamingLists};
use opc_core::cluster::{Cache, Scope, WatchSettings, spawn_watches};
use serde_json::{Value, json};
use support::mock_api::{Scenario, status};
use support::pods::pod;
use support::sim::{Watched, eventually, quick_watch};

/// Default pages and watch timeout (the queries as shipped), quick backoff.
fn settings() -> WatchSettings {
    WatchSettings {
        page_size: 500,
        watch_timeout: Duration::from_secs(290),
        ..quick_watch()
    }
}

const WATCH: &str = "/api/v1/pods?watch=true&timeoutSeconds=290&allowWatchBookmarks=true";

fn streaming_list(version: &str) -> String {
    format!(
        "{WATCH}&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion={version}"
    )
}

fn watch_from(version: &str) -> String {
    format!("{WATCH}&resourceVersion={version}")
}

fn page(version: &str, token: Option<&str>, names: &[&str]) -> Value {
    let mut metadata = json!({ "resourceVersion": version });
    if let Some(token) = token {
        metadata["continue"] = json!(token);
    }
    let items: Vec<Value> = names.iter().map(|n| pod(n).json()).collect();
    json!({ "kind": "PodList", "apiVersion": "v1", "metadata": metadata, "items": items })
}

/// The bookmark that ends a streaming list's initial events.
fn initial_events_end(version: &str) -> Value {
    json!({ "type": "BOOKMARK", "object": { "kind": "Pod", "apiVersion": "v1", "metadata": {
        "resourceVersion": version, "annotations": { "k8s.io/initial-events-end": "true" } } } })
}

fn expired(version: &str) -> Value {
    status(
        410,
        "Expired",
        &format!("too old resource version: {version} (1000)"),
    )
}

/// Longer than any backoff or settle `settings` gives the flow.
const QUIET_FOR: Duration = Duration::from_secs(2);

/// On paused time (the scripted API is in-process, no sockets): watch every namespace through
/// `scenario` until its last request (a watch left hanging)
/// arrives; then every request must have been the expected one.
async fn run(scenario: Scenario, arrived: Arc<AtomicBool>) -> Cache {
    let cache = Cache::new();
    let _watches = spawn_watches(&scenario.client(), &[Scope::All], &cache, &settings());
    eventually("the last expected request", || {
        arrived.load(Ordering::SeqCst)
    })
    .await;
    // On paused time, this runs every timer due within it and every task they wake: past
    // every backoff (200 ms at most) and settle of the flow, a request out of turn has come.
    tokio::time::sleep(QUIET_FOR).await;
    scenario.verify();
    cache
}

fn flag() -> (Arc<AtomicBool>, impl Fn() + Send + 'static) {
    let arrived = Arc::new(AtomicBool::new(false));
    let set = arrived.clone();
    (arrived, move || set.store(true, Ordering::SeqCst))
}

#[tokio::test(start_paused = true)]
async fn without_streaming_lists_pages_come_from_the_watch_cache_and_relists_never_go_back() {
    let (arrived, hook) = flag();
    let scenario = Scenario::new()
        .expect(
            "GET",
            &streaming_list("0"),
            None,
            422,
            status(
                422,
                "Invalid",
                "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: \
                 sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
            ),
        )
        .expect(
            "GET",
            "/api/v1/pods?limit=500&resourceVersion=0&resourceVersionMatch=NotOlderThan",
            None,
            200,
            page("100", Some("a/b+c="), &["p1"]),
        )
        // A continue token carries its snapshot: no resourceVersion beside it.
        .expect(
            "GET",
            "/api/v1/pods?limit=500&continue=a%2Fb%2Bc%3D",
            None,
            200,
            page("100", None, &["p2"]),
        )
        .expect("GET", &watch_from("100"), None, 410, expired("100"))
        // Remembered: no second streaming list; the relist is not older than what was seen.
        .expect(
            "GET",
            "/api/v1/pods?limit=500&resourceVersion=100&resourceVersionMatch=NotOlderThan",
            None,
            200,
            page("160", None, &["p1"]),
        )
        .expect_then("GET", &watch_from("160"), None, 200, json!({}), hook)
        .hang_after();
    let cache = run(scenario, arrived).await;
    assert_eq!(cache.len(), 1);
    assert_eq!(cache.health().scopes[0].relists, 1);
    assert!(cache.health().synced());
}

#[tokio::test(start_paused = true)]
async fn a_streaming_list_goes_on_as_the_watch_and_relists_not_older_than_it_saw() {
    let (arrived, hook) = flag();
    let scenario = Scenario::new()
        .expect(
            "GET",
            &streaming_list("0"),
            None,
            200,
            initial_events_end("200"),
        )
        // The stream ended after the bookmark: the watch resumes where it was.
        .expect("GET", &watch_from("200"), None, 410, expired("200"))
        .expect(
            "GET",
            &streaming_list("200"),
            None,
            200,
            initial_events_end("250"),
        )
        .expect_then("GET", &watch_from("250"), None, 200, json!({}), hook)
        .hang_after();
    let cache = run(scenario, arrived).await;
    assert!(cache.health().synced());
    assert_eq!(cache.health().scopes[0].relists, 1);
}

#[tokio::test(start_paused = true)]
async fn a_version_the_server_cannot_serve_is_forgotten_for_one_quorum_read() {
    let (arrived, hook) = flag();
    let too_large = status(
        504,
        "Timeout",
        "Too large resource version: 100, current: 90",
    );
    let scenario = Scenario::new()
        .expect(
            "GET",
            &streaming_list("0"),
            None,
            422,
            status(422, "Invalid", "no"),
        )
        .expect(
            "GET",
            "/api/v1/pods?limit=500&resourceVersion=0&resourceVersionMatch=NotOlderThan",
            None,
            200,
            page("100", None, &["p1"]),
        )
        .expect("GET", &watch_from("100"), None, 410, expired("100"))
        .expect(
            "GET",
            "/api/v1/pods?limit=500&resourceVersion=100&resourceVersionMatch=NotOlderThan",
            None,
            504,
            too_large,
        )
        // etcd was restored behind what was seen: only the latest state can be had.
        .expect(
            "GET",
            "/api/v1/pods?limit=500",
            None,
            200,
            page("95", None, &["p1", "p2"]),
        )
        .expect_then("GET", &watch_from("95"), None, 200, json!({}), hook)
        .hang_after();
    let cache = run(scenario, arrived).await;
    assert_eq!(cache.len(), 2);
}

fn typed(name: &str) -> Pod {
    serde_json::from_value(pod(name).json()).unwrap()
}

#[tokio::test]
async fn no_quorum_reads_whatever_the_server_says_to_streaming_lists() {
    for mode in [
        StreamingLists::Served,
        StreamingLists::Rejected,
        StreamingLists::Ignored,
    ] {
        let sim = SimCluster::new();
        sim.set_streaming_lists(mode);
        sim.create_pod(typed("before"));
        let watched = Watched::start(sim.clone()).await;
        let cache = &watched.cache;
        assert_eq!(cache.len(), 1, "{mode:?}");
        sim.faults().expire_next_watch();
        sim.faults().drop_watches();
        sim.create_pod(typed("after"));
        eventually("a relist", || cache.health().scopes[0].relists >= 1).await;
        eventually("the pod created meanwhile", || cache.len() == 2).await;
        assert_eq!(
            sim.etcd_lists(),
            0,
            "{mode:?}: every list came from the watch cache"
        );
        let paged = sim.cached_lists();
        match mode {
            StreamingLists::Served => assert_eq!(paged, 0, "streaming lists only"),
            _ => assert!(
                paged >= 2,
                "{mode:?}: paged lists, first and relist ({paged})"
            ),
        }
    }
}

#[tokio::test]
async fn a_lagging_watch_cache_never_takes_a_relist_back_in_time() {
    for mode in [StreamingLists::Served, StreamingLists::Rejected] {
        let sim = SimCluster::new();
        sim.set_streaming_lists(mode);
        sim.set_too_large_wait(Duration::from_millis(200));
        sim.create_pod(typed("before"));
        let watched = Watched::start(sim.clone()).await;
        let cache = &watched.cache;
        // The cache lags; the watch still sees the new pod (the simulator serves it from its
        // change history), so the scope has seen a version the cache has not reached.
        sim.hold_watch_cache(true);
        sim.create_pod(typed("after"));
        eventually("the new pod", || cache.len() == 2).await;
        sim.faults().expire_next_watch();
        sim.faults().drop_watches();
        eventually("the relist", || {
            let health = cache.health();
            health.scopes[0].relists >= 1 && !health.relisting() && sim.etcd_lists() >= 1
        })
        .await;
        assert_eq!(cache.len(), 2, "{mode:?}: the stale cache was not taken");
        assert_eq!(
            sim.etcd_lists(),
            1,
            "{mode:?}: one quorum read, after the 504"
        );
    }
}
