//! `scan`: list, classify, print; the exit code says whether anything is abnormal.

use std::process::ExitCode;

use chrono::Utc;

use super::open_targets;
use crate::cli::{GlobalArgs, ScanOutput};
use crate::cluster::WatchSettings;
use crate::config::Config;
use crate::Result;
use crate::scan::{over_clusters, rows, sort_rows, summary, to_json, to_table};

pub async fn run(global: &GlobalArgs, output: ScanOutput) -> Result<ExitCode> {
    let config = Config::load(global.config.as_deref())?;
    let targets = open_targets(global, &config).await?;
    let now = Utc::now();
    let page = WatchSettings::default().page_size;
    // Each cluster's pods become its rows as soon as they are listed.
    let gathered = over_clusters(&targets.clusters, &targets.scopes, page, |cluster, pods| {
        (pods.len(), rows(&cluster.name, &pods, &config.rules, now))
    })
    .await?;
    for missing in &gathered.skipped {
        eprintln!("note: {}; scanned where it exists", missing.why);
    }
    let total: usize = gathered.per_cluster.iter().map(|(n, _)| n).sum();
    let mut found: Vec<_> = gathered
        .per_cluster
        .into_iter()
        .flat_map(|(_, rows)| rows)
        .collect();
    sort_rows(&mut found, &config.rules);
    match output {
        ScanOutput::Json => println!("{}", to_json(&found)),
        ScanOutput::Table if found.is_empty() => {}
        ScanOutput::Table => print!("{}", to_table(&found, targets.clusters.len() > 1)),
    }
    eprintln!("{}", summary(&found, total, &config.rules));
    Ok(exit(!found.is_empty()))
}

/// 1 when something was found, 0 when nothing was.
fn exit(found: bool) -> ExitCode {
    match found {
        true => ExitCode::from(1),
        false => ExitCode::SUCCESS,
    }
}
