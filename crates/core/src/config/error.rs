//! What is wrong with a config file, and where: the file, the line and column, the key path.

use std::fmt;

/// Why a config could not be had: it is wrong, or its file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{0}")]
    Invalid(#[from] ConfigError),
    #[error("cannot {op} {}: {source}", path.display())]
    Io {
        path: std::path::PathBuf,
        op: crate::file_op::IoOp,
        #[source]
        source: std::io::Error,
    },
}

/// A config that cannot be used. `Display` is `file:line:col: key.path: problem`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file, as the user named it.
    pub origin: String,
    /// Line and column, both 1-based, when the problem is at one place.
    pub at: Option<(u64, u64)>,
    /// The key path (`safety.maxStale`), when the problem is a key's.
    pub key: Option<String>,
    pub problem: Problem,
}

/// What is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// Only blank lines or comments.
    Empty,
    /// An empty YAML document.
    NoSettings,
    /// A file named by a flag or variable that does not exist.
    NotFound { named_by: String },
    /// Not YAML at all; the parser's words, its quotes of the file left out.
    Yaml(String),
    /// A report state file that does not parse.
    NotReportState(String),
    /// A file that cannot be read.
    Unreadable(String),
    /// A setting that is not what its key expects: what was expected and what was found.
    Invalid(String),
}

impl ConfigError {
    /// A problem with the file as a whole.
    pub fn of_file(origin: impl fmt::Display, problem: Problem) -> ConfigError {
        ConfigError {
            origin: origin.to_string(),
            at: None,
            key: None,
            problem,
        }
    }
}

impl std::error::Error for ConfigError {}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.origin)?;
        if let Some((line, column)) = self.at {
            write!(f, ":{line}:{column}")?;
        }
        if let Some(key) = &self.key {
            let key = if key.is_empty() { "top level" } else { key };
            write!(f, ": {key}")?;
        }
        write!(f, ": {}", self.problem)
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Empty => f.write_str(
                "the file is empty (only blank lines or comments); write settings (see \
                 crates/core/config/default.yaml in the source) or remove the file to use the \
                 built-in defaults",
            ),
            Problem::NoSettings => f.write_str(
                "the file holds no settings (an empty document); write settings or remove the file",
            ),
            Problem::NotFound { named_by } => write!(
                f,
                "config file named by {named_by} does not exist (or is not a file)"
            ),
            Problem::Yaml(text) => write!(f, "invalid YAML: {text}"),
            Problem::NotReportState(why) => write!(
                f,
                "not a report state file ({why}); delete it to start counting afresh"
            ),
            Problem::Unreadable(why) | Problem::Invalid(why) => f.write_str(why),
        }
    }
}
