//! Smaller endpoints: namespaces, SelfSubjectAccessReview, and `events.k8s.io/v1`.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::cluster::State;
use super::meta;
use super::resources::Res;
use super::status::{ApiError, ApiResult};

/// Namespaces are implicit: the system ones plus any that hold objects.
pub fn namespaces(s: &State, name: Option<&str>) -> ApiResult<Value> {
    let mut names: BTreeSet<String> = ["default", "kube-system", "kube-public", "kube-node-lease"]
        .iter()
        .map(|n| n.to_string())
        .collect();
    for res in Res::ALL {
        names.extend(
            s.store
                .iter(res)
                .map(|o| meta::namespace(o).to_string())
                .filter(|n| !n.is_empty()),
        );
    }
    let doc = |n: &str| {
        json!({
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": { "name": n, "labels": { "kubernetes.io/metadata.name": n } },
            "spec": { "finalizers": ["kubernetes"] },
            "status": { "phase": "Active" },
        })
    };
    match name {
        Some(n) if names.contains(n) => Ok(doc(n)),
        Some(n) => Err(ApiError::not_found("", "namespaces", n)),
        None => Ok(json!({
            "apiVersion": "v1", "kind": "NamespaceList",
            "metadata": { "resourceVersion": s.store.rv().to_string() },
            "items": names.iter().map(|n| doc(n)).collect::<Vec<_>>(),
        })),
    }
}

/// `SelfSubjectAccessReview`: allowed unless a denial fault matches.
pub fn access_review(s: &State, body: &Value) -> ApiResult<Value> {
    let spec = body
        .get("spec")
        .ok_or_else(|| ApiError::bad_request("spec is required"))?;
    let allowed = match spec.get("resourceAttributes") {
        Some(attrs) => {
            let resource = meta::str_at(attrs, "/resource");
            let resource = match meta::str_at(attrs, "/subresource") {
                "" => resource.to_string(),
                sub => format!("{resource}/{sub}"),
            };
            let ns = Some(meta::str_at(attrs, "/namespace")).filter(|n| !n.is_empty());
            !s.faults.denied(meta::str_at(attrs, "/verb"), &resource, ns)
        }
        None => true,
    };
    let mut status = json!({ "allowed": allowed });
    if allowed {
        status["reason"] = json!("RBAC: allowed by ClusterRoleBinding \"sim\"");
    }
    Ok(json!({
        "kind": "SelfSubjectAccessReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": { "creationTimestamp": null },
        "spec": spec,
        "status": status,
    }))
}

/// Fields that only change name between core/v1 and events.k8s.io/v1 (core, v1).
const RENAMED: [(&str, &str); 7] = [
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("reportingComponent", "reportingController"),
    ("count", "deprecatedCount"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("source", "deprecatedSource"),
];
const SAME: [&str; 7] = [
    "metadata",
    "reason",
    "type",
    "eventTime",
    "series",
    "action",
    "related",
];

/// events.k8s.io/v1 → core/v1 (how it is stored).
pub fn event_to_core(v1: &Value) -> Value {
    let mut core = json!({ "apiVersion": "v1", "kind": "Event" });
    for (c, e) in RENAMED {
        if let Some(v) = v1.get(e) {
            core[c] = v.clone();
        }
    }
    for k in SAME.iter().chain(["reportingInstance"].iter()) {
        if let Some(v) = v1.get(*k) {
            core[*k] = v.clone();
        }
    }
    if core.get("involvedObject").is_none() {
        core["involvedObject"] = json!({});
    }
    core
}

/// core/v1 → events.k8s.io/v1.
pub fn event_from_core(core: &Value) -> Value {
    let mut v1 = json!({ "apiVersion": "events.k8s.io/v1", "kind": "Event" });
    for (c, e) in RENAMED {
        if let Some(v) = core.get(c) {
            v1[e] = v.clone();
        }
    }
    for k in SAME.iter().chain(["reportingInstance"].iter()) {
        if let Some(v) = core.get(*k) {
            v1[*k] = v.clone();
        }
    }
    v1
}
