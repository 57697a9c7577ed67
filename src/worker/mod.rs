//! The auto-clean worker: plans from the live cache and the per-rule toggles, enforces the
//! safety guards, and runs actions through the executor.

mod control;

pub use control::{RuleStatus, WorkerCommand, WorkerHandle, WorkerStatus};
