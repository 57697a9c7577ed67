//! Generic object operations with the API server's semantics.

use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Value, json};

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{
    ConfigMap, Endpoints, Event, Node, Pod, ReplicationController, Service,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;

use super::cluster::State;
use super::meta;
use super::patch::{self, PatchKind};
use super::pods;
use super::resources::Res;
use super::status::{self, ApiError, ApiResult};
use crate::json::Fields;

/// Parsed `DeleteOptions` (query and body combined).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeleteOpts {
    pub grace: Option<i64>,
    pub uid: Option<String>,
    pub resource_version: Option<String>,
    pub orphan: bool,
    pub dry_run: bool,
}

pub fn not_found(res: Res, name: &str) -> ApiError {
    ApiError::not_found(res.group(), res.plural(), name)
}

pub fn get(s: &State, res: Res, ns: &str, name: &str) -> ApiResult<Value> {
    s.store
        .get(res, ns, name)
        .cloned()
        .ok_or_else(|| not_found(res, name))
}

pub fn create(s: &mut State, res: Res, ns: &str, body: Value, dry_run: bool) -> ApiResult<Value> {
    if s.namespaces_required && !ns.is_empty() && super::extras::namespaces(s, Some(ns)).is_err() {
        return Err(ApiError::not_found("", "namespaces", ns));
    }
    let mut obj = admit_new(s, res, ns, body)?;
    let name = meta::name(&obj).to_string();
    if s.store.get(res, ns, &name).is_some() {
        return Err(ApiError::already_exists(res.group(), res.plural(), &name));
    }
    if dry_run {
        return Ok(obj);
    }
    if res == Res::Pod {
        pods::prepare_create(&mut obj);
    }
    let created = s.store.insert(res, obj);
    if res == Res::Pod {
        pods::start(s, ns, &name);
    }
    Ok(created)
}

/// Check and default a new object's type and metadata.
fn admit_new(s: &mut State, res: Res, ns: &str, body: Value) -> ApiResult<Value> {
    if !body.is_object() {
        return Err(ApiError::bad_request(
            "the request body must be a JSON object",
        ));
    }
    let mut obj = canonical(res, check_type(res, body)?)?;
    let body_ns = meta::namespace(&obj).to_string();
    if !body_ns.is_empty() && body_ns != ns {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    let mut name = meta::name(&obj).to_string();
    if name.is_empty() {
        let prefix = meta::str_at(&obj, "/metadata/generateName").to_string();
        if prefix.is_empty() {
            let why = "metadata.name: Required value: name or generateName is required";
            return Err(ApiError::invalid(res.group(), res.kind(), "", why));
        }
        name = format!("{prefix}{}", s.name_suffix());
    }
    let uid = s.store.new_uid();
    let m = meta::meta_mut(&mut obj);
    m.insert("name".into(), json!(name));
    if res.def().namespaced {
        m.insert("namespace".into(), json!(ns));
    }
    m.insert("uid".into(), json!(uid));
    m.insert("creationTimestamp".into(), json!(s.clock.stamp()));
    for k in [
        "resourceVersion",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
    ] {
        m.remove(k);
    }
    // Objects with a spec count its changes; Pods, Events, Nodes and ConfigMaps do not.
    if !matches!(res, Res::Pod | Res::Event | Res::Node | Res::ConfigMap) {
        m.insert("generation".into(), json!(1));
    }
    Ok(obj)
}

/// Set `apiVersion`/`kind`, rejecting a body of another type.
fn check_type(res: Res, mut body: Value) -> ApiResult<Value> {
    if !body.is_object() {
        return Err(ApiError::bad_request(
            "the request body must be a JSON object",
        ));
    }
    let want_version = res.api_version();
    let version = meta::str_at(&body, "/apiVersion");
    if !version.is_empty() && version != want_version {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({version}) does not match the expected API version ({want_version})"
        )));
    }
    let kind = meta::str_at(&body, "/kind");
    if !kind.is_empty() && kind != res.kind() {
        return Err(ApiError::bad_request(format!(
            "Object kind {kind} does not match the expected kind {}",
            res.kind()
        )));
    }
    body.set("apiVersion", json!(want_version));
    body.set("kind", json!(res.kind()));
    Ok(body)
}

/// Decode into the typed object and back: rejects malformed bodies and drops unknown
/// fields, as the real server's decoder does.
pub fn canonical(res: Res, v: Value) -> ApiResult<Value> {
    fn roundtrip<T: DeserializeOwned + Serialize>(v: Value) -> ApiResult<Value> {
        let typed: T = serde_json::from_value(v)
            .map_err(|e| ApiError::bad_request(format!("error decoding request body: {e}")))?;
        serde_json::to_value(typed).map_err(|e| ApiError::internal(e.to_string()))
    }
    let mut v = v;
    // The API server defaults a workload's pod template as it defaults a pod (a custom
    // resource's template is left as written, as a real server leaves it).
    if matches!(
        res,
        Res::ReplicationController | Res::ReplicaSet | Res::Deployment | Res::StatefulSet
    ) {
        pods::default_template(&mut v);
    }
    match res {
        Res::Pod => roundtrip::<Pod>(v),
        Res::Node => roundtrip::<Node>(v),
        Res::Event => roundtrip::<Event>(v),
        Res::ReplicationController => roundtrip::<ReplicationController>(v),
        Res::ReplicaSet => roundtrip::<ReplicaSet>(v),
        Res::Deployment => roundtrip::<Deployment>(v),
        Res::StatefulSet => roundtrip::<StatefulSet>(v),
        Res::PodDisruptionBudget => roundtrip::<PodDisruptionBudget>(v),
        Res::Lease => roundtrip::<Lease>(v),
        Res::ConfigMap => roundtrip::<ConfigMap>(v),
        Res::Service => roundtrip::<Service>(v),
        Res::Endpoints => roundtrip::<Endpoints>(v),
        Res::Rollout => validate_custom(v),
    }
}

/// Custom resources have no Rust type; check the shape the controllers rely on.
fn validate_custom(v: Value) -> ApiResult<Value> {
    const OBJECTS: [&str; 8] = [
        "/metadata",
        "/spec",
        "/spec/selector",
        "/spec/selector/matchLabels",
        "/spec/template",
        "/spec/template/metadata",
        "/spec/template/metadata/labels",
        "/spec/template/spec",
    ];
    let invalid = |why: String| {
        ApiError::invalid(
            Res::Rollout.group(),
            Res::Rollout.kind(),
            meta::name(&v),
            &why,
        )
    };
    if let Some(p) = OBJECTS
        .iter()
        .find(|p| v.pointer(p).is_some_and(|x| !x.is_object() && !x.is_null()))
    {
        return Err(invalid(format!(
            "{}: Invalid value: must be an object",
            &p[1..].replace('/', ".")
        )));
    }
    if v.pointer("/spec/replicas")
        .is_some_and(|r| !r.is_i64() && !r.is_null())
    {
        return Err(invalid(
            "spec.replicas: Invalid value: must be an integer".into(),
        ));
    }
    Ok(v)
}

/// PUT: the whole object, or only its status.
pub fn update(
    s: &mut State,
    res: Res,
    ns: &str,
    name: &str,
    body: Value,
    status_only: bool,
) -> ApiResult<Value> {
    let old = get(s, res, ns, name)?;
    let body = check_type(res, body)?;
    let body_name = meta::name(&body);
    if !body_name.is_empty() && body_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    check_version(res, &old, meta::resource_version(&body))?;
    let new = merge_update(res, &old, body, status_only);
    commit(s, res, &old, canonical(res, new)?)
}

pub fn patch(
    s: &mut State,
    res: Res,
    ns: &str,
    name: &str,
    kind: PatchKind,
    body: &Value,
    status_only: bool,
) -> ApiResult<Value> {
    let old = get(s, res, ns, name)?;
    let mut patched = old.clone();
    patch::apply(kind, &mut patched, body)
        .map_err(|why| ApiError::invalid(res.group(), res.kind(), name, &why))?;
    if meta::resource_version(&patched) != meta::resource_version(&old) {
        check_version(res, &old, meta::resource_version(&patched))?;
    }
    if meta::name(&patched) != name || meta::namespace(&patched) != ns {
        let why = "metadata.name: Invalid value: the name and namespace of an object cannot change";
        return Err(ApiError::invalid(res.group(), res.kind(), name, why));
    }
    let new = merge_update(res, &old, check_type(res, patched)?, status_only);
    commit(s, res, &old, canonical(res, new)?)
}

/// Optimistic concurrency: a given resourceVersion must be the current one.
pub fn check_version(res: Res, old: &Value, wanted: &str) -> ApiResult<()> {
    if wanted.is_empty() || wanted == meta::resource_version(old) {
        return Ok(());
    }
    Err(ApiError::modified(
        res.group(),
        res.plural(),
        meta::name(old),
    ))
}

/// Combine the old object with the new body the way the update strategies do:
/// the main resource cannot change status, the status subresource only changes status,
/// and system metadata is never taken from the client.
fn merge_update(res: Res, old: &Value, body: Value, status_only: bool) -> Value {
    let mut new = if status_only {
        let mut n = old.clone();
        n.set("status", body.get("status").cloned().unwrap_or(Value::Null));
        n
    } else {
        let mut n = body;
        if res != Res::Event {
            n.set("status", old.get("status").cloned().unwrap_or(Value::Null));
        }
        n
    };
    if new.get("status").is_some_and(Value::is_null)
        && let Some(map) = new.as_object_mut()
    {
        map.remove("status");
    }
    let m = meta::meta_mut(&mut new);
    for k in [
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
    ] {
        match old.pointer(&format!("/metadata/{k}")) {
            Some(v) => m.insert(k.to_string(), v.clone()),
            None => m.remove(k),
        };
    }
    m.remove("resourceVersion");
    if old.get("spec") != new.get("spec") && old.pointer("/metadata/generation").is_some() {
        let generation = old
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(1);
        meta::set_meta(&mut new, "generation", json!(generation + 1));
    }
    new
}

/// Store an update unless nothing changed; remove a deleted object whose finalizers are done.
pub fn commit(s: &mut State, res: Res, old: &Value, mut new: Value) -> ApiResult<Value> {
    meta::set_meta(
        &mut new,
        "resourceVersion",
        json!(meta::resource_version(old)),
    );
    if new == *old {
        return Ok(new);
    }
    let old_finalizers = meta::finalizers(old);
    let added = meta::finalizers(&new)
        .iter()
        .any(|f| !old_finalizers.contains(f));
    if meta::is_terminating(old) && added {
        let why = "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted";
        return Err(ApiError::invalid(
            res.group(),
            res.kind(),
            meta::name(old),
            why,
        ));
    }
    let stored = s.store.update(res, new);
    if meta::is_terminating(&stored)
        && meta::finalizers(&stored).is_empty()
        && meta::deletion_grace(&stored).unwrap_or(0) == 0
    {
        let (ns, name) = (
            meta::namespace(&stored).to_string(),
            meta::name(&stored).to_string(),
        );
        return Ok(remove(s, res, &ns, &name).unwrap_or(stored));
    }
    Ok(stored)
}

/// Remove an object for good and let the garbage collector cascade to its dependents.
pub fn remove(s: &mut State, res: Res, ns: &str, name: &str) -> Option<Value> {
    let gone = s.store.remove(res, ns, name)?;
    super::controllers::collect_dependents(s, meta::uid(&gone));
    Some(gone)
}

pub fn delete(
    s: &mut State,
    res: Res,
    ns: &str,
    name: &str,
    opts: &DeleteOpts,
) -> ApiResult<Value> {
    let obj = get(s, res, ns, name)?;
    check_preconditions(res, &obj, opts)?;
    if opts.dry_run {
        return Ok(obj);
    }
    if opts.orphan {
        super::controllers::orphan_dependents(s, meta::uid(&obj));
    }
    if res == Res::Pod {
        return pods::delete(s, obj, opts.grace);
    }
    if !meta::finalizers(&obj).is_empty() {
        if meta::is_terminating(&obj) {
            return Ok(obj);
        }
        let mut marked = obj.clone();
        meta::set_meta(&mut marked, "deletionTimestamp", json!(s.clock.stamp()));
        meta::set_meta(&mut marked, "deletionGracePeriodSeconds", json!(0));
        return Ok(s.store.update(res, marked));
    }
    remove(s, res, ns, name);
    Ok(status::success(
        res.group(),
        res.plural(),
        name,
        meta::uid(&obj),
    ))
}

pub fn check_preconditions(res: Res, obj: &Value, opts: &DeleteOpts) -> ApiResult<()> {
    let name = meta::name(obj);
    if let Some(uid) = opts.uid.as_deref().filter(|u| *u != meta::uid(obj)) {
        let why = format!(
            "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
            meta::uid(obj)
        );
        return Err(ApiError::conflict(res.group(), res.plural(), name, &why));
    }
    if let Some(rv) = opts
        .resource_version
        .as_deref()
        .filter(|v| *v != meta::resource_version(obj))
    {
        let why = format!(
            "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
            meta::resource_version(obj)
        );
        return Err(ApiError::conflict(res.group(), res.plural(), name, &why));
    }
    Ok(())
}
