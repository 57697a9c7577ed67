//! The HTTP endpoints: `/metrics` and `/healthz`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use chrono::Utc;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;

use super::metrics::{Snapshot, healthz, render, stale_past};
use crate::cluster::Cache;
use crate::rules::{RuleSpec, classify};
use crate::worker::{Counters, WorkerStatus};

/// What the endpoints read from.
#[derive(Clone)]
pub struct Sources {
    pub cache: Cache,
    pub chain: Vec<RuleSpec>,
    pub max_stale: Duration,
    pub counters: Arc<Counters>,
    pub worker: watch::Receiver<WorkerStatus>,
    pub leader: watch::Receiver<bool>,
}

impl Sources {
    fn snapshot(&self) -> Snapshot {
        // Counted in place: a scrape must not clone every abnormal pod.
        let now = Utc::now();
        let findings = self
            .cache
            .fold(std::collections::BTreeMap::new(), |mut counts, pod| {
                if let Some(found) = classify(pod, &self.chain, now) {
                    *counts.entry(found.rule).or_default() += 1;
                }
                counts
            });
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
                let (code, body) = healthz(&self.cache.health(), self.max_stale, Instant::now());
                (code, "text/plain", body)
            }
            _ => (
                404,
                "text/plain",
                "not found: try /metrics or /healthz\n".into(),
            ),
        }
    }
}

/// Bind now (so a taken port is an error at start), serve until `stop`.
pub async fn bind(addr: SocketAddr) -> crate::Result<TcpListener> {
    TcpListener::bind(addr).await.map_err(|e| {
        crate::Error::Usage(format!(
            "cannot listen on {addr}: {e}; choose another with --listen"
        ))
    })
}

pub async fn serve(listener: TcpListener, sources: Sources, mut stop: watch::Receiver<bool>) {
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
            let served = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            if let Err(e) = served.await {
                tracing::debug!("metrics connection: {e}");
            }
        });
    }
}
