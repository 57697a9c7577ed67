//! `report`: list once, build the restart report, print it; `--send` delivers it too. Over
//! several clusters it is one report grouped by cluster: one message per sink.

use std::process::ExitCode;

use opc_core::clock::Clock;

use super::open_targets;
use crate::Result;
use crate::cli::{GlobalArgs, ReportOutput};
use crate::scan::over_clusters;
use opc_core::Usage;
use opc_core::cluster::{WatchSettings, watch_settings};
use opc_core::report::{DeliveryPolicy, Reporter, render};

/// Exit 0 when printed (and, with `--send`, every sink took it); 3 when a sink failed and the
/// report waits in the spool or sits in the dead letters.
pub(crate) async fn run(
    global: &GlobalArgs,
    output: ReportOutput,
    send: bool,
    clock: Clock,
) -> Result<ExitCode> {
    let config = super::load_config(global)?;
    if send && config.report.sinks.is_empty() {
        return Err(Usage::SendWithoutSinks.into());
    }
    let reporter = Reporter::new(&config.report, DeliveryPolicy::default())?;
    let targets = open_targets(global, &config).await?;
    // Only the pods that may appear are kept while the other clusters are listed.
    let (per_cluster, skipped) = over_clusters(
        &targets.clusters,
        &targets.scopes,
        &WatchSettings {
            page_size: 500,
            ..watch_settings(&config.cluster)?
        },
        None,
        |cluster, listed| (cluster.name.clone(), reporter.keep_candidates(listed.pods)),
    )
    .await?;
    for missing in &skipped {
        eprintln!("note: {}; reported where it exists", missing.why);
    }
    let report = reporter.build_combined(&per_cluster, clock.now());
    match output {
        ReportOutput::Markdown => super::out(&render::markdown(&report))?,
        ReportOutput::Json => super::out(&format!("{}\n", render::json(&report)))?,
    }
    if !send {
        return Ok(ExitCode::SUCCESS);
    }
    let summary = reporter.send_report(&report).await;
    eprintln!("{}: {}", report.cluster, summary.describe());
    if summary.any_dead_lettered() {
        eprintln!(
            "reports a sink refused are kept in {} and never resent; fix the sink (its URL, \
             secret or keyword) and send again",
            reporter.spool().dead_dir().display()
        );
    }
    if !summary.all_sent() {
        if !reporter.spool().pending().is_empty() {
            eprintln!(
                "undelivered reports wait in {}; they are resent by the next `report --send` or by `headless`",
                reporter.spool().dir().display()
            );
        }
        return Ok(ExitCode::from(super::EXIT_RUNTIME));
    }
    Ok(ExitCode::SUCCESS)
}
