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

impl RestartRow {
    /// Its restarts since the previous report: `+N`, or `new` for a container that report did
    /// not hold; none in a `first` report, which has nothing to compare with.
    pub fn since(&self, first: bool) -> Option<String> {
        match (self.since_previous, first) {
            (Some(n), _) => Some(format!("+{n}")),
            (None, true) => None,
            (None, false) => Some("new".into()),
        }
    }
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

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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
    /// What "too often" meant; none in a report from before they were told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terms: Option<Terms>,
}

/// What "too often" meant for a report: the config's bar, and whether a report before it
/// gave counts to compare with.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Terms {
    pub min_restarts: u32,
    pub reasons: Vec<String>,
    /// No earlier report of its clusters: no row has restarts "since previous" yet.
    pub first: bool,
}

impl Terms {
    /// "at least 3 restarts, with reason CrashLoopBackOff, OOMKilled or Error".
    pub fn describe(&self) -> String {
        let reasons = match self.reasons.as_slice() {
            [] => "any reason".to_string(),
            [one] => one.clone(),
            [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
        };
        format!(
            "at least {} restart{}, with reason {reasons}",
            self.min_restarts,
            if self.min_restarts == 1 { "" } else { "s" }
        )
    }

    /// The words under a report's headline: what "too often" is, and why no row has a
    /// "since previous" in a first report.
    pub fn note(&self) -> String {
        let first = if self.first {
            " This is the first report: restarts since the previous one start with the next."
        } else {
            ""
        };
        format!(
            "Too often: {} (report.minRestarts, report.reasons).{first}",
            self.describe()
        )
    }
}
