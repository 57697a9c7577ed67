//! What became of a report at each sink: one enum that callers match, count and print; nobody
//! needs to search the text for a word.

use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::spool::{SpoolCap, age_text};

#[derive(Debug, Clone, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "camelCase")]
pub enum DeliveryResult {
    /// The sink took this report.
    Sent,
    /// The sink took a report that had waited in the spool.
    Resent,
    /// Not delivered for now (5xx, 408, 429, unreachable, a file not written); waiting in
    /// the spool, to be resent.
    Spooled { why: String },
    /// The sink refused it for good (another 4xx, Feishu's `code != 0`): resending cannot
    /// help, so it is kept in the dead letters for a person and never resent.
    #[strum(serialize = "deadLetter")]
    DeadLettered { why: String, path: PathBuf },
    /// A spooled report removed unsent: over `report.spoolMaxAge` or `report.spoolMaxFiles`.
    Dropped { age: Duration, cap: SpoolCap },
    /// Neither delivered nor kept: the spool or the dead-letter file could not be written.
    Failed { why: String },
}

impl DeliveryResult {
    /// The `result` label of `opc_report_deliveries_total`.
    pub fn label(&self) -> &'static str {
        self.into()
    }

    pub fn delivered(&self) -> bool {
        matches!(self, DeliveryResult::Sent | DeliveryResult::Resent)
    }

    /// One line per result, naming the sink by its id (never its URL).
    pub(super) fn log(&self, sink: &str) {
        match self {
            DeliveryResult::Sent | DeliveryResult::Resent => {
                tracing::info!(sink, "restart report {}", self.label())
            }
            DeliveryResult::Spooled { why } => tracing::warn!(
                sink,
                "restart report not delivered ({why}); spooled, will resend"
            ),
            DeliveryResult::DeadLettered { why, path } => tracing::error!(
                sink,
                "restart report rejected by sink {sink} ({why}); not resent, kept as a dead letter in {}",
                path.display()
            ),
            DeliveryResult::Dropped { age, cap } => tracing::warn!(
                sink,
                "spooled restart report for sink {sink} dropped unsent, {} old: {cap}",
                age_text(*age)
            ),
            DeliveryResult::Failed { why } => {
                tracing::error!(sink, "restart report LOST: {why}")
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The sink's id ([`super::sink_id`]).
    pub sink: String,
    pub result: DeliveryResult,
}

/// One report's deliveries, and what the resends before it did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliverySummary {
    pub(crate) at: DateTime<Utc>,
    pub deliveries: Vec<Delivery>,
}

impl DeliverySummary {
    /// Every sink took every report this round: nothing waits, nothing was refused or lost.
    pub fn all_sent(&self) -> bool {
        self.deliveries.iter().all(|d| d.result.delivered())
    }

    /// Some report was refused for good and sits in the dead letters.
    pub fn any_dead_lettered(&self) -> bool {
        self.deliveries
            .iter()
            .any(|d| matches!(d.result, DeliveryResult::DeadLettered { .. }))
    }

    /// "sent to 2 sinks at 09:00:00" or "spooled: slack-1a2b3c4d answered 503 (sent to 1 at …)".
    pub fn describe(&self) -> String {
        let at = self.at.format("%H:%M:%S");
        let count = |wanted: &DeliveryResult| {
            self.deliveries
                .iter()
                .filter(|d| d.result == *wanted)
                .count()
        };
        let (sent, resent) = (count(&DeliveryResult::Sent), count(&DeliveryResult::Resent));
        let failed: Vec<String> = self
            .deliveries
            .iter()
            .filter_map(|d| match &d.result {
                DeliveryResult::Sent | DeliveryResult::Resent => None,
                DeliveryResult::Spooled { why } => Some(format!("spooled: {} {why}", d.sink)),
                DeliveryResult::DeadLettered { why, .. } => {
                    Some(format!("rejected, not resent: {} {why}", d.sink))
                }
                DeliveryResult::Dropped { age, cap } => Some(format!(
                    "dropped unsent: {} report {} old, {cap}",
                    d.sink,
                    age_text(*age)
                )),
                DeliveryResult::Failed { why } => Some(format!("LOST: {} {why}", d.sink)),
            })
            .collect();
        let resent = match resent {
            0 => String::new(),
            n => format!(", resent {n} spooled"),
        };
        match (self.deliveries.is_empty(), failed.is_empty()) {
            (true, _) => "no report sinks are configured (report.sinks)".into(),
            (false, true) => format!("sent to {sent} sinks at {at}{resent}"),
            (false, false) => format!("{} (sent to {sent} at {at}{resent})", failed.join("; ")),
        }
    }
}
