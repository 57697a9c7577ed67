//! The spool's caps: by age and by count, so an outage (or a sink refusing every report on a
//! tight schedule) cannot fill the disk or queue weeks of stale reports to send at once.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::config::ReportConfig;
use crate::rules::format_age;

/// `report.spoolMaxAge` and `report.spoolMaxFiles`; zero is no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SpoolLimits {
    pub(crate) max_age: Duration,
    pub(crate) max_files: u32,
}

impl SpoolLimits {
    pub(crate) fn of(config: &ReportConfig) -> SpoolLimits {
        SpoolLimits {
            max_age: config.spool_max_age,
            max_files: config.spool_max_files,
        }
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

/// Of `files` (oldest first, with their sink and since when they are kept), those over
/// the caps at `now`.
pub(super) fn over_caps(
    limits: SpoolLimits,
    files: Vec<(PathBuf, String, DateTime<Utc>)>,
    now: DateTime<Utc>,
) -> Vec<Dropped> {
    let SpoolLimits { max_age, max_files } = limits;
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

pub(super) fn chrono_age(age: Duration) -> chrono::Duration {
    chrono::Duration::from_std(age).unwrap_or(chrono::Duration::MAX)
}

/// `7d` for whole days, else `36h0m` style.
fn days(age: Duration) -> String {
    let secs = age.as_secs();
    if secs > 0 && secs.is_multiple_of(86_400) {
        format!("{}d", secs / 86_400)
    } else {
        format_age(chrono_age(age))
    }
}
