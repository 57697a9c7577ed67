//! ops-pod-cleaner: find abnormal Kubernetes pods, show them, clean them up safely.

pub mod build_info;
pub mod cli;
pub mod commands;
pub mod headless;
mod scan;
pub mod text_log;
pub mod ui;

// The core's error and usage types: the binary's own, too.
pub use opc_core::{Error, OnePick, Result, Usage, error};
