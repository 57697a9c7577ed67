//! ops-pod-cleaner: find abnormal Kubernetes pods, show them, clean them up safely.

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
pub mod scan;
pub mod ui;
pub mod worker;

pub use error::{Error, Result};
