//! An API server that answers a script, one answer a request in the order they come, and holds
//! each request until the test has looked: what the watch loop does is read from the requests
//! it makes (what it asks for, and when) and from the cache it fills.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use http_body_util::StreamBody;
use hyper::body::Frame;
use opc_core::cluster::{Cache, Scope, WatchSettings, spawn_watches};
use opc_core::config::WireFormat;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// One answer: a status, a `Content-Type`, and a body in parts, each sent after its pause.
#[derive(Clone)]
pub(crate) struct Answer {
    code: u16,
    content_type: Option<&'static str>,
    parts: Vec<(Duration, Vec<u8>)>,
    /// The body stays open after its last part, as a quiet watch does.
    open: bool,
}

impl Answer {
    /// `code` with `body` at once, closed after it.
    pub(crate) fn body(code: u16, body: impl Into<Vec<u8>>) -> Answer {
        Answer {
            code,
            content_type: Some("application/json"),
            parts: vec![(Duration::ZERO, body.into())],
            open: false,
        }
    }

    pub(crate) fn json(code: u16, value: &serde_json::Value) -> Answer {
        Answer::body(code, value.to_string())
    }

    /// A list of `items` at `version`.
    pub(crate) fn list(version: &str, items: &[serde_json::Value]) -> Answer {
        let list = serde_json::json!({
            "kind": "PodList", "apiVersion": "v1",
            "metadata": {"resourceVersion": version}, "items": items,
        });
        Answer::json(200, &list)
    }

    /// An error `Status` with `code` and `message`, as the API server answers one.
    pub(crate) fn status(code: u16, message: &str) -> Answer {
        let status = serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure",
            "message": message, "code": code,
        });
        Answer::json(code, &status)
    }

    /// A watch stream of JSON `events`, a line each, closed after them.
    pub(crate) fn events(events: &[serde_json::Value]) -> Answer {
        let lines: String = events.iter().map(|e| format!("{e}\n")).collect();
        Answer::body(200, lines)
    }

    /// A watch stream in protobuf: its `frames` as they are.
    pub(crate) fn frames(frames: Vec<u8>) -> Answer {
        Answer {
            content_type: Some("application/vnd.kubernetes.protobuf;stream=watch"),
            ..Answer::body(200, frames)
        }
    }

    /// With this `Content-Type`, or none.
    pub(crate) fn content_type(mut self, content_type: Option<&'static str>) -> Answer {
        self.content_type = content_type;
        self
    }

    /// Then `bytes`, after `pause`.
    pub(crate) fn then(mut self, pause: Duration, bytes: impl Into<Vec<u8>>) -> Answer {
        self.parts.push((pause, bytes.into()));
        self
    }

    /// Nothing more, and the body stays open.
    pub(crate) fn open(mut self) -> Answer {
        self.open = true;
        self
    }

    /// The body's bytes sent `size` at a time.
    pub(crate) fn in_pieces(mut self, size: usize) -> Answer {
        self.parts = self
            .parts
            .into_iter()
            .flat_map(|(pause, bytes)| {
                let pieces: Vec<_> = bytes.chunks(size.max(1)).map(<[u8]>::to_vec).collect();
                let pauses = std::iter::once(pause).chain(std::iter::repeat(Duration::ZERO));
                pauses.zip(pieces).collect::<Vec<_>>()
            })
            .collect();
        self
    }

    fn response(self) -> http::Response<StreamBody<BoxStream<'static, Part>>> {
        // A part with no bytes is only a pause.
        let parts = futures::stream::iter(self.parts)
            .then(|(pause, bytes)| async move {
                if !pause.is_zero() {
                    tokio::time::sleep(pause).await;
                }
                (!bytes.is_empty()).then(|| Ok(Frame::data(Bytes::from(bytes))))
            })
            .filter_map(futures::future::ready);
        let body = match self.open {
            true => parts.chain(futures::stream::pending()).boxed(),
            false => parts.boxed(),
        };
        let mut answer = http::Response::builder().status(self.code);
        if let Some(content_type) = self.content_type {
            answer = answer.header(http::header::CONTENT_TYPE, content_type);
        }
        answer.body(StreamBody::new(body)).unwrap()
    }
}

type Part = Result<Frame<Bytes>, Infallible>;

/// A request the client made.
#[derive(Debug)]
pub(crate) struct Seen {
    pub(crate) uri: http::Uri,
    pub(crate) accept: String,
    /// When it was made, on tokio's clock.
    pub(crate) at: Instant,
}

impl Seen {
    /// A query parameter's value, decoded.
    pub(crate) fn param(&self, name: &str) -> Option<String> {
        self.uri.query()?.split('&').find_map(|pair| {
            let (key, value) = pair.split_once('=')?;
            let value = percent_encoding::percent_decode_str(value).decode_utf8_lossy();
            (key == name).then(|| value.into_owned())
        })
    }

    pub(crate) fn is_watch(&self) -> bool {
        self.param("watch").as_deref() == Some("true")
    }

    /// A watch that begins with the current state: a streaming list.
    pub(crate) fn is_streaming_list(&self) -> bool {
        self.is_watch() && self.param("sendInitialEvents").as_deref() == Some("true")
    }

    /// A paged list from `version` ("" for the most recent, a quorum read).
    pub(crate) fn is_paged_list_from(&self, version: &str) -> bool {
        !self.is_watch() && self.param("resourceVersion").unwrap_or_default() == version
    }

    /// A plain watch from `version`.
    pub(crate) fn is_watch_from(&self, version: &str) -> bool {
        self.is_watch()
            && !self.is_streaming_list()
            && self.param("resourceVersion").as_deref() == Some(version)
    }
}

/// The requests the client makes, each held unanswered until the next is asked for: while
/// the test looks at one, the loop that made it waits for its answer.
pub(crate) struct Server {
    requests: mpsc::UnboundedReceiver<(Seen, oneshot::Sender<()>)>,
    held: Option<oneshot::Sender<()>>,
}

impl Server {
    /// Let the request held go on to its answer, and wait for the next.
    pub(crate) async fn next(&mut self) -> Seen {
        self.next_or_end().await.expect("the client is gone")
    }

    /// The next request; None once the client is gone.
    pub(crate) async fn next_or_end(&mut self) -> Option<Seen> {
        self.release();
        let (seen, go) = self.requests.recv().await?;
        self.held = Some(go);
        Some(seen)
    }

    /// Let the request held go on to its answer.
    pub(crate) fn release(&mut self) {
        if let Some(go) = self.held.take() {
            let _ = go.send(());
        }
    }
}

/// A client whose requests get `script`'s answers in turn; once it is spent, none at all.
pub(crate) fn scripted(script: Vec<Answer>) -> (kube::Client, Server) {
    scripted_by_path(vec![("", script)])
}

/// A client whose requests to each path get that path's script's answers in turn (the path ""
/// stands for any other).
pub(crate) fn scripted_by_path(scripts: Vec<(&str, Vec<Answer>)>) -> (kube::Client, Server) {
    let (tell, requests) = mpsc::unbounded_channel();
    let scripts: HashMap<String, VecDeque<Answer>> = scripts
        .into_iter()
        .map(|(path, script)| (path.to_string(), VecDeque::from(script)))
        .collect();
    let scripts = Arc::new(Mutex::new(scripts));
    let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let seen = Seen {
            uri: request.uri().clone(),
            accept: request
                .headers()
                .get(http::header::ACCEPT)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string(),
            at: Instant::now(),
        };
        let (go, gone) = oneshot::channel();
        let told = tell.send((seen, go)).is_ok();
        let answer = {
            let mut scripts = scripts.lock().unwrap();
            let path = request.uri().path();
            let key = if scripts.contains_key(path) { path } else { "" };
            scripts.get_mut(key).and_then(VecDeque::pop_front)
        };
        async move {
            if told {
                let _ = gone.await;
            }
            match answer {
                Some(answer) => Ok::<_, Infallible>(answer.response()),
                None => std::future::pending().await,
            }
        }
    });
    (
        kube::Client::new(service, "default"),
        Server {
            requests,
            held: None,
        },
    )
}

/// Settings for one test's watch: JSON, freshness bound `stale_after` (quiet for half of it,
/// a watch is re-made), backoff from `min` to `max`.
pub(crate) fn settings(stale_after: Duration, min: Duration, max: Duration) -> WatchSettings {
    WatchSettings {
        page_size: 500,
        watch_timeout: Duration::from_secs(290),
        stale_after,
        min_backoff: min,
        max_backoff: max,
        wire: WireFormat::Json,
    }
}

/// The settings most tests use: a 20s bound, a backoff from 1 to 4 seconds.
pub(crate) fn usual() -> WatchSettings {
    settings(
        Duration::from_secs(20),
        Duration::from_secs(1),
        Duration::from_secs(4),
    )
}

/// Pods of the whole cluster watched into a new cache through `script`.
pub(crate) fn watching(script: Vec<Answer>, settings: &WatchSettings) -> (Cache, Server) {
    let (client, server) = scripted(script);
    let cache = Cache::new();
    drop(spawn_watches(&client, &[Scope::All], &cache, settings));
    (cache, server)
}

/// A pod's JSON with `name`, `uid` and `version`.
pub(crate) fn pod(name: &str, uid: &str, version: &str) -> serde_json::Value {
    serde_json::json!({"metadata": {
        "name": name, "namespace": "ns", "uid": uid, "resourceVersion": version,
    }})
}

/// A watch event of `kind` about `object`.
pub(crate) fn event(kind: &str, object: serde_json::Value) -> serde_json::Value {
    serde_json::json!({"type": kind, "object": object})
}

/// The bookmark that ends a streaming list's initial events, at `version`.
pub(crate) fn initial_events_end(version: &str) -> serde_json::Value {
    event(
        "BOOKMARK",
        serde_json::json!({"kind": "Pod", "apiVersion": "v1", "metadata": {
            "resourceVersion": version,
            "annotations": {"k8s.io/initial-events-end": "true"},
        }}),
    )
}

/// The server does not serve streaming lists: the answer to the first request, after which
/// the loop lists in pages.
pub(crate) fn no_streaming() -> Answer {
    Answer::status(422, "sendInitialEvents is not supported")
}

/// A server that lists in pages only: its first list at `version`, then `then`'s answers.
pub(crate) fn paged_at(version: &str, then: impl IntoIterator<Item = Answer>) -> Vec<Answer> {
    [no_streaming(), Answer::list(version, &[])]
        .into_iter()
        .chain(then)
        .collect()
}
