use super::action::PodRef;
use super::outcome::Outcome;
use super::parked::StoreError;
use super::refusal::Refusal;
use super::retry::Denied;

/// Why a read failed, as a value; its words are made where it is shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The pod left the cache (deleted since the screen showed it).
    #[error("{0} is gone from the cache")]
    NotCached(PodRef),
    /// 404.
    #[error("{0} is gone")]
    Gone(String),
    /// 403, with the permission the read needed.
    #[error("{0}")]
    Forbidden(Denied),
    /// The API server could not reach the kubelet that holds the logs (500 on `pods/log`:
    /// a node lost, or one with no address).
    #[error("cannot read {what}: {}", unreachable(node.as_deref(), why))]
    NodeUnreachable {
        what: String,
        node: Option<String>,
        why: String,
    },
    /// Anything else, retries included: what was read, and what went wrong.
    #[error("cannot read {what}: {why}")]
    Failed { what: String, why: String },
}

impl ReadError {
    /// A read that ended as an action would have: gone, forbidden, or failed.
    pub(super) fn of_outcome(what: impl ToString, outcome: Outcome) -> ReadError {
        match outcome {
            Outcome::AlreadyGone => ReadError::Gone(what.to_string()),
            Outcome::Refused(Refusal::Forbidden(denied)) => ReadError::Forbidden(denied),
            other => ReadError::Failed {
                what: what.to_string(),
                why: other.detail(),
            },
        }
    }

    pub(super) fn from_store(place: String, e: StoreError) -> ReadError {
        match e {
            StoreError::Unavailable(why) => ReadError::Failed { what: place, why },
            StoreError::Failed(stop) => ReadError::of_outcome(place, stop.into()),
        }
    }

    pub(super) fn kube(what: impl ToString, error: kube::Error) -> ReadError {
        match error {
            kube::Error::Api(status) if status.code == 404 => ReadError::Gone(what.to_string()),
            error => ReadError::Failed {
                what: what.to_string(),
                why: crate::cluster::plain(&error),
            },
        }
    }
}

/// What a user can do when the kubelet holding the logs cannot be reached.
fn unreachable(node: Option<&str>, why: &str) -> String {
    let (on, check) = match node {
        Some(node) => (format!("node {node}"), format!("kubectl get node {node}")),
        None => ("the pod's node".into(), "kubectl get pod -o wide".into()),
    };
    format!(
        "the API server cannot reach the kubelet on {on} ({why}); the node may be down or \
         gone: `{check}` tells, or read the logs where the cluster ships them"
    )
}
