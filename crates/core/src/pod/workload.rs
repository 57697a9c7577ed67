//! Which workload a pod belongs to, as the on-call engineer names it.

use crate::pod::PodRecord;

/// The characters Kubernetes uses for `pod-template-hash` (`rand.SafeEncodeString`).
const HASH_ALPHABET: &str = "bcdfghjklmnpqrstvwxz2456789";

/// "Deployment/web" for a pod of ReplicaSet `web-7d9f8c6b5`, "StatefulSet/db", or "Pod/name"
/// for a bare pod. A ReplicaSet whose name does not end in a template hash stays a ReplicaSet.
/// A kind outside its usual API group is named with its group (`ReplicaSet.x.example/web`), so
/// another group's object of the same kind and name is never taken for the workload.
pub fn workload_label(pod: &PodRecord) -> String {
    let Some(owner) = &pod.owner else {
        return format!("Pod/{}", pod.name);
    };
    let group = owner.api_version.split_once('/').map_or("", |(g, _)| g);
    let kind = &*owner.kind;
    if home_group(kind) != Some(group) && !(group.is_empty() && home_group(kind).is_none()) {
        let group = if group.is_empty() { "core" } else { group };
        return format!("{kind}.{group}/{}", owner.name);
    }
    match deployment_of(&owner.name).filter(|_| kind == "ReplicaSet") {
        Some(deployment) => format!("Deployment/{deployment}"),
        None => format!("{kind}/{}", owner.name),
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

#[cfg(test)]
mod tests {
    use super::{deployment_of, workload_label};
    use crate::pod::{Interner, WirePod};

    fn owned_by(api_version: &str, kind: &str, name: &str) -> String {
        let pod: WirePod = serde_json::from_value(serde_json::json!({"metadata": {
            "name": "p", "namespace": "ns", "uid": "u",
            "ownerReferences": [{"apiVersion": api_version, "kind": kind, "name": name,
                                 "uid": "o", "controller": true}]}}))
        .unwrap();
        workload_label(&pod.into_record(&mut Interner::default()))
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

    #[test]
    fn strips_only_template_hashes() {
        assert_eq!(deployment_of("web-7d9f8c6b5"), Some("web"));
        assert_eq!(deployment_of("api-gateway-5c7b4"), Some("api-gateway"));
        // Vowels and `1`, `0` never appear in a template hash.
        assert_eq!(deployment_of("web-canary"), None);
        assert_eq!(deployment_of("web-1"), None);
        assert_eq!(deployment_of("web"), None);
    }
}
