//! Reading the audit log back on start: what was sent recently (so limits and cooldowns
//! survive a restart), and intents that never got an outcome (a crash mid-action).

use crate::place::PauseScope;
use std::collections::HashSet;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::action::{Origin, Target};
use super::audit::{AuditLog, Stage};
use crate::cluster::ClusterName;
use crate::pod::WorkloadId;
use crate::rules::{RuleKind, Verb};

/// How much of the log's end is read back: far more than the records of the longest guard
/// window (10 minutes at the highest sane rate limit).
const TAIL_BYTES: u64 = 4 << 20;

/// An automatic action sent recently (before a restart, or by the replica that led before),
/// as the guards need it. Also what the leader writes on the Lease for its successor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PastAction {
    pub at: DateTime<Utc>,
    pub rule: RuleKind,
    pub namespace: String,
    pub target: Target,
    /// The pod's workload, when the action could stop something that ran (not the deletion
    /// of a finished pod): what the workload bound counts.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub workload: Option<WorkloadId>,
    /// What its pod shared with other namespaces' (a registry, a node): what the workload
    /// bound counts across namespaces.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub shared: Option<PauseScope>,
}

/// The fields of a record that are read back.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Written {
    pub(crate) time: DateTime<Utc>,
    pub(crate) id: String,
    stage: Stage,
    pub(crate) cluster: ClusterName,
    pub(crate) origin: Origin,
    pub(crate) action: Verb,
    pub(crate) namespace: String,
    pub(crate) name: String,
    pub(crate) uid: Option<String>,
    pub(crate) workload: Option<String>,
    owner: Option<String>,
    pod_phase: Option<String>,
    shares: Option<PauseScope>,
    pub(crate) dry_run: bool,
}

impl AuditLog {
    /// The automatic actions sent to `cluster` within `within` of `now` (dry-run ones only
    /// when `dry_run`, real ones only when not), oldest first. A record stamped in the future
    /// (the clock was stepped back since) counts as just sent.
    pub(crate) fn recent(
        &self,
        cluster: &ClusterName,
        within: Duration,
        dry_run: bool,
        now: DateTime<Utc>,
    ) -> Vec<PastAction> {
        self.read_back()
            .into_iter()
            .filter(|w| w.stage == Stage::Intent && w.dry_run == dry_run && w.cluster == *cluster)
            .filter_map(|w| {
                let Origin::Auto(rule) = w.origin else {
                    return None;
                };
                let age = (now - w.time).to_std().unwrap_or(Duration::ZERO);
                (age < within).then_some(())?;
                let workload = w
                    .owner
                    .and_then(|o| WorkloadId::parse(&format!("{}/{o}", w.namespace)));
                let target = match (w.action, &workload, w.uid) {
                    (Verb::ScaleToZero, Some(workload), _) => Target::Workload(workload.clone()),
                    (_, _, Some(uid)) => Target::Pod(uid),
                    _ => return None,
                };
                let finished = matches!(w.pod_phase.as_deref(), Some("Succeeded" | "Failed"));
                let workload = workload.filter(|_| !(w.action == Verb::Delete && finished));
                Some(PastAction {
                    at: w.time,
                    rule,
                    namespace: w.namespace,
                    target,
                    workload,
                    shared: w.shares,
                })
            })
            .collect()
    }

    /// Intents without an outcome (the process stopped between the two), oldest first.
    pub(crate) fn interrupted(&self) -> Vec<Written> {
        let records = self.read_back();
        let finished: HashSet<String> = records
            .iter()
            .filter(|w| w.stage == Stage::Outcome)
            .map(|w| w.id.clone())
            .collect();
        records
            .into_iter()
            .filter(|w| w.stage == Stage::Intent && !finished.contains(&w.id))
            .collect()
    }

    /// The records at the end of the log, across the last rotation (a restart just after one
    /// must not forget what was sent before it), oldest first; lines that do not parse (an
    /// older format, a torn line) are skipped.
    fn read_back(&self) -> Vec<Written> {
        let rotated = PathBuf::from(format!("{}.1", self.path().display()));
        let mut records = Vec::new();
        for path in [rotated.as_path(), self.path()] {
            match read_tail(path) {
                Ok(text) => records.extend(
                    text.lines()
                        .filter_map(|line| serde_json::from_str::<Written>(line).ok()),
                ),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && path == rotated => {}
                Err(e) => {
                    tracing::warn!("cannot read back the audit log {}: {e}", path.display());
                }
            }
        }
        records
    }
}

/// The last [`TAIL_BYTES`] of the file, from the first whole line.
fn read_tail(path: &Path) -> std::io::Result<String> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let start = len.saturating_sub(TAIL_BYTES);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Ok(match (start, text.split_once('\n')) {
        (0, _) => text,
        (_, Some((_, rest))) => rest.to_string(),
        (_, None) => String::new(),
    })
}
