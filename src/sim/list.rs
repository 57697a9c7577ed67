//! LIST with consistent paging (`limit`/`continue`) and resourceVersion semantics.

use serde_json::{Value, json};

use super::cluster::State;
use super::meta;
use super::query::{Query, Selection, hex_decode, hex_encode};
use super::resources::Res;
use super::status::{ApiError, ApiResult};
use super::store::Key;

const CONTINUE_TOO_OLD: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue value from the response to this error.";

pub fn list(s: &State, res: Res, ns: Option<&str>, q: &Query) -> ApiResult<Value> {
    let sel = Selection::from_query(q, res)?;
    let limit = q.int("limit")?.filter(|l| *l > 0).map(|l| l as usize);
    let (snapshot_rv, after) = start_point(s, q, limit.is_some())?;
    let snapshot = if snapshot_rv == s.store.rv() {
        None
    } else {
        Some(
            s.store
                .snapshot_at(res, snapshot_rv)
                .ok_or_else(|| too_old(q, snapshot_rv, s))?,
        )
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
        metadata["continue"] = json!(hex_encode(&format!("{snapshot_rv}\u{0}{lns}\u{0}{lname}")));
        if sel.is_empty() {
            metadata["remainingItemCount"] = json!(remaining);
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

/// The version to list at and the key to continue after.
fn start_point(s: &State, q: &Query, paged: bool) -> ApiResult<(u64, Option<Key>)> {
    let current = s.store.rv();
    let rv = q.get("resourceVersion").filter(|v| !v.is_empty());
    if let Some(token) = q.get("continue").filter(|c| !c.is_empty()) {
        if rv.is_some() {
            return Err(ApiError::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        return decode_continue(token);
    }
    let Some(rv) = rv else {
        return Ok((current, None));
    };
    let wanted: u64 = rv
        .parse()
        .map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv}")))?;
    let exact = match q.get("resourceVersionMatch") {
        Some("Exact") => true,
        Some("NotOlderThan") | None | Some("") => {
            paged && wanted != 0 && q.get("resourceVersionMatch").is_none()
        }
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "unsupported resourceVersionMatch: {other}"
            )));
        }
    };
    if wanted > current {
        return Err(ApiError::timeout(format!(
            "Too large resource version: {wanted}, current: {current}"
        )));
    }
    Ok((if exact { wanted } else { current }, None))
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
