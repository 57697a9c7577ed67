//! Why a request did not do its work, as values; the words are made where they are shown.

use super::action::PodRef;

/// A request that was sent, or meant to be, and failed; nothing here is a refusal by a check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// The API server answered with an error status; `tries` when 429/5xx retries ran out.
    #[error(
        "{message} ({code}){}",
        tries.map_or_else(String::new, |n| format!(" after {n} tries"))
    )]
    Api {
        code: u16,
        message: String,
        tries: Option<u32>,
    },
    /// The request did not get an answer (connection, TLS, timeout, an unreadable body).
    #[error("{0}")]
    Transport(String),
    #[error("cannot build the request: {0}")]
    Request(String),
    /// The pod read again after a 409 could not be decoded.
    #[error("re-reading {pod} after a conflict: {why}")]
    Reread { pod: PodRef, why: String },
    #[error(
        "the audit log did not take the intent before the lease had to be renewed; nothing was \
         sent"
    )]
    IntentLate,
    /// The lease had to be renewed before the answer came: it may have landed.
    #[error(
        "stopped at the lease's end: the lease had to be renewed first; the request may or may \
         not have reached the server"
    )]
    LeaseEnded,
    #[error("encoding a record: {0}")]
    Encode(String),
    #[error("{location} kept changing; gave up after {tries} tries")]
    StoreKeptChanging { location: String, tries: usize },
    #[error("{location}: the entry for {uid} is not a parked record ({why}); fix or remove it")]
    BadRecord {
        location: String,
        uid: String,
        why: String,
    },
    /// A pod action whose pod was not read (cannot happen through `prepare`).
    #[error("no pod to act on")]
    NoPod,
}
