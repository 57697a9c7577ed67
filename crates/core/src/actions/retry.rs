//! One API call with the status handling every action shares.

use std::future::Future;
use std::time::Duration;

use super::failure::Failure;
use crate::cluster::{ClusterName, Scope, plain};

/// What stopped a call, already mapped from the HTTP status.
#[derive(Debug)]
pub(crate) enum Stop {
    /// 404.
    Gone,
    /// 409: a precondition or a concurrent write.
    Conflict(String),
    /// 403, with the permission the call needed.
    Forbidden(Denied),
    /// Anything else, including retries exhausted.
    Failed(Failure),
}

/// The permission a call needs, named for the 403 message.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Needs {
    pub verb: &'static str,
    pub resource: &'static str,
}

impl Needs {
    pub(crate) fn new(verb: &'static str, resource: &'static str) -> Needs {
        Needs { verb, resource }
    }
}

/// A 403: the permission a request needed and what the API server said.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "permission denied: this identity may not {verb} {resource} in namespace {namespace} \
     ({message}). Check with `{check}` and grant it in {role}.",
    check = crate::cluster::can_i(
        verb,
        resource,
        &Scope::Namespace(namespace.clone()),
        context.as_ref().and_then(ClusterName::context)
    ),
    role = granted_by(verb, resource)
)]
pub struct Denied {
    /// The RBAC verb (`delete`, `patch`, `create`…), not an action's name.
    pub verb: &'static str,
    pub resource: &'static str,
    pub namespace: String,
    pub message: String,
    /// The kubeconfig context the request went through: its `can-i` checks that identity.
    pub context: Option<ClusterName>,
}

/// Which of the shipped roles (assets/deploy) grants a permission.
fn granted_by(verb: &str, resource: &str) -> &'static str {
    match (verb, resource) {
        (_, "leases" | "configmaps") => "the Role in the product's namespace (rbac.yaml)",
        ("patch", "pods") => {
            "the optional ClusterRole ops-pod-cleaner-finalizers (rbac-finalizers.yaml)"
        }
        _ => "the ClusterRole (rbac.yaml)",
    }
}

#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Tries in all for 429 and 5xx answers.
    pub attempts: u32,
    pub first_wait: Duration,
    pub max_wait: Duration,
    /// The cluster the calls go to, named in the `can-i` of a refusal.
    pub cluster: Option<ClusterName>,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            attempts: 4,
            first_wait: Duration::from_millis(500),
            max_wait: Duration::from_secs(30),
            cluster: None,
        }
    }
}

impl RetryPolicy {
    /// Run `call`, retrying 429 and 5xx with backoff that honours the server's Retry-After.
    pub(crate) async fn run<T, F, Fut>(
        &self,
        needs: Needs,
        namespace: &str,
        mut call: F,
    ) -> Result<T, Stop>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = kube::Result<T>>,
    {
        let mut wait = self.first_wait;
        let mut attempt = 1;
        loop {
            let error = match call().await {
                Ok(value) => return Ok(value),
                Err(e) => e,
            };
            let kube::Error::Api(status) = &error else {
                return Err(Stop::Failed(Failure::Transport(plain(&error))));
            };
            match status.code {
                404 => return Err(Stop::Gone),
                409 => return Err(Stop::Conflict(status.message.clone())),
                403 => {
                    return Err(Stop::Forbidden(Denied {
                        verb: needs.verb,
                        resource: needs.resource,
                        namespace: namespace.to_string(),
                        message: status.message.clone(),
                        context: self.cluster.clone(),
                    }));
                }
                429 | 500..=599 if attempt < self.attempts => {
                    let asked = status.details.as_ref().map_or(0, |d| d.retry_after_seconds);
                    let pause = if asked > 0 {
                        Duration::from_secs(asked.into())
                    } else {
                        wait
                    };
                    tracing::info!(
                        "{} answered {}; retrying in {:?}",
                        needs.resource,
                        status.code,
                        pause
                    );
                    tokio::time::sleep(pause.min(self.max_wait)).await;
                    wait = (wait * 2).min(self.max_wait);
                    attempt += 1;
                }
                code => {
                    return Err(Stop::Failed(Failure::Api {
                        code,
                        message: status.message.clone(),
                        tries: matches!(code, 429 | 500..=599).then_some(attempt),
                    }));
                }
            }
        }
    }
}
