//! The compact pod record is the same whether the API server sent a pod as JSON or as
//! protobuf: for every pod the simulator generates or holds, and every fixture. The protobuf
//! is written by the simulator's encoder, built on k8s-pb's generated types, so a field number
//! the decoder got wrong shows here.

use chrono::{TimeZone, Utc};
use opc_core::pod::{Interner, PodRecord, decode_pod, decode_pod_proto, pod_body, pod_list};
use serde_json::{Value, json};

fn from_json(pod: &Value) -> PodRecord {
    decode_pod(&serde_json::to_vec(pod).unwrap(), &mut Interner::default()).unwrap()
}

fn from_protobuf(pod: &Value) -> PodRecord {
    let mut pod = pod.clone();
    pod["kind"] = json!("Pod");
    let body = kube_sim::proto::encode(&pod).expect("a pod has a protobuf form");
    pod_body(&body)
        .unwrap()
        .into_record(&mut Interner::default())
}

/// Every pod of `pods` decodes to one record from both formats; the count compared.
fn assert_alike<'a>(pods: impl IntoIterator<Item = &'a Value>) -> usize {
    let mut compared = 0;
    for pod in pods {
        assert_eq!(from_protobuf(pod), from_json(pod), "{pod:#}");
        compared += 1;
    }
    compared
}

#[test]
fn every_generated_pod_decodes_alike_from_protobuf_and_json() {
    let now = Utc.with_ymd_and_hms(2026, 11, 20, 12, 0, 0).unwrap();
    // The generator's shapes repeat every 200 pods; the hostile pages name a 300-byte owner.
    let pages = kube_sim::generate::hostile_list_pages(400, 100, now, 20, 300);
    let pods: Vec<Value> = pages
        .iter()
        .flat_map(|page| {
            let list: Value = serde_json::from_slice(page).unwrap();
            list["items"].as_array().unwrap().clone()
        })
        .collect();
    assert_eq!(assert_alike(&pods), 400);
    assert!(
        from_protobuf(&pods[0]).malformed,
        "the hostile owner marks the pod"
    );
}

#[test]
fn a_list_page_decodes_alike_item_by_item() {
    let now = Utc.with_ymd_and_hms(2026, 11, 20, 12, 0, 0).unwrap();
    let page = &kube_sim::generate::list_pages(300, 250, now)[0];
    let list: Value = serde_json::from_slice(page).unwrap();
    let body = kube_sim::proto::encode(&list).unwrap();
    let mut interner = Interner::default();
    let mut records = Vec::new();
    let meta = pod_list(&body, |item| {
        records.push(decode_pod_proto(item, &mut interner).unwrap());
    })
    .unwrap();
    assert_eq!(meta.resource_version, "2000000");
    assert_eq!(meta.continue_token.as_deref(), Some("page-1"));
    let expected: Vec<PodRecord> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(from_json)
        .collect();
    assert_eq!(records.len(), 250);
    assert_eq!(records, expected);
}

#[test]
fn every_fixture_pod_decodes_alike_from_protobuf_and_json() {
    #[derive(serde::Deserialize)]
    struct Case {
        pod: Value,
    }
    let text = std::fs::read_to_string("tests/fixtures/pods/cases.yaml").unwrap();
    let cases: Vec<Case> = serde_saphyr::from_str(&text).unwrap();
    assert!(cases.len() >= 15, "fixture file lost cases");
    assert_eq!(assert_alike(cases.iter().map(|c| &c.pod)), cases.len());
}

#[tokio::test]
async fn every_pod_a_demo_cluster_holds_decodes_alike() {
    for name in kube_sim::demo::CONTEXTS {
        let demo = kube_sim::demo::start_named(name).await.unwrap();
        let request = http::Request::get("/api/v1/pods").body(Vec::new()).unwrap();
        let list: Value =
            serde_json::from_str(&demo.client().request_text(request).await.unwrap()).unwrap();
        let pods = list["items"].as_array().unwrap();
        assert!(pods.len() > 20, "{name} holds {} pods", pods.len());
        assert_eq!(assert_alike(pods), pods.len());
    }
}

/// Records by uid, from the JSON list captured from a real kube-apiserver.
fn real_json_records() -> Vec<PodRecord> {
    let text = std::fs::read_to_string("tests/fixtures/pods/realk8s-list.json").unwrap();
    let list: Value = serde_json::from_str(&text).unwrap();
    let mut records: Vec<PodRecord> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(from_json)
        .collect();
    records.sort_by(|a, b| a.uid.cmp(&b.uid));
    records
}

#[test]
fn a_real_api_servers_protobuf_list_decodes_as_its_json_list() {
    let body = std::fs::read("tests/fixtures/pods/realk8s-list.pb").unwrap();
    let mut interner = Interner::default();
    let mut records = Vec::new();
    let meta = pod_list(&body, |item| {
        records.push(decode_pod_proto(item, &mut interner).unwrap())
    })
    .unwrap();
    assert!(!meta.resource_version.is_empty());
    records.sort_by(|a, b| a.uid.cmp(&b.uid));
    let expected = real_json_records();
    assert_eq!(records.len(), 4);
    assert_eq!(records, expected);
    // What the fixture holds: a crash loop after an OOM kill, a pod no node fits, an evicted
    // pod that opts out, a failing image pull beside a running sidecar.
    let waiting: Vec<_> = records
        .iter()
        .flat_map(|p| p.containers.iter())
        .filter_map(|c| match &c.state {
            opc_core::pod::ContainerState::Waiting { reason, .. } => Some(&**reason),
            _ => None,
        })
        .collect();
    assert_eq!(waiting.len(), 2, "{waiting:?}");
    assert!(records.iter().any(|p| p.unscheduled.is_some()));
    assert!(
        records
            .iter()
            .any(|p| p.ignored && p.reason.as_deref() == Some("Evicted"))
    );
    assert!(records.iter().any(|p| p.claims_volume));
}

#[test]
fn a_real_api_servers_protobuf_watch_decodes_frame_by_frame() {
    let stream = std::fs::read("tests/fixtures/pods/realk8s-watch.pb").unwrap();
    let mut rest = &stream[..];
    let mut records = Vec::new();
    while let Some((frame, used)) = opc_core::pod::next_frame(rest).unwrap() {
        match opc_core::pod::watch_event(frame).unwrap() {
            kube::core::WatchEvent::Added(pod) => {
                records.push(pod.into_record(&mut Interner::default()))
            }
            other => panic!("a watch from 0 of an unchanging namespace sent {other:?}"),
        }
        rest = &rest[used..];
    }
    assert!(rest.is_empty(), "{} bytes of a cut frame", rest.len());
    records.sort_by(|a, b| a.uid.cmp(&b.uid));
    assert_eq!(records, real_json_records());
}
