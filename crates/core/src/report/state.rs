//! Restart counts at the previous report, kept on disk so "since the previous report" survives
//! a restart of this process.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::cluster::ClusterName;
use crate::config::{ConfigError, Problem};

use super::RestartReport;
use super::files::write_atomically;
use crate::error::IoOp;
use crate::{Error, Result};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestartState {
    /// `namespace/pod/container` → total restarts, from a file written before counts were kept
    /// per cluster: read for a report when no cluster has counts yet, never written again.
    #[serde(default)]
    pub(crate) restarts: BTreeMap<String, u32>,
    /// Cluster → `namespace/pod/container` → total restarts when that cluster was last
    /// reported, alone or in a combined report.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) clusters: BTreeMap<String, BTreeMap<String, u32>>,
}

static NONE: BTreeMap<String, u32> = BTreeMap::new();

impl RestartState {
    pub(crate) fn key(namespace: &str, pod: &str, container: &str) -> String {
        format!("{namespace}/{pod}/{container}")
    }

    /// The counts `report` shows, by the cluster each group belongs to.
    pub fn of(report: &RestartReport) -> RestartState {
        let mut state = RestartState::default();
        for g in &report.groups {
            let cluster = g.cluster.as_ref().unwrap_or(&report.cluster);
            let counts = state.clusters.entry(cluster.clone()).or_default();
            for r in &g.rows {
                let key = RestartState::key(&g.namespace, &r.pod, &r.container);
                counts.insert(key, r.restarts);
            }
        }
        // A cluster with nothing to report was reported too: its counts are now none.
        let reported = if report.clusters.is_empty() {
            std::slice::from_ref(&report.cluster)
        } else {
            &report.clusters[..]
        };
        for cluster in reported.iter().filter(|c| !c.is_empty()) {
            state.clusters.entry(cluster.clone()).or_default();
        }
        state
    }

    /// Whether a report before this one counted `cluster`'s restarts.
    pub(crate) fn reported(&self, cluster: &ClusterName) -> bool {
        self.clusters.contains_key(cluster.as_str())
            || (self.clusters.is_empty() && !self.restarts.is_empty())
    }

    /// What the previous report said of `cluster`.
    pub(crate) fn counts_of(&self, cluster: &ClusterName) -> &BTreeMap<String, u32> {
        match self.clusters.get(cluster.as_str()) {
            Some(counts) => counts,
            None if self.clusters.is_empty() => &self.restarts,
            None => &NONE,
        }
    }

    /// This state with `newer`'s clusters replaced: a report on one cluster leaves what the
    /// previous reports said of the others.
    pub(crate) fn updated(mut self, newer: RestartState) -> RestartState {
        self.clusters.extend(newer.clusters);
        self.restarts.clear();
        self
    }

    /// A missing file is an empty state (the first report); a broken one is an error.
    pub fn load(path: &Path) -> Result<RestartState> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => {
                return Err(Error::Io {
                    path: path.to_path_buf(),
                    op: IoOp::Read,
                    source,
                });
            }
        };
        serde_json::from_str(&text).map_err(|e| {
            Error::Config(ConfigError::of_file(
                path.display(),
                Problem::NotReportState(e.to_string()),
            ))
        })
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_vec_pretty(self).unwrap_or_default();
        write_atomically(path, &text)
    }
}
