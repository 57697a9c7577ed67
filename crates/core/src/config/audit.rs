//! The audit log: one record of every action, who asked for it and what came of it.

use std::path::PathBuf;

use super::Result;
use super::paths;
use super::read::Field;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditConfig {
    /// JSON Lines file. Default: `<data dir>/ops-pod-cleaner/audit.jsonl`
    /// (`~/.local/share/...` on Linux), or `./ops-pod-cleaner-audit.jsonl` without a data dir.
    pub path: PathBuf,
    /// Also emit a Kubernetes Event on the object acted on, where RBAC permits.
    pub events: bool,
    /// Rotate the file once it passes this size (0: never).
    pub max_size_mib: u32,
    /// Rotated files kept: `audit.jsonl.1` (newest) to `audit.jsonl.<keep>`.
    pub keep: u32,
}

impl Default for AuditConfig {
    fn default() -> Self {
        AuditConfig {
            path: paths::data_file("audit.jsonl"),
            events: true,
            max_size_mib: 64,
            keep: 5,
        }
    }
}

pub(crate) fn read(field: &Field) -> Result<AuditConfig> {
    let m = field.map(&["path", "events", "maxSizeMiB", "keep"])?;
    let mut audit = AuditConfig::default();
    m.set("path", &mut audit.path, Field::path)?;
    m.set("events", &mut audit.events, Field::bool)?;
    m.set("maxSizeMiB", &mut audit.max_size_mib, Field::u32)?;
    m.set("keep", &mut audit.keep, Field::u32)?;
    Ok(audit)
}
