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
    pub namespace: String,
    /// "Deployment/web", "StatefulSet/db", or "Pod/name" for a bare pod.
    pub workload: String,
    pub rows: Vec<RestartRow>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RestartReport {
    pub title: String,
    pub cluster: String,
    pub generated: DateTime<Utc>,
    pub groups: Vec<WorkloadGroup>,
}
