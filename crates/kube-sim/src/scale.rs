//! The `scale` subresource (`autoscaling/v1` Scale).

use serde_json::{Value, json};

use super::cluster::State;
use super::meta;
use super::ops;
use super::patch::{self, PatchKind};
use super::resources::Res;
use super::status::{ApiError, ApiResult};
use super::workloads::selector_string;
use crate::json::Fields;

pub fn get(s: &State, res: Res, ns: &str, name: &str) -> ApiResult<Value> {
    Ok(to_scale(res, &ops::get(s, res, ns, name)?))
}

fn to_scale(res: Res, obj: &Value) -> Value {
    let m = |k: &str| {
        obj.pointer(&format!("/metadata/{k}"))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let status_replicas = obj
        .pointer("/status/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let selector = if res == Res::Rollout {
        obj.pointer("/status/selector")
            .and_then(Value::as_str)
            .map(String::from)
    } else {
        Some(selector_string(obj))
    };
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": m("name"),
            "namespace": m("namespace"),
            "uid": m("uid"),
            "resourceVersion": m("resourceVersion"),
            "creationTimestamp": m("creationTimestamp"),
        },
        "spec": { "replicas": meta::replicas(obj, "/spec/replicas") },
        "status": { "replicas": status_replicas, "selector": selector.unwrap_or_default() },
    })
}

/// PATCH `.../scale`: patch the Scale view, then write its replicas through.
pub fn patch(
    s: &mut State,
    res: Res,
    ns: &str,
    name: &str,
    kind: PatchKind,
    body: &Value,
) -> ApiResult<Value> {
    let mut scale = get(s, res, ns, name)?;
    patch::apply(kind, &mut scale, body)
        .map_err(|why| ApiError::invalid("autoscaling", "Scale", name, &why))?;
    write(s, res, ns, name, &scale)
}

/// PUT `.../scale`.
pub fn update(s: &mut State, res: Res, ns: &str, name: &str, body: &Value) -> ApiResult<Value> {
    write(s, res, ns, name, body)
}

fn write(s: &mut State, res: Res, ns: &str, name: &str, scale: &Value) -> ApiResult<Value> {
    let old = ops::get(s, res, ns, name)?;
    ops::check_version(res, &old, meta::str_at(scale, "/metadata/resourceVersion"))?;
    let replicas = match scale.pointer("/spec/replicas") {
        None | Some(Value::Null) => 0,
        Some(v) => v
            .as_i64()
            .ok_or_else(|| ApiError::bad_request("spec.replicas must be an integer"))?,
    };
    if replicas < 0 {
        let why =
            format!("spec.replicas: Invalid value: {replicas}: must be greater than or equal to 0");
        return Err(ApiError::invalid("autoscaling", "Scale", name, &why));
    }
    let mut new = old.clone();
    new.field("spec").set("replicas", json!(replicas));
    if old.get("spec") != new.get("spec") {
        let generation = meta::replicas(&old, "/metadata/generation");
        meta::set_meta(&mut new, "generation", json!(generation + 1));
    }
    let stored = ops::commit(s, res, &old, new)?;
    Ok(to_scale(res, &stored))
}
