//! Which workload a pod belongs to, whatever API group its owner is in.

use opc_core::pod::{Interner, WirePod, WorkloadId};

fn owned_by(api_version: &str, kind: &str, name: &str) -> String {
    let pod: WirePod = serde_json::from_value(serde_json::json!({"metadata": {
        "name": "p", "namespace": "ns", "uid": "u",
        "ownerReferences": [{"apiVersion": api_version, "kind": kind, "name": name,
                             "uid": "o", "controller": true}]}}))
    .unwrap();
    let id = WorkloadId::of(&pod.into_record(&mut Interner::default()));
    assert_eq!(WorkloadId::parse(&id.to_string()), Some(id.clone()));
    id.label()
}

#[test]
fn another_groups_kind_of_the_same_name_is_another_workload() {
    assert_eq!(
        owned_by("apps/v1", "ReplicaSet", "web-7d9f8c6b5"),
        "Deployment/web"
    );
    assert_eq!(
        owned_by("x.example/v1", "ReplicaSet", "web-7d9f8c6b5"),
        "ReplicaSet.x.example/web-7d9f8c6b5"
    );
    assert_eq!(owned_by("apps/v1", "StatefulSet", "db"), "StatefulSet/db");
    assert_eq!(
        owned_by("v1", "ReplicationController", "rc"),
        "ReplicationController/rc"
    );
    assert_eq!(owned_by("v1", "StatefulSet", "db"), "StatefulSet.core/db");
    assert_eq!(
        owned_by("spark.example/v1", "SparkApp", "s"),
        "SparkApp.spark.example/s"
    );
}

/// The Deployment a ReplicaSet of this name belongs to, as a worker's row names it.
fn deployment_of(replicaset: &str) -> Option<String> {
    let id = WorkloadId::of_owner("ns", Some(("ReplicaSet", replicaset)), "p");
    (&*id.kind == "Deployment").then(|| id.name.to_string())
}

#[test]
fn strips_only_template_hashes() {
    assert_eq!(deployment_of("web-7d9f8c6b5").as_deref(), Some("web"));
    assert_eq!(
        deployment_of("api-gateway-5c7b4").as_deref(),
        Some("api-gateway")
    );
    // Vowels and `1`, `0` never appear in a template hash.
    assert_eq!(deployment_of("web-canary"), None);
    assert_eq!(deployment_of("web-1"), None);
    assert_eq!(deployment_of("web"), None);
}
