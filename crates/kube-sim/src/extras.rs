//! Smaller endpoints: namespaces, SelfSubjectAccessReview, and `events.k8s.io/v1`.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::cluster::State;
use super::meta;
use super::resources::Res;
use super::status::{ApiError, ApiResult};
use crate::json::Fields;

/// Namespaces are implicit: the system ones plus any that hold objects.
pub fn namespaces(s: &State, name: Option<&str>) -> ApiResult<Value> {
    let mut names: BTreeSet<String> = ["default", "kube-system", "kube-public", "kube-node-lease"]
        .iter()
        .map(|n| n.to_string())
        .collect();
    names.extend(s.namespaces.iter().cloned());
    for res in Res::ALL {
        names.extend(
            s.store
                .iter(res)
                .map(|o| meta::namespace(o).to_string())
                .filter(|n| !n.is_empty()),
        );
    }
    let doc = |n: &str| namespace_doc(n, "Active");
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
        status.set(
            "reason",
            json!("RBAC: allowed by ClusterRoleBinding \"sim\""),
        );
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
            core.set(c, v.clone());
        }
    }
    for k in SAME.iter().chain(["reportingInstance"].iter()) {
        if let Some(v) = v1.get(*k) {
            core.set(k, v.clone());
        }
    }
    if core.get("involvedObject").is_none() {
        core.set("involvedObject", json!({}));
    }
    core
}

/// core/v1 → events.k8s.io/v1.
pub fn event_from_core(core: &Value) -> Value {
    let mut v1 = json!({ "apiVersion": "events.k8s.io/v1", "kind": "Event" });
    for (c, e) in RENAMED {
        if let Some(v) = core.get(c) {
            v1.set(e, v.clone());
        }
    }
    for k in SAME.iter().chain(["reportingInstance"].iter()) {
        if let Some(v) = core.get(*k) {
            v1.set(k, v.clone());
        }
    }
    v1
}

fn namespace_doc(name: &str, phase: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": { "name": name, "labels": { "kubernetes.io/metadata.name": name } },
        "spec": { "finalizers": ["kubernetes"] },
        "status": { "phase": phase },
    })
}

/// `POST /api/v1/namespaces`.
pub fn create_namespace(s: &mut State, body: &Value) -> ApiResult<Value> {
    let name = meta::name(body).to_string();
    if name.is_empty() {
        return Err(ApiError::invalid(
            "",
            "Namespace",
            "",
            "metadata.name: Required value",
        ));
    }
    let existing = namespaces(s, Some(&name)).is_ok();
    if existing || !s.namespaces.insert(name.clone()) {
        return Err(ApiError::already_exists("", "namespaces", &name));
    }
    Ok(namespace_doc(&name, "Active"))
}

/// `DELETE /api/v1/namespaces/{name}`: everything in it is deleted the normal way (pods
/// gracefully, finalizers honoured), as the namespace controller does.
pub fn delete_namespace(s: &mut State, name: &str) -> ApiResult<Value> {
    namespaces(s, Some(name))?;
    for res in Res::ALL.into_iter().filter(|r| r.def().namespaced) {
        for obj in s.store.list(res, Some(name)) {
            let _ = super::ops::delete(
                s,
                res,
                name,
                meta::name(&obj),
                &super::ops::DeleteOpts::default(),
            );
        }
    }
    s.namespaces.remove(name);
    Ok(namespace_doc(name, "Terminating"))
}
