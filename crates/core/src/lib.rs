//! ops-pod-cleaner's core, without a UI: the live pod cache and its watches, the rules that
//! classify pods, the actions and the guards every one passes, the auto-clean worker, the
//! Lease that makes it one per cluster, and the restart report. The TUI and `headless` open a
//! cluster through [`session::ClusterSession`] the same way.

pub mod actions;
pub mod cluster;
pub mod config;
pub mod error;
pub mod inert;
pub mod lease;
pub mod pod;
pub mod policy;
pub mod report;
pub mod rules;
mod safe_file;
pub mod session;
pub mod worker;

pub use error::{Error, Result};
