//! Which workload a pod belongs to, as the on-call engineer names it.

use crate::pod::PodRecord;

/// The characters Kubernetes uses for `pod-template-hash` (`rand.SafeEncodeString`).
const HASH_ALPHABET: &str = "bcdfghjklmnpqrstvwxz2456789";

/// "Deployment/web" for a pod of ReplicaSet `web-7d9f8c6b5`, "StatefulSet/db", or "Pod/name"
/// for a bare pod. A ReplicaSet whose name does not end in a template hash stays a ReplicaSet.
pub fn workload_label(pod: &PodRecord) -> String {
    match &pod.owner {
        None => format!("Pod/{}", pod.name),
        Some(owner) if &*owner.kind == "ReplicaSet" => match deployment_of(&owner.name) {
            Some(deployment) => format!("Deployment/{deployment}"),
            None => format!("ReplicaSet/{}", owner.name),
        },
        Some(owner) => format!("{}/{}", owner.kind, owner.name),
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
    use super::deployment_of;

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
