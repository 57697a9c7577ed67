//! Every API permission the product uses, and which deployed role grants it. The manifests in
//! `assets/deploy/base/` grant exactly these; `tests/suite/deploy.rs` keeps the two and the
//! code in step. The product never reads this list: it is what the tests hold both to.
//!
//! The line drawn: the cluster-wide ClusterRole may read, delete and evict pods and change
//! replicas through `*/scale`, but grants no verb that can change a pod template (patch or
//! update on a workload, patch on a pod) and nothing on leases or ConfigMaps. What the product
//! writes for itself (its Lease, its record of parked workloads) lives in its own namespace,
//! under a Role limited to those objects' names.

use opc_core::actions::PARKED_CONFIGMAP;

/// The Lease replicas elect a leader with (`LeaseSettings::from_env`).
pub const LEASE_NAME: &str = "ops-pod-cleaner";

/// Granted cluster-wide by the ClusterRole `ops-pod-cleaner` (`rbac.yaml`):
/// (API group, resource, verb).
pub const CLUSTER_PERMISSIONS: &[(&str, &str, &str)] = &[
    // The watch cache, the re-check after a conflict, and the actions on pods.
    ("", "pods", "get"),
    ("", "pods", "list"),
    ("", "pods", "watch"),
    ("", "pods", "delete"),
    ("", "pods/eviction", "create"),
    ("", "events", "create"),
    // Pods' Warning Events, watched for the causes a status does not tell.
    ("", "events", "list"),
    ("", "events", "watch"),
    // Before an automatic force delete of a pod that must run once: is its node gone?
    ("", "nodes", "get"),
    // Nodes watched for the causes a pod alone does not tell (its node stopped reporting)
    // and for the breaker's words; without them causes come from the pod alone.
    ("", "nodes", "list"),
    ("", "nodes", "watch"),
    // Scale to zero and undo: the workload read fresh (UID, opt-out, available replicas), and
    // its replicas read and written through the scale subresource only.
    ("", "replicationcontrollers", "get"),
    ("", "replicationcontrollers/scale", "get"),
    ("", "replicationcontrollers/scale", "patch"),
    ("apps", "deployments", "get"),
    ("apps", "deployments/scale", "get"),
    ("apps", "deployments/scale", "patch"),
    ("apps", "statefulsets", "get"),
    ("apps", "statefulsets/scale", "get"),
    ("apps", "statefulsets/scale", "patch"),
    ("apps", "replicasets", "get"),
    ("apps", "replicasets/scale", "get"),
    ("apps", "replicasets/scale", "patch"),
    ("argoproj.io", "rollouts", "get"),
    ("argoproj.io", "rollouts/scale", "get"),
    ("argoproj.io", "rollouts/scale", "patch"),
    // The opt-out annotation, read up the owner chain of every pod the worker acts on.
    ("apps", "daemonsets", "get"),
    ("batch", "jobs", "get"),
    ("batch", "cronjobs", "get"),
];

/// Granted by the Role `ops-pod-cleaner` in the product's namespace (`rbac.yaml`):
/// (API group, resource, verb, the one object name it is limited to). RBAC cannot limit
/// `create` by name (the name is not known when the request is authorized), so the Lease's
/// create is unnamed; the parked ConfigMap ships with the manifests and needs no create.
pub const NAMESPACED_PERMISSIONS: &[(&str, &str, &str, Option<&str>)] = &[
    // Leader election.
    ("coordination.k8s.io", "leases", "get", Some(LEASE_NAME)),
    ("coordination.k8s.io", "leases", "update", Some(LEASE_NAME)),
    ("coordination.k8s.io", "leases", "create", None),
    // The replicas of parked workloads, for undo (read-modify-write with resourceVersion).
    ("", "configmaps", "get", Some(PARKED_CONFIGMAP)),
    ("", "configmaps", "update", Some(PARKED_CONFIGMAP)),
];

/// Granted only by the optional ClusterRole `ops-pod-cleaner-finalizers`
/// (`rbac-finalizers.yaml`), for those who bind it: the manual finalizer removal. The worker
/// never removes finalizers, so `headless` does not need it.
pub const FINALIZER_PERMISSIONS: &[(&str, &str, &str)] = &[("", "pods", "patch")];

/// Calls no deployed role grants. They run only with a person's own credentials, when the
/// parked ConfigMap is not available to them: creating it where the manifests were not
/// applied, or else recording the replicas in the `replicas-before` annotation on the workload
/// (and removing it on undo).
pub const PERSONAL_ONLY: &[(&str, &str, &str)] = &[
    ("", "configmaps", "create"),
    ("", "replicationcontrollers", "patch"),
    ("apps", "deployments", "patch"),
    ("apps", "statefulsets", "patch"),
    ("apps", "replicasets", "patch"),
    ("argoproj.io", "rollouts", "patch"),
];
