//! The restart report: which containers restart too often, grouped by workload.

mod model;

pub use model::{RestartReport, RestartRow, WorkloadGroup};
