//! The audit log: one JSON line per action attempted, flushed to disk before moving on.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

use super::Origin;
use crate::{Error, Result};

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
