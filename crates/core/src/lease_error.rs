//! Why a round of the Lease election could not be played.

/// Why a round of the election could not be played. The API server's words are kept as it
/// said them: its error is neither `Clone` nor comparable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LeaseError {
    #[error("cannot read the lease: {0}")]
    Read(String),
    #[error("the lease vanished between read and write")]
    Vanished,
    #[error("cannot write the lease: {0}")]
    Write(String),
    /// The lease's namespace does not exist (a first run before the manifests made it).
    #[error(
        "namespace \"{0}\" does not exist, so the lease cannot be created there: create it \
         (`kubectl create namespace {0}`), or set $POD_NAMESPACE to a namespace that exists"
    )]
    NoNamespace(String),
    /// 403: this identity lacks a permission on leases.
    #[error("permission denied: {0}")]
    Forbidden(String),
    #[error("cannot encode the lease: {0}")]
    Encode(String),
    /// The round did not finish within its deadline (a hung call, a partition).
    #[error("no answer within {0:?}")]
    NoAnswer(std::time::Duration),
}
