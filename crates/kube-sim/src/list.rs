//! LIST with consistent paging (`limit`/`continue`) and resourceVersion semantics, as
//! kube-apiserver's table has them: no `resourceVersion` is a quorum read from etcd (paged);
//! `resourceVersion=0` is "any" and answered from the watch cache, possibly stale, ignoring
//! `limit` (as servers without paged cache snapshots do); `resourceVersion=N` with
//! `resourceVersionMatch=NotOlderThan` (or without a limit) is answered from the watch cache
//! once it has reached N (the wait happens before, in `http`), paged; with a limit and no
//! match, or `Exact`, it is the exact snapshot N from etcd (410 once compacted).

use serde_json::{Value, json};

use super::cluster::State;
use super::meta;
use super::query::{Query, Selection, hex_decode, hex_encode};
use super::resources::Res;
use super::status::{ApiError, ApiResult};
use super::store::Key;
use crate::json::Fields;

const CONTINUE_TOO_OLD: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue value from the response to this error.";

pub fn list(s: &mut State, res: Res, ns: Option<&str>, q: &Query) -> ApiResult<Value> {
    let sel = Selection::from_query(q, res)?;
    let mut limit = q.int("limit")?.filter(|l| *l > 0).map(|l| l as usize);
    let (snapshot_rv, after, from) = start_point(s, q, limit.is_some())?;
    match from {
        From::Etcd => s.etcd_lists += 1,
        From::Cache { ignores_limit } => {
            s.cached_lists += 1;
            if ignores_limit {
                limit = None;
            }
        }
        From::Continue => {}
    }
    let snapshot = if snapshot_rv == s.store.rv() {
        None
    } else {
        match s.store.snapshot_at(res, snapshot_rv) {
            Some(map) => Some(map),
            None if from != From::Etcd && from != From::Continue => None,
            None => return Err(too_old(q, snapshot_rv, s)),
        }
    };
    let current = s.store.iter(res);
    let objects: Box<dyn Iterator<Item = &Value>> = match &snapshot {
        Some(map) => Box::new(map.values()),
        None => Box::new(current),
    };
    let mut matching = objects
        .filter(|o| ns.is_none_or(|n| meta::namespace(o) == n))
        .filter(|o| after.as_ref().is_none_or(|a| key(o) > *a))
        .filter(|o| sel.matches(o));
    let mut items: Vec<Value> = match limit {
        Some(l) => matching.by_ref().take(l).cloned().collect(),
        None => matching.by_ref().cloned().collect(),
    };
    let remaining = matching.count();
    let mut metadata = json!({ "resourceVersion": snapshot_rv.to_string() });
    if remaining > 0
        && let Some(last) = items.last()
    {
        let (lns, lname) = key(last);
        metadata.set(
            "continue",
            json!(hex_encode(&format!("{snapshot_rv}\u{0}{lns}\u{0}{lname}"))),
        );
        if sel.is_empty() {
            metadata.set("remainingItemCount", json!(remaining));
        }
    }
    if res != Res::Rollout {
        // Built-in lists carry no per-item apiVersion/kind; custom resources do.
        for item in &mut items {
            if let Some(map) = item.as_object_mut() {
                map.remove("apiVersion");
                map.remove("kind");
            }
        }
    }
    Ok(json!({
        "kind": format!("{}List", res.kind()),
        "apiVersion": res.api_version(),
        "metadata": metadata,
        "items": items,
    }))
}

fn key(obj: &Value) -> Key {
    (
        meta::namespace(obj).to_string(),
        meta::name(obj).to_string(),
    )
}

/// Where a list is answered from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum From {
    Etcd,
    Cache { ignores_limit: bool },
    Continue,
}

/// The resourceVersion a request asks the watch cache to have reached first, if any: a list
/// `NotOlderThan` N (explicitly, or with no limit), or a streaming list (N, or the current
/// version for a consistent one). Such a request waits for the cache, then gets
/// [`too_large`].
pub fn min_version(q: &Query, watch: bool, current: u64) -> Option<u64> {
    let rv = q.get("resourceVersion").unwrap_or("");
    let not_older = q.get("resourceVersionMatch") == Some("NotOlderThan");
    if watch {
        if !q.flag("sendInitialEvents") || !not_older {
            return None;
        }
        return match rv {
            "" => Some(current),
            "0" => None,
            n => n.parse().ok(),
        };
    }
    if q.get("continue").is_some_and(|c| !c.is_empty()) || rv.is_empty() || rv == "0" {
        return None;
    }
    let paged = q.get("limit").is_some_and(|l| !l.is_empty() && l != "0");
    let matching = q.get("resourceVersionMatch").filter(|m| !m.is_empty());
    (not_older || (matching.is_none() && !paged))
        .then(|| rv.parse().ok())
        .flatten()
}

/// kube-apiserver's answer when its watch cache did not reach a version in time.
pub fn too_large(wanted: u64, current: u64) -> ApiError {
    let mut e = ApiError::timeout(format!(
        "Too large resource version: {wanted}, current: {current}"
    ));
    e.details.retry_after = Some(1);
    e.details.causes = vec![json!({
        "reason": "ResourceVersionTooLarge",
        "message": "Too large resource version",
    })];
    e
}

fn invalid_options(why: &str) -> ApiError {
    ApiError::invalid("meta.k8s.io", "ListOptions", "", why)
}

/// The version to list at, the key to continue after, and where the answer comes from.
fn start_point(s: &State, q: &Query, paged: bool) -> ApiResult<(u64, Option<Key>, From)> {
    let current = s.store.rv();
    let rv = q.get("resourceVersion").filter(|v| !v.is_empty());
    let matching = q.get("resourceVersionMatch").filter(|v| !v.is_empty());
    if let Some(token) = q.get("continue").filter(|c| !c.is_empty()) {
        // `resourceVersion=0` beside a continue token is tolerated (and ignored).
        if rv.is_some_and(|v| v != "0") {
            return Err(ApiError::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        if matching.is_some() {
            return Err(invalid_options(
                "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided",
            ));
        }
        let (at, after) = decode_continue(token)?;
        return Ok((at, after, From::Continue));
    }
    let exact = match matching {
        None => false,
        Some("Exact") => true,
        Some("NotOlderThan") => false,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "unsupported resourceVersionMatch: {other}"
            )));
        }
    };
    let Some(rv) = rv else {
        if matching.is_some() {
            return Err(invalid_options(
                "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        return Ok((current, None, From::Etcd));
    };
    if rv == "0" {
        if exact {
            return Err(invalid_options(
                "resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
        let at = s.watch_cache_rv();
        return Ok((
            at,
            None,
            From::Cache {
                ignores_limit: true,
            },
        ));
    }
    let wanted: u64 = rv
        .parse()
        .map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv}")))?;
    if exact || (paged && matching.is_none()) {
        if wanted > current {
            return Err(too_large(wanted, current));
        }
        return Ok((wanted, None, From::Etcd));
    }
    // Not older than `wanted`: the wait for the cache came first; it either reached it or not.
    let cache = s.watch_cache_rv();
    if wanted > cache {
        return Err(too_large(wanted, cache));
    }
    Ok((
        cache,
        None,
        From::Cache {
            ignores_limit: false,
        },
    ))
}

fn decode_continue(token: &str) -> ApiResult<(u64, Option<Key>)> {
    let bad = || {
        ApiError::bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        )
    };
    let raw = hex_decode(token).ok_or_else(bad)?;
    let mut parts = raw.splitn(3, '\u{0}');
    let rv: u64 = parts.next().and_then(|r| r.parse().ok()).ok_or_else(bad)?;
    let ns = parts.next().ok_or_else(bad)?.to_string();
    let name = parts.next().ok_or_else(bad)?.to_string();
    Ok((rv, Some((ns, name))))
}

fn too_old(q: &Query, rv: u64, s: &State) -> ApiError {
    if q.get("continue").is_some() {
        ApiError::expired(CONTINUE_TOO_OLD)
    } else {
        ApiError::expired(format!(
            "too old resource version: {rv} ({})",
            s.store.compacted_rv()
        ))
    }
}
