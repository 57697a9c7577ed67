//! Pods' Warning Events, as a cluster whose abnormal pods (one in ten) keep failing writes them:
//! the first list in pages (API servers keep no watch cache for Events, so a list is paged by
//! etcd), then a watch on which the kubelets' Events keep coming: each repeat of a pooled Event
//! with its count and time moved on, at [`RATE`] while the pods churn. 15,000 abnormal pods
//! whose kubelets may repeat an Event once in 5 minutes each (client-go's spam filter after its
//! burst) write about 50 a second.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use chrono::Utc;
use http_body_util::{BodyExt, StreamBody, combinators::BoxBody};
use hyper::Response;
use serde_json::{Value, json};

pub const RATE: u64 = 50;

pub struct Warnings {
    pub pages: Vec<Bytes>,
    pub count: usize,
    pool: Vec<Value>,
    /// Repeats streamed so far.
    pub sent: AtomicU64,
}

impl Warnings {
    pub fn generate(pods: usize, page: usize, now: chrono::DateTime<Utc>) -> Warnings {
        let pool = kube_sim::generate::warning_events(pods, now);
        let pages = kube_sim::generate::event_list_pages(pods, page, now)
            .into_iter()
            .map(Bytes::from)
            .collect();
        Warnings {
            pages,
            count: pool.len(),
            pool,
            sent: AtomicU64::new(0),
        }
    }

    /// The watch's body: repeats at [`RATE`] while `churning()` says the pods churn.
    pub fn watch(
        self: &Arc<Self>,
        churning: impl Fn() -> bool + Send + 'static,
    ) -> Response<BoxBody<Bytes, Infallible>> {
        let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(64);
        let warnings = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(1000 / RATE));
            loop {
                tick.tick().await;
                if !churning() || warnings.pool.is_empty() {
                    continue;
                }
                let n = warnings.sent.fetch_add(1, Ordering::Relaxed);
                if tx.send(Bytes::from(warnings.repeat(n))).await.is_err() {
                    return;
                }
            }
        });
        Response::builder()
            .header("content-type", "application/json")
            .body(StreamBody::new(crate::streamed(rx)).boxed())
            .expect("response")
    }

    /// Repeat number `n`: a pooled Event, counted once more, as the kubelet's recorder updates it.
    fn repeat(&self, n: u64) -> Vec<u8> {
        let mut event = self.pool[(n as usize) % self.pool.len()].clone();
        let count = event["count"].as_u64().unwrap_or(1) + 1 + n / self.pool.len() as u64;
        event["count"] = json!(count);
        event["lastTimestamp"] = json!(Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string());
        event["metadata"]["resourceVersion"] = json!((4_000_000_000 + n).to_string());
        let mut line =
            serde_json::to_vec(&json!({"type": "MODIFIED", "object": event})).expect("encode");
        line.push(b'\n');
        line
    }
}
