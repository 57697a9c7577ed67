//! The restart report: which containers restart too often, grouped by workload; rendered as
//! Markdown, JSON or CSV and delivered to chat webhooks and files, with a spool for failures.

mod build;
mod combine;
mod deliver;
mod files;
mod live;
mod model;
mod outcome;
pub mod payload;
pub mod render;
mod send;
mod spool;
mod state;

pub use build::build;
pub use deliver::{DeliveryPolicy, Reporter};
pub use files::write_atomically;
pub use live::{LiveReport, live_report};
pub use model::{RestartReport, RestartRow, Terms, WorkloadGroup};
pub use outcome::{DeliveryResult, DeliverySummary};
pub use spool::{SpoolCap, sink_id};
pub use state::RestartState;
