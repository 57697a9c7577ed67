//! The library's one error type. Each variant has one exit code (`commands::exit_code`):
//! 2 for what the user can fix in the config or the command line, 3 for everything else.

use std::path::PathBuf;

pub use crate::file_op::{FileKind, IoOp};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A config file that cannot be used; the message names file, line, column, key and what was expected.
    #[error("{0}")]
    Config(#[from] crate::config::ConfigError),

    /// A file the tool reads or writes (config, audit log, report state, spool).
    #[error("cannot {op} {}: {source}", path.display())]
    Io {
        path: PathBuf,
        op: IoOp,
        #[source]
        source: std::io::Error,
    },

    /// A file the tool writes is a symbolic link or a special file. It is not followed:
    /// whoever put it there could aim the write at a file of theirs choosing.
    #[error(
        "refusing to write {}: it is {found}, not a regular file; remove it or choose another path",
        path.display()
    )]
    UnsafeFile { path: PathBuf, found: FileKind },

    #[error("{0}")]
    Usage(#[from] crate::Usage),

    /// The HTTP client for the report sinks cannot be built (TLS or resolver set-up).
    #[error("cannot build the HTTP client: {0}")]
    HttpClient(#[source] reqwest::Error),

    #[error("cannot encode JSON: {0}")]
    Encode(#[from] serde_json::Error),

    /// A cluster that could not be opened: which step failed, and its error.
    #[error("{}", unreached(.0))]
    Connect(#[from] crate::cluster::ConnectError),

    /// The first complete pod list did not arrive in time; `last_error` is the watch's.
    #[error(
        "cannot reach the cluster: the pod list did not complete within {}s ({})",
        within.as_secs(),
        last_error.as_deref().unwrap_or("no answer")
    )]
    NotSynced {
        within: std::time::Duration,
        last_error: Option<String>,
    },

    #[error("cannot read kubeconfig: {0}")]
    Kubeconfig(#[source] kube::config::KubeconfigError),

    /// The API server refused or failed a request; the message says what to do next, for the
    /// kubeconfig context it was made with when known.
    #[error(transparent)]
    Request(#[from] crate::cluster::RequestError),

    /// A read of one cluster failed (the parked workloads, say).
    #[error("{cluster}: {source}")]
    Read {
        cluster: crate::cluster::ClusterName,
        #[source]
        source: crate::actions::ReadError,
    },

    /// A list answered with something that is not a list, or its page was lost.
    #[error("{0}")]
    List(#[from] crate::cluster::ListProblem),

    /// This process could not take part in the cluster's Lease.
    #[error(
        "cannot take the lease {lease}: {source}{}",
        if matches!(source, crate::lease::LeaseError::Forbidden(_)) {
            ". Check that this identity may get/create/update leases (assets/deploy/base/rbac.yaml)"
        } else {
            ""
        }
    )]
    Lease {
        lease: String,
        #[source]
        source: crate::lease::LeaseError,
    },

    /// Namespaces named with `-n` that no cluster has: one line each, naming the context
    /// and the namespaces it has.
    #[error("{}", .0.join("\n"))]
    NoSuchNamespace(Vec<String>),

    #[error("{}", crate::cluster::plain(.0))]
    Kube(#[from] kube::Error),
}

impl Error {
    /// The error of a request made with the kubeconfig context `context`: a permission it
    /// names is checked for that context's identity.
    pub fn in_context(self, name: &str) -> Error {
        match self {
            Error::Request(request) => Error::Request(request.in_context(name)),
            other => other,
        }
    }
}

impl From<crate::config::LoadError> for Error {
    fn from(error: crate::config::LoadError) -> Error {
        match error {
            crate::config::LoadError::Invalid(invalid) => Error::Config(invalid),
            crate::config::LoadError::Io { path, op, source } => Error::Io { path, op, source },
        }
    }
}

impl From<crate::cluster::ListError> for Error {
    fn from(error: crate::cluster::ListError) -> Error {
        match error {
            crate::cluster::ListError::Request(request) => Error::Request(request),
            crate::cluster::ListError::Problem(problem) => Error::List(problem),
        }
    }
}

/// A cluster not opened: unreachable, unless the kubeconfig never named it.
fn unreached(error: &crate::cluster::ConnectError) -> String {
    match error {
        crate::cluster::ConnectError::NoContext { .. } => error.to_string(),
        other => format!("cannot reach the cluster: {other}"),
    }
}
