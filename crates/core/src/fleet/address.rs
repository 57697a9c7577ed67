//! Where a cluster's worker is, and the path that reaches it through the API server's service
//! proxy: the engineer's own credentials, no port-forward, nothing exposed outside the cluster.

use std::fmt;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use super::Resume;
use crate::cluster::is_dns_label;

/// The Service in front of a cluster's `headless` worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerAddress {
    namespace: String,
    service: String,
    port: u16,
}

/// A namespace or Service name that is not a Kubernetes name; it would not stay one path
/// segment of the proxy's URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{what} {text:?} is not a Kubernetes name (lower-case letters, digits and '-', at most 63)"
)]
pub struct BadAddress {
    what: &'static str,
    text: String,
}

impl Default for WorkerAddress {
    /// Where `assets/deploy` runs it: namespace and Service `ops-pod-cleaner`, port `findings` 9091
    /// (the findings' own door, apart from the probes and `/metrics` on 9090).
    fn default() -> WorkerAddress {
        WorkerAddress {
            namespace: "ops-pod-cleaner".to_string(),
            service: "ops-pod-cleaner".to_string(),
            port: 9091,
        }
    }
}

impl WorkerAddress {
    pub fn new(namespace: &str, service: &str, port: u16) -> Result<WorkerAddress, BadAddress> {
        for (what, text) in [("namespace", namespace), ("service", service)] {
            if !is_dns_label(text) {
                return Err(BadAddress {
                    what,
                    text: text.to_string(),
                });
            }
        }
        Ok(WorkerAddress {
            namespace: namespace.to_string(),
            service: service.to_string(),
            port,
        })
    }

    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    pub fn service(&self) -> &str {
        &self.service
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The proxy's path segment for the service: also the name RBAC checks a `get` on
    /// `services/proxy` against.
    pub fn segment(&self) -> String {
        format!("{}:{}", self.service, self.port)
    }

    /// The API server's path that reaches `rest` (e.g. `/v1/snapshot`) on the worker.
    pub fn proxy_path(&self, rest: &str) -> String {
        format!(
            "/api/v1/namespaces/{}/services/{}/proxy{rest}",
            self.namespace,
            self.segment()
        )
    }

    /// What the worker says of the pod of `uid` now: its row, or `null`.
    pub fn finding_path(&self, uid: &str) -> String {
        self.proxy_path(&format!("/v1/findings/{}", uid_segment(uid)))
    }

    /// The worker's watch, resumed from `resume` when there is one (a snapshot first when not).
    pub fn watch_path(&self, resume: Option<Resume>) -> String {
        match resume {
            Some(at) => self.proxy_path(&format!("/v1/watch?{}", at.query())),
            None => self.proxy_path("/v1/watch"),
        }
    }
}

/// What of a uid stays as it is in a path: letters, digits and `-._~`.
const UID: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A pod's uid as one segment of a path, percent-encoded: what the API server gave is not
/// trusted to be a UUID. The worker finds a row by comparing its own uids encoded the same way.
pub fn uid_segment(uid: &str) -> String {
    utf8_percent_encode(uid, UID).to_string()
}

/// Whether `segment` is `uid` as [`uid_segment`] writes it, without writing it: a worker
/// compares every row's uid when asked for one.
pub fn is_uid_segment(uid: &str, segment: &str) -> bool {
    let mut rest = segment;
    for piece in utf8_percent_encode(uid, UID) {
        match rest.strip_prefix(piece) {
            Some(after) => rest = after,
            None => return false,
        }
    }
    rest.is_empty()
}

impl fmt::Display for WorkerAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "service {}/{}", self.namespace, self.segment())
    }
}
