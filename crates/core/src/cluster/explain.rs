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
        kube::Error::Api(status) => format!(
            "{verb} {resource} {where_} failed: {} ({})",
            status.message, status.code
        ),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16, message: &str) -> kube::Error {
        kube::Error::Api(Box::new(
            kube::core::Status::failure(message, "Reason").with_code(code),
        ))
    }

    /// `verb` of pods in `scope` failed with `code` and `message`, in words.
    fn pods(code: u16, message: &str, verb: &str, scope: Scope) -> String {
        explain(&status(code, message), verb, "pods", &scope, None)
    }

    #[test]
    fn forbidden_names_the_verb_the_resource_and_what_to_do() {
        let all = pods(403, "pods is forbidden", "list", Scope::All);
        assert!(
            all.contains("may not list pods at the cluster scope"),
            "{all}"
        );
        assert!(all.contains("kubectl auth can-i list pods -A"), "{all}");
        assert!(all.contains("-n NAMESPACE"), "{all}");
        let one = pods(403, "x", "watch", Scope::Namespace("shop".into()));
        assert!(
            one.contains("kubectl auth can-i watch pods -n shop"),
            "{one}"
        );
        assert!(!one.contains("Status {"), "{one}");
    }

    #[test]
    fn plain_keeps_the_message_and_code_without_the_debug_dump() {
        let text = plain(&status(404, "namespaces \"tools\" not found"));
        assert_eq!(text, "namespaces \"tools\" not found (404)");
        assert!(
            status(404, "x").to_string().contains("Status {"),
            "kube's own text dumps"
        );
    }

    #[test]
    fn other_statuses_keep_the_server_message() {
        let text = pods(500, "etcd is down", "list", Scope::All);
        assert_eq!(
            text,
            "list pods at the cluster scope failed: etcd is down (500)"
        );
    }
}
