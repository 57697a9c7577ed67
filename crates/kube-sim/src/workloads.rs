//! Deployment/Rollout and StatefulSet controllers.

use serde_json::{Map, Value, json};

use super::cluster::State;
use super::controllers::{owned_pods, pod_from_template, set_status};
use super::meta;
use super::ops;
use super::pods;
use super::resources::Res;
use crate::json::Fields;

/// `pod-template-hash` for Deployments, `rollouts-pod-template-hash` for Argo Rollouts.
fn hash_label(res: Res) -> &'static str {
    if res == Res::Rollout {
        "rollouts-pod-template-hash"
    } else {
        "pod-template-hash"
    }
}

/// FNV-1a over the template, encoded like `rand.SafeEncodeString` does.
pub fn template_hash(template: &Value) -> String {
    let mut hash: u32 = 0x811c_9dc5;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            hash ^= u32::from(*b);
            hash = hash.wrapping_mul(0x0100_0193);
        }
    };
    canonical_bytes(template, &mut feed);
    hash.to_string()
        .bytes()
        .map(|d| meta::name_char(u64::from(d)))
        .collect()
}

/// Serialize with sorted keys, whatever map order serde_json was built with.
fn canonical_bytes(v: &Value, feed: &mut impl FnMut(&[u8])) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            for k in keys {
                feed(k.as_bytes());
                canonical_bytes(&map[k], feed);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| canonical_bytes(i, feed)),
        other => feed(other.to_string().as_bytes()),
    }
}

/// ReplicaSets whose controller is `owner`.
fn owned_replica_sets(s: &State, owner: &Value) -> Vec<Value> {
    s.store
        .iter(Res::ReplicaSet)
        .filter(|rs| meta::namespace(rs) == meta::namespace(owner))
        .filter(|rs| meta::controller_of(rs).is_some_and(|(_, _, _, uid)| uid == meta::uid(owner)))
        .cloned()
        .collect()
}

/// One ReplicaSet per template. A new template rolls out as the real controller does it: the
/// new ReplicaSet grows within `maxSurge`, old ones shrink only while `maxUnavailable` allows,
/// so a rollout whose new pods never become ready leaves the old replicas serving.
pub fn sync_deployment(s: &mut State, res: Res, d: &Value) {
    if meta::is_terminating(d) {
        return;
    }
    let ns = meta::namespace(d).to_string();
    let want = meta::replicas(d, "/spec/replicas").max(0);
    let hash = template_hash(d.pointer("/spec/template").unwrap_or(&Value::Null));
    let current_name = format!("{}-{hash}", meta::name(d));
    let owned = owned_replica_sets(s, d);
    let Some(new) = owned.iter().find(|rs| meta::name(rs) == current_name) else {
        // A first ReplicaSet starts at full size; a later one grows step by step.
        let first = owned.is_empty() || recreates(d);
        let revision = newest_revision(&owned) + 1;
        let rs = new_replica_set(res, d, &current_name, &hash, revision, first);
        if let Err(e) = ops::create(s, Res::ReplicaSet, &ns, rs, false) {
            tracing::warn!(error = %e.message, "deployment could not create its replica set");
        }
        return;
    };
    // As the real controller does on every sync: the new ReplicaSet carries the Deployment's
    // annotations (an opt-out set on the Deployment shows on its ReplicaSet too).
    let mut annotated = new.clone();
    if copy_annotations(d, &mut annotated) {
        s.store.update(Res::ReplicaSet, annotated.clone());
    }
    let new = &annotated;
    stamp_revision(s, res, d, new, &owned);
    let old: Vec<&Value> = owned
        .iter()
        .filter(|rs| meta::name(rs) != current_name)
        .collect();
    let spec = |rs: &Value| meta::replicas(rs, "/spec/replicas");
    let old_total: i64 = old.iter().map(|rs| spec(rs)).sum();
    if recreates(d) || want == 0 || old_total == 0 {
        for rs in old.iter().filter(|rs| spec(rs) != 0) {
            set_replicas(s, rs, 0);
        }
        if spec(new) != want {
            set_replicas(s, new, want);
        }
        return;
    }
    let (surge, unavailable) = rolling_bounds(d, want);
    let total = old_total + spec(new);
    if spec(new) < want && total < want + surge {
        set_replicas(s, new, (spec(new) + want + surge - total).min(want));
        return;
    }
    let available = |rs: &Value| {
        rs.pointer("/status/availableReplicas")
            .and_then(Value::as_i64)
            .unwrap_or(0)
    };
    let new_unavailable = (spec(new) - available(new)).max(0);
    let mut may_drop = total - (want - unavailable) - new_unavailable;
    for rs in old {
        if may_drop <= 0 {
            break;
        }
        let drop = spec(rs).min(may_drop);
        if drop > 0 {
            set_replicas(s, rs, spec(rs) - drop);
            may_drop -= drop;
        }
    }
}

const REVISION: &str = "deployment.kubernetes.io/revision";

/// The revision annotation of a Deployment or ReplicaSet; 0 without one.
fn revision_of(rs: &Value) -> u64 {
    rs.pointer("/metadata/annotations")
        .and_then(|a| a.get(REVISION))
        .and_then(Value::as_str)
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

fn newest_revision(owned: &[Value]) -> u64 {
    owned.iter().map(revision_of).max().unwrap_or(0)
}

/// As the real controller does: the current ReplicaSet holds the newest revision (a rollback
/// makes an old one current again under a new number), and the Deployment names it.
fn stamp_revision(s: &mut State, res: Res, d: &Value, new: &Value, owned: &[Value]) {
    let others = owned
        .iter()
        .filter(|rs| meta::name(rs) != meta::name(new))
        .map(revision_of)
        .max()
        .unwrap_or(0);
    let mut revision = revision_of(new);
    if revision <= others {
        revision = others + 1;
        s.store
            .update(Res::ReplicaSet, with_revision(new, revision));
    }
    if revision_of(d) != revision {
        s.store.update(res, with_revision(d, revision));
    }
}

/// `object` with its revision annotation set to `revision`.
fn with_revision(object: &Value, revision: u64) -> Value {
    let mut stamped = object.clone();
    stamped
        .field("metadata")
        .field("annotations")
        .set(REVISION, json!(revision.to_string()));
    stamped
}

fn recreates(d: &Value) -> bool {
    meta::str_at(d, "/spec/strategy/type") == "Recreate"
}

/// `maxSurge` and `maxUnavailable` as replica counts (defaults 25% each; surge rounds up,
/// unavailable down; never both zero).
fn rolling_bounds(d: &Value, want: i64) -> (i64, i64) {
    let count = |key: &str, round_up: bool| -> i64 {
        let value = d.pointer(&format!("/spec/strategy/rollingUpdate/{key}"));
        match value {
            Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
            Some(Value::String(p)) if p.ends_with('%') => {
                let percent: i64 = p.trim_end_matches('%').parse().unwrap_or(25);
                percent_of(want, percent, round_up)
            }
            _ => percent_of(want, 25, round_up),
        }
    };
    let surge = count("maxSurge", true);
    let unavailable = count("maxUnavailable", false);
    if surge == 0 && unavailable == 0 {
        (0, 1)
    } else {
        (surge, unavailable)
    }
}

fn percent_of(of: i64, percent: i64, round_up: bool) -> i64 {
    let scaled = of * percent;
    if round_up {
        (scaled + 99) / 100
    } else {
        scaled / 100
    }
}

fn set_replicas(s: &mut State, rs: &Value, replicas: i64) {
    let mut updated = rs.clone();
    updated.field("spec").set("replicas", json!(replicas));
    let generation = meta::replicas(rs, "/metadata/generation");
    meta::set_meta(&mut updated, "generation", json!(generation + 1));
    s.store.update(Res::ReplicaSet, updated);
}

/// Annotations the Deployment controller does not copy onto its ReplicaSets.
const NOT_COPIED: [&str; 5] = [
    "kubectl.kubernetes.io/last-applied-configuration",
    "deployment.kubernetes.io/revision",
    "deployment.kubernetes.io/revision-history",
    "deployment.kubernetes.io/desired-replicas",
    "deployment.kubernetes.io/max-replicas",
];

/// Copy `d`'s annotations onto `rs`, as kube-controller-manager does; whether any changed.
fn copy_annotations(d: &Value, rs: &mut Value) -> bool {
    let Some(from) = d
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
    else {
        return false;
    };
    let mut changed = false;
    for (key, value) in from
        .iter()
        .filter(|(k, _)| !NOT_COPIED.contains(&k.as_str()))
    {
        if rs.pointer("/metadata/annotations").and_then(|a| a.get(key)) != Some(value) {
            rs.field("metadata")
                .field("annotations")
                .set(key, value.clone());
            changed = true;
        }
    }
    changed
}

fn new_replica_set(
    res: Res,
    d: &Value,
    name: &str,
    hash: &str,
    revision: u64,
    full_size: bool,
) -> Value {
    let key = hash_label(res);
    let mut template = d.pointer("/spec/template").cloned().unwrap_or(json!({}));
    template
        .field("metadata")
        .field("labels")
        .set(key, json!(hash));
    let mut selector = d.pointer("/spec/selector").cloned().unwrap_or(json!({}));
    selector.field("matchLabels").set(key, json!(hash));
    let mut rs = json!({
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": name,
            "labels": template.pointer("/metadata/labels").cloned().unwrap_or(Value::Null),
            "annotations": {
                "deployment.kubernetes.io/revision": revision.to_string(),
                "deployment.kubernetes.io/desired-replicas": meta::replicas(d, "/spec/replicas").to_string(),
            },
            "ownerReferences": [meta::owner_ref(&res.api_version(), res.kind(), d)],
        },
        "spec": {
            "replicas": if full_size { meta::replicas(d, "/spec/replicas") } else { 0 },
            "selector": selector,
            "template": template,
        },
    });
    copy_annotations(d, &mut rs);
    rs
}

/// Deployment/Rollout status summed from its ReplicaSets.
pub fn deployment_status(s: &mut State, res: Res, d: &Value) {
    let owned = owned_replica_sets(s, d);
    let hash = template_hash(d.pointer("/spec/template").unwrap_or(&Value::Null));
    let current_name = format!("{}-{hash}", meta::name(d));
    let sum = |field: &str| -> i64 {
        owned
            .iter()
            .map(|rs| {
                rs.pointer(&format!("/status/{field}"))
                    .and_then(Value::as_i64)
                    .unwrap_or(0)
            })
            .sum()
    };
    let (replicas, ready) = (sum("replicas"), sum("readyReplicas"));
    let updated = owned
        .iter()
        .find(|rs| meta::name(rs) == current_name)
        .and_then(|rs| rs.pointer("/status/replicas").and_then(Value::as_i64))
        .unwrap_or(0);
    let want = meta::replicas(d, "/spec/replicas").max(0);
    let generation = d
        .pointer("/metadata/generation")
        .cloned()
        .unwrap_or(json!(1));
    let mut status = json!({
        "replicas": replicas,
        "updatedReplicas": updated,
        "readyReplicas": ready,
        "availableReplicas": ready,
    });
    if res == Res::Rollout {
        status.set("observedGeneration", json!(generation.to_string()));
        status.set("currentPodHash", json!(hash));
        status.set("stableRS", json!(hash));
        *status.field("phase") = json!(if ready >= want {
            "Healthy"
        } else {
            "Progressing"
        });
        status.set("selector", json!(selector_string(d)));
    } else {
        status.set("observedGeneration", generation);
        if replicas > ready {
            status.set("unavailableReplicas", json!(replicas - ready));
        }
        let available = ready >= want;
        *status.field("conditions") = json!([keep_time(
            d,
            "Available",
            available,
            if available {
                "MinimumReplicasAvailable"
            } else {
                "MinimumReplicasUnavailable"
            },
            &s.clock.stamp(),
        )]);
    }
    set_status(s, res, d, status);
}

/// A condition, keeping the stored transition time while its status is unchanged.
fn keep_time(obj: &Value, kind: &str, ok: bool, reason: &str, now: &str) -> Value {
    let status = if ok { "True" } else { "False" };
    let prev = obj
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| cs.iter().find(|c| meta::str_at(c, "/type") == kind))
        .filter(|c| meta::str_at(c, "/status") == status);
    let time = prev.map_or_else(
        || now.to_string(),
        |c| meta::str_at(c, "/lastTransitionTime").to_string(),
    );
    json!({
        "type": kind, "status": status, "reason": reason,
        "lastUpdateTime": time, "lastTransitionTime": time,
    })
}

/// `app=web,tier=front` from `spec.selector.matchLabels`.
pub fn selector_string(obj: &Value) -> String {
    let labels = obj
        .pointer("/spec/selector/matchLabels")
        .or_else(|| obj.pointer("/spec/selector"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    labels
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
        .collect::<Vec<_>>()
        .join(",")
}

/// Pods `<name>-0..n-1`; a missing ordinal is recreated once its old pod is fully gone.
pub fn sync_stateful_set(s: &mut State, sts: &Value) {
    if meta::is_terminating(sts) {
        return;
    }
    let (ns, name) = (
        meta::namespace(sts).to_string(),
        meta::name(sts).to_string(),
    );
    let want = meta::replicas(sts, "/spec/replicas").max(0);
    let revision = format!(
        "{name}-{}",
        template_hash(sts.pointer("/spec/template").unwrap_or(&Value::Null))
    );
    // OrderedReady, the default: an ordinal is made only once every lower one is Ready.
    let ordered = meta::str_at(sts, "/spec/podManagementPolicy") != "Parallel";
    for i in 0..want {
        let pod_name = format!("{name}-{i}");
        if s.store.get(Res::Pod, &ns, &pod_name).is_none() {
            let pod = stateful_pod(sts, &pod_name, i, &revision);
            if let Err(e) = ops::create(s, Res::Pod, &ns, pod, false) {
                tracing::warn!(error = %e.message, "stateful set could not create a pod");
            }
        }
        let ready = s
            .store
            .get(Res::Pod, &ns, &pod_name)
            .is_some_and(pods::is_ready);
        if ordered && !ready {
            break;
        }
    }
    let mut extra: Vec<(i64, Value)> = owned_pods(s, &ns, meta::uid(sts))
        .into_iter()
        .filter(pods::is_active)
        .filter_map(|p| {
            ordinal(&name, meta::name(&p))
                .filter(|o| *o >= want)
                .map(|o| (o, p))
        })
        .collect();
    extra.sort_by_key(|(o, _)| std::cmp::Reverse(*o));
    for (_, pod) in extra {
        let _ = pods::delete(s, pod, None);
    }
    stateful_status(s, sts, &revision);
}

fn ordinal(set: &str, pod: &str) -> Option<i64> {
    pod.strip_prefix(set)?.strip_prefix('-')?.parse().ok()
}

fn stateful_pod(sts: &Value, pod_name: &str, index: i64, revision: &str) -> Value {
    let mut labels = Map::new();
    labels.insert("statefulset.kubernetes.io/pod-name".into(), json!(pod_name));
    labels.insert(
        "apps.kubernetes.io/pod-index".into(),
        json!(index.to_string()),
    );
    labels.insert("controller-revision-hash".into(), json!(revision));
    let mut pod = pod_from_template(Res::StatefulSet, sts, Some(pod_name), &labels);
    pod.field("spec").set("hostname", json!(pod_name));
    if let Some(service) = sts.pointer("/spec/serviceName").and_then(Value::as_str) {
        pod.field("spec").set("subdomain", json!(service));
    }
    pod
}

fn stateful_status(s: &mut State, sts: &Value, revision: &str) {
    let active: Vec<Value> = owned_pods(s, meta::namespace(sts), meta::uid(sts))
        .into_iter()
        .filter(pods::is_active)
        .collect();
    let ready = active.iter().filter(|p| pods::is_ready(p)).count();
    let status = json!({
        "replicas": active.len(),
        "readyReplicas": ready,
        "currentReplicas": active.len(),
        "updatedReplicas": active.len(),
        "availableReplicas": ready,
        "currentRevision": revision,
        "updateRevision": revision,
        "collisionCount": 0,
        "observedGeneration": sts.pointer("/metadata/generation").cloned().unwrap_or(json!(1)),
    });
    set_status(s, Res::StatefulSet, sts, status);
}
