//! Why the worker may not act at all right now, as values: the header, `headless`'s summary,
//! `/metrics` and the log make the words.

use std::fmt;
use std::time::Duration;

/// Why no action can run: the whole pass waits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blocked {
    /// `--readonly`.
    Readonly,
    /// The audit log cannot be written: nothing acts unrecorded.
    AuditLog(String),
    /// The first complete list of pods has not arrived.
    NotSynced,
    /// The view has not been proved in sync past `safety.maxStale`; `cause` is the watch's
    /// last error, when it has one.
    Stale {
        stale: Duration,
        cause: Option<String>,
    },
    Standby(Standby),
}

/// Why this worker stands by while another acts, or while nothing should.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standby {
    /// `headless` before its first election.
    Electing,
    /// The screen's worker, competing for the cluster's Lease.
    WaitingForLease,
    /// Another replica holds the Lease and acts.
    RunBy {
        holder: String,
        lease: String,
    },
    ShuttingDown,
    /// The screen is quitting: only the actions under way finish.
    Quitting,
    /// The cluster was closed on the screen.
    Closed,
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Blocked::Readonly => f.write_str("read-only mode: no actions"),
            Blocked::AuditLog(problem) => write!(
                f,
                "{problem}: nothing acts until it can be written (or run with --no-audit)"
            ),
            Blocked::NotSynced => f.write_str("waiting for the first complete list of pods"),
            Blocked::Stale { stale, cause } => write!(
                f,
                "watch stale for {}s: {} (more than safety.maxStale)",
                stale.as_secs(),
                cause
                    .as_deref()
                    .unwrap_or("the view is not proved in sync with the API server")
            ),
            Blocked::Standby(standby) => write!(f, "{standby}"),
        }
    }
}

impl fmt::Display for Standby {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Standby::Electing => f.write_str("waiting for the leader election"),
            Standby::WaitingForLease => {
                f.write_str("waiting for the cluster's Lease (one worker per cluster acts)")
            }
            Standby::RunBy { holder, lease } => {
                write!(f, "run by {holder}, which holds the Lease {lease}")
            }
            Standby::ShuttingDown => f.write_str("shutting down"),
            Standby::Quitting => f.write_str("the screen is quitting"),
            Standby::Closed => f.write_str("this cluster was closed"),
        }
    }
}
