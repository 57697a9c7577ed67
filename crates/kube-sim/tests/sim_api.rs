//! The simulated API server, exercised through an unchanged `kube::Client`.

// A test, bench or example fails by panicking: the workspace's panic policy is for the product.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use k8s_openapi::api::core::v1::{ContainerStateWaiting, Event, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{
    Api, DeleteParams, DynamicObject, EvictParams, ListParams, Patch, PatchParams, PostParams,
    Preconditions, WatchEvent, WatchParams,
};
use kube::core::GroupVersionKind;
use kube_sim::{Injected, PodEvent, SimCluster, SimServer, StreamingLists};
use serde_json::{Value, json};

async fn start() -> (SimCluster, SimServer) {
    let cluster = SimCluster::new();
    let server = SimServer::start(cluster.clone())
        .await
        .expect("server starts");
    (cluster, server)
}

/// A pod bound to a node and running, seeded directly.
fn running_pod(ns: &str, name: &str, labels: Value) -> Pod {
    serde_json::from_value(json!({
        "metadata": { "name": name, "namespace": ns, "labels": labels },
        "spec": { "nodeName": "sim-node-1", "terminationGracePeriodSeconds": 30,
                  "containers": [{ "name": "app", "image": "nginx:1.27" }] },
        "status": { "phase": "Running",
                    "conditions": [{ "type": "Ready", "status": "True" }] },
    }))
    .expect("valid pod")
}

fn api_status(err: kube::Error) -> kube::core::Status {
    match err {
        kube::Error::Api(status) => *status,
        other => panic!("expected an API error, got {other}"),
    }
}

/// Poll until `check` holds (the kubelet works on a 100 ms tick).
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..100 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for: {what}");
}

fn deployment(name: &str, replicas: i32) -> Deployment {
    serde_json::from_value(json!({
        "metadata": { "name": name, "namespace": "default" },
        "spec": {
            "replicas": replicas,
            "selector": { "matchLabels": { "app": name } },
            "template": {
                "metadata": { "labels": { "app": name } },
                "spec": { "terminationGracePeriodSeconds": 1,
                          "containers": [{ "name": "app", "image": "nginx:1.27" }] },
            },
        },
    }))
    .expect("valid deployment")
}

#[tokio::test]
async fn lists_page_with_limit_and_continue_on_a_consistent_snapshot() {
    let (cluster, server) = start().await;
    for i in 0..5 {
        cluster.create_pod(running_pod("default", &format!("p{i}"), json!({})));
    }
    let pods: Api<Pod> = Api::default_namespaced(server.client());
    let first = pods.list(&ListParams::default().limit(2)).await.unwrap();
    assert_eq!(first.items.len(), 2);
    assert_eq!(first.metadata.remaining_item_count, Some(3));
    let token = first.metadata.continue_.clone().expect("a continue token");

    // A pod created between pages is not part of the snapshot being paged.
    cluster.create_pod(running_pod("default", "p9", json!({})));
    let mut names: Vec<String> = first
        .items
        .iter()
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    let mut token = Some(token);
    while let Some(t) = token {
        let page = pods
            .list(&ListParams::default().limit(2).continue_token(&t))
            .await
            .unwrap();
        assert_eq!(
            page.metadata.resource_version,
            first.metadata.resource_version
        );
        names.extend(page.items.iter().filter_map(|p| p.metadata.name.clone()));
        token = page.metadata.continue_.filter(|c| !c.is_empty());
    }
    assert_eq!(names, ["p0", "p1", "p2", "p3", "p4"]);
    assert_eq!(
        pods.list(&ListParams::default()).await.unwrap().items.len(),
        6
    );
}

/// kube-apiserver writes `kind`, `apiVersion`, `metadata`, then the items: a client that decodes
/// a list as it arrives reads the continue token before the items, and asks for the next page
/// while this one decodes.
#[tokio::test]
async fn a_list_writes_its_metadata_before_its_items() {
    let (cluster, server) = start().await;
    for i in 0..3 {
        cluster.create_pod(running_pod("default", &format!("p{i}"), json!({})));
    }
    let request = http::Request::get("/api/v1/namespaces/default/pods?limit=2")
        .body(Vec::new())
        .unwrap();
    let text = server.client().request_text(request).await.unwrap();
    assert!(
        text.starts_with(r#"{"kind":"PodList","apiVersion":"v1","metadata":{"#),
        "{}",
        &text[..80.min(text.len())]
    );
    let (meta, items) = (
        text.find("\"continue\"").unwrap(),
        text.find("\"items\"").unwrap(),
    );
    assert!(meta < items, "the continue token comes before the items");
}

#[tokio::test]
async fn continue_token_expires_after_compaction() {
    let (cluster, server) = start().await;
    for i in 0..3 {
        cluster.create_pod(running_pod("default", &format!("p{i}"), json!({})));
    }
    let pods: Api<Pod> = Api::default_namespaced(server.client());
    let first = pods.list(&ListParams::default().limit(1)).await.unwrap();
    let token = first.metadata.continue_.expect("token");
    cluster.create_pod(running_pod("default", "later", json!({})));
    cluster.faults().compact_history();
    let err = pods
        .list(&ListParams::default().limit(1).continue_token(&token))
        .await
        .unwrap_err();
    let status = api_status(err);
    assert_eq!((status.code, status.reason.as_str()), (410, "Expired"));
}

#[tokio::test]
async fn selectors_filter_lists() {
    let (cluster, server) = start().await;
    cluster.create_pod(running_pod(
        "default",
        "web",
        json!({ "app": "web", "tier": "front" }),
    ));
    cluster.create_pod(running_pod("default", "db", json!({ "app": "db" })));
    cluster.create_pod(running_pod("other", "web", json!({ "app": "web" })));
    let all: Api<Pod> = Api::all(server.client());
    let names = |l: kube::core::ObjectList<Pod>| -> Vec<String> {
        l.items
            .into_iter()
            .filter_map(|p| p.metadata.namespace.zip(p.metadata.name))
            .map(|(a, b)| format!("{a}/{b}"))
            .collect()
    };
    let webs = all
        .list(&ListParams::default().labels("app=web,tier!=back"))
        .await
        .unwrap();
    assert_eq!(names(webs), ["default/web", "other/web"]);
    let by_name = all
        .list(&ListParams::default().fields("metadata.name=db"))
        .await
        .unwrap();
    assert_eq!(names(by_name), ["default/db"]);
    let by_node = all
        .list(&ListParams::default().fields("spec.nodeName=sim-node-2"))
        .await
        .unwrap();
    assert!(by_node.items.is_empty());
    let err = all
        .list(&ListParams::default().fields("spec.bogus=x"))
        .await
        .unwrap_err();
    assert_eq!(api_status(err).code, 400);
}

#[tokio::test]
async fn watch_from_a_version_replays_added_modified_deleted() {
    let (cluster, server) = start().await;
    let pods: Api<Pod> = Api::default_namespaced(server.client());
    let rv = pods
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    cluster.create_pod(running_pod("default", "w", json!({})));
    cluster.create_pod(running_pod("elsewhere", "x", json!({})));
    cluster.update_pod_status("default", "w", |s| s.phase = Some("Failed".into()));
    pods.delete("w", &DeleteParams::default()).await.unwrap();

    let stream = pods
        .watch(&WatchParams::default().timeout(2), &rv)
        .await
        .unwrap();
    let events: Vec<String> = stream
        .take(3)
        .map_ok(|e| match e {
            WatchEvent::Added(p) => format!("ADDED {}", p.metadata.name.unwrap_or_default()),
            WatchEvent::Modified(p) => format!("MODIFIED {}", p.metadata.name.unwrap_or_default()),
            WatchEvent::Deleted(p) => format!("DELETED {}", p.metadata.name.unwrap_or_default()),
            other => format!("{other:?}"),
        })
        .try_collect()
        .await
        .unwrap();
    assert_eq!(events, ["ADDED w", "MODIFIED w", "DELETED w"]);
}

#[tokio::test]
async fn watch_sends_bookmarks_and_live_events() {
    let (cluster, server) = start().await;
    cluster.set_bookmark_interval(Duration::from_millis(100));
    let pods: Api<Pod> = Api::default_namespaced(server.client());
    let rv = cluster.resource_version().to_string();
    let mut stream = pods
        .watch(&WatchParams::default().timeout(5), &rv)
        .await
        .unwrap()
        .boxed();
    let first = stream.try_next().await.unwrap().expect("an event");
    let WatchEvent::Bookmark(b) = first else {
        panic!("expected a bookmark, got {first:?}")
    };
    assert_eq!(b.metadata.resource_version, rv);
    cluster.create_pod(running_pod("default", "live", json!({})));
    loop {
        match stream.try_next().await.unwrap().expect("an event") {
            WatchEvent::Added(p) => {
                assert_eq!(p.metadata.name.as_deref(), Some("live"));
                break;
            }
            WatchEvent::Bookmark(_) => continue,
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[tokio::test]
async fn watch_from_a_compacted_version_gets_410_expired() {
    let (cluster, server) = start().await;
    let pods: Api<Pod> = Api::default_namespaced(server.client());
    let old = cluster.resource_version().to_string();
    cluster.create_pod(running_pod("default", "a", json!({})));
    cluster.compact();
    let mut stream = pods
        .watch(&WatchParams::default().timeout(2), &old)
        .await
        .unwrap()
        .boxed();
    match stream.try_next().await.unwrap() {
        Some(WatchEvent::Error(status)) => {
            assert_eq!((status.code, status.reason.as_str()), (410, "Expired"))
        }
        other => panic!("expected a 410 ERROR event, got {other:?}"),
    }
    assert!(
        stream.try_next().await.unwrap().is_none(),
        "the stream closes after the error"
    );
}

#[tokio::test]
async fn graceful_delete_completes_on_a_live_node_but_not_on_a_lost_one() {
    let (cluster, server) = start().await;
    cluster.create_pod(running_pod("default", "live", json!({})));
    let mut lost = running_pod("default", "lost", json!({}));
    lost.spec.as_mut().unwrap().node_name = Some("sim-node-2".into());
    cluster.create_pod(lost);
    cluster.set_node_alive("sim-node-2", false);
    let pods: Api<Pod> = Api::default_namespaced(server.client());

    // The lost pod first: its grace ends no later than the live one's.
    for name in ["lost", "live"] {
        let res = pods
            .delete(name, &DeleteParams::default().grace_period(1))
            .await
            .unwrap();
        let pod = res.left().expect("a graceful delete returns the pod");
        assert!(pod.metadata.deletion_timestamp.is_some());
        assert_eq!(pod.metadata.deletion_grace_period_seconds, Some(1));
    }
    eventually("live pod removed after its grace", || {
        cluster.pod("default", "live").is_none()
    })
    .await;
    // One kubelet pass finishes every deletion due by then, the lost pod's included if its
    // node were alive: the pass that removed the live pod has passed over it.
    let stuck = cluster
        .pod("default", "lost")
        .expect("still there on a lost node");
    assert!(stuck.metadata.deletion_timestamp.is_some());

    pods.delete("lost", &DeleteParams::default().grace_period(0))
        .await
        .unwrap();
    assert!(cluster.pod("default", "lost").is_none());
}

#[tokio::test]
async fn force_delete_waits_for_finalizers() {
    let (cluster, server) = start().await;
    let mut pod = running_pod("default", "fin", json!({}));
    pod.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    cluster.create_pod(pod);
    let pods: Api<Pod> = Api::default_namespaced(server.client());
    pods.delete("fin", &DeleteParams::default().grace_period(0))
        .await
        .unwrap();
    let held = cluster
        .pod("default", "fin")
        .expect("held by its finalizer");
    assert!(held.metadata.deletion_timestamp.is_some());
    assert_eq!(held.metadata.deletion_grace_period_seconds, Some(0));

    // A JSON patch, sent raw: kube's typed `Patch::Json` needs the json-patch crate.
    let body =
        serde_json::to_vec(&json!([{ "op": "remove", "path": "/metadata/finalizers" }])).unwrap();
    let req = http::Request::patch("/api/v1/namespaces/default/pods/fin")
        .header("content-type", "application/json-patch+json")
        .body(body)
        .unwrap();
    let last: Pod = server.client().request(req).await.unwrap();
    assert!(last.metadata.finalizers.is_none());
    assert!(cluster.pod("default", "fin").is_none());
}

#[tokio::test]
async fn uid_precondition_mismatch_is_409_and_missing_pod_is_404() {
    let (cluster, server) = start().await;
    cluster.create_pod(running_pod("default", "p", json!({})));
    let pods: Api<Pod> = Api::default_namespaced(server.client());
    let dp = DeleteParams::default().preconditions(Preconditions {
        uid: Some("not-the-uid".into()),
        ..Default::default()
    });
    let status = api_status(pods.delete("p", &dp).await.unwrap_err());
    assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
    assert!(
        status
            .message
            .contains("Precondition failed: UID in precondition: not-the-uid"),
        "{}",
        status.message
    );
    assert!(cluster.pod("default", "p").is_some());

    let status = api_status(pods.get("nope").await.unwrap_err());
    assert_eq!((status.code, status.reason.as_str()), (404, "NotFound"));
    assert_eq!(status.message, "pods \"nope\" not found");
    assert_eq!(status.details.map(|d| d.name), Some("nope".to_string()));
}

#[tokio::test]
async fn replica_set_replaces_a_deleted_pod() {
    let (cluster, server) = start().await;
    let rs: ReplicaSet = serde_json::from_value(json!({
        "metadata": { "name": "web", "namespace": "default" },
        "spec": { "replicas": 2, "selector": { "matchLabels": { "app": "web" } },
                  "template": { "metadata": { "labels": { "app": "web" } },
                                "spec": { "containers": [{ "name": "app", "image": "nginx:1.27" }] } } },
    }))
    .unwrap();
    let rs = cluster.create_replicaset(rs);
    let before = cluster.live_pods("web-");
    assert_eq!(before.len(), 2);
    let owner = &before[0].metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.controller),
        ("ReplicaSet", Some(true))
    );
    assert_eq!(Some(&owner.uid), rs.metadata.uid.as_ref());
    assert_eq!(
        before[0].status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Running")
    );

    let pods: Api<Pod> = Api::default_namespaced(server.client());
    let victim = before[0].metadata.name.clone().unwrap();
    pods.delete(&victim, &DeleteParams::default().grace_period(0))
        .await
        .unwrap();
    let after = cluster.live_pods("web-");
    assert_eq!(after.len(), 2);
    assert!(
        after
            .iter()
            .all(|p| p.metadata.name.as_deref() != Some(victim.as_str()))
    );
}

#[tokio::test]
async fn deployment_scale_to_zero_removes_its_pods() {
    let (cluster, server) = start().await;
    cluster.create_deployment(deployment("api", 3));
    assert_eq!(cluster.live_pods("api-").len(), 3);
    let deployments: Api<Deployment> = Api::default_namespaced(server.client());
    let scale = deployments.get_scale("api").await.unwrap();
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(3));

    let patch = Patch::Merge(json!({ "spec": { "replicas": 0 } }));
    let scaled = deployments
        .patch_scale("api", &PatchParams::default(), &patch)
        .await
        .unwrap();
    assert_eq!(scaled.spec.and_then(|s| s.replicas), Some(0));
    assert!(cluster.live_pods("api-").is_empty());
    eventually("terminating pods removed", || cluster.pods().is_empty()).await;
    let d = deployments.get("api").await.unwrap();
    assert_eq!(d.spec.and_then(|s| s.replicas), Some(0));
}

#[tokio::test]
async fn image_pull_shaper_keeps_producing_failing_pods() {
    let (cluster, _server) = start().await;
    cluster.set_pod_shaper(|pod| {
        let status = pod.status.get_or_insert_with(Default::default);
        for cs in status.container_statuses.iter_mut().flatten() {
            cs.ready = false;
            cs.state = Some(k8s_openapi::api::core::v1::ContainerState {
                waiting: Some(ContainerStateWaiting {
                    reason: Some("ImagePullBackOff".into()),
                    ..Default::default()
                }),
                ..Default::default()
            });
        }
        status.phase = Some("Pending".into());
        status.conditions = None;
    });
    cluster.create_deployment(deployment("bad", 2));
    let pods = cluster.live_pods("bad-");
    assert_eq!(pods.len(), 2);
    let reason = pods[0]
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|c| {
            c[0].state
                .as_ref()
                .and_then(|s| s.waiting.as_ref())
                .and_then(|w| w.reason.clone())
        });
    assert_eq!(reason.as_deref(), Some("ImagePullBackOff"));
}

#[tokio::test]
async fn statefulset_owns_ordinal_pods() {
    let (cluster, _server) = start().await;
    let sts: StatefulSet = serde_json::from_value(json!({
        "metadata": { "name": "db", "namespace": "default" },
        "spec": { "replicas": 2, "serviceName": "db", "selector": { "matchLabels": { "app": "db" } },
                  "template": { "metadata": { "labels": { "app": "db" } },
                                "spec": { "containers": [{ "name": "db", "image": "postgres:16" }] } } },
    }))
    .unwrap();
    cluster.create_statefulset(sts);
    let names: Vec<String> = cluster
        .live_pods("db-")
        .into_iter()
        .filter_map(|p| p.metadata.name)
        .collect();
    assert_eq!(names, ["db-0", "db-1"]);
}

#[tokio::test]
async fn rollout_scales_through_the_dynamic_api() {
    let (cluster, server) = start().await;
    cluster.create_rollout(json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "metadata": { "name": "canary", "namespace": "default" },
        "spec": { "replicas": 2, "selector": { "matchLabels": { "app": "canary" } },
                  "template": { "metadata": { "labels": { "app": "canary" } },
                                "spec": { "containers": [{ "name": "app", "image": "nginx:1.27" }] } } },
    }));
    assert_eq!(cluster.live_pods("canary-").len(), 2);
    let client = server.client();
    let gvk = GroupVersionKind::gvk("argoproj.io", "v1alpha1", "Rollout");
    let (ar, _caps) = kube::discovery::pinned_kind(&client, &gvk).await.unwrap();
    assert_eq!(ar.plural, "rollouts");
    let rollouts: Api<DynamicObject> = Api::namespaced_with(client, "default", &ar);
    let patch = Patch::Merge(json!({ "spec": { "replicas": 0 } }));
    rollouts
        .patch_scale("canary", &PatchParams::default(), &patch)
        .await
        .unwrap();
    assert!(cluster.live_pods("canary-").is_empty());
    let obj = rollouts.get("canary").await.unwrap();
    assert_eq!(obj.data["spec"]["replicas"], 0);
}

#[tokio::test]
async fn eviction_honours_the_disruption_budget() {
    let (cluster, server) = start().await;
    cluster.create_deployment(deployment("guarded", 2));
    let pdb: PodDisruptionBudget = serde_json::from_value(json!({
        "metadata": { "name": "guard", "namespace": "default" },
        "spec": { "minAvailable": 2, "selector": { "matchLabels": { "app": "guarded" } } },
    }))
    .unwrap();
    cluster.create_pdb(pdb);
    let pods: Api<Pod> = Api::default_namespaced(server.client());
    let victim = cluster.live_pods("guarded-")[0]
        .metadata
        .name
        .clone()
        .unwrap();
    let status = api_status(
        pods.evict(&victim, &EvictParams::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (status.code, status.reason.as_str()),
        (429, "TooManyRequests")
    );
    assert_eq!(
        status.message,
        "Cannot evict pod as it would violate the pod's disruption budget."
    );

    let relax = Patch::Merge(json!({ "spec": { "minAvailable": 1 } }));
    let pdbs: Api<PodDisruptionBudget> = Api::default_namespaced(server.client());
    pdbs.patch("guard", &PatchParams::default(), &relax)
        .await
        .unwrap();
    pods.evict(&victim, &EvictParams::default()).await.unwrap();
    let evicted = cluster.pod("default", &victim).expect("evicted gracefully");
    assert!(evicted.metadata.deletion_timestamp.is_some());
    let status = api_status(
        pods.evict("missing", &EvictParams::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(status.code, 404);
}

#[tokio::test]
async fn denied_verbs_are_forbidden_and_reviews_say_so() {
    let (cluster, server) = start().await;
    cluster.create_pod(running_pod("default", "x", json!({})));
    cluster.faults().deny("delete", "pods", Some("default"));
    let client = server.client();
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let status = api_status(
        pods.delete("x", &DeleteParams::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(status.code, 403);
    assert_eq!(
        status.message,
        "pods \"x\" is forbidden: User \"system:serviceaccount:sim:tester\" cannot delete resource \"pods\" in API group \"\" in the namespace \"default\""
    );
    assert!(cluster.pod("default", "x").is_some());

    let reviews: Api<SelfSubjectAccessReview> = Api::all(client);
    let review = |verb: &str| SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                namespace: Some("default".into()),
                verb: Some(verb.into()),
                resource: Some("pods".into()),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let denied = reviews
        .create(&PostParams::default(), &review("delete"))
        .await
        .unwrap();
    assert!(!denied.status.unwrap().allowed);
    let allowed = reviews
        .create(&PostParams::default(), &review("list"))
        .await
        .unwrap();
    assert!(allowed.status.unwrap().allowed);
}

#[tokio::test]
async fn throttling_fault_answers_429_with_retry_after() {
    let (_cluster, server) = start().await;
    server.cluster().faults().fail_next(
        1,
        Some("GET"),
        "/api/v1/namespaces/default/pods",
        Injected::TooManyRequests {
            retry_after_secs: 7,
        },
    );
    let client = server.client();
    let req = http::Request::get("/api/v1/namespaces/default/pods")
        .body(kube::client::Body::empty())
        .unwrap();
    let resp = client.send(req).await.unwrap();
    assert_eq!(resp.status(), 429);
    assert_eq!(
        resp.headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok()),
        Some("7")
    );
    let pods: Api<Pod> = Api::default_namespaced(client);
    assert!(
        pods.list(&ListParams::default()).await.is_ok(),
        "only the next request fails"
    );

    server
        .cluster()
        .faults()
        .throttle_next(1, None, "/api/v1", 3);
    let status = api_status(pods.list(&ListParams::default()).await.unwrap_err());
    assert_eq!(status.code, 429);
    assert_eq!(status.details.map(|d| d.retry_after_seconds), Some(3));
}

#[tokio::test]
async fn dropped_watches_end_and_kubeconfig_works() {
    let (cluster, server) = start().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubeconfig");
    server.write_kubeconfig(&path).unwrap();
    let kubeconfig = kube::config::Kubeconfig::read_from(&path).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap();
    assert_eq!(config.default_namespace, "default");
    let client = kube::Client::try_from(config).unwrap();
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    assert!(
        pods.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    let rv = cluster.resource_version().to_string();
    let mut stream = pods
        .watch(&WatchParams::default().timeout(30), &rv)
        .await
        .unwrap()
        .boxed();
    cluster.faults().drop_watches();
    let ended = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match stream.next().await {
                None | Some(Err(_)) => return,
                Some(Ok(_)) => continue,
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the watch ends when dropped");
}

#[tokio::test]
async fn stalled_watches_resume_and_expired_watches_get_410() {
    let (cluster, server) = start().await;
    let pods: Api<Pod> = Api::default_namespaced(server.client());
    let rv = cluster.resource_version().to_string();
    let params = WatchParams::default().disable_bookmarks().timeout(10);
    let mut stream = pods.watch(&params, &rv).await.unwrap().boxed();
    cluster.faults().stall_watches(true);
    cluster.create_pod(running_pod("default", "quiet", json!({})));
    let early = tokio::time::timeout(Duration::from_millis(400), stream.try_next()).await;
    assert!(early.is_err(), "nothing arrives while stalled");
    cluster.faults().stall_watches(false);
    match stream.try_next().await.unwrap() {
        Some(WatchEvent::Added(p)) => assert_eq!(p.metadata.name.as_deref(), Some("quiet")),
        other => panic!("expected the held-back ADDED, got {other:?}"),
    }

    cluster.faults().expire_next_watch();
    let current = cluster.resource_version().to_string();
    let mut expired = pods.watch(&params, &current).await.unwrap().boxed();
    match expired.try_next().await.unwrap() {
        Some(WatchEvent::Error(status)) => assert_eq!(status.code, 410),
        other => panic!("expected 410, got {other:?}"),
    }
}

#[tokio::test]
async fn silenced_watches_stay_open_past_their_timeout_and_send_nothing_new_ones_are_served() {
    let (cluster, server) = start().await;
    cluster.set_bookmark_interval(Duration::from_millis(50));
    let pods: Api<Pod> = Api::default_namespaced(server.client());
    let rv = cluster.resource_version().to_string();
    // A one-second watch with bookmarks every 50 ms: a live one would talk and then close.
    let mut stream = pods
        .watch(&WatchParams::default().timeout(1), &rv)
        .await
        .unwrap()
        .boxed();
    cluster.faults().silence_watches(true);
    cluster.create_pod(running_pod("default", "unheard", json!({})));
    let silent = tokio::time::timeout(Duration::from_millis(1500), stream.next()).await;
    assert!(
        silent.is_err(),
        "no event, no bookmark and no close while silent, even past the timeout: {silent:?}"
    );
    // A new connection gets through, as past a load balancer that dropped the old one.
    let mut fresh = pods
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    match tokio::time::timeout(Duration::from_secs(2), fresh.try_next()).await {
        Ok(Ok(Some(WatchEvent::Added(p)))) => {
            assert_eq!(p.metadata.name.as_deref(), Some("unheard"))
        }
        other => panic!("a watch opened while others are silent is served: {other:?}"),
    }
    cluster.faults().silence_watches(false);
    match stream.try_next().await.unwrap() {
        Some(WatchEvent::Added(p)) => assert_eq!(p.metadata.name.as_deref(), Some("unheard")),
        other => panic!("expected the held-back ADDED, got {other:?}"),
    }
}

#[tokio::test]
async fn hung_requests_get_no_answer_until_the_hang_is_lifted() {
    let (cluster, server) = start().await;
    cluster.create_pod(running_pod("default", "p", json!({})));
    let pods: Api<Pod> = Api::default_namespaced(server.client());
    cluster
        .faults()
        .hang(Some("get"), "/api/v1/namespaces/default/pods");
    let hung = tokio::spawn({
        let pods = pods.clone();
        async move { pods.get("p").await }
    });
    eventually("the GET to reach the server", || {
        cluster.faults().hung_requests() == 1
    })
    .await;
    // Other verbs and paths are served as usual.
    let listed = pods.list(&ListParams::default()).await.unwrap();
    assert_eq!(listed.items.len(), 1);
    let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(server.client());
    assert_eq!(
        nodes
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        3
    );
    // Answered after the GET arrived: the server is serving, and holds the GET still.
    assert!(!hung.is_finished(), "a hung GET gets no answer");
    assert_eq!(cluster.faults().hung_requests(), 1);
    cluster
        .faults()
        .unhang(Some("get"), "/api/v1/namespaces/default/pods");
    let answered = tokio::time::timeout(Duration::from_secs(2), hung).await;
    let pod = answered.expect("answered once lifted").unwrap().unwrap();
    assert_eq!(pod.metadata.name.as_deref(), Some("p"));
}

#[tokio::test]
async fn a_frozen_server_hangs_leases_lists_and_new_watches() {
    use k8s_openapi::api::coordination::v1::Lease;
    let (cluster, server) = start().await;
    let leases: Api<Lease> = Api::namespaced(server.client(), "ops");
    let no_answer = Duration::from_millis(400);
    cluster.faults().hang_leases("ops", true);
    let get = tokio::time::timeout(no_answer, leases.get_opt("ops-pod-cleaner")).await;
    assert!(get.is_err(), "a hung lease GET: {get:?}");
    cluster.faults().hang_leases("ops", false);
    assert!(leases.get_opt("ops-pod-cleaner").await.unwrap().is_none());

    cluster.faults().freeze(true);
    let pods: Api<Pod> = Api::all(server.client());
    let list = tokio::time::timeout(no_answer, pods.list(&ListParams::default())).await;
    assert!(list.is_err(), "a frozen server answers no list");
    let rv = cluster.resource_version().to_string();
    let watch = tokio::time::timeout(no_answer, pods.watch(&WatchParams::default(), &rv)).await;
    assert!(watch.is_err(), "nor a new watch");
    cluster.faults().freeze(false);
    assert!(pods.list(&ListParams::default()).await.is_ok(), "thawed");
}

#[tokio::test]
async fn injected_401_500_and_events_round_trip() {
    let (cluster, server) = start().await;
    let client = server.client();
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    cluster.faults().set_unauthorized(true);
    assert_eq!(
        api_status(pods.list(&ListParams::default()).await.unwrap_err()).code,
        401
    );
    cluster.faults().set_unauthorized(false);
    cluster.faults().fail_next(
        1,
        None,
        "/api/v1/namespaces/default/pods/x",
        Injected::InternalError,
    );
    assert_eq!(api_status(pods.get("x").await.unwrap_err()).code, 500);
    assert_eq!(api_status(pods.get("x").await.unwrap_err()).code, 404);

    let events: Api<k8s_openapi::api::core::v1::Event> = Api::default_namespaced(client.clone());
    let event = serde_json::from_value(json!({
        "metadata": { "generateName": "x." },
        "involvedObject": { "kind": "Pod", "namespace": "default", "name": "x" },
        "reason": "Cleaned", "message": "deleted by ops-pod-cleaner", "type": "Normal",
    }))
    .unwrap();
    events.create(&PostParams::default(), &event).await.unwrap();
    let v1: Api<k8s_openapi::api::events::v1::Event> = Api::default_namespaced(client);
    let listed = v1.list(&ListParams::default()).await.unwrap();
    assert_eq!(listed.items.len(), 1);
    assert_eq!(
        listed.items[0].note.as_deref(),
        Some("deleted by ops-pod-cleaner")
    );
    assert_eq!(cluster.events()[0].reason.as_deref(), Some("Cleaned"));
}

#[tokio::test]
async fn malformed_requests_get_status_errors_not_panics() {
    let (cluster, server) = start().await;
    cluster.create_pod(running_pod("default", "p", json!({})));
    let client = server.client();
    let send = |method: &str, path: &str, ct: &str, body: &str| {
        let req = http::Request::builder()
            .method(method)
            .uri(path)
            .header("content-type", ct)
            .body(body.as_bytes().to_vec())
            .unwrap();
        let client = client.clone();
        async move { api_status(client.request::<Value>(req).await.unwrap_err()) }
    };
    let pods = "/api/v1/namespaces/default/pods";
    assert_eq!(
        send("POST", pods, "application/json", "{not json")
            .await
            .code,
        400
    );
    assert_eq!(
        send("PUT", &format!("{pods}/p"), "application/json", "[1]")
            .await
            .code,
        400
    );
    assert_eq!(
        send(
            "PATCH",
            &format!("{pods}/p"),
            "application/merge-patch+json",
            "7"
        )
        .await
        .code,
        400
    );
    assert_eq!(
        send("PATCH", &format!("{pods}/p"), "text/plain", "{}")
            .await
            .code,
        415
    );
    let bad_op = r#"[{"op":"remove","path":"/metadata/nope"}]"#;
    assert_eq!(
        send(
            "PATCH",
            &format!("{pods}/p"),
            "application/json-patch+json",
            bad_op
        )
        .await
        .code,
        422
    );
    let rollouts = "/apis/argoproj.io/v1alpha1/namespaces/default/rollouts";
    let bad_rollout = r#"{"metadata":{"name":"r"},"spec":{"template":"oops"}}"#;
    assert_eq!(
        send("POST", rollouts, "application/json", bad_rollout)
            .await
            .code,
        422
    );
    assert_eq!(
        send(
            "GET",
            "/api/v1/namespaces/default/widgets",
            "application/json",
            ""
        )
        .await
        .code,
        404
    );
    assert_eq!(
        send("POST", "/api/v1/pods", "application/json", "{}")
            .await
            .code,
        405
    );
    assert!(cluster.pod("default", "p").is_some());
}

/// GET `uri` as raw text: list queries `ListParams` would not send as written.
async fn get_raw(server: &SimServer, uri: &str) -> Result<Value, kube::core::Status> {
    let request = http::Request::get(uri).body(Vec::new()).unwrap();
    match server.client().request_text(request).await {
        Ok(text) => Ok(serde_json::from_str(&text).unwrap()),
        Err(e) => Err(api_status(e)),
    }
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn resource_version_0_answers_from_the_watch_cache_stale_and_unpaged() {
    let (cluster, server) = start().await;
    for name in ["a", "b", "c"] {
        cluster.create_pod(running_pod("default", name, json!({})));
    }
    cluster.hold_watch_cache(true);
    let held = cluster.resource_version().to_string();
    cluster.create_pod(running_pod("default", "d", json!({})));

    let cached = get_raw(
        &server,
        "/api/v1/pods?limit=2&resourceVersion=0&resourceVersionMatch=NotOlderThan",
    )
    .await
    .unwrap();
    assert_eq!(
        names(&cached),
        ["a", "b", "c"],
        "stale, and the limit ignored"
    );
    assert_eq!(cached["metadata"]["resourceVersion"], json!(held));
    assert!(cached["metadata"].get("continue").is_none());
    assert_eq!((cluster.cached_lists(), cluster.etcd_lists()), (1, 0));

    // No resourceVersion: a quorum read, current and paged.
    let quorum = get_raw(&server, "/api/v1/pods?limit=2").await.unwrap();
    assert_eq!(names(&quorum), ["a", "b"]);
    let token = quorum["metadata"]["continue"].as_str().unwrap().to_string();
    let rest = get_raw(&server, &format!("/api/v1/pods?limit=2&continue={token}"))
        .await
        .unwrap();
    assert_eq!(names(&rest), ["c", "d"]);
    assert_eq!((cluster.cached_lists(), cluster.etcd_lists()), (1, 1));

    // The invalid combinations are refused as the real server refuses them.
    let no_version = get_raw(&server, "/api/v1/pods?resourceVersionMatch=NotOlderThan")
        .await
        .unwrap_err();
    assert_eq!(
        (no_version.code, no_version.reason.as_str()),
        (422, "Invalid")
    );
    let exact_0 = get_raw(
        &server,
        "/api/v1/pods?resourceVersion=0&resourceVersionMatch=Exact",
    )
    .await
    .unwrap_err();
    assert_eq!(exact_0.code, 422, "{}", exact_0.message);
}

#[tokio::test]
async fn not_older_than_a_version_the_cache_lacks_waits_then_gets_504() {
    let (cluster, server) = start().await;
    cluster.create_pod(running_pod("default", "a", json!({})));
    cluster.set_too_large_wait(Duration::from_millis(300));
    cluster.hold_watch_cache(true);
    cluster.create_pod(running_pod("default", "b", json!({})));
    let wanted = cluster.resource_version();

    let started = std::time::Instant::now();
    let query = format!(
        "/api/v1/pods?limit=500&resourceVersion={wanted}&resourceVersionMatch=NotOlderThan"
    );
    let late = get_raw(&server, &query).await.unwrap_err();
    assert!(started.elapsed() >= Duration::from_millis(300), "it waited");
    assert_eq!((late.code, late.reason.as_str()), (504, "Timeout"));
    assert!(
        late.message.starts_with("Too large resource version"),
        "{}",
        late.message
    );
    assert_eq!(late.details.map(|d| d.retry_after_seconds), Some(1));

    // The same request is answered, paged and not older, once the cache catches up meanwhile.
    cluster.set_too_large_wait(Duration::from_secs(5));
    let waiting = tokio::spawn({
        let server_client = server.client();
        let query = query.replace("limit=500", "limit=1");
        async move {
            let request = http::Request::get(query).body(Vec::new()).unwrap();
            server_client.request_text(request).await
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    cluster.hold_watch_cache(false);
    let page: Value = serde_json::from_str(&waiting.await.unwrap().unwrap()).unwrap();
    assert_eq!(names(&page), ["a"]);
    assert!(
        page["metadata"]["continue"].is_string(),
        "NotOlderThan pages"
    );
    let at: u64 = page["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(at >= wanted);

    // A version from the future is never reached: 504 after the wait.
    cluster.set_too_large_wait(Duration::from_millis(100));
    let future = format!(
        "/api/v1/pods?resourceVersion={}&resourceVersionMatch=NotOlderThan",
        wanted + 100
    );
    assert_eq!(get_raw(&server, &future).await.unwrap_err().code, 504);
}

#[tokio::test]
async fn streaming_lists_send_initial_events_then_the_marked_bookmark_then_changes() {
    let (cluster, server) = start().await;
    for name in ["a", "b"] {
        cluster.create_pod(running_pod("default", name, json!({})));
    }
    let pods: Api<Pod> = Api::all(server.client());
    let mut stream = pods
        .watch(&WatchParams::streaming_lists().timeout(5), "0")
        .await
        .unwrap()
        .boxed();
    let mut added = Vec::new();
    let end = loop {
        match stream.try_next().await.unwrap().expect("an event") {
            WatchEvent::Added(p) => added.push(p.metadata.name.unwrap()),
            WatchEvent::Bookmark(b) => break b,
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(added, ["a", "b"]);
    assert_eq!(
        end.metadata
            .annotations
            .get("k8s.io/initial-events-end")
            .map(String::as_str),
        Some("true")
    );
    assert_eq!(
        end.metadata.resource_version,
        cluster.resource_version().to_string()
    );
    cluster.create_pod(running_pod("default", "c", json!({})));
    loop {
        match stream.try_next().await.unwrap().expect("an event") {
            WatchEvent::Added(p) => break assert_eq!(p.metadata.name.as_deref(), Some("c")),
            WatchEvent::Bookmark(_) => continue,
            other => panic!("unexpected {other:?}"),
        }
    }
    // Streaming lists need NotOlderThan and bookmarks, like kube-apiserver's validation says.
    let bare = get_raw(&server, "/api/v1/pods?watch=true&sendInitialEvents=true").await;
    assert_eq!(bare.unwrap_err().code, 422);
}

#[tokio::test]
async fn streaming_lists_switched_off_are_refused_or_ignored_like_an_older_server() {
    let (cluster, server) = start().await;
    cluster.create_pod(running_pod("default", "a", json!({})));
    cluster.set_bookmark_interval(Duration::from_millis(100));
    let pods: Api<Pod> = Api::all(server.client());
    let params = WatchParams::streaming_lists().timeout(5);

    cluster.set_streaming_lists(StreamingLists::Rejected);
    let refused = pods.watch(&params, "0").await.map(|_| ()).unwrap_err();
    let refused = api_status(refused);
    assert_eq!((refused.code, refused.reason.as_str()), (422, "Invalid"));
    assert!(refused.message.contains("WatchList"), "{}", refused.message);

    cluster.set_streaming_lists(StreamingLists::Ignored);
    let mut stream = pods.watch(&params, "0").await.unwrap().boxed();
    let WatchEvent::Added(first) = stream.try_next().await.unwrap().expect("an event") else {
        panic!("a plain watch from 0 starts with the current state")
    };
    assert_eq!(first.metadata.name.as_deref(), Some("a"));
    let WatchEvent::Bookmark(mark) = stream.try_next().await.unwrap().expect("an event") else {
        panic!("then bookmarks")
    };
    assert!(mark.metadata.annotations.is_empty(), "never the end marker");
}

/// A container's log as the API server serves it: the last lines asked for, the previous run
/// refused when there was none, and what was set for a run that ended.
#[tokio::test]
async fn logs_are_served_as_the_api_server_serves_them() {
    use kube::api::LogParams;
    let (cluster, server) = start().await;
    cluster.create_pod(running_pod("default", "web", json!({})));
    let pods: Api<Pod> = Api::default_namespaced(server.client());
    cluster.set_logs("default", "web", "app", false, "one\ntwo\nthree\n");
    let tail = LogParams {
        tail_lines: Some(2),
        ..LogParams::default()
    };
    assert_eq!(pods.logs("web", &tail).await.unwrap(), "two\nthree\n");
    let previous = LogParams {
        previous: true,
        ..LogParams::default()
    };
    let refused = pods.logs("web", &previous).await.unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("previous terminated container"),
        "{refused}"
    );
    cluster.set_logs("default", "web", "app", true, "the run before\n");
    assert_eq!(
        pods.logs("web", &previous).await.unwrap(),
        "the run before\n"
    );
    // On a lost node the API server cannot reach the kubelet: 500, as a real one answers.
    cluster.set_node_alive("sim-node-1", false);
    let lost = api_status(pods.logs("web", &tail).await.unwrap_err());
    assert_eq!(lost.code, 500, "{lost:?}");
    assert!(lost.message.contains("sim-node-1:10250"), "{lost:?}");
    // A node deleted: "pods \"NODE\" not found", the node's name under the pods' kind.
    let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(server.client());
    nodes
        .delete("sim-node-1", &Default::default())
        .await
        .unwrap();
    let gone = api_status(pods.logs("web", &tail).await.unwrap_err());
    assert_eq!(gone.code, 404, "{gone:?}");
    assert_eq!(gone.message, "pods \"sim-node-1\" not found");
}

/// The next `n` events of a watch that are not bookmarks, as `TYPE reason count`.
async fn next_events<S>(stream: &mut S, n: usize) -> Vec<String>
where
    S: futures::Stream<Item = kube::Result<WatchEvent<Event>>> + Unpin,
{
    let mut out = Vec::new();
    let line = |kind: &str, e: &Event| {
        let count = e.count.or(e.series.as_ref().and_then(|s| s.count));
        format!(
            "{kind} {} {}",
            e.reason.as_deref().unwrap_or(""),
            count.unwrap_or(1)
        )
    };
    while out.len() < n {
        match stream.try_next().await.unwrap().expect("an event") {
            WatchEvent::Added(e) => out.push(line("ADDED", &e)),
            WatchEvent::Modified(e) => out.push(line("MODIFIED", &e)),
            WatchEvent::Deleted(e) => out.push(line("DELETED", &e)),
            WatchEvent::Bookmark(_) => {}
            WatchEvent::Error(e) => panic!("watch error {e:?}"),
        }
    }
    out
}

/// What the product watches to learn a pod's cause: Warning Events about pods, listed (paged)
/// then watched (plainly, per namespace, or as a streaming list). A kubelet Event shows ADDED
/// then MODIFIED with count 2 as the kubelet aggregates a repeat; Normal ones never show.
#[tokio::test]
async fn pod_warning_events_list_and_watch_with_a_field_selector() {
    let (cluster, server) = start().await;
    cluster.create_pod(running_pod("default", "web-1", json!({})));
    let selector = "type=Warning,involvedObject.kind=Pod";
    let verdict = "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are \
                   available: 3 No preemption victims found for incoming pod.";
    let scheduling = PodEvent::warning("FailedScheduling", verdict).from_scheduler();
    let pulling = PodEvent::normal("Pulling", "Pulling image \"nginx:1.27\"").container("app");
    for event in [scheduling, pulling] {
        assert!(
            cluster
                .record_pod_event("default", "web-1", event)
                .is_some()
        );
    }

    let events: Api<Event> = Api::all(server.client());
    let mut listed = Vec::new();
    let mut params = ListParams::default().fields(selector).limit(1);
    let rv = loop {
        let page = events.list(&params).await.unwrap();
        listed.extend(page.items.iter().filter_map(|e| e.reason.clone()));
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => break page.metadata.resource_version.unwrap(),
        }
    };
    assert_eq!(listed, ["FailedScheduling"]);

    let watch = WatchParams::default().fields(selector).timeout(5);
    let mut plain = events.watch(&watch, &rv).await.unwrap().boxed();
    let namespaced: Api<Event> = Api::namespaced(server.client(), "default");
    let mut in_ns = namespaced.watch(&watch, &rv).await.unwrap().boxed();
    let streaming = WatchParams::streaming_lists().fields(selector).timeout(5);
    let mut stream = events.watch(&streaming, "0").await.unwrap().boxed();
    assert_eq!(
        next_events(&mut stream, 1).await,
        ["ADDED FailedScheduling 1"]
    );

    let pull = PodEvent::warning("Failed", "Failed to pull image \"nginx:1.27\": not found")
        .from_kubelet()
        .container("app");
    cluster.record_pod_event("default", "web-1", pull.clone());
    let back_off = PodEvent::normal("BackOff", "Back-off pulling image \"nginx:1.27\"");
    cluster.record_pod_event("default", "web-1", back_off.container("app"));
    let again = cluster.record_pod_event("default", "web-1", pull).unwrap();
    assert_eq!(again.count, Some(2));
    let want = ["ADDED Failed 1", "MODIFIED Failed 2"];
    assert_eq!(next_events(&mut plain, 2).await, want);
    assert_eq!(next_events(&mut in_ns, 2).await, want);
    assert_eq!(next_events(&mut stream, 2).await, want);
}

/// As a real server: a create in a namespace that does not exist is refused with 404 until
/// the namespace is made.
#[tokio::test]
async fn creates_need_an_existing_namespace_when_required() {
    use k8s_openapi::api::coordination::v1::Lease;
    use k8s_openapi::api::core::v1::Namespace;
    let (cluster, server) = start().await;
    cluster.require_namespaces();
    let leases: Api<Lease> = Api::namespaced(server.client(), "tools");
    let lease: Lease = serde_json::from_value(json!({"metadata": {"name": "one"}})).unwrap();
    let refused = leases.create(&PostParams::default(), &lease).await;
    match refused {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 404);
            assert_eq!(status.message, "namespaces \"tools\" not found");
        }
        other => panic!("expected 404, got {other:?}"),
    }
    let namespaces: Api<Namespace> = Api::all(server.client());
    let tools: Namespace = serde_json::from_value(json!({"metadata": {"name": "tools"}})).unwrap();
    namespaces
        .create(&PostParams::default(), &tools)
        .await
        .unwrap();
    leases.create(&PostParams::default(), &lease).await.unwrap();
}

/// Nodes are listed and watched like pods, with resourceVersions: a node lost by the
/// simulation, and a status written through the subresource, both reach a watch.
#[tokio::test]
async fn nodes_are_listed_and_watched_and_their_status_written() {
    use k8s_openapi::api::core::v1::Node;
    let (cluster, server) = start().await;
    let nodes: Api<Node> = Api::all(server.client());
    let listed = nodes.list(&ListParams::default()).await.unwrap();
    assert_eq!(listed.items.len(), 3, "a new cluster's nodes");
    let rv = listed.metadata.resource_version.unwrap_or_default();
    let mut stream = nodes
        .watch(&WatchParams::default().timeout(5), &rv)
        .await
        .unwrap()
        .boxed();
    cluster.set_node_alive("sim-node-2", false);
    let ready = |node: &Node| {
        let conditions = node.status.as_ref().and_then(|s| s.conditions.clone());
        let ready = conditions
            .into_iter()
            .flatten()
            .find(|c| c.type_ == "Ready");
        ready.map(|c| (c.status, c.last_heartbeat_time))
    };
    let lost = loop {
        match stream.try_next().await.unwrap() {
            Some(WatchEvent::Modified(node)) => break node,
            Some(WatchEvent::Bookmark(_)) => continue,
            other => panic!("a modified node: {other:?}"),
        }
    };
    assert_eq!(lost.metadata.name.as_deref(), Some("sim-node-2"));
    assert_eq!(ready(&lost).map(|r| r.0), Some("Unknown".to_string()));
    // The status subresource: the heartbeat of a node that went silent long ago.
    let mut silent = lost.clone();
    let old = "2026-11-20T11:50:00Z";
    let conditions = silent.status.as_mut().and_then(|s| s.conditions.as_mut());
    for c in conditions.into_iter().flatten() {
        c.last_heartbeat_time = Some(serde_json::from_value(json!(old)).unwrap());
    }
    nodes
        .replace_status("sim-node-2", &PostParams::default(), &silent)
        .await
        .unwrap();
    let written = nodes.get("sim-node-2").await.unwrap();
    let beat = ready(&written).and_then(|r| r.1);
    assert_eq!(serde_json::to_value(beat).unwrap(), json!(old));
    let version = |node: &Node| {
        let rv = node
            .metadata
            .resource_version
            .as_deref()
            .unwrap_or_default();
        rv.parse::<u64>().unwrap()
    };
    assert!(version(&written) > version(&lost));
}

/// A test on paused time gives the server its clock: what the server stamps (a pod's creation,
/// an Event's last time, a node going NotReady) keeps step with the test's clock, so a
/// scenario of minutes needs no padding with the real one.
#[tokio::test(start_paused = true)]
async fn the_servers_timestamps_follow_the_clock_it_was_given() {
    use kube_sim::{PodEvent, SimClock};
    let start: chrono::DateTime<chrono::Utc> = "2026-01-01T00:00:00Z".parse().unwrap();
    let cluster = SimCluster::on(SimClock::starting_at(start));
    let pod = cluster.create_pod(running_pod("default", "p", json!({})));
    let created = pod.metadata.creation_timestamp.unwrap().0.to_string();
    assert_eq!(created, "2026-01-01T00:00:00Z");
    tokio::time::advance(Duration::from_secs(600)).await;
    assert_eq!(cluster.now(), start + chrono::Duration::minutes(10));
    let event = cluster
        .record_pod_event("default", "p", PodEvent::warning("BackOff", "restarting"))
        .unwrap();
    let last = event.last_timestamp.unwrap().0.to_string();
    assert_eq!(last, "2026-01-01T00:10:00Z");
}
