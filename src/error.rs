//! The binary's one error type: the core's, and what only this program can fail at (its
//! terminal, the port it listens on, the simulated clusters of `--demo`).

use std::net::SocketAddr;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Core(opc_core::Error),

    #[error("cannot listen on {addr}: {source}; choose another with --listen")]
    Listen {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },

    /// The terminal the screen runs in failed; `what` says at which step.
    #[error("{what}: {source}")]
    Terminal {
        what: &'static str,
        #[source]
        source: std::io::Error,
    },

    #[error("cannot start the simulated cluster {name}: {source}")]
    DemoStart {
        name: String,
        #[source]
        source: std::io::Error,
    },
}

/// Whatever the core fails with (its `Error`, or a part of it such as a `Usage`).
impl<E: Into<opc_core::Error>> From<E> for Error {
    fn from(error: E) -> Error {
        Error::Core(error.into())
    }
}
