//! Object endpoints: verbs on `/…/{plural}[/{name}[/{sub}]]`.

use http::{Method, StatusCode};
use serde_json::{Value, json};

use super::cluster::StreamingLists;
use super::meta;
use super::ops::{self, DeleteOpts};
use super::patch::PatchKind;
use super::query::{self, Query, Selection};
use super::reply::{Ctx, Reply};
use super::resources::Res;
use super::router::Target;
use super::status::{ApiError, ApiResult};
use super::watch::{self, WatchSpec};
use super::{eviction, extras, list, scale};
use crate::json::Fields;

pub fn handle(ctx: &Ctx, t: &Target, watch: bool) -> ApiResult<Reply> {
    let ns = t.namespace.as_deref().unwrap_or("");
    let res = t.res;
    let ok = |v: Value| Ok(Reply::Json(StatusCode::OK, v));
    let created = |v: Value| Ok(Reply::Json(StatusCode::CREATED, v));
    let c = &ctx.cluster;
    // Cluster-wide paths of namespaced resources only serve reads.
    if res.def().namespaced && t.namespace.is_none() && ctx.method != Method::GET {
        return Err(ApiError::method_not_allowed());
    }
    match (&ctx.method, t.name.as_deref(), t.sub.as_deref()) {
        (&Method::GET, name, None) if watch => start_watch(ctx, t, name),
        (&Method::GET, None, None) => {
            ok(c.read(|s| list::list(s, res, t.namespace.as_deref(), &ctx.query))?)
        }
        (&Method::GET, Some(name), None | Some("status")) => {
            ok(c.read(|s| ops::get(s, res, ns, name).map(|v| s.faults.served(res, v)))?)
        }
        (&Method::GET, Some(name), Some("scale")) => ok(c.read(|s| scale::get(s, res, ns, name))?),
        (&Method::GET, Some(name), Some("log")) if res == Res::Pod => {
            let text = c.read(|s| super::logs::get(s, ns, name, &ctx.query))?;
            Ok(Reply::Text(text))
        }
        (&Method::POST, None, None) => {
            let body = ctx.json()?;
            let dry = ctx.query.dry_run();
            created(c.mutate(|s| ops::create(s, res, ns, body, dry))?)
        }
        (&Method::POST, Some(name), Some("eviction")) => {
            let body = ctx.json()?;
            created(c.mutate(|s| eviction::evict(s, ns, name, &body))?)
        }
        (&Method::PUT, Some(name), sub @ (None | Some("status"))) => {
            let body = ctx.json()?;
            let status_only = sub.is_some();
            ok(c.mutate(|s| ops::update(s, res, ns, name, body, status_only))?)
        }
        (&Method::PUT, Some(name), Some("scale")) => {
            let body = ctx.json()?;
            ok(c.mutate(|s| scale::update(s, res, ns, name, &body))?)
        }
        (&Method::PATCH, Some(name), sub) => {
            let kind = PatchKind::from_content_type(&ctx.content_type)
                .ok_or_else(|| ApiError::unsupported_media_type(&ctx.content_type))?;
            let body = ctx.json()?;
            if kind != PatchKind::Json && !body.is_object() {
                return Err(ApiError::bad_request("a merge patch must be a JSON object"));
            }
            match sub {
                Some("scale") => ok(c.mutate(|s| scale::patch(s, res, ns, name, kind, &body))?),
                Some("status") => {
                    ok(c.mutate(|s| ops::patch(s, res, ns, name, kind, &body, true))?)
                }
                None => ok(c.mutate(|s| ops::patch(s, res, ns, name, kind, &body, false))?),
                Some(_) => Err(ApiError::method_not_allowed()),
            }
        }
        (&Method::DELETE, Some(name), None) => {
            let opts = delete_opts(&ctx.query, &ctx.body)?;
            ok(c.mutate(|s| ops::delete(s, res, ns, name, &opts))?)
        }
        (&Method::DELETE, None, None) => delete_collection(ctx, res, t.namespace.as_deref()),
        _ => Err(ApiError::method_not_allowed()),
    }
}

fn start_watch(ctx: &Ctx, t: &Target, name: Option<&str>) -> ApiResult<Reply> {
    let q = &ctx.query;
    let mut selection = Selection::from_query(q, t.res)?;
    if let Some(name) = name {
        let by_name = format!("metadata.name={name}");
        selection.fields =
            super::select::FieldSelector::parse(&by_name, t.res).map_err(ApiError::bad_request)?;
    }
    let mode = ctx.cluster.read(|s| s.streaming_lists);
    let asked = q.flag("sendInitialEvents");
    let matching = q.get("resourceVersionMatch").filter(|m| !m.is_empty());
    let invalid = |why: &str| ApiError::invalid("meta.k8s.io", "ListOptions", "", why);
    let send_initial_events = match mode {
        StreamingLists::Ignored => false,
        StreamingLists::Rejected if asked => {
            return Err(invalid(
                "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
            ));
        }
        StreamingLists::Rejected if matching.is_some() => {
            return Err(invalid(
                "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch",
            ));
        }
        StreamingLists::Rejected => false,
        StreamingLists::Served => {
            if asked && matching != Some("NotOlderThan") {
                return Err(invalid(
                    "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                ));
            }
            if asked && !q.flag("allowWatchBookmarks") {
                return Err(invalid(
                    "allowWatchBookmarks: Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true",
                ));
            }
            if !asked && matching.is_some() {
                return Err(invalid(
                    "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                ));
            }
            asked
        }
    };
    let after = match q
        .get("resourceVersion")
        .filter(|v| !v.is_empty() && *v != "0")
    {
        _ if send_initial_events => None,
        None => None,
        Some(rv) => Some(
            rv.parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv}")))?,
        ),
    };
    let spec = WatchSpec {
        res: t.res,
        namespace: t.namespace.clone(),
        selection,
        after,
        bookmarks: q.flag("allowWatchBookmarks"),
        send_initial_events,
        timeout: query::timeout(q)?,
        protobuf: ctx.protobuf && t.res == Res::Pod,
    };
    let content_type = if spec.protobuf {
        crate::proto::PROTOBUF_WATCH
    } else {
        "application/json"
    };
    let body = watch::start(ctx.cluster.clone(), spec, ctx.shutdown.clone());
    Ok(Reply::Stream(body, content_type))
}

/// DeleteOptions from the query string and the JSON body (the body wins).
fn delete_opts(q: &Query, body: &[u8]) -> ApiResult<DeleteOpts> {
    let mut opts = DeleteOpts {
        grace: q.int("gracePeriodSeconds")?,
        orphan: q.get("propagationPolicy") == Some("Orphan")
            || q.get("orphanDependents") == Some("true"),
        dry_run: q.dry_run(),
        ..DeleteOpts::default()
    };
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(opts);
    }
    let b: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding DeleteOptions: {e}")))?;
    if let Some(g) = b.get("gracePeriodSeconds").filter(|g| !g.is_null()) {
        opts.grace = Some(
            g.as_i64()
                .ok_or_else(|| ApiError::bad_request("gracePeriodSeconds must be an integer"))?,
        );
    }
    opts.uid = b
        .pointer("/preconditions/uid")
        .and_then(Value::as_str)
        .map(String::from);
    opts.resource_version = b
        .pointer("/preconditions/resourceVersion")
        .and_then(Value::as_str)
        .map(String::from);
    if let Some(p) = b.get("propagationPolicy").and_then(Value::as_str) {
        opts.orphan = p == "Orphan";
    }
    if b.get("dryRun")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
    {
        opts.dry_run = true;
    }
    Ok(opts)
}

/// DELETE on a collection: every selected object, returned as a list.
fn delete_collection(ctx: &Ctx, res: Res, ns: Option<&str>) -> ApiResult<Reply> {
    let sel = Selection::from_query(&ctx.query, res)?;
    let opts = delete_opts(&ctx.query, &ctx.body)?;
    let deleted = ctx.cluster.mutate(|s| {
        let targets: Vec<(String, String)> = s
            .store
            .iter(res)
            .filter(|o| ns.is_none_or(|n| meta::namespace(o) == n) && sel.matches(o))
            .map(|o| (meta::namespace(o).to_string(), meta::name(o).to_string()))
            .collect();
        targets
            .iter()
            .filter_map(|(ns, name)| ops::delete(s, res, ns, name, &opts).ok())
            .filter(|v| meta::str_at(v, "/kind") != "Status")
            .collect::<Vec<Value>>()
    });
    let rv = ctx.cluster.resource_version();
    let list = json!({
        "kind": format!("{}List", res.kind()),
        "apiVersion": res.api_version(),
        "metadata": { "resourceVersion": rv.to_string() },
        "items": deleted,
    });
    Ok(Reply::Json(StatusCode::OK, list))
}

/// `events.k8s.io/v1`: stored as core events, converted both ways.
pub fn events_v1(ctx: &Ctx, ns: Option<&str>, name: Option<&str>) -> ApiResult<Reply> {
    let c = &ctx.cluster;
    let ns_str = ns.unwrap_or("");
    match (&ctx.method, name) {
        (&Method::GET, None) => {
            let mut list = c.read(|s| list::list(s, Res::Event, ns, &ctx.query))?;
            list.set("apiVersion", json!("events.k8s.io/v1"));
            if let Some(items) = list.get_mut("items").and_then(Value::as_array_mut) {
                items
                    .iter_mut()
                    .for_each(|i| *i = strip_type(extras::event_from_core(i)));
            }
            Ok(Reply::Json(StatusCode::OK, list))
        }
        (&Method::GET, Some(name)) => {
            let ev = c.read(|s| ops::get(s, Res::Event, ns_str, name))?;
            Ok(Reply::Json(StatusCode::OK, extras::event_from_core(&ev)))
        }
        (&Method::POST, None) if ns.is_some() => {
            let body = ctx.json()?;
            let dry = ctx.query.dry_run();
            let ev = c.mutate(|s| {
                ops::create(s, Res::Event, ns_str, extras::event_to_core(&body), dry)
            })?;
            Ok(Reply::Json(
                StatusCode::CREATED,
                extras::event_from_core(&ev),
            ))
        }
        (&Method::DELETE, Some(name)) if ns.is_some() => {
            let opts = delete_opts(&ctx.query, &ctx.body)?;
            Ok(Reply::Json(
                StatusCode::OK,
                c.mutate(|s| ops::delete(s, Res::Event, ns_str, name, &opts))?,
            ))
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}

fn strip_type(mut v: Value) -> Value {
    if let Some(m) = v.as_object_mut() {
        m.remove("apiVersion");
        m.remove("kind");
    }
    v
}
