//! Why a request did not do its work, as values; the words are made where they are shown.

use std::fmt;

use super::action::PodRef;

/// A request that was sent, or meant to be, and failed; nothing here is a refusal by a check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The API server answered with an error status; `tries` when 429/5xx retries ran out.
    Api {
        code: u16,
        message: String,
        tries: Option<u32>,
    },
    /// The request did not get an answer (connection, TLS, timeout, an unreadable body).
    Transport(String),
    /// A request that could not even be built.
    Request(String),
    /// The pod read again after a 409 could not be decoded.
    Reread { pod: PodRef, why: String },
    /// The audit log took longer than the lease allowed; nothing was sent.
    IntentLate,
    /// The lease had to be renewed before the answer came: it may have landed.
    LeaseEnded,
    /// A parked record that could not be encoded.
    Encode(String),
    /// The parked ConfigMap changed under every write.
    StoreKeptChanging { location: String, tries: usize },
    /// An entry of the parked ConfigMap that is not a record.
    BadRecord {
        location: String,
        uid: String,
        why: String,
    },
    /// A pod action whose pod was not read (cannot happen through `prepare`).
    NoPod,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Api {
                code,
                message,
                tries,
            } => {
                write!(f, "{message} ({code})")?;
                match tries {
                    Some(n) => write!(f, " after {n} tries"),
                    None => Ok(()),
                }
            }
            Failure::Transport(why) => f.write_str(why),
            Failure::Request(why) => write!(f, "cannot build the request: {why}"),
            Failure::Reread { pod, why } => write!(f, "re-reading {pod} after a conflict: {why}"),
            Failure::IntentLate => f.write_str(
                "the audit log did not take the intent before the lease had to be renewed; \
                 nothing was sent",
            ),
            Failure::LeaseEnded => f.write_str(
                "stopped at the lease's end: the lease had to be renewed first; the request \
                 may or may not have reached the server",
            ),
            Failure::Encode(why) => write!(f, "encoding a record: {why}"),
            Failure::StoreKeptChanging { location, tries } => {
                write!(f, "{location} kept changing; gave up after {tries} tries")
            }
            Failure::BadRecord { location, uid, why } => write!(
                f,
                "{location}: the entry for {uid} is not a parked record ({why}); fix or remove it"
            ),
            Failure::NoPod => f.write_str("no pod to act on"),
        }
    }
}
