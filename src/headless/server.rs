//! The HTTP endpoints: `/metrics`, `/healthz` (liveness) and `/readyz` (readiness).
//!
//! Small and guarded: a client gets a few seconds to send its headers (each request's, so an
//! idle kept-alive connection goes too) and a connection at most a minute; only so many
//! connections stay open, and a new one closes the oldest rather than being turned away, so
//! the kubelet's probes are answered whatever other clients hold.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use chrono::{DateTime, Utc};
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::watch;

use super::metrics::{Snapshot, WORKER_STALL, healthz, readyz, render, stale_past};
use super::slots::{MAX_CONNECTIONS, PER_PEER, Slots};
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
                "not found: try /metrics, /healthz or /readyz\n".into(),
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
    let slots = Slots::new(PER_PEER, MAX_CONNECTIONS);
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
        let mut slot = slots.admit(peer.ip());
        let sources = sources.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                let (code, kind, body) = sources.answer(req.uri().path());
                let response = hyper::Response::builder()
                    .status(code)
                    .header(http::header::CONTENT_TYPE, kind)
                    .body(Full::new(Bytes::from(body)));
                async move { response }
            });
            let served = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                served = tokio::time::timeout(CONNECTION_LIFETIME, served) => match served {
                    Ok(Err(e)) => tracing::debug!("metrics connection: {e}"),
                    Err(_) => tracing::debug!("metrics connection open too long: closed"),
                    Ok(Ok(())) => {}
                },
                _ = &mut slot.closed => {
                    tracing::debug!("metrics connection from {peer} closed for a newer one");
                }
            }
        });
    }
}
