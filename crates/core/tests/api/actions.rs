//! The actions' values as a caller sees them: refusals and the workloads a scale lands on.

use opc_core::actions::{
    Denied, Failure, Refusal, ScalableWorkload, Suspect, Unproven, Unreadable, WorkloadKind,
};
use opc_core::pod::{Interner, WorkloadId, decode_pod};
use opc_core::rules::ActionKind;
use serde_json::json;

fn denied() -> Denied {
    Denied {
        verb: "get",
        resource: "replicasets",
        namespace: "shop".into(),
        message: "no".into(),
        context: None,
    }
}

#[test]
fn a_403_is_found_behind_the_refusals_that_wrap_one() {
    let direct = Refusal::Forbidden(denied());
    let behind_owners = Refusal::OwnersUnreadable {
        pod: "shop/web-1".into(),
        owner: Some("ReplicaSet web-5c6b7".into()),
        cause: Box::new(Unreadable::Forbidden(denied())),
    };
    let failed_owners = Refusal::OwnersUnreadable {
        pod: "shop/web-1".into(),
        owner: None,
        cause: Box::new(Unreadable::Failed(Failure::Transport("timeout".into()))),
    };
    assert_eq!(direct.forbidden(), Some(&denied()));
    assert_eq!(behind_owners.forbidden(), Some(&denied()));
    assert_eq!(failed_owners.forbidden(), None);
    assert_eq!(Refusal::Readonly.forbidden(), None);
    assert_eq!(
        failed_owners.to_string(),
        "cannot read the owners of pod shop/web-1 to check their opt-out: timeout"
    );
}

#[test]
fn only_a_kind_with_replicas_in_its_own_group_can_be_scaled() {
    let web = WorkloadId::new("shop", "Deployment", "web");
    let scalable = ScalableWorkload::of(&web).unwrap();
    assert_eq!(scalable.id(), &web);
    assert_eq!(scalable.kind(), WorkloadKind::Deployment);
    assert_eq!(scalable.to_string(), "Deployment shop/web");
    assert_eq!(scalable.kubectl_name(), "deployment/web");
    let foreign = WorkloadId {
        group: Some("x.example".into()),
        ..WorkloadId::new("shop", "ReplicaSet", "web")
    };
    for id in [
        foreign,
        WorkloadId::new("shop", "Job", "run"),
        WorkloadId::new("shop", "DaemonSet", "agent"),
        WorkloadId::new("shop", "Pod", "bare"),
    ] {
        assert_eq!(ScalableWorkload::of(&id), None, "{id}");
    }
}

/// What holds a scale to zero of pod `name`, controlled by StatefulSet `db`.
fn statefulset_suspect(name: &str) -> Option<Suspect> {
    let pod = json!({"metadata": {"name": name, "namespace": "shop", "uid": "p",
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet",
                             "name": "db", "uid": "s", "controller": true}]}});
    let pod = decode_pod(pod.to_string().as_bytes(), &mut Interner::default()).unwrap();
    Suspect::of(&pod, ActionKind::ScaleToZero)
}

#[test]
fn statefulset_pods_are_named_by_ordinal() {
    assert_eq!(statefulset_suspect("db-0"), None);
    assert_eq!(statefulset_suspect("db-12"), None);
    for name in ["db-01", "db-", "db", "db-x", "db-1-2", "evil", "dbx-1"] {
        let not_ordinal = Unproven::NotOrdinal { set: "db".into() };
        assert_eq!(
            statefulset_suspect(name),
            Some(Suspect::Unproven(not_ordinal)),
            "{name}"
        );
    }
}
