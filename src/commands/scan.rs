//! `scan`: list, classify, print; the exit code says whether anything is abnormal. With
//! `--parked`: the workloads ops-pod-cleaner scaled to zero, and whether any are.

use std::process::ExitCode;

use chrono::{DateTime, Utc};
use futures::future::try_join_all;
use opc_core::clock::Clock;

use super::{Targets, open_targets};
use crate::Result;
use crate::cli::{GlobalArgs, ScanOutput};
use crate::scan::{
    over_clusters, parked_summary, parked_table, rows, sort_rows, summary, to_json, to_table,
};
use opc_core::actions::{ParkedRow, RetryPolicy, list_parked};
use opc_core::cluster::watch_settings;

pub(crate) async fn run(
    global: &GlobalArgs,
    output: ScanOutput,
    parked: bool,
    clock: Clock,
) -> Result<ExitCode> {
    let config = super::load_config(global)?;
    let targets = open_targets(global, &config).await?;
    if parked {
        return parked_workloads(&targets, output, clock.now()).await;
    }
    let now = clock.now();
    let listing = watch_settings(&config.cluster)?;
    let (per_cluster, skipped) = over_clusters(
        &targets.clusters,
        &targets.scopes,
        &listing,
        Some(now),
        |cluster, listed| {
            (
                listed.pods.len(),
                rows(&cluster.name, &listed, &config.rules, now),
            )
        },
    )
    .await?;
    for missing in &skipped {
        eprintln!("note: {}; scanned where it exists", missing.why);
    }
    let total: usize = per_cluster.iter().map(|(n, _)| n).sum();
    let mut found: Vec<_> = per_cluster.into_iter().flat_map(|(_, rows)| rows).collect();
    sort_rows(&mut found, &config.rules);
    match output {
        ScanOutput::Json => super::out(&format!("{}\n", to_json(&found)))?,
        ScanOutput::Table if found.is_empty() => {}
        ScanOutput::Table => super::out(&to_table(&found, targets.clusters.len() > 1))?,
    }
    eprintln!("{}", summary(&found, total, &config.rules));
    Ok(exit(!found.is_empty()))
}

/// Every cluster's parked workloads, read at once.
async fn parked_workloads(
    targets: &Targets,
    output: ScanOutput,
    now: DateTime<Utc>,
) -> Result<ExitCode> {
    let retry = RetryPolicy::default();
    let lists = try_join_all(targets.clusters.iter().map(|cluster| {
        let retry = &retry;
        async move {
            list_parked(&cluster.client, &cluster.name, &targets.scopes, retry, now)
                .await
                .map(|list| (cluster.name.as_str(), list))
                .map_err(|source| opc_core::Error::Read {
                    cluster: cluster.name.clone(),
                    source,
                })
        }
    }))
    .await?;
    let mut rows: Vec<ParkedRow> = Vec::new();
    for (cluster, list) in lists {
        for unread in list.unread {
            eprintln!(
                "note: {cluster}: cannot read {} ({}); the list may be incomplete",
                unread.place,
                opc_core::inert::terminal(&unread.why)
            );
        }
        rows.extend(list.rows);
    }
    match output {
        ScanOutput::Json => super::out(&format!("{}\n", to_json(&rows)))?,
        ScanOutput::Table if rows.is_empty() => {}
        ScanOutput::Table => super::out(&parked_table(&rows, targets.clusters.len() > 1, now))?,
    }
    eprintln!("{}", parked_summary(&rows, targets.clusters.len()));
    Ok(exit(!rows.is_empty()))
}

/// 1 when something was found, 0 when nothing was.
fn exit(found: bool) -> ExitCode {
    ExitCode::from(u8::from(found))
}
