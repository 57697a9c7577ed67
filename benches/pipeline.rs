//! Event pipeline throughput on one core: decode a watch event, update the cache, classify,
//! side by side with plain `serde_json` decoding of the same bytes into `k8s_openapi` `Pod`.
//!
//! `cargo bench --bench pipeline [-- EVENTS]` (default 20,000 events of realistic pods).

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
use opc_core::pod::WirePod;
use opc_core::rules::{classify, default_chain};

fn main() {
    let events: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(20_000);
    let now = Utc::now();
    let lines = watch_lines(events, now);
    let bytes: usize = lines.iter().map(Vec::len).sum();
    println!(
        "{events} watch events, {:.1} MiB, {:.1} KB per pod",
        mib(bytes),
        bytes as f64 / events as f64 / 1000.0
    );

    let chain = default_chain();
    let (mut ours, mut plain) = (Duration::MAX, Duration::MAX);
    // Alternate the two, best of five each, so machine noise hits both alike.
    for _ in 0..5 {
        plain = plain.min(time(|| {
            for line in &lines {
                let event: WatchEvent<Pod> = serde_json::from_slice(line).expect("valid event");
                black_box(event);
            }
        }));
        ours = ours.min(time(|| {
            let cache = Cache::new();
            for line in &lines {
                match serde_json::from_slice::<WatchEvent<WirePod>>(line).expect("valid event") {
                    WatchEvent::Added(pod) | WatchEvent::Modified(pod) => {
                        let uid = pod.metadata.uid.clone();
                        cache.upsert(pod, now);
                        let record = cache.get(&uid).expect("just inserted");
                        black_box(classify(&record, &chain, now));
                    }
                    other => {
                        black_box(other);
                    }
                }
            }
        }));
    }
    let rate = |d: Duration| events as f64 / d.as_secs_f64();
    println!(
        "plain serde_json into k8s_openapi Pod: {:>9.0} events/s  {:>6.1} MiB/s",
        rate(plain),
        mib(bytes) / plain.as_secs_f64()
    );
    println!(
        "decode + cache + classify (ours):      {:>9.0} events/s  {:>6.1} MiB/s",
        rate(ours),
        mib(bytes) / ours.as_secs_f64()
    );
    println!(
        "ratio ours / plain: {:.2}x",
        plain.as_secs_f64() / ours.as_secs_f64()
    );
}

fn time(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}
