//! The restart report as data; rendering and delivery work from this.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// One container that restarts too often.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RestartRow {
    pub pod: String,
    pub container: String,
    pub restarts: u32,
    /// Restarts since the previous report; `None` when this container was not in it.
    pub since_previous: Option<u32>,
    pub last_reason: Option<String>,
    pub exit_code: Option<i32>,
    pub last_restart: Option<DateTime<Utc>>,
    pub node: Option<String>,
}

/// The rows of one owning workload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadGroup {
    /// The cluster, in a report over several clusters (none in a one-cluster report).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    pub namespace: String,
    /// "Deployment/web", "StatefulSet/db", or "Pod/name" for a bare pod.
    pub workload: String,
    pub rows: Vec<RestartRow>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RestartReport {
    pub title: String,
    /// The cluster; over several clusters, their names joined for a reader of this field.
    pub cluster: String,
    pub generated: DateTime<Utc>,
    /// Over several clusters: grouped by cluster, in the order of `clusters`.
    pub groups: Vec<WorkloadGroup>,
    /// The clusters of a report over several, in order, those without a group included;
    /// empty for a one-cluster report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<String>,
}
