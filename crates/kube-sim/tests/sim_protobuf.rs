//! The simulated API server speaks protobuf for pods when asked, as kube-apiserver does, and
//! JSON otherwise.

// A test, bench or example fails by panicking: the workspace's panic policy is for the product.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::time::Duration;

use http_body_util::BodyExt;
use k8s_openapi::api::core::v1::Pod;
use k8s_pb::api::core::v1 as core;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use kube_sim::{SimCluster, SimServer};
use prost::Message;
use serde_json::json;

const ASK: &str = "application/vnd.kubernetes.protobuf, application/json";

async fn start() -> (SimCluster, SimServer) {
    let cluster = SimCluster::new();
    let server = SimServer::start(cluster.clone())
        .await
        .expect("server starts");
    (cluster, server)
}

fn pod(name: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": { "name": name, "namespace": "default" },
        "spec": { "nodeName": "sim-node-1",
                  "containers": [{ "name": "app", "image": "nginx:1.27",
                                   "resources": {"limits": {"memory": "64Mi"}} }] },
        "status": { "phase": "Running",
                    "conditions": [{ "type": "Ready", "status": "True" }] },
    }))
    .expect("valid pod")
}

/// GET `path` with `accept` (if any): the content type and the response.
async fn get(
    server: &SimServer,
    path: &str,
    accept: Option<&str>,
) -> (http::StatusCode, String, kube::client::Body) {
    let mut request = http::Request::get(path);
    if let Some(accept) = accept {
        request = request.header(http::header::ACCEPT, accept);
    }
    let request = request.body(kube::client::Body::empty()).unwrap();
    let response = server.client().send(request).await.unwrap();
    let content_type = response.headers()[http::header::CONTENT_TYPE]
        .to_str()
        .unwrap()
        .to_owned();
    (response.status(), content_type, response.into_body())
}

/// The envelope of a whole protobuf body.
fn unwrap(body: &[u8]) -> Unknown {
    let message = body.strip_prefix(b"k8s\0").expect("the protobuf magic");
    Unknown::decode(message).unwrap()
}

#[tokio::test]
async fn pods_are_listed_in_protobuf_when_asked_and_in_json_otherwise() {
    let (cluster, server) = start().await;
    for i in 0..3 {
        cluster.create_pod(pod(&format!("p{i}")));
    }
    let path = "/api/v1/namespaces/default/pods?limit=2";
    let (_, content_type, body) = get(&server, path, Some(ASK)).await;
    assert_eq!(content_type, "application/vnd.kubernetes.protobuf");
    let envelope = unwrap(&body.collect().await.unwrap().to_bytes());
    assert_eq!(envelope.type_meta.unwrap().kind.as_deref(), Some("PodList"));
    let list = core::PodList::decode(envelope.raw.unwrap().as_slice()).unwrap();
    let names: Vec<_> = list
        .items
        .iter()
        .map(|p| p.metadata.as_ref().unwrap().name.clone().unwrap())
        .collect();
    assert_eq!(names, ["p0", "p1"]);
    let metadata = list.metadata.unwrap();
    assert!(metadata.r#continue.is_some_and(|c| !c.is_empty()));
    let limit = &list.items[0].spec.as_ref().unwrap().containers[0]
        .resources
        .as_ref()
        .unwrap()
        .limits["memory"];
    assert_eq!(limit.string.as_deref(), Some("64Mi"));

    let (_, content_type, _) = get(&server, path, None).await;
    assert_eq!(content_type, "application/json");
    let (_, content_type, _) = get(&server, path, Some("application/json, */*")).await;
    assert_eq!(content_type, "application/json");
    // Kinds the simulator has no protobuf form for fall back to JSON, as a custom resource
    // does on a real server.
    let (_, content_type, _) = get(&server, "/api/v1/nodes", Some(ASK)).await;
    assert_eq!(content_type, "application/json");
}

#[tokio::test]
async fn an_error_is_a_protobuf_status_when_protobuf_was_asked() {
    let (_cluster, server) = start().await;
    let (code, content_type, body) =
        get(&server, "/api/v1/namespaces/default/pods/none", Some(ASK)).await;
    assert_eq!(code, http::StatusCode::NOT_FOUND);
    assert_eq!(content_type, "application/vnd.kubernetes.protobuf");
    let envelope = unwrap(&body.collect().await.unwrap().to_bytes());
    let status = meta::Status::decode(envelope.raw.unwrap().as_slice()).unwrap();
    assert_eq!(
        (status.code, status.reason.as_deref()),
        (Some(404), Some("NotFound"))
    );
}

#[tokio::test]
async fn a_pod_watch_streams_length_prefixed_protobuf_frames() {
    let (cluster, server) = start().await;
    let rv = cluster.resource_version();
    let path =
        format!("/api/v1/namespaces/default/pods?watch=true&resourceVersion={rv}&timeoutSeconds=5");
    let (_, content_type, mut body) = get(&server, &path, Some(ASK)).await;
    assert_eq!(
        content_type,
        "application/vnd.kubernetes.protobuf;stream=watch"
    );
    cluster.create_pod(pod("live"));
    let mut stream = Vec::new();
    let event = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if let Some(prefix) = stream.first_chunk::<4>() {
                let length = u32::from_be_bytes(*prefix) as usize;
                if stream.len() >= 4 + length {
                    return meta::WatchEvent::decode(&stream[4..4 + length]).unwrap();
                }
            }
            let frame = body.frame().await.expect("more of the stream").unwrap();
            stream.extend_from_slice(frame.data_ref().unwrap());
        }
    })
    .await
    .unwrap();
    assert_eq!(event.r#type.as_deref(), Some("ADDED"));
    let envelope = unwrap(&event.object.unwrap().raw.unwrap());
    assert_eq!(envelope.type_meta.unwrap().kind.as_deref(), Some("Pod"));
    let pod = core::Pod::decode(envelope.raw.unwrap().as_slice()).unwrap();
    assert_eq!(pod.metadata.unwrap().name.as_deref(), Some("live"));
}
