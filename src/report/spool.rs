//! Reports a sink did not take, one file per report and sink, kept until a later try succeeds.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::RestartReport;
use super::files::write_atomically;
use crate::config::{SecretSource, Sink};
use crate::{Error, Result};

/// A stable name for a sink across restarts: its type and a short hash of where it points,
/// the URL written inline or the variable or file it is read from (so rotating the Secret
/// behind a file keeps the spooled reports going to the sink). It names spool files, log
/// lines and the `/metrics` label, so it never holds the URL.
pub fn sink_id(sink: &Sink) -> String {
    let target = match sink {
        Sink::Feishu { url, .. } | Sink::Slack { url } | Sink::Webhook { url } => {
            match url.source() {
                SecretSource::Inline => url.expose().to_string(),
                from => from.to_string(),
            }
        }
        Sink::File { path, format } => format!("{}:{}", format.name(), path.display()),
    };
    let digest = Sha256::digest(target.as_bytes());
    let short: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{short}", sink.kind())
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spooled {
    pub sink: String,
    pub report: RestartReport,
}

#[derive(Debug, Clone)]
pub struct Spool {
    dir: PathBuf,
}

impl Spool {
    pub fn new(dir: &Path) -> Spool {
        Spool {
            dir: dir.to_path_buf(),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn put(&self, sink: &str, report: &RestartReport) -> Result<PathBuf> {
        let stamp = report.generated.format("%Y%m%dT%H%M%S%.3fZ");
        let path = self.dir.join(format!("{stamp}-{sink}.json"));
        let entry = Spooled {
            sink: sink.to_string(),
            report: report.clone(),
        };
        let bytes = serde_json::to_vec(&entry).map_err(|e| Error::Cluster(e.to_string()))?;
        write_atomically(&path, &bytes)?;
        Ok(path)
    }

    /// Everything waiting, oldest first. Unreadable files are logged and left for a human.
    pub fn pending(&self) -> Vec<(PathBuf, Spooled)> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .filter(|p| {
                !p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .collect();
        paths.sort();
        paths
            .into_iter()
            .filter_map(|path| {
                let read = std::fs::read(&path).map_err(|e| e.to_string());
                match read.and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string())) {
                    Ok(spooled) => Some((path, spooled)),
                    Err(e) => {
                        tracing::warn!(
                            "spooled report {} cannot be read ({e}); left in place",
                            path.display()
                        );
                        None
                    }
                }
            })
            .collect()
    }

    pub fn remove(&self, path: &Path) {
        if let Err(e) = std::fs::remove_file(path) {
            tracing::warn!("cannot remove delivered report {}: {e}", path.display());
        }
    }
}
