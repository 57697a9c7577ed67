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

pub mod actions;
pub mod cli;
pub mod cluster;
pub mod commands;
pub mod config;
pub mod error;
pub mod headless;
pub mod pod;
pub mod policy;
pub mod report;
pub mod rules;
mod scan;
pub mod ui;
pub mod worker;

pub use error::{Error, Result};
