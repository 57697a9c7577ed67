//! What a cluster's worker says of one pod, asked when the screen opens its details. The rows
//! a screen keeps of a fed cluster carry the cause's class, not its words: those are the
//! bulk of a row, and the engineer reads them for one pod at a time.

use std::pin::pin;
use std::time::Duration;

use futures::{AsyncRead, AsyncReadExt};
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

/// The most one row's answer may take: a row is a few KB, its texts capped when the worker
/// read the pod; what answers through the proxy is not trusted to stop.
const ROW_BYTES: usize = 1 << 20;

/// Ask the worker at `address`, through `client`'s API server, what it says of the pod of
/// `uid`; given up after `within`.
pub async fn ask_worker(
    client: &Client,
    address: &WorkerAddress,
    uid: &str,
    within: Duration,
) -> WorkerWord {
    let asked = read_row(client, address, uid);
    match tokio::time::timeout(within, asked).await {
        Err(_) => WorkerWord::Unanswered(FeedError::Silent { after: within }),
        Ok(Err(e)) => WorkerWord::Unanswered(e),
        Ok(Ok(None)) => WorkerWord::NotAbnormal,
        Ok(Ok(Some(row))) if row.uid == uid => WorkerWord::Cause(row.cause),
        // Another pod's row is not this pod's cause.
        Ok(Ok(Some(_))) => WorkerWord::Unanswered(FeedError::Protocol(DecodeError::Malformed(
            "the row of another pod".to_string(),
        ))),
    }
}

async fn read_row(
    client: &Client,
    address: &WorkerAddress,
    uid: &str,
) -> Result<Option<FindingRow>, FeedError> {
    let request = http::Request::get(address.finding_path(uid))
        .body(Vec::new())
        .map_err(|e| FeedError::Transport(e.to_string()))?;
    let body = (client.request_stream(request).await).map_err(|e| FeedError::of(&e, address))?;
    let bytes = read_capped(body, ROW_BYTES).await?;
    serde_json::from_slice(&bytes)
        .map_err(|e| FeedError::Protocol(DecodeError::Malformed(format!("{:?}", e.classify()))))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_answer_past_its_bound_is_refused_before_it_is_held() {
        let fits = futures::io::Cursor::new(b"null".to_vec());
        assert_eq!(read_capped(fits, 4).await, Ok(b"null".to_vec()));
        let endless = futures::io::repeat(b' ');
        assert_eq!(
            read_capped(endless, 1024).await,
            Err(FeedError::Protocol(DecodeError::LineTooLong { max: 1024 }))
        );
    }
}
