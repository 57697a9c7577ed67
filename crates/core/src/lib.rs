//! ops-pod-cleaner's core, without a UI: the live pod cache and its watches, the rules that
//! classify pods, the actions and the guards every one passes, the auto-clean worker, the
//! Lease that makes it one per cluster, and the restart report. The TUI and `headless` open a
//! cluster through [`session::ClusterSession`] the same way.

// The panic policy (issue 14): product code reports what goes wrong instead of panicking.
// Crate attributes rather than `[lints]` in Cargo.toml, which would reach every test and
// bench crate too; `not(test)` leaves the unit-test modules free to unwrap.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

pub mod actions;
pub mod cluster;
pub mod config;
pub mod error;
pub mod inert;
pub mod lease;
pub mod node;
pub mod pod;
pub mod policy;
pub mod report;
pub mod rules;
mod safe_file;
pub mod session;
pub mod worker;

pub use error::{Error, Result};
