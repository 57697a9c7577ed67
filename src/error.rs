//! The library's one error type.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A config file that cannot be used; the message names file, line, column, key and what was expected.
    #[error("{0}")]
    Config(String),

    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },

    /// The command line asks for something this build cannot do.
    #[error("{0}")]
    Usage(String),

    #[error("cannot reach the cluster: {0}")]
    Cluster(String),

    /// The API server refused or failed a request; the message says what to do next.
    #[error("{0}")]
    Api(String),

    #[error(transparent)]
    Kube(#[from] kube::Error),
}
