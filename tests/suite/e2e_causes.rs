//! Tier 5: causes from what a cluster writes (its kubelets' Events, its scheduler's verdicts),
//! read by a session as every mode opens one, and by `scan`. Always on the simulated cluster;
//! on a real one with `OPC_E2E_KUBECONFIG=<kubeconfig> cargo test --test suite e2e_causes --
//! --ignored`. Needs, beyond `e2e`'s: list and watch events.

use crate::support;

use std::path::Path;
use std::process::Command;

use chrono::Utc;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, PostParams};
use opc_core::cluster::Scope;
use opc_core::config::Config;
use opc_core::policy::{Flags, Policy};
use opc_core::rules::{CauseClass, cause};
use serde_json::{Value, json};
use support::e2e::Target;
use support::sim::typed;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn causes_on_the_simulated_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let target = Target::simulated(dir.path()).await;
    run(&target, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real cluster: OPC_E2E_KUBECONFIG=<kubeconfig> cargo test --test suite e2e_causes -- --ignored"]
async fn causes_on_a_real_cluster() {
    let target = Target::real().await;
    let dir = tempfile::tempdir().unwrap();
    run(&target, dir.path()).await;
}

async fn run(target: &Target, scratch: &Path) {
    target
        .in_namespaces(1, |names| async move {
            scenario(target, &names[0], scratch).await;
        })
        .await;
}

/// A pod no node can hold: the scheduler says why, reason by reason.
fn too_big() -> Value {
    json!({
        "metadata": {"name": "too-big"},
        "spec": {"terminationGracePeriodSeconds": 0, "containers": [{
            "name": "app", "image": "registry.k8s.io/pause:3.10",
            "resources": {"requests": {"cpu": "900", "memory": "1Ti"}},
        }]},
    })
}

async fn scenario(target: &Target, ns: &str, scratch: &Path) {
    let deployments: Api<Deployment> = Api::namespaced(target.client.clone(), ns);
    deployments
        .create(
            &PostParams::default(),
            &typed(crate::e2e::deployment("web", 1)),
        )
        .await
        .expect("create the deployment");
    let pods: Api<Pod> = Api::namespaced(target.client.clone(), ns);
    pods.create(&PostParams::default(), &typed(too_big()))
        .await
        .expect("create the pod");

    let config_path = crate::e2e::write_config(scratch, ns);
    let config = Config::load_file(&config_path).unwrap();
    let policy = Policy::new(Flags::default(), &config);
    let scopes = [Scope::Namespace(ns.to_string())];
    let session = support::sim::open_session(&target.client, &scopes, &policy);

    // The pull in back-off says only "Back-off" in its status: its class is the kubelet's
    // Event's, which the session watched.
    let web = target
        .wait_for("the pull classed by the kubelet's Event", || async {
            let found = session.cache.findings();
            found.into_iter().find(|f| {
                f.pod.name.starts_with("web-")
                    && &*f.finding.reason == "ImagePullBackOff"
                    && f.cause == CauseClass::RegistryUnreachable
            })
        })
        .await;
    let told = cause(&web.pod, &web.finding, web.events(), web.node(), Utc::now());
    assert!(
        told.evidence
            .iter()
            .any(|e| e.source.starts_with("Event Failed") && e.text.contains("no such host")),
        "{told:?}"
    );

    // The scheduler's verdict, read from the pod's condition: no node has 900 cores (or there
    // is no node at all, on a control plane without kubelets).
    let big = target
        .wait_for("the scheduler's verdict", || async {
            let found = session.cache.findings();
            found.into_iter().find(|f| &*f.pod.name == "too-big")
        })
        .await;
    let verdict = cause(&big.pod, &big.finding, big.events(), big.node(), Utc::now());
    let said = verdict
        .evidence
        .first()
        .map(|e| e.text.clone())
        .unwrap_or_default();
    // What the scheduler says depends on the nodes the cluster has now (other tests, run at
    // the same time, add a not-ready one): the class must follow what it said.
    let expected = if said.starts_with("no nodes available") {
        CauseClass::UnschedulableNodes
    } else if said.contains("had taint") && !said.contains("Insufficient") {
        CauseClass::UntoleratedTaint
    } else {
        CauseClass::InsufficientResources
    };
    assert_eq!(big.cause, expected, "{verdict:?}");
    if expected == CauseClass::InsufficientResources {
        assert!(said.contains("Insufficient cpu"), "{said}");
    }

    // `scan` lists the Events beside the pods, and says the same.
    let out = Command::new(env!("CARGO_BIN_EXE_ops-pod-cleaner"))
        .args(["scan", "-n", ns, "--output", "json", "--kubeconfig"])
        .arg(&target.kubeconfig)
        .arg("--config")
        .arg(&config_path)
        .output()
        .expect("the binary runs");
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    let class_of = |name: &str| {
        rows.iter()
            .find(|r| r["name"] == name)
            .and_then(|r| r["cause"]["class"].as_str())
            .map(String::from)
    };
    assert_eq!(
        class_of(&web.pod.name).as_deref(),
        Some("registryUnreachable"),
        "{rows:?}"
    );
    assert_eq!(
        class_of("too-big").as_deref(),
        Some(expected.name()),
        "{rows:?}"
    );
}
