//! ops-pod-cleaner's core, without a UI: the live pod cache and its watches, the rules that
//! classify pods, the actions and the guards every one passes, the auto-clean worker, the
//! Lease that makes it one per cluster, and the restart report. The TUI and `headless` open a
//! cluster through [`session::ClusterSession`] the same way.
//!
//! **Modules**, from the bottom up: [`clock`] (the one clock a cluster reads), [`pod`] (the
//! compact record), [`rules`] (classify and causes), [`config`], [`node`] and [`place`] (what
//! a pod shares with others), [`cluster`] (connect, list, watch, the cache), [`actions`],
//! [`worker`], [`lease`], [`fleet`] (a worker's findings as a feed, and where a screen reads a
//! cluster from), [`report`], [`policy`], [`session`]; [`inert`] makes untrusted text safe to
//! show, [`memory`] says when a burst was freed, [`error`] holds the one error type.
//!
//! **Identities**, each one type used for every key:
//! - a pod: [`actions::PodRef`] (namespace, name, uid: a new pod of the same name is another);
//! - a workload: [`pod::WorkloadId`] (namespace, kind, API group when foreign, name) for the
//!   breaker, the census, the report, the audit log and the scale itself
//!   ([`actions::ScalableWorkload`] is a `WorkloadId` of a kind that has replicas);
//! - what a cooldown is kept by: [`actions::Target`].
//!
//! **One write path and one read path per cluster.** Every action, from the screen, the worker
//! or `--once`, goes through [`actions::Executor`]: prepare (checks that write nothing), intend
//! (the audit record on disk), send, conclude. Its answer is an [`actions::Outcome`]; a
//! refusal is an [`actions::Refusal`]. The screen reads through [`actions::ClusterApi`].
//!
//! **Why nothing acts** is a [`worker::Blocked`]; why a rule is paused, a
//! [`worker::PauseCause`]; why a cluster could not be opened, a [`cluster::ConnectError`]; a
//! command line this run cannot do, a [`Usage`]; everything else, an [`Error`].

#![forbid(unsafe_code)]

pub mod actions;
pub mod clock;
pub mod cluster;
pub mod config;
pub mod error;
mod file_op;
pub mod fleet;
pub mod inert;
pub mod lease;
pub mod memory;
pub mod node;
pub mod place;
pub mod pod;
pub mod policy;
pub mod report;
pub mod rules;
mod safe_file;
pub mod session;
mod usage;
pub mod worker;

pub use error::{Error, Result};
pub use usage::{OnePick, Usage};
