//! Event pipeline throughput on one core: decode a watch event, update the cache, classify,
//! from JSON lines and from protobuf frames, side by side with plain `serde_json` decoding of
//! the same JSON into `k8s_openapi` `Pod`, and plain `prost` decoding of the same frames into
//! `k8s-pb`'s `Pod` (the well-kept alternative to our own protobuf decode).
//!
//! `cargo bench --bench pipeline [-- EVENTS]` (default 20,000 events of the simulator's
//! realistic pods; its protobuf carries fewer fields than a real server's, so per byte it is
//! cheaper to skip), or `cargo bench --bench pipeline -- --captured JSON_STREAM PROTOBUF_STREAM`
//! to run the same events as a real API server wrote them (a watch body saved in each format).

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
use k8s_openapi::api::core::v1::Pod;
use kube::core::WatchEvent;
use kube_sim::generate::watch_lines;
use opc_core::cluster::Cache;
use opc_core::pod::{WirePod, next_frame, watch_event};
use opc_core::rules::{classify, default_chain};
use serde_json::Value;

/// The same events in both formats: JSON lines, and protobuf frames without their length.
struct Events {
    lines: Vec<Vec<u8>>,
    frames: Vec<Vec<u8>>,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let events = match args.iter().position(|a| a == "--captured") {
        Some(at) => captured(&args[at + 1], &args[at + 2]),
        None => generated(args.iter().find_map(|a| a.parse().ok()).unwrap_or(20_000)),
    };
    let n = events.lines.len();
    assert_eq!(n, events.frames.len(), "as many frames as lines");
    let json_bytes: usize = events.lines.iter().map(Vec::len).sum();
    let proto_bytes: usize = events.frames.iter().map(|f| f.len() + 4).sum();
    println!(
        "{n} watch events: JSON {:.1} MiB ({:.1} KB per event), protobuf {:.1} MiB ({:.1} KB)",
        mib(json_bytes),
        json_bytes as f64 / n as f64 / 1000.0,
        mib(proto_bytes),
        proto_bytes as f64 / n as f64 / 1000.0,
    );

    let chain = default_chain();
    let now = Utc::now();
    let (mut plain, mut json, mut proto) = (Duration::MAX, Duration::MAX, Duration::MAX);
    let mut prost_pod = Duration::MAX;
    // Alternate the four, best of five each, so machine noise hits them alike.
    for _ in 0..5 {
        prost_pod = prost_pod.min(time(|| {
            for frame in &events.frames {
                black_box(k8s_pb_pod(frame));
            }
        }));
        plain = plain.min(time(|| {
            for line in &events.lines {
                let event: WatchEvent<Pod> = serde_json::from_slice(line).expect("valid event");
                black_box(event);
            }
        }));
        json = json.min(time(|| {
            let cache = Cache::new();
            for line in &events.lines {
                let event = serde_json::from_slice::<WatchEvent<WirePod>>(line);
                apply(&cache, event.expect("valid event"), &chain, now);
            }
        }));
        proto = proto.min(time(|| {
            let cache = Cache::new();
            for frame in &events.frames {
                apply(
                    &cache,
                    watch_event(frame).expect("valid frame"),
                    &chain,
                    now,
                );
            }
        }));
    }
    let rate = |d: Duration| n as f64 / d.as_secs_f64();
    for (name, took, bytes) in [
        ("plain serde_json into k8s_openapi Pod", plain, json_bytes),
        ("decode + cache + classify, JSON", json, json_bytes),
        ("decode + cache + classify, protobuf", proto, proto_bytes),
        ("plain prost into k8s-pb Pod", prost_pod, proto_bytes),
    ] {
        println!(
            "{name:<38} {:>9.0} events/s  {:>6.1} MiB/s",
            rate(took),
            mib(bytes) / took.as_secs_f64()
        );
    }
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    println!("ratio ours JSON / plain: {:.2}x", ratio(plain, json));
    println!(
        "ratio ours protobuf / ours JSON: {:.2}x",
        ratio(json, proto)
    );
    println!(
        "ratio ours protobuf (decode + cache + classify) / prost decode alone: {:.2}x",
        ratio(prost_pod, proto)
    );
}

/// A watch frame decoded as `prost` and `k8s-pb` would have it: the event, the `k8s\0`
/// `runtime.Unknown` envelope in its object, and the whole `Pod` in that.
fn k8s_pb_pod(frame: &[u8]) -> k8s_pb::api::core::v1::Pod {
    use k8s_pb::apimachinery::pkg::apis::meta::v1::WatchEvent as PbWatchEvent;
    use k8s_pb::apimachinery::pkg::runtime::Unknown;
    use prost::Message;
    let event = PbWatchEvent::decode(frame).expect("a watch event");
    let raw = event.object.and_then(|o| o.raw).expect("an object");
    let unknown = Unknown::decode(&raw[4..]).expect("a runtime.Unknown");
    k8s_pb::api::core::v1::Pod::decode(unknown.raw()).expect("a Pod")
}

/// What the watch does with one event: the cache takes it, and its pod is classified.
fn apply(
    cache: &Cache,
    event: WatchEvent<WirePod>,
    chain: &[opc_core::rules::RuleSpec],
    now: chrono::DateTime<Utc>,
) {
    match event {
        WatchEvent::Added(pod) | WatchEvent::Modified(pod) => {
            let uid = pod.metadata.uid.clone();
            cache.upsert(pod, now);
            let record = cache.get(&uid).expect("just inserted");
            black_box(classify(&record, chain, now));
        }
        other => {
            black_box(other);
        }
    }
}

/// The simulator's realistic pods as MODIFIED events, in both formats.
fn generated(n: usize) -> Events {
    let lines = watch_lines(n, Utc::now());
    let frames = lines
        .iter()
        .map(|line| {
            let event: Value = serde_json::from_slice(line).expect("a JSON event");
            let framed = kube_sim::proto::watch_frame("MODIFIED", &event["object"]);
            framed[4..].to_vec()
        })
        .collect();
    Events { lines, frames }
}

/// Two watch bodies a real server wrote for the same pods: one in JSON, one in protobuf.
fn captured(json_path: &str, proto_path: &str) -> Events {
    let json = std::fs::read(json_path).expect("the JSON stream");
    let lines = json
        .split_inclusive(|b| *b == b'\n')
        .filter(|l| l.iter().any(|b| !b.is_ascii_whitespace()))
        .map(<[u8]>::to_vec)
        .collect();
    let proto = std::fs::read(proto_path).expect("the protobuf stream");
    let mut frames = Vec::new();
    let mut rest = &proto[..];
    while let Some((frame, used)) = next_frame(rest).expect("whole frames") {
        frames.push(frame.to_vec());
        rest = &rest[used..];
    }
    Events { lines, frames }
}

fn time(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}
