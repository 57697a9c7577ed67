//! PodDisruptionBudgets (the disruption controller) and the Eviction subresource.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::cluster::State;
use super::controllers::set_status;
use super::meta;
use super::ops::{self, DeleteOpts};
use super::pods;
use super::resources::Res;
use super::select::LabelSelector;
use super::status::{ApiError, ApiResult};

/// What a budget allows right now.
struct Budget {
    expected: i64,
    healthy: i64,
    desired: i64,
}

impl Budget {
    fn allowed(&self) -> i64 {
        (self.healthy - self.desired).max(0)
    }
}

/// `intOrString` against a total: ints as is, percentages rounded up.
fn scaled(v: &Value, total: i64) -> i64 {
    match v {
        Value::Number(n) => n.as_i64().unwrap_or(0),
        Value::String(p) => {
            let pct: i64 = p.trim_end_matches('%').parse().unwrap_or(0);
            (pct * total + 99) / 100
        }
        _ => 0,
    }
}

fn matching_pods(s: &State, pdb: &Value) -> Vec<Value> {
    let sel = pdb.pointer("/spec/selector");
    // A budget with no selector selects nothing (policy/v1 semantics for a null selector).
    if sel.is_none() {
        return Vec::new();
    }
    let sel = LabelSelector::from_object(sel);
    s.store
        .iter(Res::Pod)
        .filter(|p| meta::namespace(p) == meta::namespace(pdb))
        .filter(|p| sel.matches(&meta::labels(p)))
        .cloned()
        .collect()
}

/// Expected pods: the pod count for an integer minAvailable, else the owners' replicas.
fn budget(s: &State, pdb: &Value) -> Budget {
    let pods = matching_pods(s, pdb);
    let active: Vec<&Value> = pods.iter().filter(|p| !meta::is_terminating(p)).collect();
    let healthy = active.iter().filter(|p| pods::is_ready(p)).count() as i64;
    let min_available = pdb.pointer("/spec/minAvailable");
    let expected = if min_available.is_some_and(Value::is_number) {
        active.len() as i64
    } else {
        owners_scale(s, &pods).unwrap_or(active.len() as i64)
    };
    let desired = match (min_available, pdb.pointer("/spec/maxUnavailable")) {
        (Some(min), _) => scaled(min, expected),
        (None, Some(max)) => (expected - scaled(max, expected)).max(0),
        (None, None) => 0,
    };
    Budget {
        expected,
        healthy,
        desired,
    }
}

/// Sum of `spec.replicas` over the distinct controllers of the pods.
fn owners_scale(s: &State, pods: &[Value]) -> Option<i64> {
    let owners: BTreeSet<(String, String, String)> = pods
        .iter()
        .filter_map(|p| {
            meta::controller_of(p)
                .map(|(av, k, n, _)| (av, k, format!("{}/{n}", meta::namespace(p))))
        })
        .collect();
    let mut total = 0;
    for (api_version, kind, key) in &owners {
        let res = Res::by_kind(api_version, kind)?;
        let (ns, name) = key.split_once('/')?;
        let owner = s.store.get(res, ns, name)?;
        total += meta::replicas(owner, "/spec/replicas");
    }
    (!owners.is_empty()).then_some(total)
}

/// The disruption controller: keep every budget's status current.
pub fn sync_pdbs(s: &mut State) {
    for pdb in s.store.list(Res::PodDisruptionBudget, None) {
        let b = budget(s, &pdb);
        let allowed = b.allowed();
        let status = json!({
            "observedGeneration": pdb.pointer("/metadata/generation").cloned().unwrap_or(json!(1)),
            "disruptionsAllowed": allowed,
            "currentHealthy": b.healthy,
            "desiredHealthy": b.desired,
            "expectedPods": b.expected,
            "conditions": [condition(&pdb, allowed > 0, &s.clock.stamp())],
        });
        set_status(s, Res::PodDisruptionBudget, &pdb, status);
    }
}

fn condition(pdb: &Value, ok: bool, now: &str) -> Value {
    let status = if ok { "True" } else { "False" };
    let reason = if ok {
        "SufficientPods"
    } else {
        "InsufficientPods"
    };
    let prev_time = pdb
        .pointer("/status/conditions/0")
        .filter(|c| meta::str_at(c, "/status") == status)
        .map(|c| meta::str_at(c, "/lastTransitionTime").to_string());
    json!({
        "type": "DisruptionAllowed",
        "status": status,
        "reason": reason,
        "message": "",
        "observedGeneration": pdb.pointer("/metadata/generation").cloned().unwrap_or(json!(1)),
        "lastTransitionTime": prev_time.unwrap_or_else(|| now.to_string()),
    })
}

/// POST `pods/{name}/eviction`: delete gracefully unless a budget forbids it.
pub fn evict(s: &mut State, ns: &str, name: &str, body: &Value) -> ApiResult<Value> {
    let body_name = meta::name(body);
    if !body_name.is_empty() && body_name != name {
        return Err(ApiError::bad_request(format!(
            "name in URL does not match name in Eviction object: {name} != {body_name}"
        )));
    }
    let pod = ops::get(s, Res::Pod, ns, name)?;
    let opts = delete_options(body);
    ops::check_preconditions(Res::Pod, &pod, &opts)?;
    let phase = meta::str_at(&pod, "/status/phase");
    // Pods that are finished, not yet running, or already going are not protected.
    let protected = !meta::is_terminating(&pod) && phase == "Running";
    if protected {
        check_budgets(s, &pod)?;
    }
    if !opts.dry_run {
        pods::delete(s, pod, opts.grace)?;
    }
    Ok(json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": 201,
    }))
}

fn check_budgets(s: &State, pod: &Value) -> ApiResult<()> {
    let labels = meta::labels(pod);
    let budgets: Vec<Value> = s
        .store
        .iter(Res::PodDisruptionBudget)
        .filter(|b| meta::namespace(b) == meta::namespace(pod))
        .filter(|b| b.pointer("/spec/selector").is_some())
        .filter(|b| LabelSelector::from_object(b.pointer("/spec/selector")).matches(&labels))
        .cloned()
        .collect();
    if budgets.len() > 1 {
        return Err(ApiError::internal(
            "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
        ));
    }
    let Some(pdb) = budgets.first() else {
        return Ok(());
    };
    let b = budget(s, pdb);
    if b.allowed() > 0 {
        return Ok(());
    }
    let mut err = ApiError::too_many_requests(
        "Cannot evict pod as it would violate the pod's disruption budget.",
        0,
    );
    // A budget violation suggests no retry time, unlike throttling.
    err.details.retry_after = None;
    err.details.causes = vec![json!({
        "type": "DisruptionBudget",
        "message": format!(
            "The disruption budget {} needs {} healthy pods and has {} currently",
            meta::name(pdb), b.desired, b.healthy
        ),
    })];
    Err(err)
}

/// `deleteOptions` from an Eviction body (kube-rs' snake_case key is ignored, as a real server does).
fn delete_options(body: &Value) -> DeleteOpts {
    let o = body.get("deleteOptions").unwrap_or(&Value::Null);
    DeleteOpts {
        grace: o.get("gracePeriodSeconds").and_then(Value::as_i64),
        uid: o
            .pointer("/preconditions/uid")
            .and_then(Value::as_str)
            .map(String::from),
        resource_version: o
            .pointer("/preconditions/resourceVersion")
            .and_then(Value::as_str)
            .map(String::from),
        orphan: false,
        dry_run: o
            .get("dryRun")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty()),
    }
}
