//! Pods are listed in protobuf, page by page, and watched in protobuf frames, where the API
//! server speaks it; in JSON where it answers that instead, or where JSON is forced. Which one
//! a scope's pods came in is in its health.

use crate::support;

use k8s_openapi::api::core::v1::Pod;
use kube_sim::{SimCluster, SimServer, StreamingLists};
use opc_core::cluster::{Cache, Scope, WatchSettings, spawn_watches};
use opc_core::config::WireFormat;
use serde_json::json;
use support::contexts::{Scratch, run};
use support::sim::{eventually, quick_watch};

fn pod_named(name: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "default", "annotations": {"team": "shop"}},
        "spec": {"containers": [{"name": "app", "image": "registry.local/app:1",
                                 "resources": {"limits": {"memory": "64Mi"}}}]},
    }))
    .unwrap()
}

/// A 1.24-like server (no streaming lists, so the first view is a paged list) holding `n`
/// pods, some of them failing.
fn sim_with_pods(n: usize) -> SimCluster {
    let sim = SimCluster::new();
    sim.set_streaming_lists(StreamingLists::Rejected);
    for i in 0..n {
        sim.create_pod(pod_named(&format!("p{i}")));
    }
    sim
}

/// Watch every namespace of `sim` asking for `wire`; the names of the pods the first complete
/// list brought, and the format it came in.
async fn first_list(sim: &SimCluster, wire: WireFormat) -> (Vec<String>, Option<WireFormat>) {
    let server = SimServer::start(sim.clone()).await.unwrap();
    let cache = Cache::new();
    let settings = WatchSettings {
        wire,
        ..quick_watch()
    };
    let _watches = spawn_watches(&server.client(), &[Scope::All], &cache, &settings);
    eventually("the first sync", || cache.health().synced()).await;
    let mut names = cache.fold(Vec::new(), |mut names, pod| {
        names.push(pod.name.to_string());
        names
    });
    names.sort();
    (names, cache.health().scopes[0].format)
}

fn expected(n: usize) -> Vec<String> {
    let mut names: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
    names.sort();
    names
}

#[tokio::test]
async fn pods_come_in_protobuf_unless_the_server_or_the_config_says_json() {
    // (asked for, the server answers JSON only, what the list came in)
    let cases = [
        (WireFormat::Protobuf, false, WireFormat::Protobuf),
        (WireFormat::Protobuf, true, WireFormat::Json),
        (WireFormat::Json, false, WireFormat::Json),
    ];
    for (asked, json_only, came) in cases {
        // quick_watch's pages are small: 25 pods take several continue tokens.
        let sim = sim_with_pods(25);
        sim.faults().answer_json_only(json_only);
        let (names, format) = first_list(&sim, asked).await;
        assert_eq!(format, Some(came), "{asked:?}, JSON only: {json_only}");
        assert_eq!(names, expected(25), "{asked:?}, JSON only: {json_only}");
    }
}

#[tokio::test]
async fn pods_are_watched_in_protobuf_unless_the_server_or_the_config_says_json() {
    // (asked for, the server answers JSON only, watched in protobuf frames)
    let cases = [
        (WireFormat::Protobuf, false, true),
        (WireFormat::Protobuf, true, false),
        (WireFormat::Json, false, false),
    ];
    for (asked, json_only, frames) in cases {
        let sim = sim_with_pods(2);
        sim.faults().answer_json_only(json_only);
        let server = SimServer::start(sim.clone()).await.unwrap();
        let cache = Cache::new();
        let settings = WatchSettings {
            wire: asked,
            ..quick_watch()
        };
        let _watches = spawn_watches(&server.client(), &[Scope::All], &cache, &settings);
        eventually("the first sync", || cache.health().synced()).await;
        // The list syncs the cache before the watch is opened: count once it is open.
        eventually("the watch after the list", || sim.watches_served() > 0).await;
        let served = sim.protobuf_watches_served();
        // After the list, a change reaches the cache through the watch alone.
        sim.create_pod(pod_named("late"));
        let late = || cache.fold(false, |seen, pod| seen || &*pod.name == "late");
        eventually("the pod made after the list", late).await;
        let case = format!("{asked:?}, JSON only: {json_only}");
        assert_eq!(sim.protobuf_watches_served() > 0, frames, "{case}");
        assert_eq!(
            sim.protobuf_watches_served(),
            served,
            "{case}: the pod came by the open watch"
        );
        let came = if frames {
            WireFormat::Protobuf
        } else {
            WireFormat::Json
        };
        assert_eq!(cache.health().scopes[0].format, Some(came), "{case}");
    }
}

#[tokio::test]
async fn a_protobuf_error_is_read_with_its_words() {
    let sim = sim_with_pods(1);
    sim.faults().deny("list", "pods", None);
    let server = SimServer::start(sim.clone()).await.unwrap();
    let cache = Cache::new();
    let _watches = spawn_watches(&server.client(), &[Scope::All], &cache, &quick_watch());
    eventually("the refusal", || cache.health().last_error().is_some()).await;
    let health = cache.health();
    let error = health.last_error().unwrap();
    // The 403 is known for what it is, and the server's own words are kept.
    assert!(
        error.starts_with("forbidden: this identity may not list pods"),
        "{error}"
    );
    assert!(error.contains("pods is forbidden: User"), "{error}");
}

#[test]
fn the_cluster_section_can_force_json() {
    use opc_core::config::Config;
    let forced = Config::from_yaml("cluster:\n  wireFormat: json\n", "json.yaml").unwrap();
    let watch = opc_core::cluster::watch_settings(&forced.cluster).unwrap();
    assert_eq!(watch.wire, WireFormat::Json);
    let default = Config::from_yaml("cluster: {}\n", "default.yaml").unwrap();
    assert_eq!(default.cluster.wire_format, WireFormat::Protobuf);
    let error = Config::from_yaml("cluster:\n  wireFormat: xml\n", "bad.yaml").unwrap_err();
    assert!(error.to_string().contains("cluster.wireFormat"), "{error}");
}

/// `scan` lists in the format the config says, as the watches do.
#[tokio::test]
async fn scan_lists_in_the_configured_wire_format() {
    for (yaml, protobuf) in [("", true), ("cluster:\n  wireFormat: json\n", false)] {
        let sim = sim_with_pods(2);
        let server = SimServer::start(sim.clone()).await.unwrap();
        let scratch = Scratch::new(&[("east", &server)], yaml);
        let out = run(scratch.args(&["scan", "-o", "json"])).await;
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(sim.protobuf_asked() > 0, protobuf, "config {yaml:?}");
    }
}
