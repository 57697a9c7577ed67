//! What a handler is given and what it gives back: one request's context, a reply, and the
//! HTTP response each reply and error is served as.

use std::io;

use bytes::Bytes;
use http::{HeaderValue, Method, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use serde_json::Value;
use tokio::sync::watch;

use super::cluster::SimCluster;
use super::proto;
use super::query::Query;
use super::status::{ApiError, ApiResult};

pub type Body = BoxBody<Bytes, io::Error>;

/// What a handler produces.
pub enum Reply {
    /// Served as protobuf instead when the client asked and the kind has a protobuf form.
    Json(StatusCode, Value),
    /// A watch, and its content type.
    Stream(Body, &'static str),
    /// `text/plain`, as a container's log is served.
    Text(String),
}

/// Everything a handler needs about one request.
pub struct Ctx {
    pub cluster: SimCluster,
    pub shutdown: watch::Receiver<bool>,
    pub method: Method,
    pub query: Query,
    pub content_type: String,
    /// The client's `Accept` puts protobuf first.
    pub protobuf: bool,
    pub body: Bytes,
    pub server_address: String,
}

impl Ctx {
    /// The body as JSON, or 400 like the real decoder.
    pub fn json(&self) -> ApiResult<Value> {
        if self.body.is_empty() {
            return Err(ApiError::bad_request("the request body is empty"));
        }
        serde_json::from_slice(&self.body)
            .map_err(|e| ApiError::bad_request(format!("error decoding request body: {e}")))
    }
}

pub fn full(bytes: Vec<u8>) -> Body {
    Full::new(Bytes::from(bytes))
        .map_err(|never| match never {})
        .boxed()
}

fn json_response(code: StatusCode, value: &Value) -> Response<Body> {
    let bytes = api_order(value);
    let mut resp = Response::new(full(bytes));
    *resp.status_mut() = code;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

/// The bytes of `value` with its top-level keys in kube-apiserver's order: `kind`,
/// `apiVersion`, `metadata`, then the rest (`items`, `spec`, `status`). A client that decodes a
/// list as it arrives meets the list's metadata (its continue token) before the items, as on a
/// real server.
fn api_order(value: &Value) -> Vec<u8> {
    let Some(object) = value.as_object() else {
        return serde_json::to_vec(value).unwrap_or_default();
    };
    const FIRST: [&str; 3] = ["kind", "apiVersion", "metadata"];
    let first = FIRST.iter().filter_map(|k| Some((*k, object.get(*k)?)));
    let rest = object
        .iter()
        .filter(|(k, _)| !FIRST.contains(&k.as_str()))
        .map(|(k, v)| (k.as_str(), v));
    let mut out = vec![b'{'];
    for (i, (key, value)) in first.chain(rest).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // Writing a string or a Value into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut out, key);
        out.push(b':');
        let _ = serde_json::to_writer(&mut out, value);
    }
    out.push(b'}');
    out
}

/// `value` as protobuf if the client asked for it and its kind has a protobuf form (as a
/// real server answers a custom resource in JSON whatever was asked), else as JSON.
pub fn response_in(code: StatusCode, value: &Value, protobuf: bool) -> Response<Body> {
    let Some(bytes) = protobuf.then(|| proto::encode(value)).flatten() else {
        return json_response(code, value);
    };
    let mut resp = Response::new(full(bytes));
    *resp.status_mut() = code;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(proto::PROTOBUF),
    );
    resp
}

pub fn stream_response(body: Body, content_type: &'static str) -> Response<Body> {
    let mut resp = Response::new(body);
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    resp.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
    resp
}

/// An error's Status, in protobuf if the client asked for it.
pub fn error_response(err: &ApiError, protobuf: bool) -> Response<Body> {
    if err.code >= 500 || err.code == 429 {
        tracing::debug!(code = err.code, message = %err.message, "sim api failure");
    }
    let mut resp = response_in(err.http_status(), &err.to_status(), protobuf);
    if let Some(secs) = err.details.retry_after {
        resp.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    resp
}
