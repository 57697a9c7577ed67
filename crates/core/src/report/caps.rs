//! The spool's caps: by age and by count, so an outage (or a sink refusing every report on a
//! tight schedule) cannot fill the disk or queue weeks of stale reports to send at once.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::rules::format_age;

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
