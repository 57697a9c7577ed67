//! The audit log, written ahead: an intent record is on disk (fsynced) before a request goes
//! out, and an outcome record joined to it by `id` after. A crash between the two leaves an
//! intent without an outcome, which the next start reports and checks against the cluster.

use crate::place::PauseScope;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

use super::append::Writer;
use super::{Origin, Verb};
use crate::cluster::ClusterName;
use crate::config::AuditConfig;
use crate::error::IoOp;
use crate::policy::Policy;
use crate::safe_file::open_append_private;
use crate::{Error, Result};

/// Which half of an action a record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Stage {
    /// Written and fsynced before the request: what is about to be done, and why.
    Intent,
    Outcome,
}

/// One line of the log; the README documents it as a JSON schema.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    pub time: String,
    /// Joins an intent to its outcome.
    pub id: String,
    pub stage: Stage,
    pub cluster: ClusterName,
    pub origin: Origin,
    /// Who ran the tool: `user@host` for a person, the pod's name in the cluster.
    pub actor: String,
    pub action: Verb,
    pub namespace: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
    /// The pod's workload as the breaker counts it (`Deployment/web`), for pod actions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pod_phase: Option<&'static str>,
    /// What the pod shared with other namespaces' (`{"registry": "quay.io"}`, `{"node": "n1"}`):
    /// what the workload bound counts across namespaces, after a restart too.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shares: Option<PauseScope>,
    /// Why: what the rules found (intent records).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub dry_run: bool,
    /// `done`, `alreadyGone`, `dryRun`, `skipped`, `refused`, `failed`, or `unknown` for an
    /// intent found without an outcome after a restart (outcome records).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl AuditRecord {
    pub fn stamp(at: DateTime<Utc>) -> String {
        at.to_rfc3339_opts(SecondsFormat::Millis, true)
    }
}

/// Where the executor writes its records.
#[derive(Clone)]
pub enum Audit {
    Log(AuditLog),
    /// `--no-audit`: acting without a log, on purpose (a badge says so).
    Off,
    /// The log could not be opened: nothing may act until it can.
    Unavailable {
        path: PathBuf,
        why: String,
    },
}

impl Audit {
    pub fn open(policy: &Policy) -> Audit {
        if policy.no_audit() {
            return Audit::Off;
        }
        let config = policy.audit();
        match AuditLog::open(config) {
            Ok(log) => Audit::Log(log),
            Err(e) => Audit::Unavailable {
                path: config.path.clone(),
                why: e.to_string(),
            },
        }
    }
}

/// Appends records, each on disk before `write` returns; rotates by size, keeping `keep` old
/// files (`audit.jsonl.1` the newest). Created 0600: it names every pod acted on. Never
/// opened through a symbolic link.
#[derive(Clone)]
pub struct AuditLog {
    path: PathBuf,
    max_bytes: u64,
    keep: u32,
    writer: Arc<Mutex<Writer>>,
    ids: Arc<AtomicU64>,
}

impl AuditLog {
    pub fn open(config: &AuditConfig) -> Result<AuditLog> {
        let path = config.path.clone();
        let io = |op| {
            let path = path.clone();
            move |source| Error::Io { path, op, source }
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io(IoOp::Write))?;
        }
        let mut file = open_append_private(&path)?;
        let mut size = file.metadata().map_err(io(IoOp::Read))?.len();
        if !ends_with_newline(&path, size).map_err(io(IoOp::Read))? {
            // A torn last line (disk full, a crash mid-write): end it, so the next record is
            // a line of its own rather than glued to the fragment and lost with it.
            file.write_all(b"\n")
                .and_then(|_| file.sync_data())
                .map_err(io(IoOp::Write))?;
            size += 1;
        }
        Ok(AuditLog {
            max_bytes: u64::from(config.max_size_mib) << 20,
            keep: config.keep,
            writer: Arc::new(Mutex::new(Writer::new(file, size))),
            ids: Arc::new(AtomicU64::new(0)),
            path,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// A new id, unique across restarts and replicas: time, process, sequence.
    pub fn next_id(&self, at: DateTime<Utc>) -> String {
        let n = self.ids.fetch_add(1, Ordering::Relaxed);
        let millis = at.timestamp_millis();
        format!("{millis:x}-{:x}-{n}", std::process::id())
    }

    /// Append and fsync. An outcome that takes the file past its size rotates it (never
    /// between an intent and its outcome, so a restart finds both in the current file).
    pub fn write(&self, record: &AuditRecord) -> Result<()> {
        let mut line = serde_json::to_vec(record)?;
        line.push(b'\n');
        let mut writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        writer.append(&line).map_err(|e| self.unwritten(e))?;
        if record.stage == Stage::Outcome && self.max_bytes > 0 && writer.size >= self.max_bytes {
            self.rotate(&mut writer)?;
        }
        Ok(())
    }

    /// [`AuditLog::write`] on the blocking pool: an fsync on a slow or full disk must not
    /// hold a runtime thread (the screen, the lease's renewals) while it waits.
    pub async fn write_off_thread(&self, record: AuditRecord) -> Result<()> {
        let log = self.clone();
        match tokio::task::spawn_blocking(move || log.write(&record)).await {
            Ok(written) => written,
            Err(e) => Err(self.unwritten(std::io::Error::other(e.to_string()))),
        }
    }

    fn unwritten(&self, source: std::io::Error) -> Error {
        let (path, op) = (self.path.clone(), IoOp::Write);
        Error::Io { path, op, source }
    }

    fn rotate(&self, writer: &mut Writer) -> Result<()> {
        let numbered = |n: u32| PathBuf::from(format!("{}.{n}", self.path.display()));
        let shifted = if self.keep == 0 {
            std::fs::remove_file(&self.path)
        } else {
            (1..self.keep)
                .rev()
                .filter(|n| numbered(*n).exists())
                .try_for_each(|n| std::fs::rename(numbered(n), numbered(n + 1)))
                .and_then(|_| std::fs::rename(&self.path, numbered(1)))
        };
        shifted.map_err(|e| self.unwritten(e))?;
        writer.start_over(open_append_private(&self.path)?);
        Ok(())
    }
}

/// Whether the file is empty or its last byte ends a line.
fn ends_with_newline(path: &Path, size: u64) -> std::io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    if size == 0 {
        return Ok(true);
    }
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(size - 1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last == *b"\n")
}

/// Whoever runs the tool: `$USER@$HOSTNAME`; without `$USER` (a pod, a service), the
/// account's name from the user database, or its uid.
pub(crate) fn actor() -> String {
    let env = |key: &str| std::env::var(key).ok().filter(|v| !v.is_empty());
    let host = env("HOSTNAME")
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .unwrap_or_else(|| "unknown-host".to_string());
    match env("USER").or_else(|| env("LOGNAME")).or_else(account_name) {
        Some(user) => format!("{user}@{host}"),
        None => host,
    }
}

/// The name of the account this process runs as (`/etc/passwd`), else `uid N`.
#[cfg(unix)]
fn account_name() -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    // /proc/self belongs to the process's own (effective) user.
    let uid = std::fs::metadata("/proc/self").ok()?.uid();
    let named = std::fs::read_to_string("/etc/passwd")
        .ok()
        .and_then(|passwd| {
            passwd.lines().find_map(|line| {
                let mut fields = line.split(':');
                let name = fields.next()?;
                let id = fields.nth(1)?.parse::<u32>().ok()?;
                (id == uid && !name.is_empty()).then(|| name.to_string())
            })
        });
    Some(named.unwrap_or_else(|| format!("uid {uid}")))
}

/// Elsewhere (Windows) `%USERNAME%` names the account.
#[cfg(not(unix))]
fn account_name() -> Option<String> {
    std::env::var("USERNAME").ok().filter(|v| !v.is_empty())
}
