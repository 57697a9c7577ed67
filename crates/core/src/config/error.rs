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

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    #[error(
        "the file is empty (only blank lines or comments); write settings (see \
         crates/core/config/default.yaml in the source) or remove the file to use the \
         built-in defaults"
    )]
    Empty,
    #[error("the file holds no settings (an empty document); write settings or remove the file")]
    NoSettings,
    #[error("config file named by {named_by} does not exist (or is not a file)")]
    NotFound { named_by: String },
    /// Not YAML at all; the parser's words, its quotes of the file left out.
    #[error("invalid YAML: {0}")]
    Yaml(String),
    #[error("not a report state file ({0}); delete it to start counting afresh")]
    NotReportState(String),
    #[error("{0}")]
    Unreadable(String),
    /// A setting that is not what its key expects: what was expected and what was found.
    #[error("{0}")]
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
