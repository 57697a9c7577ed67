//! Reports a sink did not take, one file per report and sink, kept until a later try succeeds;
//! and the dead letters, reports a sink refused for good, kept for a person and never resent.
//! Both are capped by age and by count, so an outage (or a sink refusing every report on a
//! tight schedule) cannot fill the disk or queue weeks of stale reports to send at once.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::RestartReport;
use super::files::write_atomically;
use crate::Result;
use crate::config::{ReportConfig, SecretSource, Sink};
use crate::rules::format_age;

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
    let short: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("{}-{short}", sink.kind())
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spooled {
    pub sink: String,
    pub report: RestartReport,
    /// When it was spooled; files written before this field existed have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) spooled: Option<DateTime<Utc>>,
}

impl Spooled {
    /// Since when it has waited: when it was spooled, or else when the report was made.
    pub(crate) fn since(&self) -> DateTime<Utc> {
        self.spooled.unwrap_or(self.report.generated)
    }
}

/// A report a sink refused for good, and why; written to `<spoolDir>/dead/`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeadLetter {
    pub(crate) sink: String,
    /// The sink's answer, scrubbed of its secrets.
    pub(crate) why: String,
    pub(crate) rejected: DateTime<Utc>,
    pub report: RestartReport,
}

#[derive(Debug, Clone)]
pub struct Spool {
    dir: PathBuf,
    /// `report.spoolMaxAge` and `report.spoolMaxFiles`; zero is no limit.
    max_age: Duration,
    max_files: u32,
}

impl Spool {
    pub(crate) fn new(config: &ReportConfig) -> Spool {
        Spool {
            dir: config.spool_dir.clone(),
            max_age: config.spool_max_age,
            max_files: config.spool_max_files,
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the dead letters go: inside the spool dir, so one volume keeps both.
    pub fn dead_dir(&self) -> PathBuf {
        self.dir.join("dead")
    }

    pub fn put(&self, sink: &str, report: &RestartReport, now: DateTime<Utc>) -> Result<PathBuf> {
        let entry = Spooled {
            sink: sink.to_string(),
            report: report.clone(),
            spooled: Some(now),
        };
        write_json(&self.dir.join(file_name(sink, report)), &entry)
    }

    /// Keep `report` as refused by `sink` for good; the caller removes its spool file, if any.
    pub(crate) fn dead_letter(
        &self,
        sink: &str,
        report: &RestartReport,
        why: &str,
        now: DateTime<Utc>,
    ) -> Result<PathBuf> {
        let letter = DeadLetter {
            sink: sink.to_string(),
            why: why.to_string(),
            rejected: now,
            report: report.clone(),
        };
        write_json(&self.dead_dir().join(file_name(sink, report)), &letter)
    }

    /// Everything waiting, oldest first. Unreadable files are logged and left for a human.
    pub fn pending(&self) -> Vec<(PathBuf, Spooled)> {
        read_all(&self.dir, "spooled report")
    }

    /// The dead letters, oldest first.
    pub fn dead_letters(&self) -> Vec<(PathBuf, DeadLetter)> {
        read_all(&self.dead_dir(), "dead letter")
    }

    /// Whether it is gone; a file that cannot be removed is logged.
    pub(crate) fn remove(&self, path: &Path) -> bool {
        match std::fs::remove_file(path) {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!("cannot remove {}: {e}", path.display());
                false
            }
        }
    }
}

/// `20261120T090000.000Z-slack-1a2b3c4d.json`: sorted by name is oldest first.
fn file_name(sink: &str, report: &RestartReport) -> String {
    let stamp = report.generated.format("%Y%m%dT%H%M%S%.3fZ");
    format!("{stamp}-{sink}.json")
}

fn write_json(path: &Path, value: &impl Serialize) -> Result<PathBuf> {
    let bytes = serde_json::to_vec(value)?;
    write_atomically(path, &bytes)?;
    Ok(path.to_path_buf())
}

/// The `*.json` files directly in `dir` (not the temporary `.name.tmp` ones, not the dead
/// letters' subdirectory), decoded, oldest first.
fn read_all<T: for<'de> Deserialize<'de>>(dir: &Path, what: &str) -> Vec<(PathBuf, T)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
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
                Ok(value) => Some((path, value)),
                Err(e) => {
                    tracing::warn!(
                        "{what} {} cannot be read ({e}); left in place",
                        path.display()
                    );
                    None
                }
            }
        })
        .collect()
}

impl Spool {
    /// Drop what is over the caps: first what is too old, then the oldest beyond the count.
    /// The dead letters are kept under the same caps; their removal is only logged, as each
    /// was counted when it was refused.
    pub fn trim(&self, now: DateTime<Utc>) -> Vec<Dropped> {
        let waiting = self.pending().into_iter().map(|(path, s)| {
            let since = s.since();
            (path, s.sink, since)
        });
        let dropped = self.over_caps(waiting.collect(), now);
        let letters = self.dead_letters().into_iter();
        let letters = letters
            .map(|(path, d)| (path, d.sink, d.rejected))
            .collect();
        for d in self.over_caps(letters, now) {
            if self.remove(&d.path) {
                tracing::info!(
                    sink = d.sink,
                    "deleted dead letter {}, {} old: {}",
                    d.path.display(),
                    age_text(d.age),
                    d.cap
                );
            }
        }
        dropped
            .into_iter()
            .filter(|d| self.remove(&d.path))
            .collect()
    }

    /// Of `files` (oldest first, with their sink and since when they are kept), those over
    /// the caps at `now`.
    fn over_caps(
        &self,
        files: Vec<(PathBuf, String, DateTime<Utc>)>,
        now: DateTime<Utc>,
    ) -> Vec<Dropped> {
        let (max_age, max_files) = (self.max_age, self.max_files);
        let age_of = |since: DateTime<Utc>| (now - since).to_std().unwrap_or(Duration::ZERO);
        let (too_old, kept): (Vec<_>, Vec<_>) = files
            .into_iter()
            .partition(|(_, _, since)| !max_age.is_zero() && age_of(*since) > max_age);
        let excess = match max_files {
            0 => 0,
            n => kept.len().saturating_sub(n as usize),
        };
        let dropped = |cap: SpoolCap| {
            move |(path, sink, since): (PathBuf, String, DateTime<Utc>)| Dropped {
                path,
                sink,
                age: age_of(since),
                cap,
            }
        };
        too_old
            .into_iter()
            .map(dropped(SpoolCap::MaxAge(max_age)))
            .chain(
                kept.into_iter()
                    .take(excess)
                    .map(dropped(SpoolCap::MaxFiles(max_files))),
            )
            .collect()
    }
}

/// Which cap a file went over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpoolCap {
    MaxAge(Duration),
    MaxFiles(u32),
}

impl fmt::Display for SpoolCap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpoolCap::MaxAge(age) => write!(f, "older than report.spoolMaxAge ({})", days(*age)),
            SpoolCap::MaxFiles(n) => write!(f, "more than report.spoolMaxFiles ({n}) waiting"),
        }
    }
}

/// A spooled report removed unsent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    pub(crate) path: PathBuf,
    pub(crate) sink: String,
    pub(crate) age: Duration,
    pub(crate) cap: SpoolCap,
}

/// How long a report waited, as the log and the summary say it.
pub(super) fn age_text(age: Duration) -> String {
    format_age(chrono::Duration::from_std(age).unwrap_or(chrono::Duration::MAX))
}

/// `7d` for whole days, else `36h0m` style.
fn days(age: Duration) -> String {
    let secs = age.as_secs();
    if secs > 0 && secs.is_multiple_of(86_400) {
        format!("{}d", secs / 86_400)
    } else {
        age_text(age)
    }
}
