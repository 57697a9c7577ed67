//! Cleanup actions: small values that pass through a confirmation, then one write path per
//! cluster ([`Executor`]) that re-checks, acts with preconditions, and records what happened,
//! and one read path ([`ClusterApi`]) for what the screen reads.
//!
//! This file only names the parts; each module imports only modules below it, never one that
//! imports it back.

mod action;
pub mod append;
mod audit;
mod calls;
mod events;
mod executor;
mod failure;
mod history;
mod live_read;
mod node;
mod outcome;
mod owner;
mod owners;
mod parked;
mod parked_rows;
mod pod_writes;
mod proof;
mod read_error;
mod reads;
mod record;
mod refusal;
mod retry;
mod scale;
mod selector;
mod undo;
mod workload;

use crate::rules::Verb;
pub use action::{Action, Origin, PodRef, Target};
pub use audit::{Audit, AuditLog, AuditRecord, Stage};
pub use executor::Executor;
pub(crate) use executor::before;
pub use failure::Failure;
pub use history::PastAction;
pub use node::{OUT_OF_SERVICE, SecondCopy};
pub use outcome::{ACTION_LOG, Change, LeftBehind, Outcome, Skip};
pub use owner::{Resolution, Unscalable};
pub use owners::{FOLLOWED_OWNERS, OptOut};
pub use parked::{DEFAULT_NAMESPACE, PARKED_CONFIGMAP, ParkedRecord, parked_namespace};
pub use parked_rows::{ParkedList, ParkedRow, ParkedState, Trigger, Unread, list_parked};
pub use proof::{PullDiffers, Suspect, Unproven};
pub use read_error::ReadError;
pub use reads::{ClusterApi, Inspection, LOG_BYTES, LOG_LINES, PodReading};
pub use refusal::{Refusal, Unreadable};
pub use retry::{Denied, RetryPolicy};
pub use undo::{RecordedIn, UndoPlan};
pub use workload::{REPLICAS_BEFORE_ANNOTATION, ScalableWorkload, WorkloadKind};
