//! Cron schedules with seconds (`*/3 * * * * *`, `0 0 9 * * MON`), as the seed wrote them.

use std::fmt;
use std::str::FromStr;

/// A validated schedule, keeping the text the user wrote for messages and `describe()`.
#[derive(Debug, Clone)]
pub struct CronSchedule {
    text: String,
    schedule: cron::Schedule,
}

impl CronSchedule {
    /// Parses six fields (seconds first) or seven (with a year); five fields are refused
    /// because the classic crontab form would silently shift every field by one.
    pub fn parse(text: &str) -> Result<CronSchedule, BadSchedule> {
        let text = text.trim();
        let fields = text.split_whitespace().count();
        if fields == 5 {
            return Err(BadSchedule::Crontab(text.to_string()));
        }
        if !text.starts_with('@') && !(6..=7).contains(&fields) {
            return Err(BadSchedule::FieldCount(fields));
        }
        let schedule = cron::Schedule::from_str(text).map_err(|_| diagnose(text))?;
        Ok(CronSchedule {
            text: text.to_string(),
            schedule,
        })
    }

    /// The schedule as written in the config.
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn schedule(&self) -> &cron::Schedule {
        &self.schedule
    }
}

const FIELDS: [(&str, &str); 7] = [
    ("seconds", "0-59"),
    ("minutes", "0-59"),
    ("hours", "0-23"),
    ("day of month", "1-31"),
    ("month", "1-12 or JAN-DEC"),
    ("day of week", "1-7 (1 = Sunday) or SUN-SAT"),
    ("year", "1970-2099"),
];

/// Which field of `text` is wrong, found by trying each alone among `*`s: the cron crate's
/// error only echoes the input.
fn diagnose(text: &str) -> BadSchedule {
    let fields: Vec<&str> = text.split_whitespace().collect();
    for (i, field) in fields.iter().enumerate() {
        let alone: Vec<&str> = (0..fields.len())
            .map(|j| if i == j { *field } else { "*" })
            .collect();
        if cron::Schedule::from_str(&alone.join(" ")).is_err() {
            let (name, range) = FIELDS.get(i).copied().unwrap_or(("field", "?"));
            return BadSchedule::Field {
                position: i + 1,
                name,
                range,
                text: field.to_string(),
            };
        }
    }
    BadSchedule::Together
}

/// What is wrong with a cron schedule's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadSchedule {
    /// The classic five-field crontab form, which would shift every field by one.
    #[error(
        "it has 5 fields but six are needed, seconds first: \"sec min hour day month weekday\" (write \"0 {0}\")"
    )]
    Crontab(String),
    #[error(
        "it has {0} fields; six are needed, seconds first: \"sec min hour day month weekday\", e.g. \"0 0 9 * * MON\""
    )]
    FieldCount(usize),
    #[error(
        "field {position} ({name}) {text:?} is not valid; it takes {range}, *, lists (a,b), ranges (a-b) or steps (*/n)"
    )]
    Field {
        position: usize,
        name: &'static str,
        range: &'static str,
        text: String,
    },
    #[error(
        "the fields are valid alone but not together; six are needed: \"sec min hour day month weekday\""
    )]
    Together,
}

impl PartialEq for CronSchedule {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl fmt::Display for CronSchedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}
