//! `scan`: list, classify, print; the exit code says whether anything is abnormal.

use std::process::ExitCode;

use chrono::Utc;

use super::open_targets;
use crate::Result;
use crate::cli::{GlobalArgs, ScanOutput};
use crate::cluster::WatchSettings;
use crate::config::Config;
use crate::scan::{list_cluster, rows, summary, to_json, to_table};

pub async fn run(global: &GlobalArgs, output: ScanOutput) -> Result<ExitCode> {
    let config = Config::load(global.config.as_deref())?;
    let targets = open_targets(global, &config).await?;
    let now = Utc::now();
    let (mut found, mut total) = (Vec::new(), 0);
    for cluster in &targets.clusters {
        let pods =
            list_cluster(cluster, &targets.scopes, WatchSettings::default().page_size).await?;
        total += pods.len();
        found.extend(rows(&cluster.name, &pods, &config.rules, now));
    }
    match output {
        ScanOutput::Json => println!("{}", to_json(&found)),
        ScanOutput::Table if found.is_empty() => {}
        ScanOutput::Table => print!("{}", to_table(&found, targets.clusters.len() > 1)),
    }
    eprintln!("{}", summary(&found, total, &config.rules));
    Ok(if found.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
