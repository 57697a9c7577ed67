//! Discovery documents: `/api`, `/api/v1`, `/apis`, `/apis/{group}[/{version}]`, `/version`.

use serde_json::{Value, json};

use super::resources::Res;
use crate::json::Fields;

/// Groups other than core, with their single served version.
const GROUPS: [(&str, &str); 6] = [
    ("apps", "v1"),
    ("coordination.k8s.io", "v1"),
    ("events.k8s.io", "v1"),
    ("policy", "v1"),
    ("authorization.k8s.io", "v1"),
    ("argoproj.io", "v1alpha1"),
];

pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "gitVersion": "v1.33.0-sim",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-04-23T00:00:00Z",
        "goVersion": "go1.24.2",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

pub fn core_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{ "clientCIDR": "0.0.0.0/0", "serverAddress": server_address }],
    })
}

fn group_doc(group: &str, version: &str) -> Value {
    let gv = json!({ "groupVersion": format!("{group}/{version}"), "version": version });
    json!({ "name": group, "versions": [gv.clone()], "preferredVersion": gv })
}

pub fn groups() -> Value {
    let groups: Vec<Value> = GROUPS.iter().map(|(g, v)| group_doc(g, v)).collect();
    json!({ "kind": "APIGroupList", "apiVersion": "v1", "groups": groups })
}

pub fn group(name: &str) -> Option<Value> {
    let (g, v) = GROUPS.iter().find(|(g, _)| *g == name)?;
    let mut doc = group_doc(g, v);
    doc.set("kind", json!("APIGroup"));
    doc.set("apiVersion", json!("v1"));
    Some(doc)
}

/// `APIResourceList` for a group version ("" group = core).
pub fn resources(group: &str, version: &str) -> Option<Value> {
    let served = group.is_empty() && version == "v1" || GROUPS.contains(&(group, version));
    if !served {
        return None;
    }
    let mut list: Vec<Value> = Vec::new();
    for res in Res::ALL
        .into_iter()
        .filter(|r| r.group() == group && r.def().version == version)
    {
        list.push(resource_doc(res));
        for sub in res.def().subresources {
            list.push(subresource_doc(res, sub));
        }
    }
    if group.is_empty() {
        list.push(simple("namespaces", "Namespace", false, &["get", "list"]));
    }
    if group == "events.k8s.io" {
        list.push(simple("events", "Event", true, Res::Event.verbs()));
    }
    if group == "authorization.k8s.io" {
        list.push(simple(
            "selfsubjectaccessreviews",
            "SelfSubjectAccessReview",
            false,
            &["create"],
        ));
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(
        json!({ "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": list }),
    )
}

fn resource_doc(res: Res) -> Value {
    let d = res.def();
    json!({
        "name": d.plural,
        "singularName": d.singular,
        "namespaced": d.namespaced,
        "kind": d.kind,
        "verbs": res.verbs(),
        "shortNames": d.short_names,
    })
}

fn subresource_doc(res: Res, sub: &str) -> Value {
    let d = res.def();
    let (kind, group, version, verbs): (&str, &str, &str, &[&str]) = match sub {
        "scale" => ("Scale", "autoscaling", "v1", &["get", "patch", "update"]),
        "eviction" => ("Eviction", "policy", "v1", &["create"]),
        "proxy" => (
            "ServiceProxyOptions",
            "",
            "",
            &["create", "delete", "get", "patch", "update"],
        ),
        _ => (d.kind, "", "", &["get", "patch", "update"]),
    };
    let mut doc = json!({
        "name": format!("{}/{sub}", d.plural),
        "singularName": "",
        "namespaced": d.namespaced,
        "kind": kind,
        "verbs": verbs,
    });
    if !group.is_empty() {
        doc.set("group", json!(group));
        doc.set("version", json!(version));
    }
    doc
}

fn simple(name: &str, kind: &str, namespaced: bool, verbs: &[&str]) -> Value {
    json!({ "name": name, "singularName": "", "namespaced": namespaced, "kind": kind, "verbs": verbs })
}
