//! The protobuf decode against the JSON one: the same pod in both formats gives the same
//! record, hostile text included, and no bytes make it panic.

pub(crate) mod proto_build;

use opc_core::pod::{
    IGNORE_ANNOTATION, Interner, MAGIC, PageMeta, PodRecord, ProtoError, decode_pod,
    decode_pod_proto, next_frame, pod_list, watch_event,
};
use proptest::prelude::*;
use proto_build::{body, field, frame, message, varint};
use serde_json::json;

/// A varint field: a number, a bool or an enum.
fn number(number: u32, value: u64) -> Vec<u8> {
    let mut out = varint(u64::from(number) << 3);
    out.extend(varint(value));
    out
}

fn time(seconds: i64) -> Vec<u8> {
    number(1, seconds as u64)
}

fn json_record(pod: &serde_json::Value) -> PodRecord {
    decode_pod(pod.to_string().as_bytes(), &mut Interner::default()).unwrap()
}

fn proto_record(pod: &[u8]) -> PodRecord {
    decode_pod_proto(pod, &mut Interner::default()).unwrap()
}

/// The strings a tenant writes into a pod, in one protobuf and one JSON pod.
fn hostile_pair(
    name: &str,
    owner: &str,
    message_text: &str,
    reason: &str,
) -> (Vec<u8>, serde_json::Value) {
    let reference = message(&[
        field(5, b"apps/v1"),
        field(1, reason.as_bytes()),
        field(3, owner.as_bytes()),
        field(4, message_text.as_bytes()),
        number(6, 1),
    ]);
    let meta = message(&[
        field(1, name.as_bytes()),
        field(3, b"tenant"),
        field(5, reason.as_bytes()),
        field(8, &time(1_700_000_000)),
        field(13, &reference),
        field(14, owner.as_bytes()),
        field(14, message_text.as_bytes()),
    ]);
    let waiting = message(&[
        field(1, reason.as_bytes()),
        field(2, message_text.as_bytes()),
    ]);
    let container = message(&[
        field(1, name.as_bytes()),
        field(2, &field(1, &waiting)),
        number(5, 1),
    ]);
    let status = message(&[
        field(1, reason.as_bytes()),
        field(3, message_text.as_bytes()),
        field(4, reason.as_bytes()),
        field(8, &container),
    ]);
    let proto = message(&[field(1, &meta), field(3, &status)]);
    let json = json!({
        "metadata": {"name": name, "namespace": "tenant", "uid": reason,
            "creationTimestamp": "2023-11-14T22:13:20Z",
            "finalizers": [owner, message_text],
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": reason, "name": owner,
                                 "uid": message_text, "controller": true}]},
        "status": {"phase": reason, "message": message_text, "reason": reason,
            "containerStatuses": [{"name": name, "restartCount": 1,
                "state": {"waiting": {"reason": reason, "message": message_text}}}]}
    });
    (proto, json)
}

#[test]
fn a_tenants_oversized_strings_are_cut_as_json_cuts_them() {
    let huge = "x".repeat(300_000);
    let (proto, json) = hostile_pair(&huge, &huge, &huge, "Waiting");
    let record = proto_record(&proto);
    assert!(record.malformed, "an owner name over 253 characters");
    assert_eq!(record, json_record(&json));
}

#[test]
fn empty_strings_and_zero_times_read_as_absent_as_go_writes_them() {
    // Go's protobuf writes an empty reason and a zero time (an empty message); its JSON
    // leaves both out.
    let meta = message(&[
        field(1, b"web"),
        field(3, b"shop"),
        field(5, b"u1"),
        field(8, b""),
    ]);
    let condition = message(&[
        field(1, b"Ready"),
        field(2, b"True"),
        field(4, b""),
        field(5, b""),
    ]);
    let status = message(&[
        field(1, b""),
        field(2, &condition),
        field(3, b""),
        field(4, b""),
    ]);
    let spec = message(&[field(10, b"")]);
    let pod = message(&[field(1, &meta), field(2, &spec), field(3, &status)]);
    let json = json!({"metadata": {"name": "web", "namespace": "shop", "uid": "u1"},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
    let record = proto_record(&pod);
    assert_eq!(record.reason, None);
    assert_eq!(record.created, None);
    assert_eq!(record, json_record(&json));
}

#[test]
fn specs_volumes_and_annotations_read_as_in_json() {
    // Limits are field 1 and requests field 2, each a map entry of a name to a Quantity.
    let quantity = |map: u32, name: &str, text: &str| {
        let entry = [
            field(1, name.as_bytes()),
            field(2, &field(1, text.as_bytes())),
        ];
        field(map, &message(&entry))
    };
    let resources = message(&[
        quantity(1, "memory", "256Mi"),
        quantity(2, "cpu", "250m"),
        quantity(2, "memory", "1Gi"),
    ]);
    let container = message(&[field(1, b"app"), field(2, b"nginx"), field(8, &resources)]);
    let claim = message(&[
        field(1, b"data"),
        field(2, &field(10, &field(1, b"data-0"))),
    ]);
    let empty_dir = message(&[field(1, b"tmp"), field(2, &field(2, b""))]);
    let spec = message(&[
        field(1, &empty_dir),
        field(1, &claim),
        field(2, &container),
        field(10, b"node-1"),
    ]);
    let annotation = |k: &str, v: &str| {
        field(
            12,
            &message(&[field(1, k.as_bytes()), field(2, v.as_bytes())]),
        )
    };
    let meta = message(&[
        field(1, b"db-0"),
        annotation("a", "b"),
        annotation(IGNORE_ANNOTATION, "yes"),
    ]);
    let terminated = message(&[
        number(1, (-1i64) as u64),
        field(3, b"OOMKilled"),
        field(6, &time(1_700_000_100)),
    ]);
    let container_status = message(&[
        field(1, b"app"),
        field(3, &field(3, &terminated)),
        number(5, 4),
    ]);
    let status = message(&[field(1, b"Running"), field(8, &container_status)]);
    let pod = message(&[field(1, &meta), field(2, &spec), field(3, &status)]);
    let json = json!({"metadata": {"name": "db-0", "annotations": {"a": "b", IGNORE_ANNOTATION: "yes"}},
        "spec": {"nodeName": "node-1",
            "volumes": [{"name": "tmp", "emptyDir": {}}, {"name": "data", "persistentVolumeClaim": {"claimName": "data-0"}}],
            "containers": [{"name": "app", "image": "nginx", "resources": {
                "limits": {"memory": "256Mi"}, "requests": {"cpu": "250m", "memory": "1Gi"}}}]},
        "status": {"phase": "Running", "containerStatuses": [{"name": "app", "restartCount": 4,
            "lastState": {"terminated": {"exitCode": -1, "reason": "OOMKilled", "finishedAt": "2023-11-14T22:15:00Z"}}}]}});
    let record = proto_record(&pod);
    assert!(record.ignored && record.claims_volume);
    assert_eq!(record.containers[0].memory_limit, Some(256 << 20));
    assert_eq!(record, json_record(&json));
}

#[test]
fn a_negative_restart_count_is_refused_as_json_refuses_it() {
    let container = message(&[field(1, b"app"), number(5, (-3i64) as u64)]);
    let pod = field(3, &field(8, &container));
    assert!(decode_pod_proto(&pod, &mut Interner::default()).is_err());
}

/// A pod's message read field by field, as the protobuf reader reads any message.
fn all(bytes: &[u8]) -> Result<PodRecord, ProtoError> {
    decode_pod_proto(bytes, &mut Interner::default())
}

#[test]
fn refuses_what_is_cut_short_or_unknown() {
    assert_eq!(all(&[0x12, 5, b'a']), Err(ProtoError::Truncated));
    assert_eq!(all(&[0x08]), Err(ProtoError::Truncated));
    assert_eq!(all(&[0x0b]), Err(ProtoError::WireType(3)));
    assert_eq!(all(&[0x00, 1]), Err(ProtoError::FieldZero));
    assert_eq!(
        all(&[
            0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1
        ]),
        Err(ProtoError::LongVarint)
    );
    let huge_len = [0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f];
    assert_eq!(all(&huge_len), Err(ProtoError::Truncated));
}

/// Fields of a newer API, of each wire type, are stepped over whole: what follows still reads.
#[test]
fn unknown_fields_of_each_wire_type_are_stepped_over() {
    // Field 15: varint 300; "hi"; fixed32 1; fixed64 2. Then the metadata's name.
    let unknown = [
        0x78, 0xac, 0x02, 0x7a, 2, b'h', b'i', 0x7d, 1, 0, 0, 0, 0x79, 2, 0, 0, 0, 0, 0, 0, 0,
    ];
    let pod = [&unknown[..], &field(1, &field(1, b"web-1"))].concat();
    assert_eq!(&*proto_record(&pod).name, "web-1");
}

#[test]
fn a_list_reads_its_pods_and_where_to_go_on() {
    let list_meta = message(&[field(2, b"42"), field(3, b"next-page")]);
    let pod = |name: &[u8]| field(1, &field(1, name));
    let list = message(&[
        field(1, &list_meta),
        field(2, &pod(b"a")),
        field(2, &pod(b"b")),
    ]);
    let unknown = message(&[
        field(1, &message(&[field(1, b"v1"), field(2, b"PodList")])),
        field(2, &list),
    ]);
    let body = [&MAGIC[..], &unknown].concat();
    let mut names = Vec::new();
    let meta = pod_list(&body, |item| names.push(proto_record(item).name)).unwrap();
    assert_eq!(
        meta,
        PageMeta {
            resource_version: "42".into(),
            continue_token: Some("next-page".into())
        }
    );
    assert_eq!(names, ["a".into(), "b".into()] as [Box<str>; 2]);
    assert_eq!(pod_list(&unknown, |_| {}), Err(ProtoError::NoMagic));
}

#[test]
fn watch_frames_carry_pods_bookmarks_and_errors() {
    let pod = field(1, &message(&[field(1, b"web"), field(6, b"7")]));
    let mark_meta = message(&[
        field(6, b"9"),
        field(
            12,
            &message(&[field(1, b"k8s.io/initial-events-end"), field(2, b"true")]),
        ),
    ]);
    let gone = message(&[
        field(2, b"Failure"),
        field(3, b"too old resource version"),
        field(4, b"Expired"),
        number(6, 410),
    ]);
    let stream = [
        frame("ADDED", &body("Pod", &pod)),
        frame("BOOKMARK", &body("Pod", &field(1, &mark_meta))),
        frame("ERROR", &body("Status", &gone)),
    ]
    .concat();
    let mut rest = &stream[..];
    let mut events = Vec::new();
    while let Some((event, used)) = next_frame(rest).unwrap() {
        events.push(watch_event(event).unwrap());
        rest = &rest[used..];
    }
    assert!(rest.is_empty());
    let [added, mark, error] = &events[..] else {
        panic!("{events:?}")
    };
    assert!(
        matches!(added, kube::core::WatchEvent::Added(p) if p.metadata.name == "web" && p.metadata.resource_version == "7")
    );
    let kube::core::WatchEvent::Bookmark(mark) = mark else {
        panic!("{mark:?}")
    };
    assert_eq!(mark.metadata.resource_version, "9");
    assert_eq!(
        mark.metadata
            .annotations
            .get("k8s.io/initial-events-end")
            .map(String::as_str),
        Some("true")
    );
    let kube::core::WatchEvent::Error(status) = error else {
        panic!("{error:?}")
    };
    assert_eq!((status.code, status.reason.as_str()), (410, "Expired"));
    // Half a frame waits for the rest; a length no object can have is refused.
    assert_eq!(next_frame(&stream[..10]), Ok(None));
    assert_eq!(next_frame(&u32::MAX.to_be_bytes()), Err(ProtoError::Frame));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_bytes_decode_or_fail_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = decode_pod_proto(&bytes, &mut Interner::default());
        let _ = pod_list(&bytes, |item| { let _ = decode_pod_proto(item, &mut Interner::default()); });
        let _ = watch_event(&bytes);
        let _ = next_frame(&bytes);
    }

    #[test]
    fn every_cut_of_a_pod_decodes_or_fails_without_panic(at in 0usize..4096) {
        let (proto, _) = hostile_pair("web-1", "web-abc", "back-off 5m0s restarting failed container", "CrashLoopBackOff");
        let _ = decode_pod_proto(proto.get(..at).unwrap_or(&proto), &mut Interner::default());
    }

    #[test]
    fn protobuf_and_json_give_one_record_whatever_the_text(
        name in "\\PC{0,300}", owner in "\\PC{0,300}", text in "\\PC{1,2000}", reason in "\\PC{1,300}",
    ) {
        // Not empty: Go's JSON leaves an empty reason or message out, as its protobuf cannot.
        let (proto, json) = hostile_pair(&name, &owner, &text, &reason);
        prop_assert_eq!(proto_record(&proto), json_record(&json));
    }
}
