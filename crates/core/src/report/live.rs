//! The restart report as it stands: what the screen's report pane shows and a worker serves
//! at `/v1/report`, built from a cache as the scheduled report is, or asked of a worker.

use std::sync::Arc;

use super::{Reporter, RestartReport, RestartState, build, deliver};
use crate::cluster::{Cache, ClusterName};
use crate::config::ReportConfig;

/// Builds a cluster's restart report now.
pub type LiveReport = Arc<dyn Fn() -> RestartReport + Send + Sync>;

/// The report of `cluster` from `cache` as `reporter` would send it (compared with the last
/// one sent), or, with no reporter (no sinks), as `config` makes it, compared with none.
pub fn live_report(
    reporter: Option<Arc<Reporter>>,
    config: &ReportConfig,
    cluster: &ClusterName,
    cache: Cache,
) -> LiveReport {
    let cluster = cluster.clone();
    match reporter {
        Some(reporter) => Arc::new(move || {
            let now = cache.clock().now();
            reporter.build(&reporter.candidates(&cache), &cluster, now)
        }),
        None => {
            let config = config.clone();
            Arc::new(move || {
                let pods = deliver::candidates(&cache, &config);
                let now = cache.clock().now();
                build(&pods, &config, &RestartState::default(), &cluster, now)
            })
        }
    }
}
