//! A workload that can be scaled, named by kind, namespace and name.

use std::fmt;

use kube::Client;
use kube::api::{Api, DynamicObject, ObjectMeta};
use kube::core::GroupVersionKind;
use kube::discovery::ApiResource;

use crate::pod::WorkloadId;

/// The annotation that remembers a workload's replicas before it was scaled to zero: where
/// earlier versions always kept it, and the fallback when the parked ConfigMap is not available
/// to the identity (see `parked.rs`).
pub const REPLICAS_BEFORE_ANNOTATION: &str = "ops-pod-cleaner.io/replicas-before";

/// In JSON as its kind's name, e.g. `"Deployment"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, strum::VariantArray)]
pub enum WorkloadKind {
    Deployment,
    /// Argo Rollout (`argoproj.io/v1alpha1`), reached through the dynamic API.
    Rollout,
    StatefulSet,
    ReplicaSet,
    ReplicationController,
}

impl WorkloadKind {
    pub const ALL: &[WorkloadKind] = <WorkloadKind as strum::VariantArray>::VARIANTS;

    /// (API group, version, kind, plural): every name of the kind is read from here.
    fn names(self) -> (&'static str, &'static str, &'static str, &'static str) {
        match self {
            WorkloadKind::Deployment => ("apps", "v1", "Deployment", "deployments"),
            WorkloadKind::Rollout => ("argoproj.io", "v1alpha1", "Rollout", "rollouts"),
            WorkloadKind::StatefulSet => ("apps", "v1", "StatefulSet", "statefulsets"),
            WorkloadKind::ReplicaSet => ("apps", "v1", "ReplicaSet", "replicasets"),
            WorkloadKind::ReplicationController => {
                ("", "v1", "ReplicationController", "replicationcontrollers")
            }
        }
    }

    pub fn api_resource(self) -> ApiResource {
        let (group, version, kind, plural) = self.names();
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
    }

    /// The resource name used in RBAC rules and 403 messages.
    pub fn plural(self) -> &'static str {
        self.names().3
    }

    pub fn name(self) -> &'static str {
        self.names().2
    }

    pub(crate) fn from_owner(api_version: &str, kind: &str) -> Option<WorkloadKind> {
        let group = api_version.split_once('/').map_or("", |(g, _)| g);
        (WorkloadKind::ALL.iter().copied()).find(|k| k.names().0 == group && k.name() == kind)
    }
}

/// A workload the tool can scale: the one [`WorkloadId`] every key names it by, with its kind's
/// API at hand. Built from the owner chain, a parked record or a label; never parsed from text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScalableWorkload {
    kind: WorkloadKind,
    id: WorkloadId,
}

impl ScalableWorkload {
    pub fn new(kind: WorkloadKind, namespace: &str, name: &str) -> ScalableWorkload {
        ScalableWorkload {
            kind,
            id: WorkloadId::new(namespace, kind.name(), name),
        }
    }

    /// The workload `id` names, if it is of a kind that can be scaled.
    pub fn of(id: &WorkloadId) -> Option<ScalableWorkload> {
        let kind = WorkloadKind::ALL
            .iter()
            .copied()
            .find(|k| id.group.is_none() && k.name() == &*id.kind)?;
        Some(ScalableWorkload {
            kind,
            id: id.clone(),
        })
    }

    pub fn kind(&self) -> WorkloadKind {
        self.kind
    }

    pub fn id(&self) -> &WorkloadId {
        &self.id
    }

    pub fn namespace(&self) -> &str {
        &self.id.namespace
    }

    pub fn name(&self) -> &str {
        &self.id.name
    }

    pub(crate) fn api(&self, client: &Client) -> Api<DynamicObject> {
        Api::namespaced_with(client.clone(), self.namespace(), &self.kind.api_resource())
    }

    /// `deployment/web`, as kubectl names it.
    pub fn kubectl_name(&self) -> String {
        match self.kind {
            WorkloadKind::Rollout => format!("rollouts.argoproj.io/{}", self.name()),
            kind => format!("{}/{}", kind.name().to_lowercase(), self.name()),
        }
    }
}

/// The count a workload's `replicas-before` annotation records, if it carries a valid one.
pub(crate) fn replicas_before(meta: &ObjectMeta) -> Option<i32> {
    meta.annotations
        .as_ref()?
        .get(REPLICAS_BEFORE_ANNOTATION)?
        .parse()
        .ok()
}

pub(crate) fn spec_replicas(object: &DynamicObject) -> Option<i64> {
    object.data.pointer("/spec/replicas")?.as_i64()
}

/// `Deployment shop/web`, as messages name it.
impl fmt::Display for ScalableWorkload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}/{}",
            self.kind.name(),
            self.namespace(),
            self.name()
        )
    }
}

/// In JSON (the parked list) as `{"kind", "namespace", "name"}`.
impl serde::Serialize for ScalableWorkload {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(serde::Serialize)]
        struct Fields<'a> {
            kind: WorkloadKind,
            namespace: &'a str,
            name: &'a str,
        }
        let fields = Fields {
            kind: self.kind,
            namespace: self.namespace(),
            name: self.name(),
        };
        serde::Serialize::serialize(&fields, serializer)
    }
}
