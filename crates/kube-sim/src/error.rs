//! What can go wrong starting a demo cluster; the product words it for its own command line.

/// An error from [`demo::start_named`](super::demo::start_named).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The name is none of [`demo::CONTEXTS`](super::demo::CONTEXTS).
    #[error("no demo cluster {0:?}: there are {known}", known = super::demo::CONTEXTS.join(" and "))]
    UnknownDemo(String),
    /// The loopback server could not be started.
    #[error("cannot start the simulated cluster {name}: {source}")]
    Start {
        name: String,
        #[source]
        source: std::io::Error,
    },
}

pub type Result<T> = std::result::Result<T, Error>;
