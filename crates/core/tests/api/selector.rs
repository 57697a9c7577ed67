//! Label selectors as workloads carry them: a scale to zero lands only on a workload whose
//! selector, as read, matches the pod.

use opc_core::actions::{ScalableWorkload, Unproven};
use serde_json::{Value, json};

use crate::proof::{pod_json, pulled, scale};

/// ReplicaSet `web` (uid `rs`) of `shop`, made by no one, with `selector` as its
/// `spec.selector` (none when `Null`) and `shop/web:2` in its template.
pub(crate) fn replicaset(selector: Value) -> Value {
    let mut set = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "web", "namespace": "shop", "uid": "rs"},
        "spec": {"template": {"spec": {"containers": [pulled("shop/web:2")]}}}});
    if !selector.is_null() {
        set["spec"]["selector"] = selector;
    }
    set
}

/// A scale to zero of pod `web-x` with `labels`, its image one `owner`'s template runs,
/// where `owner` (of `api_version`) controls it.
async fn scale_with(
    labels: Value,
    api_version: &str,
    owner: &Value,
) -> Result<ScalableWorkload, Unproven> {
    let kind = owner["kind"].as_str().unwrap();
    let mut pod = pod_json("web-x", kind, "web", "rs");
    pod["metadata"]["ownerReferences"][0]["apiVersion"] = json!(api_version);
    pod["metadata"]["labels"] = labels;
    pod["spec"]["containers"][0] = pulled("shop/web:2");
    pod["status"]["containerStatuses"] = json!([{"name": "app", "image": "shop/web:2",
        "imageID": "", "ready": false, "restartCount": 0,
        "state": {"waiting": {"reason": "ErrImagePull"}}}]);
    scale(&pod, std::slice::from_ref(owner)).await
}

/// Whether a workload with `selector` is found to select a pod with `labels`.
async fn matches(selector: &Value, labels: Value) -> bool {
    match scale_with(labels, "apps/v1", &replicaset(selector.clone())).await {
        Ok(_) => true,
        Err(Unproven::NotSelected { .. }) => false,
        Err(other) => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn selectors_match_labels_and_expressions() {
    let s = json!({
        "matchLabels": {"app": "web"},
        "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["front", "edge"]},
            {"key": "canary", "operator": "DoesNotExist"},
        ]
    });
    assert!(matches(&s, json!({"app": "web", "tier": "edge"})).await);
    assert!(!matches(&s, json!({"app": "web", "tier": "back"})).await);
    assert!(!matches(&s, json!({"app": "web", "tier": "edge", "canary": "1"})).await);
    assert!(!matches(&s, json!({"app": "api", "tier": "edge"})).await);
    // A ReplicationController's plain map.
    let mut rc = replicaset(json!({"app": "web"}));
    rc["apiVersion"] = json!("v1");
    rc["kind"] = json!("ReplicationController");
    let selected = |labels| scale_with(labels, "v1", &rc);
    assert!(selected(json!({"app": "web"})).await.is_ok());
    assert!(matches!(
        selected(json!({})).await,
        Err(Unproven::NotSelected { .. })
    ));
}

#[tokio::test]
async fn a_selector_that_cannot_be_read_or_is_empty_selects_nothing() {
    // Not even a pod that every label would be asked of.
    let any = || json!({"app": "web", "a": "1"});
    assert!(!matches(&Value::Null, any()).await);
    assert!(!matches(&json!({}), any()).await);
    assert!(!matches(&json!({"matchLabels": {}}), any()).await);
    let odd = json!({"matchExpressions": [{"key": "a", "operator": "Near"}]});
    assert!(!matches(&odd, any()).await);
}
