//! The restart report as it stands, from a cache: what the screen's report pane shows and a
//! worker serves at `/v1/report`, built as the scheduled report is.

use std::sync::Arc;

use chrono::Utc;

use super::{Reporter, RestartReport, RestartState, build};
use crate::cluster::Cache;
use crate::config::ReportConfig;

/// Builds a cache's restart report now.
pub type LiveReport = Arc<dyn Fn(&Cache) -> RestartReport + Send + Sync>;

/// The report of `cluster` as `reporter` would send it (compared with the last one sent), or,
/// with no reporter (no sinks), as `config` makes it, compared with none.
pub fn live_report(
    reporter: Option<Arc<Reporter>>,
    config: &ReportConfig,
    cluster: &str,
) -> LiveReport {
    let cluster = cluster.to_string();
    match reporter {
        Some(reporter) => Arc::new(move |cache: &Cache| {
            reporter.build(&reporter.candidates(cache), &cluster, Utc::now())
        }),
        None => {
            let config = config.clone();
            Arc::new(move |cache: &Cache| {
                let pods = cache.fold(Vec::new(), |mut pods, pod| {
                    if pod.total_restarts() >= config.min_restarts.max(1) {
                        pods.push(pod.clone());
                    }
                    pods
                });
                let previous = RestartState::default();
                build(&pods, &config, &previous, &cluster, Utc::now())
            })
        }
    }
}
