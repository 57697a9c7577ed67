//! A fleet on one screen: what `headless` serves of its findings under `/v1/`, and how a
//! client folds it into its own copy. UI-free and transport-free: the worker's HTTP server
//! and whatever reads it (a socket, the API server's service proxy) share these types.
//!
//! **The snapshot** (`GET /v1/snapshot`) is one JSON object: the abnormal pods as
//! `scan --output json` prints them, the counts per category, the worker's status and how
//! current its own view is, at a sequence number of an epoch (the worker's run).
//!
//! **The watch** (`GET /v1/watch?since=SEQ&epoch=E`) is JSON lines, one [`Frame`] each:
//! exactly the frames after `SEQ` when the worker still holds them, else a snapshot first;
//! then every change as it is published; a heartbeat when idle.
//!
//! **One pod's row** (`GET /v1/findings/{uid}`, the uid percent-encoded as [`uid_segment`]
//! does) is that pod's row now, or `null`: a screen asks for a cause's words when it shows
//! them, and keeps only its class.
//!
//! **A client** decodes lines with [`LineReader`] (bounded) and folds frames into a
//! [`FleetView`]; a [`Gap`] means it reconnects from [`FleetView::resume`]. [`spawn_feed`] is
//! that client, reading a worker through the API server's service proxy ([`WorkerAddress`]).

mod address;
mod client;
mod decode;
mod fed;
mod fed_row;
mod feed_error;
mod frame;
pub(crate) mod held;
mod publish;
mod row;
mod source;
mod view;
mod worker_answer;

pub use address::{BadAddress, WorkerAddress, is_uid_segment, uid_segment};
pub use client::{FeedHandle, FeedSettings, FeedState, FeedStatus, StaleWhy, spawn_feed};
pub use decode::{DecodeError, Limits, LineReader, MAX_LINE, OVER_BOUND, decode_line};
pub use fed::{FedCluster, FedView};
pub use fed_row::FedRow;
pub use feed_error::FeedError;
pub use frame::{
    BlockedView, Counts, Epoch, Frame, LAST_ACTIONS, PausedRule, Snapshot, ViewHealth, WorkerView,
};
pub use held::Held;
pub use publish::{Publisher, Ring};
pub use row::{FindingRow, Owner, PodKey};
pub use source::{WatchWhy, decide, reconsider};
pub use view::{FleetView, Gap, Resume};
pub use worker_answer::{WorkerAnswer, ask_report, ask_worker, worker_report};
