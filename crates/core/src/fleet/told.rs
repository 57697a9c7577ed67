//! What a cluster's worker says of one pod, asked when the screen opens its details. The rows
//! a screen keeps of a fed cluster carry the cause's class, not its words: those are the
//! bulk of a row, and the engineer reads them for one pod at a time.

use std::time::Duration;

use kube::Client;

use super::{DecodeError, FeedError, FindingRow, WorkerAddress};
use crate::rules::Cause;

/// The worker's word on one pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkerWord {
    /// Why, on what it rests, and what next, as the worker found it.
    Cause(Cause),
    /// The worker lists the pod as abnormal no more.
    NotAbnormal,
    Unanswered(FeedError),
}

/// Ask the worker at `address`, through `client`'s API server, what it says of the pod of
/// `uid`; given up after `within`.
pub async fn ask_worker(
    client: &Client,
    address: &WorkerAddress,
    uid: &str,
    within: Duration,
) -> WorkerWord {
    let request = match http::Request::get(address.finding_path(uid)).body(Vec::new()) {
        Ok(request) => request,
        Err(e) => return WorkerWord::Unanswered(FeedError::Transport(e.to_string())),
    };
    let asked = client.request::<Option<FindingRow>>(request);
    match tokio::time::timeout(within, asked).await {
        Err(_) => WorkerWord::Unanswered(FeedError::Silent { after: within }),
        Ok(Err(e)) => WorkerWord::Unanswered(FeedError::of(&e, address)),
        Ok(Ok(None)) => WorkerWord::NotAbnormal,
        Ok(Ok(Some(row))) if row.uid == uid => WorkerWord::Cause(row.cause),
        // Another pod's row is not this pod's cause.
        Ok(Ok(Some(_))) => WorkerWord::Unanswered(FeedError::Protocol(DecodeError::Malformed(
            "the row of another pod".to_string(),
        ))),
    }
}
