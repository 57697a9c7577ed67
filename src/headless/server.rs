//! The HTTP endpoints: `/metrics`, `/healthz` (liveness) and `/readyz` (readiness).
//!
//! Small and guarded: a client gets a few seconds to send its headers and a connection at
//! most a minute, and only so many connections are served at once; the rest are closed.

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
use tokio::sync::{Semaphore, watch};

use super::metrics::{Snapshot, WORKER_STALL, healthz, readyz, render, stale_past};
use crate::cluster::Cache;
use crate::rules::RuleSpec;
use crate::worker::{Counters, WorkerStatus};

/// A client that has not sent its request headers by then is dropped.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);
/// No connection, kept alive or not, lasts longer.
const CONNECTION_LIFETIME: Duration = Duration::from_secs(60);
/// Connections served at once; Prometheus and two probes need a handful.
const MAX_CONNECTIONS: usize = 32;

/// What the endpoints read from.
#[derive(Clone)]
pub struct Sources {
    pub cache: Cache,
    pub chain: Vec<RuleSpec>,
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
            .cause_counts(&self.chain, Utc::now())
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
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = stop.changed() => return,
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            tracing::debug!("{MAX_CONNECTIONS} connections open already: closing a new one");
            continue;
        };
        let sources = sources.clone();
        tokio::spawn(async move {
            let _slot = slot;
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
            match tokio::time::timeout(CONNECTION_LIFETIME, served).await {
                Ok(Err(e)) => tracing::debug!("metrics connection: {e}"),
                Err(_) => tracing::debug!("metrics connection open too long: closed"),
                Ok(Ok(())) => {}
            }
        });
    }
}
