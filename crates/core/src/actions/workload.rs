//! A workload that can be scaled, named by kind, namespace and name.

use std::fmt;

use kube::Client;
use kube::api::{Api, DynamicObject};
use kube::discovery::ApiResource;

/// The annotation that remembers a workload's replicas before it was scaled to zero: where
/// earlier versions always kept it, and the fallback when the parked ConfigMap is not available
/// to the identity (see `parked.rs`).
pub const REPLICAS_BEFORE_ANNOTATION: &str = "ops-pod-cleaner.io/replicas-before";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WorkloadKind {
    Deployment,
    /// Argo Rollout (`argoproj.io/v1alpha1`), reached through the dynamic API.
    Rollout,
    StatefulSet,
    ReplicaSet,
    ReplicationController,
}

impl WorkloadKind {
    /// Every kind that can be scaled.
    pub const ALL: [WorkloadKind; 5] = [
        WorkloadKind::Deployment,
        WorkloadKind::Rollout,
        WorkloadKind::StatefulSet,
        WorkloadKind::ReplicaSet,
        WorkloadKind::ReplicationController,
    ];

    pub fn api_resource(self) -> ApiResource {
        let (group, version, kind, plural) = match self {
            WorkloadKind::Deployment => ("apps", "v1", "Deployment", "deployments"),
            WorkloadKind::Rollout => ("argoproj.io", "v1alpha1", "Rollout", "rollouts"),
            WorkloadKind::StatefulSet => ("apps", "v1", "StatefulSet", "statefulsets"),
            WorkloadKind::ReplicaSet => ("apps", "v1", "ReplicaSet", "replicasets"),
            WorkloadKind::ReplicationController => {
                ("", "v1", "ReplicationController", "replicationcontrollers")
            }
        };
        let api_version = if group.is_empty() {
            version.to_string()
        } else {
            format!("{group}/{version}")
        };
        ApiResource {
            group: group.into(),
            version: version.into(),
            api_version,
            kind: kind.into(),
            plural: plural.into(),
        }
    }

    /// The resource name used in RBAC rules and 403 messages.
    pub fn plural(self) -> &'static str {
        match self {
            WorkloadKind::Deployment => "deployments",
            WorkloadKind::Rollout => "rollouts",
            WorkloadKind::StatefulSet => "statefulsets",
            WorkloadKind::ReplicaSet => "replicasets",
            WorkloadKind::ReplicationController => "replicationcontrollers",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::Deployment => "Deployment",
            WorkloadKind::Rollout => "Rollout",
            WorkloadKind::StatefulSet => "StatefulSet",
            WorkloadKind::ReplicaSet => "ReplicaSet",
            WorkloadKind::ReplicationController => "ReplicationController",
        }
    }

    pub(crate) fn from_owner(api_version: &str, kind: &str) -> Option<WorkloadKind> {
        let group = api_version.split_once('/').map_or("", |(g, _)| g);
        match (group, kind) {
            ("apps", "Deployment") => Some(WorkloadKind::Deployment),
            ("argoproj.io", "Rollout") => Some(WorkloadKind::Rollout),
            ("apps", "StatefulSet") => Some(WorkloadKind::StatefulSet),
            ("apps", "ReplicaSet") => Some(WorkloadKind::ReplicaSet),
            ("", "ReplicationController") => Some(WorkloadKind::ReplicationController),
            _ => None,
        }
    }
}

/// In JSON as its kind's name, e.g. `"Deployment"`.
impl serde::Serialize for WorkloadKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub struct WorkloadRef {
    pub kind: WorkloadKind,
    pub namespace: String,
    pub name: String,
}

impl WorkloadRef {
    pub(crate) fn api(&self, client: &Client) -> Api<DynamicObject> {
        Api::namespaced_with(client.clone(), &self.namespace, &self.kind.api_resource())
    }
}

impl WorkloadRef {
    /// Read back what `Display` wrote: `Deployment shop/web`.
    pub(crate) fn parse(text: &str) -> Option<WorkloadRef> {
        let (kind, rest) = text.split_once(' ')?;
        let (namespace, name) = rest.split_once('/')?;
        let kind = WorkloadKind::ALL.into_iter().find(|k| k.name() == kind)?;
        Some(WorkloadRef {
            kind,
            namespace: namespace.to_string(),
            name: name.to_string(),
        })
    }
}

impl WorkloadRef {
    /// `deployment/web`, as kubectl names it.
    pub fn kubectl_name(&self) -> String {
        match self.kind {
            WorkloadKind::Rollout => format!("rollouts.argoproj.io/{}", self.name),
            kind => format!("{}/{}", kind.name().to_lowercase(), self.name),
        }
    }
}

impl fmt::Display for WorkloadRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}/{}", self.kind.name(), self.namespace, self.name)
    }
}
