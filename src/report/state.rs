//! Restart counts at the previous report, kept on disk so "since the previous report" survives
//! a restart of this process.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::RestartReport;
use super::files::write_atomically;
use crate::error::IoOp;
use crate::{Error, Result};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestartState {
    /// `namespace/pod/container` → total restarts when the previous report was made.
    pub(crate) restarts: BTreeMap<String, u32>,
    /// The same per cluster, when that report covered several clusters.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) clusters: BTreeMap<String, BTreeMap<String, u32>>,
}

impl RestartState {
    pub(crate) fn key(namespace: &str, pod: &str, container: &str) -> String {
        format!("{namespace}/{pod}/{container}")
    }

    pub fn of(report: &RestartReport) -> RestartState {
        let mut state = RestartState::default();
        for g in &report.groups {
            let counts = match &g.cluster {
                Some(cluster) => state.clusters.entry(cluster.clone()).or_default(),
                None => &mut state.restarts,
            };
            for r in &g.rows {
                counts.insert(
                    RestartState::key(&g.namespace, &r.pod, &r.container),
                    r.restarts,
                );
            }
        }
        state
    }

    /// What the previous report over several clusters said of `cluster`.
    pub(crate) fn of_cluster(&self, cluster: &str) -> RestartState {
        RestartState {
            restarts: self.clusters.get(cluster).cloned().unwrap_or_default(),
            clusters: BTreeMap::new(),
        }
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
            Error::Config(format!(
                "{}: not a report state file ({e}); delete it to start counting afresh",
                path.display()
            ))
        })
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_vec_pretty(self).unwrap_or_default();
        write_atomically(path, &text)
    }
}
