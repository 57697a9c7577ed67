//! API errors a person can act on: what failed, why, and what to do next.

use super::Scope;

/// One line for a failed `verb` on `resource` in `scope`, e.g. a list of pods; its `can-i`
/// for the kubeconfig `context` the request was made with, when known.
pub fn explain(
    error: &kube::Error,
    verb: &str,
    resource: &str,
    scope: &Scope,
    context: Option<&str>,
) -> String {
    let where_ = match scope {
        Scope::All => "at the cluster scope".to_string(),
        Scope::Namespace(ns) => format!("in namespace {ns}"),
    };
    match error {
        kube::Error::Api(status) if status.code == 403 => format!(
            "permission denied: this identity may not {verb} {resource} {where_} ({}). Check \
             with `{}` and grant it in the ClusterRole{}",
            status.message,
            super::can_i(verb, resource, scope, context),
            match scope {
                Scope::All => ", or pass -n NAMESPACE to watch only namespaces you may read",
                Scope::Namespace(_) => "",
            }
        ),
        kube::Error::Api(status) if status.code == 401 => format!(
            "the API server rejected the credentials (401) for {verb} {resource}: log in again \
             or refresh the kubeconfig's token ({})",
            status.message
        ),
        kube::Error::Api(_) => format!("{verb} {resource} {where_} failed: {}", plain(error)),
        other => format!(
            "{verb} {resource} {where_} failed: {}. Check that the API server is reachable \
             (network, VPN, `kubectl version`)",
            causes(other)
        ),
    }
}

/// A kube error in words: the API server's message and code, not kube's `Display`, which
/// appends the whole `Status` as a Rust debug dump.
pub fn plain(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) => format!("{} ({})", status.message, status.code),
        other => causes(other),
    }
}

/// An error and its causes, outermost first, without repeats: "client error (Connect):
/// tcp connect error: Connection refused (os error 111)" rather than just the first.
pub(crate) fn causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let line = cause.to_string();
        if !text.contains(&line) {
            text.push_str(": ");
            text.push_str(&line);
        }
        source = cause.source();
    }
    text
}
