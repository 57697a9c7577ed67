//! Why the worker may not act at all right now, as values: the header, `headless`'s summary,
//! `/metrics` and the log make the words.

use std::time::Duration;

/// Why no action can run: the whole pass waits. A worker serves its kind, [`BlockedKind`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, strum::EnumDiscriminants)]
#[strum_discriminants(
    name(BlockedKind),
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "camelCase")
)]
pub enum Blocked {
    /// `--readonly`.
    #[error("read-only mode: no actions")]
    Readonly,
    #[error("{0}: nothing acts until it can be written (or run with --no-audit)")]
    AuditLog(String),
    #[error("waiting for the first complete list of pods")]
    NotSynced,
    /// The view has not been proved in sync past `safety.maxStale`; `cause` is the watch's
    /// last error, when it has one.
    #[error(
        "watch stale for {}s: {} (more than safety.maxStale)",
        stale.as_secs(),
        cause.as_deref().unwrap_or("the view is not proved in sync with the API server")
    )]
    Stale {
        stale: Duration,
        cause: Option<String>,
    },
    #[error("{0}")]
    Standby(Standby),
}

/// Why this worker stands by while another acts, or while nothing should.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Standby {
    /// `headless` before its first election.
    #[error("waiting for the leader election")]
    Electing,
    /// The screen's worker, competing for the cluster's Lease.
    #[error("waiting for the cluster's Lease (one worker per cluster acts)")]
    WaitingForLease,
    #[error("run by {holder}, which holds the Lease {lease}")]
    RunBy { holder: String, lease: String },
    #[error("shutting down")]
    ShuttingDown,
    /// The screen is quitting: only the actions under way finish.
    #[error("the screen is quitting")]
    Quitting,
    #[error("this cluster was closed")]
    Closed,
}
