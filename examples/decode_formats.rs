//! Decoding one list of pods into compact records, from JSON and from protobuf, in one run.
//!
//! The protobuf body is the simulator's, which carries fewer fields than a real server's (no
//! env, probes or managedFields): compare the throughput per byte as well as per pod.
//!
//! `cargo run --release --example decode_formats [-- PODS]` (default 50,000).

// A test, bench or example fails by panicking: the workspace's panic policy is for the product.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use chrono::Utc;
use kube_sim::generate::realistic_pod;
use opc_core::pod::{Interner, PodRecord, WirePod, decode_pod_proto, pod_list};
use serde_json::{Value, json};

#[derive(serde::Deserialize)]
struct JsonList {
    items: Vec<WirePod>,
}

fn main() {
    let pods: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(50_000);
    let now = Utc::now();
    let list = json!({
        "kind": "PodList", "apiVersion": "v1",
        "metadata": {"resourceVersion": "1"},
        "items": (0..pods).map(|i| realistic_pod(i, now)).collect::<Vec<Value>>(),
    });
    let json_body = serde_json::to_vec(&list).unwrap();
    let proto_body = kube_sim::proto::encode(&list).unwrap();
    drop(list);

    let (json_time, from_json) = best(5, || {
        let mut interner = Interner::default();
        let list: JsonList = serde_json::from_slice(&json_body).unwrap();
        let records: Vec<PodRecord> = list
            .items
            .into_iter()
            .map(|p| p.into_record(&mut interner))
            .collect();
        records
    });
    let (proto_time, from_proto) = best(5, || {
        let mut interner = Interner::default();
        let mut records = Vec::with_capacity(pods);
        pod_list(&proto_body, |item| {
            records.push(decode_pod_proto(item, &mut interner).unwrap());
        })
        .unwrap();
        records
    });
    assert_eq!(from_json, from_proto, "both formats give the same records");
    for (name, body, time) in [
        ("json", &json_body, json_time),
        ("protobuf", &proto_body, proto_time),
    ] {
        let secs = time.as_secs_f64();
        println!(
            "{name:>8}: {pods} pods, {:.1} MB, best of 5 {:.0} ms: {:.0} pods/s, {:.0} MB/s",
            body.len() as f64 / 1e6,
            secs * 1e3,
            pods as f64 / secs,
            body.len() as f64 / 1e6 / secs,
        );
    }
}

/// The fastest of `runs` runs of `f`, and its last result.
fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut fastest = Duration::MAX;
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        let out = black_box(f());
        fastest = fastest.min(start.elapsed());
        last = Some(out);
    }
    (fastest, last.unwrap())
}
