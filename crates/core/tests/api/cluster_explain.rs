//! API errors in words a person can act on.

use opc_core::cluster::{Scope, explain, plain};

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
