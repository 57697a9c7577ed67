//! Where a cluster's findings come from, in the header's few words and the clusters dialog's
//! full ones. A worker's and the API server's words reach the screen inert.

use super::inert_line;
use crate::ui::event::SourceLine;
use opc_core::cluster::ClusterName;
use opc_core::fleet::{FeedStatus, StaleWhy, WatchWhy, WorkerView};

/// A word or two for the header; none for a watch chosen as one (what every cluster was).
pub(crate) fn tag(source: &SourceLine) -> Option<&'static str> {
    match source {
        SourceLine::Watch(WatchWhy::Chosen) => None,
        // No worker is the common case `auto` falls back from: the clusters dialog says so.
        SourceLine::Watch(WatchWhy::NoWorker(_)) => None,
        SourceLine::Watch(WatchWhy::OverBound(_)) => Some("watch (feed too big)"),
        SourceLine::Worker { .. } => Some("via worker"),
    }
}

/// In full, for the clusters dialog: the source, the feed's state, why a fallback happened.
pub(crate) fn words(source: &SourceLine) -> String {
    let text = match source {
        SourceLine::Watch(WatchWhy::Chosen) => "watch".to_string(),
        SourceLine::Watch(why @ (WatchWhy::NoWorker(_) | WatchWhy::OverBound(_))) => {
            format!("watch, since {why}")
        }
        SourceLine::Worker { status, .. } => {
            format!(
                "via its worker (abnormal pods only): {}",
                status_words(status)
            )
        }
    };
    inert_line(&text)
}

fn status_words(status: &FeedStatus) -> String {
    match status {
        FeedStatus::Connecting => "connecting".into(),
        FeedStatus::Live => "live".into(),
        FeedStatus::Stale { why, .. } => match why {
            StaleWhy::WorkerStale => "stale: the worker's own view of its cluster is stale".into(),
            StaleWhy::WorkerNotSynced => "the worker has not listed its cluster yet".into(),
            StaleWhy::Lost(error) => format!("stale, reconnecting: {error}"),
        },
        FeedStatus::Failing(error) => format!("failing, retrying: {error}"),
    }
}

/// The in-cluster worker's switches, read-only here: it holds the cluster's Lease and acts.
pub(crate) fn worker_words(cluster: &ClusterName, worker: &WorkerView) -> String {
    let mut text = format!(
        "{cluster}'s in-cluster worker (read-only here): {}, auto {}",
        if worker.leading { "leading" } else { "standby" },
        if worker.master_auto { "ON" } else { "off" },
    );
    if worker.dry_run {
        text.push_str(", dry-run");
    }
    if let Some(blocked) = &worker.blocked {
        text.push_str(&format!(", blocked: {}", blocked.why));
    }
    for paused in &worker.paused {
        text.push_str(&format!(", {} PAUSED: {}", paused.rule, paused.why));
    }
    inert_line(&text)
}
