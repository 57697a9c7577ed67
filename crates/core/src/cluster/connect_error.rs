//! Why a cluster could not be opened, as values: what was tried, and the error it ended with.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use kube::config::{InClusterError, KubeconfigError};

use super::{ClusterName, causes};

/// How long a built client has to answer its first request.
pub(crate) const FIRST_ANSWER: Duration = Duration::from_secs(15);

/// A cluster that could not be opened, and what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The kubeconfig's client settings (TLS, proxy) cannot make a client.
    #[error("cannot build a client for {url}: {source}")]
    Client {
        url: String,
        #[source]
        source: kube::Error,
    },
    /// The task building the client ended without one (it panicked or was cancelled).
    #[error("{cluster} ({url}): building the client failed: {source}")]
    Building {
        cluster: ClusterName,
        url: String,
        #[source]
        source: tokio::task::JoinError,
    },
    /// A credential plugin (`exec`) may be waiting for a login.
    #[error(
        "{cluster} ({url}): the client was not ready within {}s: a credential plugin (`exec` in \
         the kubeconfig) may be waiting for a login or hanging. Run `kubectl --context {cluster} \
         version` to see it, then try again",
        after.as_secs_f64()
    )]
    NotReady {
        cluster: ClusterName,
        url: String,
        after: Duration,
    },
    #[error(
        "{cluster} ({url}) did not answer: {}. Check it with `kubectl --context {cluster} \
         version`, or try `--demo`.",
        causes(source)
    )]
    NoAnswer {
        cluster: ClusterName,
        url: String,
        #[source]
        source: kube::Error,
    },
    #[error(
        "{cluster} ({url}) did not answer within {} s. Check the network or VPN, or try `--demo`.",
        FIRST_ANSWER.as_secs()
    )]
    Silent { cluster: ClusterName, url: String },
    /// The kubeconfig cannot be read or used. Its error is no `source`: it may quote credentials.
    #[error("{what} {origin}: {}", unquoted(error))]
    Kubeconfig {
        what: KubeconfigStep,
        origin: Origin,
        error: KubeconfigError,
    },
    #[error(
        "no context {name:?} in kubeconfig {origin}; the contexts there are: {}. Pass one with \
         --context.",
        if known.is_empty() { "none".to_string() } else { known.join(", ") }
    )]
    NoContext {
        name: String,
        origin: Origin,
        known: Vec<String>,
    },
    #[error(
        "no kubeconfig found ($KUBECONFIG, ~/.kube/config) and not running in a cluster \
         ({source}). Pass --kubeconfig FILE, or try --demo for the built-in simulated cluster."
    )]
    Nowhere {
        #[source]
        source: InClusterError,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    File(PathBuf),
    /// `$KUBECONFIG` or `~/.kube/config`.
    Default,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File(path) => write!(f, "{}", path.display()),
            Origin::Default => f.write_str("($KUBECONFIG or ~/.kube/config)"),
        }
    }
}

/// What was being done with the kubeconfig, as its error begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::Display)]
pub enum KubeconfigStep {
    #[strum(to_string = "cannot read kubeconfig")]
    Read,
    #[strum(to_string = "kubeconfig")]
    Use,
}

/// A kubeconfig error that cannot leak a credential. The YAML parser's message quotes the
/// lines around the error, and a type mismatch quotes the value: either may be a bearer token
/// or a client key. Only the position is kept.
fn unquoted(error: &KubeconfigError) -> String {
    match error {
        KubeconfigError::Parse(parse) => {
            let at = parse
                .location()
                .map(|l| format!(" at line {}, column {}", l.line(), l.column()))
                .unwrap_or_default();
            format!(
                "it is not valid kubeconfig YAML{at} (the parser's message is not shown: it \
                 quotes the file, credentials included). `kubectl config view --kubeconfig \
                 FILE` shows the file with its credentials redacted"
            )
        }
        other => other.to_string(),
    }
}
