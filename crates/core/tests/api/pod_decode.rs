//! What a tenant can write into a pod or an Event, thrown at the decoders: nothing panics,
//! and what is kept stays small whatever arrives.

use opc_core::pod::{
    ContainerState, Interner, MESSAGE_CAP, NAME_CAP, PodRecord, WireEvent, decode_pod, pod_event,
};
use proptest::prelude::*;
use serde_json::json;

/// The bytes of text a record keeps.
fn kept_bytes(pod: &PodRecord) -> usize {
    let owner = pod.owner.as_ref().map_or(0, |o| {
        o.api_version.len() + o.kind.len() + o.name.len() + o.uid.len()
    });
    let containers: usize = pod
        .containers
        .iter()
        .map(|c| {
            c.name.len()
                + match &c.state {
                    ContainerState::Waiting { reason, message } => {
                        reason.len() + message.as_deref().map_or(0, str::len)
                    }
                    _ => 0,
                }
        })
        .sum();
    pod.name.len()
        + pod.namespace.len()
        + pod.uid.len()
        + pod.message.as_deref().map_or(0, str::len)
        + pod.finalizers.iter().map(|f| f.len()).sum::<usize>()
        + owner
        + containers
}

#[test]
fn a_tenants_oversized_strings_are_cut_at_decode_and_mark_the_pod() {
    let huge = "x".repeat(1_400_000);
    let pod = json!({
        "metadata": {"name": "evil", "namespace": "tenant", "uid": "u1",
            "finalizers": vec![huge.clone(); 3],
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                 "name": huge, "uid": huge, "controller": true}]},
        "status": {"phase": "Pending", "message": huge, "reason": huge,
            "containerStatuses": [{"name": huge, "restartCount": 0,
                "state": {"waiting": {"reason": huge, "message": huge}}}]}
    });
    let record = decode_pod(pod.to_string().as_bytes(), &mut Interner::default()).unwrap();
    assert!(record.malformed, "an owner name over 253 characters");
    assert!(kept_bytes(&record) < 16 * 1024, "{}", kept_bytes(&record));
    assert_eq!(record.owner.unwrap().name.len(), NAME_CAP);
}

#[test]
fn a_pod_of_ordinary_size_is_not_malformed() {
    let pod = json!({"metadata": {"name": "web-1", "namespace": "shop", "uid": "u",
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                             "name": "x".repeat(NAME_CAP), "uid": "o", "controller": true}]}});
    let record = decode_pod(pod.to_string().as_bytes(), &mut Interner::default()).unwrap();
    assert!(!record.malformed);
}

/// Text of every kind a tenant can write: controls, bidi and zero-width marks, wide and
/// combining characters, markup; sometimes long.
fn hostile_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        any::<String>(),
        "[\\x00-\\x1f\\x7f\\u{80}-\\u{9f}]{1,8}",
        "[\\u{200b}-\\u{200f}\\u{202a}-\\u{202e}\\u{2066}-\\u{2069}\\u{feff}]{1,8}",
        "[a-z0-9.-]{1,40}",
        "[日本語🙂<>&|=@`*_~]{1,20}",
    ];
    (
        piece,
        prop_oneof![Just(1usize), 1..40usize, Just(20_000usize)],
    )
        .prop_map(|(text, times)| text.repeat(times))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_bytes_decode_or_fail_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = decode_pod(&bytes, &mut Interner::default());
        let _ = serde_json::from_slice::<WireEvent>(&bytes);
    }

    #[test]
    fn a_pod_keeps_little_whatever_its_strings(
        name in hostile_text(), owner in hostile_text(), message in hostile_text(),
        reason in hostile_text(), container in hostile_text(), node in hostile_text(),
    ) {
        let pod = json!({
            "metadata": {"name": name, "namespace": "tenant", "uid": reason.clone(),
                "finalizers": [owner.clone(), message.clone()],
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": reason.clone(),
                                     "name": owner.clone(), "uid": message.clone(), "controller": true}]},
            "spec": {"nodeName": node, "containers": [{"name": container.clone(), "image": message.clone()}]},
            "status": {"phase": reason.clone(), "reason": reason.clone(), "message": message.clone(),
                "conditions": [{"type": "PodScheduled", "status": "False", "reason": reason.clone(),
                                "message": message.clone()}],
                "containerStatuses": [{"name": container, "restartCount": 1,
                    "state": {"waiting": {"reason": reason, "message": message}}}]}
        });
        let record = decode_pod(pod.to_string().as_bytes(), &mut Interner::default()).unwrap();
        prop_assert!(kept_bytes(&record) <= 8 * 1024, "{}", kept_bytes(&record));
        // The reference's kind is `reason` here: either too long makes the pod malformed.
        prop_assert_eq!(record.malformed, owner.len() > NAME_CAP || reason.len() > NAME_CAP);
    }

    #[test]
    fn an_event_keeps_little_and_speaks_only_of_its_own_namespace(
        namespace in "[a-z0-9-]{1,20}", other in hostile_text(), uid in hostile_text(),
        message in hostile_text(), filler in hostile_text(),
    ) {
        let event = json!({
            "metadata": {"name": filler.clone(), "namespace": namespace.clone(),
                         "annotations": {"a": filler.clone()}},
            "involvedObject": {"kind": "Pod", "namespace": other.clone(), "uid": uid, "name": filler},
            "type": "Warning", "reason": "Failed",
            "message": format!("Failed to pull image \"x\": {message}"),
            "lastTimestamp": "2099-01-01T00:00:00Z",
        });
        let wire: WireEvent = serde_json::from_value(event).unwrap();
        let now: chrono::DateTime<chrono::Utc> = "2026-03-01T12:00:00Z".parse().unwrap();
        if let Some((target, kept)) = pod_event(&wire, now) {
            prop_assert_eq!(&*target.namespace, namespace.as_str());
            prop_assert_eq!(other.as_str(), namespace.as_str());
            prop_assert!(kept.message.len() <= MESSAGE_CAP);
            prop_assert!(target.uid.len() <= 64);
            prop_assert!(kept.last.is_some_and(|t| t <= now));
        }
    }
}
