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
    pub fn parse(text: &str) -> Result<CronSchedule, String> {
        let text = text.trim();
        let fields = text.split_whitespace().count();
        if fields == 5 {
            return Err(format!(
                "it has 5 fields but six are needed, seconds first: \"sec min hour day month weekday\" (write \"0 {text}\")"
            ));
        }
        if !text.starts_with('@') && !(6..=7).contains(&fields) {
            return Err(format!(
                "it has {fields} fields; six are needed, seconds first: \"sec min hour day month weekday\", e.g. \"0 0 9 * * MON\""
            ));
        }
        let schedule = cron::Schedule::from_str(text).map_err(|_| diagnose(text))?;
        Ok(CronSchedule {
            text: text.to_string(),
            schedule,
        })
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
fn diagnose(text: &str) -> String {
    let fields: Vec<&str> = text.split_whitespace().collect();
    for (i, field) in fields.iter().enumerate() {
        let alone: Vec<&str> = (0..fields.len())
            .map(|j| if i == j { *field } else { "*" })
            .collect();
        if cron::Schedule::from_str(&alone.join(" ")).is_err() {
            let (name, range) = FIELDS.get(i).copied().unwrap_or(("field", "?"));
            return format!(
                "field {} ({name}) {field:?} is not valid; it takes {range}, *, lists (a,b), ranges (a-b) or steps (*/n)",
                i + 1
            );
        }
    }
    "the fields are valid alone but not together; six are needed: \"sec min hour day month weekday\"".into()
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
