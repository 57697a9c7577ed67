//! Why a worker's feed is not live, typed once where the answer is read: which failures mean
//! there is no worker to read (a screen may watch the cluster itself instead) and which are a
//! worker that exists but hiccups (keep retrying, show its cluster stale).

use std::time::Duration;

use kube::core::Status;

use super::decode::OVER_BOUND;
use super::{DecodeError, WorkerAddress};
use crate::inert;

/// The longest text of a server's shown in a message: it is data, not prose for the screen.
const SHOWN: usize = 300;

fn shown(text: &str) -> String {
    inert::fit(text, SHOWN)
}

/// One line for the engineer each; a server's text in it is made inert and cut.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeedError {
    /// RBAC refused this identity the worker's proxy: `name` is the service as RBAC checks it
    /// (`service:port`).
    #[error(
        "permission denied: this identity may not {verb} {resource} \"{name}\" in namespace \
         {namespace}; ask for `{verb}` on `{resource}` (resourceNames \"{name}\") there, and \
         check with `kubectl auth can-i {verb} services/{name} --subresource=proxy -n \
         {namespace}`",
        name = shown(name)
    )]
    Forbidden {
        verb: &'static str,
        resource: &'static str,
        namespace: String,
        name: String,
    },
    #[error("no worker: service {namespace}/{service} not found (is headless deployed there?)")]
    NoWorker { namespace: String, service: String },
    #[error("the worker is not ready: service {namespace}/{service} has no ready endpoint")]
    NotReady { namespace: String, service: String },
    #[error("the worker serves no /v1/watch ({code}): an older build of headless?")]
    NoFeed { code: u16 },
    /// The API server could not connect to a ready endpoint.
    #[error("the worker is unreachable: {}", shown(message))]
    Unreachable { message: String },
    /// Any other error answer, from the API server or the worker.
    #[error("the worker's feed was refused: {} ({code})", shown(message))]
    Refused { code: u16, message: String },
    /// The worker sent something this build does not read, or more than it accepts.
    #[error("the worker's feed is unreadable: {0}")]
    Protocol(DecodeError),
    #[error("the worker holds more than {max} findings")]
    TooManyRows { max: usize },
    /// The worker's findings are more bytes than the feed carries: it said so (413).
    #[error("the worker's feed is over its bound: {}", shown(message))]
    OverBound { message: String },
    /// Nothing came within the bound: the stream or the answer is dead.
    #[error("the worker's feed said nothing for {}s", after.as_secs_f64())]
    Silent { after: Duration },
    #[error("the worker ended its feed")]
    Ended,
    /// The connection failed below HTTP (network, TLS, the client's own deadline).
    #[error("the worker's feed failed: {}", shown(.0))]
    Transport(String),
}

impl FeedError {
    /// The worker could not be asked at all: no Service, no ready endpoint, no permission, or
    /// no feed in it. `source: auto` watches the cluster directly instead; any other failure is
    /// a worker that exists and is retried.
    pub fn means_no_worker(&self) -> bool {
        matches!(
            self,
            FeedError::Forbidden { .. }
                | FeedError::NoWorker { .. }
                | FeedError::NotReady { .. }
                | FeedError::NoFeed { .. }
        )
    }

    /// The worker's feed is more than this side reads, or than the worker serves: no retry
    /// reads it, and `source: auto` watches the cluster directly instead.
    pub fn is_over_bound(&self) -> bool {
        matches!(
            self,
            FeedError::OverBound { .. }
                | FeedError::TooManyRows { .. }
                | FeedError::Protocol(DecodeError::LineTooLong { .. })
        )
    }

    /// The failure of a request to the worker at `address`, from what kube returned.
    pub fn of(error: &kube::Error, address: &WorkerAddress) -> FeedError {
        match error {
            kube::Error::Api(status) => FeedError::of_status(status, address),
            other => FeedError::Transport(crate::cluster::plain(other)),
        }
    }

    /// An error answer, by the API server's code, reason and wording (kube-apiserver's
    /// service proxy says which 503 it is only in its message).
    fn of_status(status: &Status, address: &WorkerAddress) -> FeedError {
        let (namespace, service) = (address.namespace().to_string(), address.service());
        let about = status.details.as_ref();
        let kind = about.map_or("", |d| d.kind.as_str());
        match (status.code, status.reason.as_str()) {
            (403, "Forbidden") => FeedError::Forbidden {
                verb: "get",
                resource: "services/proxy",
                namespace,
                name: about
                    .map(|d| d.name.clone())
                    .filter(|name| !name.is_empty())
                    .unwrap_or_else(|| address.segment()),
            },
            (404, "NotFound") if matches!(kind, "services" | "endpoints") => FeedError::NoWorker {
                namespace,
                service: service.to_string(),
            },
            (404, _) => FeedError::NoFeed { code: 404 },
            (413, OVER_BOUND) => FeedError::OverBound {
                message: status.message.clone(),
            },
            (503, _) if status.message.starts_with("no endpoints available") => {
                FeedError::NotReady {
                    namespace,
                    service: service.to_string(),
                }
            }
            (503, _) if status.message.starts_with("error trying to reach service") => {
                FeedError::Unreachable {
                    message: status.message.clone(),
                }
            }
            (code, _) => FeedError::Refused {
                code,
                message: status.message.clone(),
            },
        }
    }
}
