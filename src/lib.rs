//! ops-pod-cleaner: find abnormal Kubernetes pods, show them, clean them up safely.

pub mod build_info;
pub mod cli;
pub mod commands;
pub mod headless;
mod scan;
pub mod text_log;
pub mod ui;

// The core, under the names the binary's modules use.
pub use opc_core::{Error, OnePick, Result, Usage, error};
use opc_core::{
    actions, clock, cluster, config, fleet, inert, lease, pod, policy, report, rules, session,
    worker,
};
