//! Fills a real (test) cluster with realistic pods, for measuring the product against a real
//! kube-apiserver (`../shared/realk8s/`): the nodes and namespaces they name, then each pod of
//! `kube_sim::generate` created and given its status through the status subresource, as a
//! kubelet would. Never point it at a cluster that matters.
//!
//! `cargo run --release --example seed_pods -- KUBECONFIG PODS [CONCURRENCY]`

// A test, bench or example fails by panicking: the workspace's panic policy is for the product.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use chrono::Utc;
use futures::StreamExt;
use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::{Value, json};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(path), Some(pods)) = (args.first(), args.get(1).and_then(|n| n.parse().ok())) else {
        eprintln!("usage: seed_pods KUBECONFIG PODS [CONCURRENCY]");
        std::process::exit(2);
    };
    let pods: usize = pods;
    let concurrency: usize = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(16);
    let kubeconfig = Kubeconfig::read_from(path).expect("a kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("a config");
    let client = kube::Client::try_from(config).expect("a client");
    let now = Utc::now();
    let generated: Vec<Value> = (0..pods)
        .map(|i| kube_sim::generate::realistic_pod(i, now))
        .collect();

    let mut nodes: Vec<&str> = generated
        .iter()
        .filter_map(|p| p["spec"]["nodeName"].as_str())
        .collect();
    nodes.sort_unstable();
    nodes.dedup();
    let node_api: Api<Node> = Api::all(client.clone());
    for node in &nodes {
        let node: Node = serde_json::from_value(json!({ "metadata": { "name": node } })).unwrap();
        let _ = node_api.create(&PostParams::default(), &node).await;
    }
    let mut namespaces: Vec<&str> = generated
        .iter()
        .filter_map(|p| p["metadata"]["namespace"].as_str())
        .collect();
    namespaces.sort_unstable();
    namespaces.dedup();
    let ns_api: Api<Namespace> = Api::all(client.clone());
    for ns in &namespaces {
        let ns: Namespace = serde_json::from_value(json!({ "metadata": { "name": ns } })).unwrap();
        let _ = ns_api.create(&PostParams::default(), &ns).await;
    }
    println!("{} nodes, {} namespaces", nodes.len(), namespaces.len());

    let start = Instant::now();
    let done = Arc::new(AtomicUsize::new(0));
    futures::stream::iter(generated)
        .for_each_concurrent(concurrency, |pod| {
            let (client, done) = (client.clone(), done.clone());
            async move {
                if let Err(e) = seed(&client, pod).await {
                    eprintln!("{e}");
                }
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                if n.is_multiple_of(5_000) {
                    println!("{n} pods after {:.0} s", start.elapsed().as_secs_f64());
                }
            }
        })
        .await;
    println!(
        "{} pods seeded in {:.0} s",
        done.load(Ordering::Relaxed),
        start.elapsed().as_secs_f64()
    );
}

/// Create the pod without what the server sets itself, then write its status.
async fn seed(client: &kube::Client, mut pod: Value) -> Result<(), kube::Error> {
    let namespace = pod["metadata"]["namespace"]
        .as_str()
        .unwrap_or("default")
        .to_string();
    let name = pod["metadata"]["name"].as_str().unwrap_or("").to_string();
    let status = pod["status"].take();
    if let Some(meta) = pod["metadata"].as_object_mut() {
        for key in [
            "resourceVersion",
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "managedFields",
            "finalizers",
        ] {
            meta.remove(key);
        }
    }
    let api: Api<Pod> = Api::namespaced(client.clone(), &namespace);
    let pod: Pod = serde_json::from_value(pod).map_err(kube::Error::SerdeError)?;
    api.create(&PostParams::default(), &pod).await?;
    api.patch_status(
        &name,
        &PatchParams::default(),
        &Patch::Merge(json!({ "status": status })),
    )
    .await?;
    Ok(())
}
