//! Which format pods are asked for, and reading an answer whatever format it came in.
//!
//! Protobuf is what client-go asks built-in kinds in: the API server encodes it faster and it
//! is about a quarter smaller. A server that cannot (an old or aggregated one) answers JSON
//! instead, which is read as before; JSON can be forced for a cluster where protobuf misbehaves.
//! An error is a `Status` in the format of the answer, so errors are read here rather than by
//! the client, which can read a JSON one only (and would lose the code of a protobuf one).

use futures::{AsyncBufRead, TryStreamExt};
use http_body_util::BodyExt;
use kube::Client;
use kube::core::Status;

use crate::pod::{MAGIC, PROTOBUF, capped_status, status_body};

use crate::config::WireFormat;

impl WireFormat {
    /// The `Accept` header of a request for a kind that can be decoded from protobuf.
    pub(crate) fn accept(self) -> &'static str {
        match self {
            WireFormat::Protobuf => PROTOBUF_OR_JSON,
            WireFormat::Json => "application/json",
        }
    }

    /// The format of a body, from its first byte: every protobuf body starts with the magic
    /// `k8s\0`, and a JSON one with `{` or white space.
    pub(crate) fn of_body(first: u8) -> WireFormat {
        if MAGIC.first() == Some(&first) {
            WireFormat::Protobuf
        } else {
            WireFormat::Json
        }
    }

    /// The format an answer's `Content-Type` names; JSON when it names none we read.
    pub(crate) fn of_content_type(value: Option<&http::HeaderValue>) -> WireFormat {
        let named = value.and_then(|v| v.to_str().ok()).unwrap_or_default();
        if named.trim_start().starts_with(PROTOBUF) {
            WireFormat::Protobuf
        } else {
            WireFormat::Json
        }
    }
}

/// Overrides the config's format: how an operator forces JSON without a config change, and
/// how the whole test suite is run once in each format.
pub(crate) const WIRE_FORMAT_ENV: &str = "OPS_POD_CLEANER_WIRE_FORMAT";

/// The format `$OPS_POD_CLEANER_WIRE_FORMAT` names, if it is set.
pub(crate) fn env_wire_format() -> Result<Option<WireFormat>, crate::Usage> {
    let Some(text) = std::env::var(WIRE_FORMAT_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty())
    else {
        return Ok(None);
    };
    text.trim()
        .parse()
        .map(Some)
        .map_err(|_| crate::Usage::BadWireFormat {
            key: WIRE_FORMAT_ENV,
            text,
        })
}

/// Protobuf first, as client-go asks; its media type is checked against PROTOBUF in the tests.
const PROTOBUF_OR_JSON: &str = "application/vnd.kubernetes.protobuf, application/json";

/// Send `request`; its body as it arrives, and the format the answer's `Content-Type` says it
/// is in (a watch stream's first bytes are a frame's length, not the magic a whole body
/// starts with); or the API server's error with its code.
pub(crate) async fn send_answered(
    client: &Client,
    request: http::Request<Vec<u8>>,
) -> kube::Result<(WireFormat, impl AsyncBufRead + Send + use<>)> {
    let response = client.send(request.map(kube::client::Body::from)).await?;
    let code = response.status();
    if code.is_client_error() || code.is_server_error() {
        let body = response.into_body().collect().await?.to_bytes();
        return Err(kube::Error::Api(Box::new(status_of(&body, code.as_u16()))));
    }
    let format = WireFormat::of_content_type(response.headers().get(http::header::CONTENT_TYPE));
    let body = response.into_body().into_data_stream();
    Ok((
        format,
        body.map_err(std::io::Error::other).into_async_read(),
    ))
}

/// An error body as a Status, whatever its format; its code is the HTTP one if it has none.
fn status_of(body: &[u8], code: u16) -> Status {
    let status = if body.starts_with(MAGIC) {
        status_body(body).ok()
    } else {
        serde_json::from_slice::<Status>(body)
            .ok()
            .map(capped_status)
    };
    let mut status = status.unwrap_or_else(|| {
        let text = String::from_utf8_lossy(body);
        Status::failure(
            crate::pod::cut(text.trim(), 1024),
            "Failed to parse error data",
        )
    });
    if status.code == 0 {
        status.code = code;
    }
    status
}
