//! The restart report: which containers restart too often, grouped by workload; rendered as
//! Markdown, JSON or CSV and delivered to chat webhooks and files, with a spool for failures.

mod build;
mod caps;
mod combine;
mod deliver;
mod files;
mod model;
mod outcome;
pub mod payload;
pub mod render;
mod send;
mod spool;
mod state;
mod workload;

pub use build::build;
pub use caps::{Dropped, SpoolCap, SpoolLimits};
pub use combine::Section;
pub use deliver::{DeliveryPolicy, Reporter};
pub use files::write_atomically;
pub use model::{RestartReport, RestartRow, WorkloadGroup};
pub use outcome::{Delivery, DeliveryResult, DeliverySummary};
pub use send::dated_path;
pub use spool::{DeadLetter, Spool, Spooled, sink_id};
pub use state::RestartState;
pub use workload::{deployment_of, workload_label};
