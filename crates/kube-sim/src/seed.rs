//! Typed helpers to seed and inspect a `SimCluster` from Rust.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{ConfigMap, Event, Node, Pod, PodStatus, ReplicationController};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Value, json};

use super::cluster::{SimCluster, State};
use super::meta;
use super::ops;
use super::resources::Res;

fn to_typed<T: DeserializeOwned>(v: Value) -> Option<T> {
    serde_json::from_value(v)
        .map_err(|e| tracing::warn!(error = %e, "stored object does not decode"))
        .ok()
}

fn namespace_or_default(v: &Value) -> String {
    match meta::namespace(v) {
        "" => "default".to_string(),
        ns => ns.to_string(),
    }
}

impl SimCluster {
    /// Store a pod exactly as given (status included; nothing schedules or starts it).
    /// Fills uid, namespace (`default`) and creationTimestamp when missing. Replaces a
    /// pod of the same name (a MODIFIED event).
    pub fn create_pod(&self, pod: Pod) -> Pod {
        let mut v = serde_json::to_value(&pod).unwrap_or_else(|_| json!({}));
        self.mutate(|s| {
            let ns = namespace_or_default(&v);
            meta::set_meta(&mut v, "namespace", json!(ns));
            if meta::uid(&v).is_empty() {
                let uid = s.store.new_uid();
                meta::set_meta(&mut v, "uid", json!(uid));
            }
            if v.pointer("/metadata/creationTimestamp")
                .is_none_or(Value::is_null)
            {
                meta::set_meta(&mut v, "creationTimestamp", json!(s.clock.stamp()));
            }
            let stored = s.store.insert(Res::Pod, v);
            to_typed(stored).unwrap_or(pod)
        })
    }

    pub fn pod(&self, ns: &str, name: &str) -> Option<Pod> {
        self.read(|s| s.store.get(Res::Pod, ns, name).cloned())
            .and_then(to_typed)
    }

    /// Every pod, ordered by namespace then name.
    pub fn pods(&self) -> Vec<Pod> {
        self.objects(Res::Pod)
    }

    /// Pods whose name starts with `prefix` and that are not on their way out (scaled-down
    /// pods terminate with a grace period, as on a real cluster).
    pub fn live_pods(&self, prefix: &str) -> Vec<Pod> {
        self.pods()
            .into_iter()
            .filter(|p| {
                p.metadata
                    .name
                    .as_deref()
                    .is_some_and(|n| n.starts_with(prefix))
            })
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .collect()
    }

    /// Change a pod's status (as its kubelet would); returns the stored pod.
    pub fn update_pod_status(
        &self,
        ns: &str,
        name: &str,
        f: impl FnOnce(&mut PodStatus),
    ) -> Option<Pod> {
        self.update_pod(ns, name, |pod| {
            f(pod.status.get_or_insert_with(PodStatus::default))
        })
    }

    /// Change any part of a pod directly, bypassing the API's update rules.
    pub fn update_pod(&self, ns: &str, name: &str, f: impl FnOnce(&mut Pod)) -> Option<Pod> {
        self.mutate(|s| {
            let old = s.store.get(Res::Pod, ns, name)?.clone();
            let mut pod: Pod = to_typed(old.clone())?;
            f(&mut pod);
            let new = serde_json::to_value(&pod).ok()?;
            ops::commit(s, Res::Pod, &old, new).ok().and_then(to_typed)
        })
    }

    /// Create (through the API path, so controllers act) or replace a ReplicaSet.
    pub fn create_replicaset(&self, rs: ReplicaSet) -> ReplicaSet {
        self.create_typed(Res::ReplicaSet, rs)
    }

    pub fn create_deployment(&self, d: Deployment) -> Deployment {
        self.create_typed(Res::Deployment, d)
    }

    pub fn create_statefulset(&self, sts: StatefulSet) -> StatefulSet {
        self.create_typed(Res::StatefulSet, sts)
    }

    pub fn create_replication_controller(
        &self,
        rc: ReplicationController,
    ) -> ReplicationController {
        self.create_typed(Res::ReplicationController, rc)
    }

    pub fn create_pdb(&self, pdb: PodDisruptionBudget) -> PodDisruptionBudget {
        self.create_typed(Res::PodDisruptionBudget, pdb)
    }

    /// An `argoproj.io/v1alpha1` Rollout, as JSON.
    pub fn create_rollout(&self, rollout: Value) -> Value {
        self.mutate(|s| upsert(s, Res::Rollout, rollout.clone()))
            .unwrap_or(rollout)
    }

    pub fn replicaset(&self, ns: &str, name: &str) -> Option<ReplicaSet> {
        self.read(|s| s.store.get(Res::ReplicaSet, ns, name).cloned())
            .and_then(to_typed)
    }

    pub fn replicasets(&self) -> Vec<ReplicaSet> {
        self.objects(Res::ReplicaSet)
    }

    pub fn deployment(&self, ns: &str, name: &str) -> Option<Deployment> {
        self.read(|s| s.store.get(Res::Deployment, ns, name).cloned())
            .and_then(to_typed)
    }

    pub fn statefulset(&self, ns: &str, name: &str) -> Option<StatefulSet> {
        self.read(|s| s.store.get(Res::StatefulSet, ns, name).cloned())
            .and_then(to_typed)
    }

    pub fn rollout(&self, ns: &str, name: &str) -> Option<Value> {
        self.read(|s| s.store.get(Res::Rollout, ns, name).cloned())
    }

    pub fn config_map(&self, ns: &str, name: &str) -> Option<ConfigMap> {
        self.read(|s| s.store.get(Res::ConfigMap, ns, name).cloned())
            .and_then(to_typed)
    }

    /// Create (or replace the data of) a ConfigMap.
    pub fn create_config_map(&self, map: ConfigMap) -> ConfigMap {
        self.create_typed(Res::ConfigMap, map)
    }

    pub fn pdbs(&self) -> Vec<PodDisruptionBudget> {
        self.objects(Res::PodDisruptionBudget)
    }

    pub fn nodes(&self) -> Vec<Node> {
        self.objects(Res::Node)
    }

    /// Every core/v1 Event (including those posted through events.k8s.io/v1).
    pub fn events(&self) -> Vec<Event> {
        self.objects(Res::Event)
    }

    fn objects<T: DeserializeOwned>(&self, res: Res) -> Vec<T> {
        self.read(|s| s.store.list(res, None))
            .into_iter()
            .filter_map(to_typed)
            .collect()
    }

    fn create_typed<T: Serialize + DeserializeOwned + Clone>(&self, res: Res, obj: T) -> T {
        let Ok(v) = serde_json::to_value(&obj) else {
            return obj;
        };
        self.mutate(|s| upsert(s, res, v))
            .and_then(to_typed)
            .unwrap_or(obj)
    }
}

/// Create through the API path, or replace spec and metadata of an existing object.
fn upsert(s: &mut State, res: Res, v: Value) -> Option<Value> {
    let ns = if res.def().namespaced {
        namespace_or_default(&v)
    } else {
        String::new()
    };
    let name = meta::name(&v).to_string();
    let result = if !name.is_empty() && s.store.get(res, &ns, &name).is_some() {
        ops::update(s, res, &ns, &name, v, false)
    } else {
        ops::create(s, res, &ns, v, false)
    };
    result
        .map_err(|e| tracing::warn!(error = %e.message, "seeding failed"))
        .ok()
}
