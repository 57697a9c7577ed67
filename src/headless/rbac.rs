//! Every API permission the product uses, as (API group, resource, verb). The ClusterRole in
//! `assets/deploy/rbac.yaml` grants exactly these; a test keeps the two and the code in step.

pub const PERMISSIONS: &[(&str, &str, &str)] = &[
    // The watch cache, the re-check after a conflict, and the actions on pods.
    ("", "pods", "get"),
    ("", "pods", "list"),
    ("", "pods", "watch"),
    ("", "pods", "delete"),
    ("", "pods", "patch"),
    ("", "pods/eviction", "create"),
    ("", "events", "create"),
    // Scale to zero and undo: the owner chain, the remembered replicas, the scale subresource.
    ("", "replicationcontrollers", "get"),
    ("", "replicationcontrollers", "patch"),
    ("", "replicationcontrollers/scale", "get"),
    ("", "replicationcontrollers/scale", "patch"),
    ("apps", "deployments", "get"),
    ("apps", "deployments", "patch"),
    ("apps", "deployments/scale", "get"),
    ("apps", "deployments/scale", "patch"),
    ("apps", "statefulsets", "get"),
    ("apps", "statefulsets", "patch"),
    ("apps", "statefulsets/scale", "get"),
    ("apps", "statefulsets/scale", "patch"),
    ("apps", "replicasets", "get"),
    ("apps", "replicasets", "patch"),
    ("apps", "replicasets/scale", "get"),
    ("apps", "replicasets/scale", "patch"),
    ("argoproj.io", "rollouts", "get"),
    ("argoproj.io", "rollouts", "patch"),
    ("argoproj.io", "rollouts/scale", "get"),
    ("argoproj.io", "rollouts/scale", "patch"),
    // The opt-out annotation, read up the owner chain of every pod the worker acts on.
    ("apps", "daemonsets", "get"),
    ("batch", "jobs", "get"),
    ("batch", "cronjobs", "get"),
    // Leader election.
    ("coordination.k8s.io", "leases", "get"),
    ("coordination.k8s.io", "leases", "create"),
    ("coordination.k8s.io", "leases", "update"),
];
