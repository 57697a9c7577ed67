//! A pod's owners and the pod itself, as a scale to zero reads them.

use opc_core::actions::Unproven;
use opc_core::pod::MESSAGE_CAP;
use serde_json::json;

use crate::proof::scale;
use crate::selector::replicaset;

/// A tenant's pod with an image of a megabyte: the refusal that quotes it stays small.
#[tokio::test]
async fn a_live_pod_keeps_a_failing_image_within_the_cap() {
    let image = format!("registry.invalid/{}:1", "x".repeat(1 << 20));
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-1", "labels": {"app": "web"}, "namespace": "shop", "uid": "p",
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                 "name": "web", "uid": "rs", "controller": true}]},
        "spec": {"containers": [{"name": "app", "image": image}]},
        "status": {"containerStatuses": [{"name": "app", "image": "", "imageID": "",
            "ready": false, "restartCount": 0,
            "state": {"waiting": {"reason": "ErrImagePull"}}}]}
    });
    let owner = replicaset(json!({"matchLabels": {"app": "web"}}));
    // Its one failing container, as the pod was read, is what the refusal names.
    let Err(Unproven::ForeignImage {
        container, image, ..
    }) = scale(&pod, &[owner]).await
    else {
        panic!("not refused for its image");
    };
    assert_eq!(container, "app");
    assert!(image.len() <= MESSAGE_CAP);
    assert!(image.starts_with("registry.invalid/xxx"));
}
