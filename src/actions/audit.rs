//! The audit log: one JSON line per action attempted, flushed to disk before moving on.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

use super::Origin;
use crate::rules::RuleKind;
use crate::{Error, Result};

/// How much of the log's end is read back on start: far more than the records of the longest
/// guard window (10 minutes at the highest sane rate limit).
const TAIL_BYTES: u64 = 4 << 20;

/// An automatic action sent before this process started, as the guards need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PastAction {
    pub age: Duration,
    pub rule: RuleKind,
    pub namespace: String,
    /// The cooldown key: the pod's UID, or `namespace/Kind/name` for a scale.
    pub target: String,
    /// `namespace/Kind/name` of the pod's workload, when the action could stop something
    /// that ran (not the deletion of a finished pod): what the workload bound counts.
    pub workload: Option<String>,
}

/// The fields of a record that [`PastAction`] is read from.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Written {
    time: DateTime<Utc>,
    origin: Origin,
    action: String,
    namespace: String,
    uid: Option<String>,
    owner: Option<String>,
    phase: Option<String>,
    dry_run: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    pub time: String,
    pub cluster: String,
    pub origin: Origin,
    pub action: &'static str,
    pub namespace: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
    /// The pod's workload as the breaker counts it (`Deployment/web`), for pod actions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The pod's phase when it was acted on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<&'static str>,
    pub dry_run: bool,
    pub outcome: &'static str,
    pub detail: String,
}

impl AuditRecord {
    pub fn stamp(at: DateTime<Utc>) -> String {
        at.to_rfc3339_opts(SecondsFormat::Millis, true)
    }
}

/// Appends records; each is on disk (fsynced) before `record` returns, so a crash loses none.
#[derive(Clone)]
pub struct AuditLog {
    path: PathBuf,
    file: Arc<Mutex<File>>,
}

impl AuditLog {
    pub fn open(path: &Path) -> Result<AuditLog> {
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        Ok(AuditLog {
            path: path.to_path_buf(),
            file: Arc::new(Mutex::new(file)),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The automatic actions sent within `within` of `now` (dry-run ones only when `dry_run`,
    /// real ones only when not), oldest first. Unreadable lines are skipped.
    pub fn recent(&self, within: Duration, dry_run: bool, now: DateTime<Utc>) -> Vec<PastAction> {
        let text = match read_tail(&self.path) {
            Ok(text) => text,
            Err(e) => {
                tracing::warn!(
                    "cannot read back the audit log {}: {e}",
                    self.path.display()
                );
                return Vec::new();
            }
        };
        text.lines()
            .filter_map(|line| serde_json::from_str::<Written>(line).ok())
            .filter(|w| w.dry_run == dry_run)
            .filter_map(|w| {
                let Origin::Auto(rule) = w.origin else {
                    return None;
                };
                let age = (now - w.time).to_std().ok().filter(|age| *age < within)?;
                let workload = w.owner.map(|o| format!("{}/{o}", w.namespace));
                let target = match (w.action.as_str(), &workload, w.uid) {
                    ("scaleToZero", Some(workload), _) => workload.clone(),
                    (_, _, Some(uid)) => uid,
                    _ => return None,
                };
                let finished = matches!(w.phase.as_deref(), Some("Succeeded" | "Failed"));
                let workload = workload.filter(|_| !(w.action == "delete" && finished));
                Some(PastAction {
                    age,
                    rule,
                    namespace: w.namespace,
                    target,
                    workload,
                })
            })
            .collect()
    }

    pub fn record(&self, record: &AuditRecord) -> Result<()> {
        let mut line = serde_json::to_vec(record).map_err(|e| Error::Cluster(e.to_string()))?;
        line.push(b'\n');
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        file.write_all(&line)
            .and_then(|_| file.sync_data())
            .map_err(|source| Error::Io {
                path: self.path.clone(),
                source,
            })
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
