//! ops-pod-cleaner: find abnormal Kubernetes pods, show them, clean them up safely.

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

pub mod build_info;
pub mod cli;
pub mod commands;
pub mod headless;
mod scan;
pub mod text_log;
pub mod ui;

// The core, under the names the binary's modules use.
pub use opc_core::{Error, Result, error};
use opc_core::{
    actions, clock, cluster, config, inert, lease, pod, policy, report, rules, session, worker,
};
