//! ops-pod-cleaner: find abnormal Kubernetes pods, show them, clean them up safely.

pub mod cli;
pub mod commands;
pub mod headless;
mod scan;
pub mod text_log;
pub mod ui;

pub mod error;
pub use error::{Error, Result};
