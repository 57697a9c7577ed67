//! A list of pods against an API server that answers as it is told to: its error statuses, and
//! bodies that are not a list.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::StreamBody;
use hyper::body::Frame;
use kube::core::Status;
use opc_core::cluster::{ListError, ListProblem, RequestError, Scope, list_pods};
use opc_core::config::WireFormat;
use opc_core::pod::{MAGIC, MESSAGE_CAP};

use crate::pod_proto::proto_build::{field, varint};

/// A client whose every request is answered with `code` and `body`, sent in `chunk`-byte pieces.
pub(crate) fn answering(code: u16, body: &[u8], chunk: usize) -> kube::Client {
    let chunks: Vec<Vec<u8>> = body.chunks(chunk.max(1)).map(<[u8]>::to_vec).collect();
    let service = tower::service_fn(move |_: http::Request<kube::client::Body>| {
        let frames = chunks
            .clone()
            .into_iter()
            .map(|c| Ok::<_, Infallible>(Frame::data(Bytes::from(c))));
        let answer = http::Response::builder()
            .status(code)
            .body(StreamBody::new(futures::stream::iter(frames)))
            .unwrap();
        async move { Ok::<_, Infallible>(answer) }
    });
    kube::Client::new(service, "default")
}

async fn listed(code: u16, body: &[u8], chunk: usize) -> Result<(), ListError> {
    let client = answering(code, body, chunk);
    list_pods(&client, &Scope::All, 500, WireFormat::Json)
        .await
        .map(drop)
}

/// The error `Status` of a list answered with `code` and `body`, as the client reads it.
async fn status_of(body: &[u8], code: u16) -> Status {
    match listed(code, body, body.len()).await {
        Err(ListError::Request(RequestError { source, .. })) => match *source {
            kube::Error::Api(status) => *status,
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

/// Why a body, sent `chunk` bytes at a time, is not a list, and at which byte.
struct Malformed {
    why: String,
    at: u64,
}

async fn not_a_list(body: &[u8], chunk: usize) -> Malformed {
    match listed(200, body, chunk).await {
        Err(ListError::Problem(ListProblem::NotAList { why, .. })) => {
            let (why, at) = why.rsplit_once(" at byte ").unwrap();
            Malformed {
                why: why.to_string(),
                at: at.parse().unwrap(),
            }
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_error_status_keeps_its_texts_cut_in_json_as_in_protobuf() {
    let long = "x".repeat(100_000);
    let body = serde_json::json!({
        "kind": "Status", "apiVersion": "v1", "status": "Failure",
        "message": long, "reason": long, "code": 500,
    });
    let status = status_of(&serde_json::to_vec(&body).unwrap_or_default(), 500).await;
    assert_eq!(status.message.len(), MESSAGE_CAP);
    assert!(status.reason.len() <= 128, "{}", status.reason.len());
    assert_eq!(status.code, 500);
}

#[tokio::test]
async fn an_error_keeps_its_code_in_either_format() {
    let json = br#"{"kind":"Status","status":"Failure","reason":"Expired","code":410}"#;
    assert_eq!(status_of(json, 410).await.reason, "Expired");
    assert_eq!(status_of(b"<html>bad gateway</html>", 502).await.code, 502);
}

/// Why a body sent 3 bytes at a time is not a list, and where.
async fn wrong(body: &str) -> Malformed {
    not_a_list(body.as_bytes(), 3).await
}

#[tokio::test]
async fn what_is_not_a_list_says_where() {
    assert_eq!(wrong("[1]").await.why, "the list is not a JSON object");
    assert_eq!(wrong(r#"{"items":{}}"#).await.why, "items is not an array");
    assert_eq!(
        wrong(r#"{"items":[{}}]}"#).await.why,
        "expected ',' or ']' after an item"
    );
    assert_eq!(
        wrong(r#"{"items":[{"a":1}"#).await.why,
        "the list ended early"
    );
    assert_eq!(
        wrong(r#"{"items":[]} x"#).await.why,
        "bytes after the end of the list"
    );
    assert_eq!(
        wrong(r#"{"kind":"Status"}"#).await.why,
        "the list has no items"
    );
    let at = wrong(r#"{"items":[] "x":1}"#).await;
    assert_eq!(
        (at.why.as_str(), at.at),
        ("expected ',' or '}' after a value", 12)
    );
}

#[tokio::test]
async fn an_item_declared_larger_than_any_object_is_refused_before_it_is_held() {
    // A list of 2^40 bytes whose first item claims 2^35: only its head has arrived.
    let type_meta = field(1, &field(2, b"PodList"));
    let head = [
        &MAGIC[..],
        &type_meta,
        &[2 << 3 | 2],
        &varint(1 << 40),
        &[2 << 3 | 2],
        &varint(1 << 35),
    ]
    .concat();
    let refused = not_a_list(&head, head.len()).await;
    assert_eq!(refused.why, "a list item larger than any object");
}
