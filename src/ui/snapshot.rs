//! What the screen is handed of the open clusters: their findings and a line per cluster on
//! how current its view is. Pure reads of the sessions.

use std::time::Instant;

use chrono::{DateTime, Utc};

use super::event::{ClusterLine, Snapshot, SourceLine};
use super::state::WatchLine;
use opc_core::cluster::Health;
use opc_core::session::{ClusterSession, Feed};

/// Every open cluster's findings at `now`, and how each one's view is.
pub fn snapshot(clusters: &[&ClusterSession], now: DateTime<Utc>) -> Snapshot {
    let mut findings = Vec::new();
    let mut total_pods = 0;
    let mut fed = false;
    for cluster in clusters {
        match &cluster.feed {
            Feed::Watched(_) => {
                findings.extend(cluster.cache.listed());
                total_pods += cluster.cache.len();
            }
            Feed::WorkerFed(feed) => {
                let rows = feed.findings();
                total_pods += rows.len();
                findings.extend(rows);
                fed = true;
            }
        }
    }
    let at = Instant::now();
    Snapshot {
        findings,
        total_pods,
        clusters: clusters.iter().map(|c| cluster_line(c, at)).collect(),
        at: now,
        // Each index is in order; several clusters' findings follow one another, and a
        // feed's come in no order.
        in_default_order: clusters.len() <= 1 && !fed,
    }
}

/// One cluster's line for the header. A fed cluster's cache holds only the pods read to act
/// on: its line counts the feed's findings.
pub fn cluster_line(cluster: &ClusterSession, now: Instant) -> ClusterLine {
    let cache = &cluster.cache;
    let (pods, source) = match &cluster.feed {
        Feed::Watched(why) => (cache.len(), SourceLine::Watch(why.clone())),
        Feed::WorkerFed(feed) => {
            let view = feed.view();
            let source = SourceLine::Worker {
                status: view.status,
                worker: view.worker,
            };
            (feed.len(), source)
        }
    };
    let health = cache.health();
    ClusterLine {
        name: cluster.name.clone(),
        watch: watch_line(&health, now, cluster.name.context()),
        pods,
        nodes_not_reporting: cache.nodes_not_reporting(),
        nodes_unreadable: cache.nodes().unreadable_why(),
        wire: health.wire_format(),
        source,
    }
}

/// How a cluster's watch stands, for the header; `context` is named in a refusal's `can-i`.
pub fn watch_line(health: &Health, now: Instant, context: Option<&str>) -> WatchLine {
    if let Some(forbidden) = health.forbidden() {
        return WatchLine::Forbidden {
            what: forbidden.to_string(),
            check: forbidden.can_i(context),
        };
    }
    let stale = health.stale_for(now);
    if let Some(error) = health.last_error() {
        return WatchLine::Reconnecting {
            secs: health.age(now).unwrap_or_default().as_secs(),
            error,
        };
    }
    if health.relisting() {
        return WatchLine::Relisting {
            stale_secs: stale.map(|s| s.as_secs()),
        };
    }
    if let Some(stale) = stale {
        // Not proved current for longer than the bound, though no attempt has failed yet.
        return WatchLine::Reconnecting {
            secs: stale.as_secs(),
            error: "nothing heard from the API server".to_string(),
        };
    }
    if health.synced() {
        WatchLine::Synced
    } else {
        WatchLine::Listing
    }
}
