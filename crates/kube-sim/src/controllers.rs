//! Controller stand-ins: ReplicaSet/RC, Deployment/Rollout, StatefulSet, and the GC.
//! They run synchronously after every write, so tests see a settled cluster.

use serde_json::{Map, Value, json};

use super::cluster::State;
use super::meta;
use super::ops::{self, DeleteOpts};
use super::pods;
use super::resources::Res;
use super::{eviction, workloads};
use crate::json::Fields;

const WORKLOADS: [Res; 6] = [
    Res::Deployment,
    Res::Rollout,
    Res::ReplicaSet,
    Res::ReplicationController,
    Res::StatefulSet,
    Res::PodDisruptionBudget,
];

/// Run every controller until nothing changes (bounded, in case two ever disagree; a rolling
/// update of a large Deployment takes a few rounds per step).
pub fn reconcile(s: &mut State) {
    if WORKLOADS.iter().all(|r| s.store.count(*r) == 0) {
        return;
    }
    for _ in 0..64 {
        let before = s.store.rv();
        for res in [Res::Deployment, Res::Rollout] {
            for d in s.store.list(res, None) {
                workloads::sync_deployment(s, res, &d);
            }
        }
        for res in [Res::ReplicaSet, Res::ReplicationController] {
            for rs in s.store.list(res, None) {
                sync_replica_set(s, res, &rs);
            }
        }
        for sts in s.store.list(Res::StatefulSet, None) {
            workloads::sync_stateful_set(s, &sts);
        }
        for res in [Res::Deployment, Res::Rollout] {
            for d in s.store.list(res, None) {
                workloads::deployment_status(s, res, &d);
            }
        }
        eviction::sync_pdbs(s);
        if s.store.rv() == before {
            return;
        }
    }
}

/// Pods whose controller reference points at `owner_uid`.
pub fn owned_pods(s: &State, ns: &str, owner_uid: &str) -> Vec<Value> {
    s.store
        .iter(Res::Pod)
        .filter(|p| meta::namespace(p) == ns)
        .filter(|p| meta::controller_of(p).is_some_and(|(_, _, _, uid)| uid == owner_uid))
        .cloned()
        .collect()
}

fn sync_replica_set(s: &mut State, res: Res, rs: &Value) {
    if meta::is_terminating(rs) {
        return;
    }
    let ns = meta::namespace(rs).to_string();
    let want = meta::replicas(rs, "/spec/replicas").max(0) as usize;
    let mut active: Vec<Value> = owned_pods(s, &ns, meta::uid(rs))
        .into_iter()
        .filter(pods::is_active)
        .collect();
    if active.len() < want {
        for _ in active.len()..want {
            let pod = pod_from_template(res, rs, None, &Map::new());
            if let Err(e) = ops::create(s, Res::Pod, &ns, pod, false) {
                tracing::warn!(error = %e.message, "replica set could not create a pod");
            }
        }
    } else if active.len() > want {
        active.sort_by_key(deletion_rank);
        for pod in active.split_off(want) {
            let _ = pods::delete(s, pod, None);
        }
    }
    replica_set_status(s, res, rs);
}

/// Scale-down order: unready before ready, unscheduled first, then newest first.
fn deletion_rank(pod: &Value) -> (bool, bool, std::cmp::Reverse<u64>) {
    let rv = meta::resource_version(pod).parse().unwrap_or(0);
    let scheduled = !meta::str_at(pod, "/spec/nodeName").is_empty();
    (pods::is_ready(pod), scheduled, std::cmp::Reverse(rv))
}

fn replica_set_status(s: &mut State, res: Res, rs: &Value) {
    let ns = meta::namespace(rs);
    let active: Vec<Value> = owned_pods(s, ns, meta::uid(rs))
        .into_iter()
        .filter(pods::is_active)
        .collect();
    let ready = active.iter().filter(|p| pods::is_ready(p)).count();
    let mut status = json!({
        "replicas": active.len(),
        "fullyLabeledReplicas": active.len(),
        "observedGeneration": rs.pointer("/metadata/generation").cloned().unwrap_or(json!(1)),
    });
    if ready > 0 {
        status.set("readyReplicas", json!(ready));
        status.set("availableReplicas", json!(ready));
    }
    set_status(s, res, rs, status);
}

/// Write `.status` if it differs from what is stored.
pub fn set_status(s: &mut State, res: Res, obj: &Value, status: Value) {
    let Some(current) = s.store.get(res, meta::namespace(obj), meta::name(obj)) else {
        return;
    };
    if current.get("status") == Some(&status) {
        return;
    }
    let mut updated = current.clone();
    updated.set("status", status);
    s.store.update(res, updated);
}

/// A pod built from a workload's template, owned by it.
pub fn pod_from_template(
    res: Res,
    owner: &Value,
    name: Option<&str>,
    extra_labels: &Map<String, Value>,
) -> Value {
    let template = owner
        .pointer("/spec/template")
        .cloned()
        .unwrap_or(json!({}));
    let mut metadata = template.get("metadata").cloned().unwrap_or(json!({}));
    let mut labels = metadata
        .get("labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    labels.extend(extra_labels.clone());
    metadata.set("labels", Value::Object(labels));
    match name {
        Some(n) => metadata.set("name", json!(n)),
        None => metadata.set("generateName", json!(format!("{}-", meta::name(owner)))),
    }
    metadata.set(
        "ownerReferences",
        json!([meta::owner_ref(&res.api_version(), res.kind(), owner)]),
    );
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": template.get("spec").cloned().unwrap_or(json!({})),
    })
}

/// Background cascading deletion: dependents of a removed owner go too.
pub fn collect_dependents(s: &mut State, owner_uid: &str) {
    if owner_uid.is_empty() {
        return;
    }
    for res in Res::ALL {
        let dependents = dependents_of(s, res, owner_uid);
        for dep in dependents {
            if meta::owner_uids(&dep).len() > 1 {
                drop_owner(s, res, dep, owner_uid);
            } else if !meta::is_terminating(&dep) {
                let (ns, name) = (
                    meta::namespace(&dep).to_string(),
                    meta::name(&dep).to_string(),
                );
                let _ = ops::delete(s, res, &ns, &name, &DeleteOpts::default());
            }
        }
    }
}

/// Objects of `res` that name `owner_uid` among their owners.
fn dependents_of(s: &State, res: Res, owner_uid: &str) -> Vec<Value> {
    s.store
        .iter(res)
        .filter(|o| meta::owner_uids(o).iter().any(|u| u == owner_uid))
        .cloned()
        .collect()
}

/// `propagationPolicy: Orphan`: dependents lose their reference to the owner.
pub fn orphan_dependents(s: &mut State, owner_uid: &str) {
    for res in Res::ALL {
        let dependents = dependents_of(s, res, owner_uid);
        for dep in dependents {
            drop_owner(s, res, dep, owner_uid);
        }
    }
}

fn drop_owner(s: &mut State, res: Res, mut dep: Value, owner_uid: &str) {
    if let Some(refs) = dep
        .pointer_mut("/metadata/ownerReferences")
        .and_then(Value::as_array_mut)
    {
        refs.retain(|r| meta::str_at(r, "/uid") != owner_uid);
    }
    s.store.update(res, dep);
}
