//! Which workload a pod belongs to, as the on-call engineer names it.

use std::fmt;
use std::sync::{Arc, LazyLock};

use serde::{Deserialize, Serialize};

use crate::pod::PodRecord;

/// The characters Kubernetes uses for `pod-template-hash` (`rand.SafeEncodeString`).
const HASH_ALPHABET: &str = "bcdfghjklmnpqrstvwxz2456789";

/// A workload, as every key of the tool names it (the breaker, the census, the report, the
/// audit log). A kind outside its usual API group carries the group: never taken for another.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorkloadId {
    pub namespace: Arc<str>,
    pub kind: Arc<str>,
    /// Set only when the kind is not in its usual group (`core` for the empty group).
    pub group: Option<Arc<str>>,
    pub name: Arc<str>,
}

/// The kinds `WorkloadId::of` names itself (a bare pod, a ReplicaSet's Deployment), shared
/// by every key rather than allocated for each.
static POD: LazyLock<Arc<str>> = LazyLock::new(|| Arc::from("Pod"));
static DEPLOYMENT: LazyLock<Arc<str>> = LazyLock::new(|| Arc::from("Deployment"));

impl WorkloadId {
    /// A workload of its kind's usual group.
    pub fn new(namespace: &str, kind: &str, name: &str) -> WorkloadId {
        WorkloadId {
            namespace: namespace.into(),
            kind: kind.into(),
            group: None,
            name: name.into(),
        }
    }

    /// Deployment `web` for a pod of ReplicaSet `web-7d9f8c6b5` (without a template hash, the
    /// ReplicaSet), StatefulSet `db`, or the pod itself for a bare pod.
    pub fn of(pod: &PodRecord) -> WorkloadId {
        // The census keeps one of these per workload: the namespace and an owner's kind are
        // the pod's own interned strings, not new copies.
        let namespace = pod.namespace.clone();
        let Some(owner) = &pod.owner else {
            return WorkloadId {
                namespace,
                kind: POD.clone(),
                group: None,
                name: (&*pod.name).into(),
            };
        };
        let group = owner.api_version.split_once('/').map_or("", |(g, _)| g);
        let kind = &*owner.kind;
        let foreign =
            home_group(kind) != Some(group) && !(group.is_empty() && home_group(kind).is_none());
        if foreign {
            let group = if group.is_empty() { "core" } else { group };
            return WorkloadId {
                namespace,
                kind: owner.kind.clone(),
                group: Some(group.into()),
                name: (&*owner.name).into(),
            };
        }
        let (kind, name) = match deployment_of(&owner.name).filter(|_| kind == "ReplicaSet") {
            Some(deployment) => (DEPLOYMENT.clone(), deployment),
            None => (owner.kind.clone(), &*owner.name),
        };
        WorkloadId {
            namespace,
            kind,
            group: None,
            name: name.into(),
        }
    }

    /// As [`WorkloadId::of`], for a pod known by its name and its owner's kind and name, the
    /// kind taken to be in its usual group (a worker's row names no more).
    pub fn of_owner(namespace: &str, owner: Option<(&str, &str)>, pod: &str) -> WorkloadId {
        match owner {
            None => WorkloadId::new(namespace, "Pod", pod),
            Some(("ReplicaSet", name)) if let Some(deployment) = deployment_of(name) => {
                WorkloadId::new(namespace, "Deployment", deployment)
            }
            Some((kind, name)) => WorkloadId::new(namespace, kind, name),
        }
    }

    /// `Deployment/web`, `ReplicaSet.x.example/web`: as the on-call engineer names it within
    /// its namespace.
    pub fn label(&self) -> String {
        match &self.group {
            Some(group) => format!("{}.{group}/{}", self.kind, self.name),
            None => format!("{}/{}", self.kind, self.name),
        }
    }

    /// Read back what `Display` wrote: `shop/Deployment/web`.
    pub fn parse(text: &str) -> Option<WorkloadId> {
        let (namespace, rest) = text.split_once('/')?;
        let (kind, name) = rest.split_once('/')?;
        let (kind, group) = match kind.split_once('.') {
            Some((kind, group)) => (kind, Some(group.into())),
            None => (kind, None),
        };
        (!namespace.is_empty() && !kind.is_empty() && !name.is_empty()).then(|| WorkloadId {
            group,
            ..WorkloadId::new(namespace, kind, name)
        })
    }
}

/// `shop/Deployment/web`.
impl fmt::Display for WorkloadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.label())
    }
}

/// In JSON (the Lease's record of recent actions) as its `Display` text.
impl Serialize for WorkloadId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for WorkloadId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        WorkloadId::parse(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("not a workload: {text}")))
    }
}

/// The API group a well-known controller kind lives in.
fn home_group(kind: &str) -> Option<&'static str> {
    match kind {
        "ReplicaSet" | "Deployment" | "StatefulSet" | "DaemonSet" => Some("apps"),
        "Job" | "CronJob" => Some("batch"),
        "ReplicationController" => Some(""),
        "Rollout" => Some("argoproj.io"),
        _ => None,
    }
}

/// `web-7d9f8c6b5` → `web`: the suffix must look like a pod-template-hash.
pub(crate) fn deployment_of(replicaset: &str) -> Option<&str> {
    let (deployment, hash) = replicaset.rsplit_once('-')?;
    let looks_like_hash =
        (5..=10).contains(&hash.len()) && hash.chars().all(|c| HASH_ALPHABET.contains(c));
    (looks_like_hash && !deployment.is_empty()).then_some(deployment)
}
