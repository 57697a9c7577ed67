//! The HTTP endpoints: `/metrics`, `/healthz` (liveness) and `/readyz` (readiness) at one
//! door, the findings under `/v1/` at another.
//!
//! Small and guarded: a few seconds for each request's headers, a minute per connection, and
//! a new connection closes the oldest rather than being turned away, so the kubelet's probes
//! are answered whatever other clients hold.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};

use super::fleet::Feed;
use super::fleet_http::{self, Answer, Body};
use super::metrics::{Snapshot, WORKER_STALL, healthz, readyz, render};
use super::slots::{MAX_CONNECTIONS, MAX_STREAMS, PER_PEER, STREAMS_PER_CLIENT, Slot, Slots};
pub use super::sources::Sources;

/// A client that has not sent a request's headers by then is dropped: counted from the
/// connection's start, then from the end of each answer (an idle kept-alive connection).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);
/// No connection, kept alive or not, lasts longer.
const CONNECTION_LIFETIME: Duration = Duration::from_secs(60);

impl Sources {
    fn snapshot(&self) -> Snapshot {
        // Read from the cache's index, kept as pods change: a scrape classifies nothing.
        let findings = self
            .cache
            .cause_counts()
            .into_iter()
            .map(|(key, n)| (key, n as u64))
            .collect();
        let health = self.cache.health();
        let worker = self.worker_now(&health, Instant::now());
        Snapshot {
            pods: self.cache.len(),
            nodes_not_reporting: self.cache.nodes_not_reporting(),
            events_dropped: self.cache.events_dropped(),
            findings,
            actions: self.counters.actions(),
            deliveries: self.counters.deliveries(),
            health,
            worker,
            leader: *self.leader.borrow(),
        }
    }

    fn answer(&self, path: &str) -> (u16, &'static str, String) {
        match path {
            "/metrics" => (
                200,
                "text/plain; version=0.0.4",
                render(&self.snapshot(), Instant::now()),
            ),
            "/healthz" => {
                let (worker, now) = (self.worker.borrow().clone(), self.cache.clock().now());
                let (code, body) = healthz(&worker, self.started, WORKER_STALL, now);
                (code, "text/plain", body)
            }
            "/readyz" => {
                let (code, body) = readyz(&self.cache.health(), self.max_stale, Instant::now());
                (code, "text/plain", body)
            }
            _ => (
                404,
                "text/plain",
                "not found: try /metrics, /healthz or /readyz\n".into(),
            ),
        }
    }
}

/// Bind now, so a taken port is an error at start.
pub async fn bind(addr: SocketAddr) -> crate::Result<TcpListener> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| crate::Error::Listen { addr, source })
}

/// The two doors: the probes and `/metrics` on one listener, the findings (`/v1/`) on
/// another, so no client of one takes the other's connections.
pub struct Listeners {
    pub probes: TcpListener,
    pub findings: TcpListener,
}

/// Which door a connection came in by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Door {
    Probes,
    Findings,
}

pub async fn serve(listeners: Listeners, sources: Sources, stop: watch::Receiver<bool>) {
    // One feed for every client: the diff is made once per publication.
    let feed = Feed::start(&sources, stop.clone());
    let probes = Places {
        connections: Slots::new(PER_PEER, MAX_CONNECTIONS),
        streams: Slots::new(1, 1),
    };
    // Through the service proxy every connection comes from the API server: connections are
    // not shared out by address, streams are by the client the proxy names.
    let findings = Places {
        connections: Slots::new(MAX_CONNECTIONS, MAX_CONNECTIONS),
        streams: Slots::new(STREAMS_PER_CLIENT, MAX_STREAMS),
    };
    let door = |listener, door, places| {
        accept(
            listener,
            door,
            places,
            sources.clone(),
            feed.clone(),
            stop.clone(),
        )
    };
    tokio::join!(
        door(listeners.probes, Door::Probes, probes),
        door(listeners.findings, Door::Findings, findings),
    );
}

async fn accept(
    listener: TcpListener,
    door: Door,
    places: Places,
    sources: Sources,
    feed: Arc<Feed>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = stop.changed() => return,
        };
        let slot = places.connections.admit(peer.ip());
        let (sources, feed) = (sources.clone(), feed.clone());
        tokio::spawn(connection(
            stream,
            Peer { door, at: peer },
            slot,
            places.clone(),
            sources,
            feed,
        ));
    }
}

/// Where connections are kept: requests and probes in one table, watch streams in another.
#[derive(Clone)]
struct Places {
    connections: Slots,
    streams: Slots,
}

/// Who is at the other end of a connection, and through which door.
#[derive(Debug, Clone, Copy)]
struct Peer {
    door: Door,
    at: SocketAddr,
}

/// One connection, within its slot and its lifetime: a minute, or, once it carries a watch,
/// the stream's own bound past that. A connection that starts a watch moves to the streams'
/// table, counted for the client it serves.
async fn connection(
    stream: TcpStream,
    peer: Peer,
    mut slot: Slot,
    places: Places,
    sources: Sources,
    feed: Arc<Feed>,
) {
    let stream_lifetime = feed.settings().stream_lifetime;
    let streaming = Arc::new(Streaming::default());
    let marks = streaming.clone();
    let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
        let response = respond(peer, &sources, &feed, &req, &marks);
        async move { response }
    });
    let served = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .serve_connection(TokioIo::new(stream), service);
    let mut served = std::pin::pin!(served);
    let mut ends = std::pin::pin!(tokio::time::sleep(CONNECTION_LIFETIME));
    let mut is_stream = false;
    loop {
        tokio::select! {
            served = &mut served => {
                if let Err(e) = served {
                    tracing::debug!("connection from {}: {e}", peer.at);
                }
                return;
            }
            _ = &mut ends => {
                tracing::debug!("connection from {} open too long: closed", peer.at);
                return;
            }
            _ = &mut slot.closed => {
                tracing::debug!("connection from {} closed for a newer one", peer.at);
                return;
            }
            _ = streaming.started.notified(), if !is_stream => {
                is_stream = true;
                let client = streaming.client().unwrap_or(peer.at.ip());
                slot = places.streams.admit(client);
                ends.as_mut().reset(tokio::time::Instant::now() + CONNECTION_LIFETIME + stream_lifetime);
            }
        }
    }
}

/// A connection's watch, once one starts: for whom, as the service proxy names the client.
#[derive(Default)]
struct Streaming {
    started: Notify,
    client: std::sync::Mutex<Option<IpAddr>>,
}

impl Streaming {
    fn client(&self) -> Option<IpAddr> {
        *self.client.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stored if the connection task is not waiting yet: it moves on its next look.
    fn start(&self, client: Option<IpAddr>) {
        *self.client.lock().unwrap_or_else(|e| e.into_inner()) = client;
        self.started.notify_one();
    }
}

/// The client a request is for: the last address in `X-Forwarded-For`, which kube-apiserver's
/// service proxy appends (anything before it was the caller's to write).
fn forwarded_for(req: &hyper::Request<hyper::body::Incoming>) -> Option<IpAddr> {
    let header = req
        .headers()
        .get_all("x-forwarded-for")
        .iter()
        .next_back()?;
    let last = header.to_str().ok()?.rsplit(',').next()?;
    last.trim().parse().ok()
}

/// The answer to one request: the probes and `/metrics` at their door, `/v1/` at its own.
fn respond(
    peer: Peer,
    sources: &Sources,
    feed: &Arc<Feed>,
    req: &hyper::Request<hyper::body::Incoming>,
    streaming: &Streaming,
) -> Result<hyper::Response<Body>, http::Error> {
    let (uri, response) = (req.uri(), hyper::Response::builder());
    let (code, kind, body) = match peer.door {
        Door::Probes if uri.path().starts_with("/v1") => (
            404,
            "text/plain",
            Bytes::from_static(b"the findings are served on their own port (--findings-listen)\n"),
        ),
        Door::Probes => {
            let (code, kind, body) = sources.answer(uri.path());
            (code, kind, Bytes::from(body))
        }
        Door::Findings => match fleet_http::answer(feed, uri.path(), uri.query()) {
            Some(Answer::Stream(body)) => {
                streaming.start(forwarded_for(req));
                return response
                    .status(200)
                    .header(http::header::CONTENT_TYPE, fleet_http::NDJSON)
                    .body(body);
            }
            Some(Answer::Whole(code, kind, body)) => (code, kind, body),
            None => (404, "text/plain", Bytes::from_static(b"not found\n")),
        },
    };
    response
        .status(code)
        .header(http::header::CONTENT_TYPE, kind)
        .body(fleet_http::whole(body))
}
