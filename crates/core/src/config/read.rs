//! Typed access to tree nodes; every failure names file, line, column, key path and expectation.

use super::error::{ConfigError, Problem};
use std::fmt::Display;
use std::path::PathBuf;
use std::time::Duration;

use super::Result;
use super::duration;
use super::paths;
use super::schedule::CronSchedule;
use super::tree::{Key, Node, Value, line_and_column};
use serde_saphyr::Location;

/// A value in the document, with the path of keys that leads to it.
#[derive(Clone)]
pub(crate) struct Field<'a> {
    pub origin: &'a str,
    pub node: &'a Node,
    path: String,
}

/// Builds the message every config error uses: `file:line:col: key.path: what`.
pub(crate) fn located(origin: &str, pos: Location, path: &str, what: impl Display) -> ConfigError {
    ConfigError {
        origin: origin.to_string(),
        at: line_and_column(pos),
        key: Some(path.to_string()),
        problem: Problem::Invalid(what.to_string()),
    }
}

impl<'a> Field<'a> {
    pub fn root(origin: &'a str, node: &'a Node) -> Field<'a> {
        Field {
            origin,
            node,
            path: String::new(),
        }
    }

    pub fn error(&self, what: impl Display) -> ConfigError {
        located(self.origin, self.node.pos, &self.path, what)
    }

    pub fn expected(&self, what: &str) -> ConfigError {
        self.error(format!(
            "expected {what}, found {}",
            self.node.value.describe()
        ))
    }

    pub fn bool(&self) -> Result<bool> {
        match &self.node.value {
            Value::Bool(b) => Ok(*b),
            _ => Err(self.expected("true or false")),
        }
    }

    pub fn u32(&self) -> Result<u32> {
        match &self.node.value {
            Value::Int(i) => {
                u32::try_from(*i).map_err(|_| self.expected("a whole number from 0 to 4294967295"))
            }
            _ => Err(self.expected("a whole number, e.g. 5")),
        }
    }

    /// A share between 0 and 1 (`0.5`).
    pub fn share(&self) -> Result<f64> {
        let value = match &self.node.value {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        };
        value
            .filter(|v| (0.0..=1.0).contains(v))
            .ok_or_else(|| self.expected("a number from 0 to 1, e.g. 0.5"))
    }

    /// One of `all`, by name; the message lists the names after `what`.
    pub fn one_of<T: Copy>(&self, all: &[T], name: fn(T) -> &'static str, what: &str) -> Result<T> {
        let text = self.string()?;
        all.iter()
            .copied()
            .find(|v| name(*v) == text)
            .ok_or_else(|| {
                let names: Vec<&str> = all.iter().map(|v| name(*v)).collect();
                self.expected(&format!("{what}one of {}", names.join(", ")))
            })
    }

    pub fn string(&self) -> Result<String> {
        match &self.node.value {
            Value::Str(s) => Ok(s.clone()),
            _ => Err(self.expected("a string (quote it if it looks like a number or boolean)")),
        }
    }

    pub fn non_empty(&self) -> Result<String> {
        let s = self.string()?;
        if s.trim().is_empty() {
            return Err(self.expected("a non-empty string"));
        }
        Ok(s)
    }

    /// A file or directory: a non-empty string, `~/` expanded.
    pub fn path(&self) -> Result<PathBuf> {
        self.non_empty().map(|text| paths::expand(&text))
    }

    /// A list of names: a YAML list, or the seed's comma-separated string (`a, b`).
    pub fn list(&self) -> Result<Vec<String>> {
        match &self.node.value {
            Value::Str(s) => Ok(s
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()),
            Value::Seq(_) => self
                .seq()?
                .iter()
                .map(|item| match &item.node.value {
                    Value::Str(s) => Ok(s.trim().to_string()),
                    _ => Err(item.expected("a name")),
                })
                .filter(|r| r.as_ref().map_or(true, |s| !s.is_empty()))
                .collect(),
            _ => Err(self.expected("a list of names or a comma-separated string like \"a,b\"")),
        }
    }

    /// A Go-style duration; only `0` may be written without a unit, as in Go.
    pub fn duration(&self) -> Result<Duration> {
        const EXPECTED: &str = "a duration like 300ms, 5s, 2m or 1h30m";
        match &self.node.value {
            Value::Int(0) => Ok(Duration::ZERO),
            Value::Int(i) => Err(self.error(format!(
                "expected {EXPECTED}, found the number {i}: a duration needs a unit, as in Go (write {i}s for seconds)"
            ))),
            Value::Str(s) => duration::parse(s)
                .map_err(|why| self.error(format!("expected {EXPECTED}, found {s:?} ({why})"))),
            _ => Err(self.expected(EXPECTED)),
        }
    }

    pub fn cron(&self) -> Result<CronSchedule> {
        let text = self.string()?;
        CronSchedule::parse(&text)
            .map_err(|why| self.error(format!("invalid cron schedule {text:?}: {why}")))
    }

    pub fn seq(&self) -> Result<Vec<Field<'a>>> {
        let Value::Seq(items) = &self.node.value else {
            return Err(self.expected("a list"));
        };
        let field = |(i, node)| Field {
            origin: self.origin,
            node,
            path: format!("{}[{i}]", self.path),
        };
        Ok(items.iter().enumerate().map(field).collect())
    }

    /// The entries of a mapping whose keys are names of the user's (e.g. contexts).
    pub fn entries(&self) -> Result<Vec<(String, Field<'a>)>> {
        let Value::Map(entries) = &self.node.value else {
            return Err(self.expected("a mapping"));
        };
        let field = |(key, node): &'a (Key, Node)| {
            let field = Field {
                origin: self.origin,
                node,
                path: join(&self.path, &key.name),
            };
            (key.name.clone(), field)
        };
        Ok(entries.iter().map(field).collect())
    }

    /// The entries of a mapping, rejecting keys outside `allowed`.
    pub fn map(&self, allowed: &[&str]) -> Result<MapReader<'a>> {
        let Value::Map(entries) = &self.node.value else {
            return Err(self.expected(&format!("a mapping with keys {}", allowed.join(", "))));
        };
        for (key, _) in entries {
            if !allowed.contains(&key.name.as_str()) {
                return Err(unknown_key(self.origin, &self.path, key, allowed));
            }
        }
        Ok(MapReader {
            origin: self.origin,
            path: self.path.clone(),
            entries,
        })
    }
}

fn unknown_key(origin: &str, parent: &str, key: &Key, allowed: &[&str]) -> ConfigError {
    let allowed_keys = allowed.join(", ");
    if !looks_like_a_key(&key.name) {
        // A URL or token pasted where a key goes (a missing space after the colon).
        let what = format!(
            "unknown key (not shown: it does not look like a key name and may hold a secret); \
             allowed keys here: {allowed_keys}"
        );
        return located(origin, key.pos, parent, what);
    }
    let path = join(parent, &key.name);
    let hint = match closest(&key.name, allowed) {
        Some(near) => format!(" (did you mean {near:?}?)"),
        None => String::new(),
    };
    let what = format!(
        "unknown key {:?}{hint}; allowed keys here: {allowed_keys}",
        key.name
    );
    located(origin, key.pos, &path, what)
}

/// Short names of letters, digits, `_`, `-` and `.`: every key this config has looks so.
fn looks_like_a_key(name: &str) -> bool {
    name.chars().count() <= 32
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// The allowed key a typo most likely meant: same letters ignoring case, or within two edits.
fn closest<'k>(key: &str, allowed: &[&'k str]) -> Option<&'k str> {
    let key = key.to_lowercase();
    allowed
        .iter()
        .map(|a| (strsim::levenshtein(&key, &a.to_lowercase()), *a))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, a)| a)
}

/// `a.b` for nested keys.
pub(crate) fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// A mapping whose keys were checked; owns the paths of the fields it hands out.
pub(crate) struct MapReader<'a> {
    origin: &'a str,
    path: String,
    entries: &'a [(Key, Node)],
}

impl<'a> MapReader<'a> {
    /// The value under `key`, or `None` when absent or null (null keeps the default).
    pub fn get(&self, key: &str) -> Option<Field<'a>> {
        let (_, node) = self.entries.iter().find(|(k, _)| k.name == key)?;
        if node.value == Value::Null {
            return None;
        }
        Some(Field {
            origin: self.origin,
            node,
            path: join(&self.path, key),
        })
    }

    pub fn set<T>(
        &self,
        key: &str,
        target: &mut T,
        read: impl FnOnce(&Field<'a>) -> Result<T>,
    ) -> Result<()> {
        if let Some(field) = self.get(key) {
            *target = read(&field)?;
        }
        Ok(())
    }
}
