//! The audit log of every action (SPEC §3).

use std::path::PathBuf;

use super::paths;
use super::read::Field;
use crate::Result;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditConfig {
    /// JSON Lines file. Default: `<data dir>/ops-pod-cleaner/audit.jsonl`
    /// (`~/.local/share/...` on Linux), or `./ops-pod-cleaner-audit.jsonl` without a data dir.
    pub path: PathBuf,
    /// Also emit a Kubernetes Event on the object acted on, where RBAC permits.
    pub events: bool,
}

impl Default for AuditConfig {
    fn default() -> Self {
        AuditConfig {
            path: paths::data_file("audit.jsonl"),
            events: true,
        }
    }
}

/// Reads the `audit:` section over the defaults.
pub(crate) fn read(field: &Field) -> Result<AuditConfig> {
    let m = field.map(&["path", "events"])?;
    let mut audit = AuditConfig::default();
    m.set("path", &mut audit.path, |f| {
        f.non_empty().map(|p| paths::expand(&p))
    })?;
    m.set("events", &mut audit.events, Field::bool)?;
    Ok(audit)
}
