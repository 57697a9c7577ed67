//! Which format pods are asked for, and in which one an answer is read: from the request's
//! `Accept`, and from what a list returns and a watch's health says.

use opc_core::cluster::{Cache, Scope, list_pods};
use opc_core::config::WireFormat;
use opc_core::pod::{MAGIC, PROTOBUF};

use crate::cluster_watch::{Answer, Seen, paged_at, scripted, usual, watching};
use crate::pod_proto::proto_build::field;

/// A list asked for in protobuf, answered with `body`: its request, and its pods' names.
async fn listed(body: Vec<u8>) -> (Seen, Vec<String>) {
    let (client, mut server) = scripted(vec![Answer::body(200, body)]);
    let listing =
        tokio::spawn(
            async move { list_pods(&client, &Scope::All, 500, WireFormat::Protobuf).await },
        );
    let seen = server.next().await;
    server.release();
    let listed = listing.await.unwrap().unwrap();
    (
        seen,
        listed.pods.iter().map(|p| p.name.to_string()).collect(),
    )
}

#[tokio::test]
async fn protobuf_is_asked_for_first_and_json_accepted() {
    let pod = field(1, &field(1, b"web"));
    let list = [field(1, b""), field(2, &pod)].concat();
    let type_meta = field(1, &field(2, b"PodList"));
    let proto = [&MAGIC[..], &type_meta, &field(2, &list)].concat();
    let (seen, names) = listed(proto).await;
    assert!(seen.accept.starts_with(PROTOBUF), "{}", seen.accept);
    assert_eq!(names, ["web"], "a body that starts k8s\\0 is protobuf");
    let json = br#"{"metadata":{},"items":[{"metadata":{"name":"web"}}]}"#;
    let (_, names) = listed(json.to_vec()).await;
    assert_eq!(names, ["web"], "a body that starts with {{ is JSON");
}

fn format(cache: &Cache) -> Option<WireFormat> {
    cache.reader().health().wire_format()
}

#[tokio::test(start_paused = true)]
async fn a_watch_stream_is_protobuf_when_its_content_type_says_so() {
    let stream = "application/vnd.kubernetes.protobuf;stream=watch";
    let answered = |named| Answer::body(200, "").content_type(named);
    let script = paged_at(
        "5",
        [
            answered(Some(stream)),
            answered(None),
            answered(Some(stream)),
            answered(Some("application/json")),
        ],
    );
    let (cache, mut server) = watching(script, &usual());
    for _ in 0..3 {
        server.next().await;
    }
    for expected in [
        WireFormat::Protobuf,
        WireFormat::Json,
        WireFormat::Protobuf,
        WireFormat::Json,
    ] {
        server.next().await;
        assert_eq!(format(&cache), Some(expected));
    }
}
