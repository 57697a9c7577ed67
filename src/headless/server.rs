//! The HTTP endpoints: `/metrics`, `/healthz` (liveness), `/readyz` (readiness), and the
//! findings under `/v1/`.
//!
//! Small and guarded: a client gets a few seconds to send its headers (each request's, so an
//! idle kept-alive connection goes too) and a connection at most a minute; only so many
//! connections stay open, and a new one closes the oldest rather than being turned away, so
//! the kubelet's probes are answered whatever other clients hold.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};

use super::fleet::{Feed, FleetSettings};
use super::fleet_http::{self, Answer, Body};
use super::metrics::{Snapshot, WORKER_STALL, healthz, readyz, render, stale_past};
use super::slots::{MAX_CONNECTIONS, MAX_STREAMS, PER_PEER, Slot, Slots};
use crate::actions::PastAction;
use crate::cluster::CacheReader;
use crate::worker::{Counters, WorkerStatus};

/// A client that has not sent a request's headers by then is dropped: counted from the
/// connection's start, then from the end of each answer (an idle kept-alive connection).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);
/// No connection, kept alive or not, lasts longer.
const CONNECTION_LIFETIME: Duration = Duration::from_secs(60);

/// What the endpoints read from.
#[derive(Clone)]
pub struct Sources {
    /// Read-only: a scrape never takes the lock the watches write under.
    pub cache: CacheReader,
    pub max_stale: Duration,
    pub counters: Arc<Counters>,
    pub worker: watch::Receiver<WorkerStatus>,
    pub leader: watch::Receiver<bool>,
    /// When serving began: the worker's first pass is expected within the stall bound of it.
    pub started: DateTime<Utc>,
    /// The automatic actions sent lately, for `/v1/`'s worker status.
    pub recent: watch::Receiver<Vec<PastAction>>,
    pub fleet: FleetSettings,
}

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
        let mut worker = self.worker.borrow().clone();
        // The worker re-reads staleness between passes; the guard before every action reads it
        // live, and so does this gauge, rather than waiting for the worker's next pass.
        if worker.blocked.is_none() {
            worker.blocked = stale_past(&health, self.max_stale, Instant::now());
        }
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
                let worker = self.worker.borrow().clone();
                let (code, body) = healthz(&worker, self.started, WORKER_STALL, Utc::now());
                (code, "text/plain", body)
            }
            "/readyz" => {
                let (code, body) = readyz(&self.cache.health(), self.max_stale, Instant::now());
                (code, "text/plain", body)
            }
            _ => (
                404,
                "text/plain",
                "not found: try /metrics, /healthz, /readyz or /v1/\n".into(),
            ),
        }
    }
}

/// Bind now (so a taken port is an error at start), serve until `stop`.
pub async fn bind(addr: SocketAddr) -> crate::Result<TcpListener> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| crate::Error::Listen { addr, source })
}

pub async fn serve(listener: TcpListener, sources: Sources, mut stop: watch::Receiver<bool>) {
    let slots = Places {
        connections: Slots::new(PER_PEER, MAX_CONNECTIONS),
        streams: Slots::new(MAX_STREAMS, MAX_STREAMS),
    };
    // One feed for every client: the diff is made once per publication.
    let feed = Feed::start(&sources, stop.clone());
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
        let slot = slots.connections.admit(peer.ip());
        tokio::spawn(connection(
            stream,
            peer,
            slot,
            slots.clone(),
            sources.clone(),
            feed.clone(),
        ));
    }
}

/// Where connections are kept: requests and probes in one table, watch streams in another.
#[derive(Clone)]
struct Places {
    connections: Slots,
    streams: Slots,
}

/// One connection, within its slot and its lifetime: a minute, or, once it carries a watch,
/// the stream's own bound past that (a stream ends itself by then; the client resumes). A
/// connection that starts a watch moves to the streams' table and gives its place back.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    mut slot: Slot,
    places: Places,
    sources: Sources,
    feed: Arc<Feed>,
) {
    let stream_lifetime = feed.settings().stream_lifetime;
    let streaming = Arc::new(Notify::new());
    let marks = streaming.clone();
    let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
        let response = respond(&sources, &feed, req.uri(), &marks);
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
                    tracing::debug!("metrics connection: {e}");
                }
                return;
            }
            _ = &mut ends => {
                tracing::debug!("metrics connection open too long: closed");
                return;
            }
            _ = &mut slot.closed => {
                tracing::debug!("metrics connection from {peer} closed for a newer one");
                return;
            }
            _ = streaming.notified(), if !is_stream => {
                is_stream = true;
                slot = places.streams.admit(peer.ip());
                ends.as_mut().reset(tokio::time::Instant::now() + CONNECTION_LIFETIME + stream_lifetime);
            }
        }
    }
}

/// The answer to one request: `/v1/` from the feed, the probes and `/metrics` as before.
fn respond(
    sources: &Sources,
    feed: &Arc<Feed>,
    uri: &http::Uri,
    streaming: &Notify,
) -> Result<hyper::Response<Body>, http::Error> {
    let response = hyper::Response::builder();
    match fleet_http::answer(feed, uri.path(), uri.query()) {
        Some(Answer::Stream(body)) => {
            // Stored if the connection task is not waiting yet: it moves on its next look.
            streaming.notify_one();
            response
                .status(200)
                .header(http::header::CONTENT_TYPE, fleet_http::NDJSON)
                .body(body)
        }
        Some(Answer::Whole(code, kind, body)) => response
            .status(code)
            .header(http::header::CONTENT_TYPE, kind)
            .body(fleet_http::whole(body)),
        None => {
            let (code, kind, body) = sources.answer(uri.path());
            response
                .status(code)
                .header(http::header::CONTENT_TYPE, kind)
                .body(fleet_http::whole(body))
        }
    }
}
