//! What a cluster's worker says of one pod, asked when the screen opens its details. The rows
//! a screen keeps of a fed cluster carry the cause's class, not its words: those are the
//! bulk of a row, and the engineer reads them for one pod at a time.

use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{AsyncRead, AsyncReadExt};
use kube::Client;

use super::{DecodeError, FeedError, FindingRow, WorkerAddress};
use crate::clock::Clock;
use crate::cluster::ClusterName;
use crate::rules::Cause;

/// The worker's word on one pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkerAnswer {
    Cause(Cause),
    /// The worker lists the pod as abnormal no more.
    NotAbnormal,
    Unanswered(FeedError),
}

/// The most one row's answer may take: a row is a few KB, its texts capped when the worker
/// read the pod; what answers through the proxy is not trusted to stop.
const ROW_BYTES: usize = 1 << 20;

/// What the worker at `address` says of the pod of `uid`, given up after `within`.
pub async fn ask_worker(
    client: &Client,
    address: &WorkerAddress,
    uid: &str,
    within: Duration,
) -> WorkerAnswer {
    let path = address.finding_path(uid);
    match get_json::<Option<FindingRow>>(client, address, path, ROW_BYTES, within).await {
        Err(e) => WorkerAnswer::Unanswered(e),
        Ok(None) => WorkerAnswer::NotAbnormal,
        Ok(Some(row)) if row.uid == uid => WorkerAnswer::Cause(row.cause),
        // Another pod's row is not this pod's cause.
        Ok(Some(_)) => WorkerAnswer::Unanswered(FeedError::Protocol(DecodeError::Malformed(
            "the row of another pod".to_string(),
        ))),
    }
}

/// The most a worker's restart report may be: a few thousand restarting pods.
const REPORT_BYTES: usize = 8 << 20;

/// The worker's restart report now (`/v1/report`): its cluster's restarts, counted where its
/// pods are, for a screen that reads the cluster through it.
pub async fn ask_report(
    client: &Client,
    address: &WorkerAddress,
    within: Duration,
) -> Result<crate::report::RestartReport, FeedError> {
    let path = address.proxy_path("/v1/report");
    get_json(client, address, path, REPORT_BYTES, within).await
}

const REPORT_EVERY: Duration = Duration::from_secs(60);

/// The restart report of a cluster read through its worker, as the worker last served it
/// (empty until it answers): asked at once and every minute while the report is kept, in a
/// task that ends once nothing holds the report any more.
pub fn worker_report(
    client: Client,
    address: WorkerAddress,
    cluster: &ClusterName,
    clock: Clock,
) -> crate::report::LiveReport {
    let empty = crate::report::RestartReport {
        cluster: cluster.to_string(),
        generated: clock.now(),
        ..Default::default()
    };
    let slot = Arc::new(Mutex::new(empty));
    let kept = Arc::downgrade(&slot);
    let cluster = cluster.to_string();
    tokio::spawn(async move {
        loop {
            let answer = ask_report(&client, &address, WORKER_ANSWERS).await;
            let Some(slot) = kept.upgrade() else {
                return;
            };
            match answer {
                Ok(mut report) => {
                    // Named as this screen names the cluster, not as the worker calls it.
                    report.cluster = cluster.clone();
                    *slot.lock().unwrap_or_else(|e| e.into_inner()) = report;
                }
                Err(e) => tracing::debug!(%address, "no restart report from the worker: {e}"),
            }
            drop(slot);
            tokio::time::sleep(REPORT_EVERY).await;
        }
    });
    Arc::new(move || slot.lock().unwrap_or_else(|e| e.into_inner()).clone())
}

/// How long a screen waits for a worker's report.
const WORKER_ANSWERS: Duration = Duration::from_secs(10);

async fn get_json<T: serde::de::DeserializeOwned>(
    client: &Client,
    address: &WorkerAddress,
    path: String,
    cap: usize,
    within: Duration,
) -> Result<T, FeedError> {
    let asked = async {
        let request = http::Request::get(path)
            .body(Vec::new())
            .map_err(|e| FeedError::Transport(e.to_string()))?;
        let body =
            (client.request_stream(request).await).map_err(|e| FeedError::of(&e, address))?;
        let bytes = read_capped(body, cap).await?;
        serde_json::from_slice(&bytes)
            .map_err(|e| FeedError::Protocol(DecodeError::Malformed(format!("{:?}", e.classify()))))
    };
    (tokio::time::timeout(within, asked).await).unwrap_or(Err(FeedError::Silent { after: within }))
}

/// The whole of `body`, refused past `cap` bytes before more is held.
async fn read_capped(body: impl AsyncRead, cap: usize) -> Result<Vec<u8>, FeedError> {
    let mut bytes = Vec::new();
    let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
    (pin!(body).take(limit).read_to_end(&mut bytes).await)
        .map_err(|e| FeedError::Transport(e.to_string()))?;
    match bytes.len() > cap {
        true => Err(FeedError::Protocol(DecodeError::LineTooLong { max: cap })),
        false => Ok(bytes),
    }
}
