//! Tier 5: end to end, through the API only, as on any conformant cluster.
//!
//! `e2e_on_a_real_cluster` is `#[ignore]`d: `OPC_E2E_KUBECONFIG=<kubeconfig> cargo test --test
//! suite e2e:: -- --ignored` runs it (the cluster must answer; the test fails loudly otherwise).
//! The same scenario always runs against the built-in simulated cluster: any difference is a
//! simulation bug.
//!
//! What it needs on a real cluster (Kubernetes ≥ 1.27 for scheduling gates): create/delete a
//! namespace; create, patch (and status), delete pods; create, get, patch deployments and their
//! scale subresource; get replicasets; create events; get and update the ConfigMap
//! `ops-pod-cleaner-parked` in `ops-pod-cleaner` where that namespace exists. It creates `opc-e2e-<random>` and deletes
//! it at the end, even when the scenario fails. Seeded pods carry a scheduling gate, so no
//! kubelet ever runs them: their states are written through the status subresource.

use crate::support;
use opc_core::cluster::ClusterName;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use opc_core::actions::{
    Action, Audit, Executor, Origin, Outcome, PARKED_CONFIGMAP, PodRef, ScalableWorkload,
    WorkloadKind, parked_namespace,
};
use opc_core::cluster::{Cache, Scope, WatchSettings, spawn_watches};
use opc_core::config::Config;
use opc_core::policy::{Flags, Policy};
use opc_core::rules::RuleKind;
use serde_json::{Value, json};
use support::e2e::{BAD_IMAGE, GATE, Target, pull_failing};
use support::sim::typed;

const HOLD: &str = "ops-pod-cleaner.io/e2e-hold";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e2e_on_the_simulated_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let target = Target::simulated(dir.path()).await;
    run(&target, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real cluster: OPC_E2E_KUBECONFIG=<kubeconfig> cargo test --test suite e2e:: -- --ignored"]
async fn e2e_on_a_real_cluster() {
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

async fn scenario(target: &Target, ns: &str, scratch: &Path) {
    let pods: Api<Pod> = Api::namespaced(target.client.clone(), ns);
    seed_pods(&pods).await;
    let deployments: Api<Deployment> = Api::namespaced(target.client.clone(), ns);
    deployments
        .create(&PostParams::default(), &typed(deployment("web", 2)))
        .await
        .expect("create the deployment");
    let pulling = target
        .wait_for("two web pods failing to pull", || async {
            let list = pods
                .list(&ListParams::default().labels("app=web"))
                .await
                .ok()?;
            let failing: Vec<String> = list
                .items
                .iter()
                .filter(|p| pull_failing(p))
                .filter_map(|p| p.metadata.name.clone())
                .collect();
            (failing.len() == 2).then_some(failing)
        })
        .await;

    // `scan` sees every category, through the binary and a kubeconfig file.
    let config = write_config(scratch, ns);
    let found = scan(&target.kubeconfig, &config, ns);
    let expected = [
        ("evicted-1", "evicted"),
        ("terminating-1", "terminating"),
        ("pull-1", "imagePull"),
        ("crash-1", "crashLoop"),
        ("config-1", "configError"),
        ("pending-1", "pending"),
        ("failed-1", "failed"),
        ("unknown-1", "unknown"),
    ];
    for (name, category) in expected {
        assert_eq!(
            found.get(name).map(String::as_str),
            Some(category),
            "{name} in {found:?}"
        );
    }
    for name in &pulling {
        assert_eq!(
            found.get(name).map(String::as_str),
            Some("imagePull"),
            "{name} in {found:?}"
        );
    }

    // Actions, with a live watch cache re-checking each target.
    let cache = Cache::new();
    let _watches = spawn_watches(
        &target.client,
        &[Scope::Namespace(ns.to_string())],
        &cache,
        &WatchSettings::default(),
    );
    target
        .wait_for("the cache to sync", || async {
            cache.health().synced().then_some(())
        })
        .await;
    let config = Config::load_file(&config).unwrap();
    let policy = Policy::new(Flags::default(), &config);
    let executor = Arc::new(Executor::new(
        target.client.clone(),
        cache.clone(),
        &policy,
        ClusterName::new("e2e"),
        Audit::Off,
    ));
    // One pass of the worker as a CronJob would run it: auto on for `evicted` only.
    let audit = scratch.join("audit.jsonl");
    let auto_config = write_auto_config(scratch, ns, &audit);
    let (code, out) = target.headless_once(&auto_config, &[ns.to_string()]);
    assert_eq!(code, Some(0), "headless --once: {out}");
    assert!(out.contains("1 action taken, 0 failed"), "{out}");
    assert!(
        pods.get_opt("evicted-1").await.unwrap().is_none(),
        "headless --once deleted the evicted pod"
    );
    assert!(
        pods.get_opt("failed-1").await.unwrap().is_some(),
        "rules without auto are left alone"
    );
    let records = std::fs::read_to_string(&audit).expect("an audit log");
    assert!(
        records
            .lines()
            .any(|l| l.contains("\"name\":\"evicted-1\"") && l.contains("\"outcome\":\"done\"")),
        "the deletion is audited: {records}"
    );

    let stuck = pod_ref(&pods, "terminating-1").await;
    let outcome = executor
        .run(&Action::ForceDelete(stuck.clone()), Origin::Manual)
        .await;
    assert!(
        matches!(&outcome, Outcome::Done(_) if outcome.detail().contains(HOLD)),
        "the finalizer is named: {outcome:?}"
    );
    assert!(
        pods.get_opt("terminating-1").await.unwrap().is_some(),
        "finalizers hold it"
    );
    let outcome = executor
        .run(&Action::RemoveFinalizers(stuck), Origin::Manual)
        .await;
    assert!(matches!(outcome, Outcome::Done(_)), "{outcome:?}");
    target
        .wait_for("the held pod to go", || async {
            pods.get_opt("terminating-1")
                .await
                .ok()?
                .is_none()
                .then_some(())
        })
        .await;

    let web_pod = pod_ref(&pods, &pulling[0]).await;
    target
        .wait_for("the web pod in the cache", || async {
            cache.get(&web_pod.uid).map(|_| ())
        })
        .await;
    let outcome = executor
        .run(&Action::ScaleToZero(web_pod), Origin::Manual)
        .await;
    assert!(
        matches!(&outcome, Outcome::Done(_) if outcome.detail().contains(&format!("Deployment {ns}/web from 2 to 0"))),
        "{outcome:?}"
    );
    let web = deployments.get("web").await.unwrap();
    assert_eq!(web.spec.unwrap().replicas, Some(0));
    // Undo state: the parked ConfigMap in the product's namespace, or, where this identity
    // cannot use it (that namespace is not on every cluster), the annotation, as the outcome says.
    let annotated = matches!(&outcome, Outcome::Done(_) if outcome.detail().contains("annotation"));
    let annotations = web.metadata.annotations.unwrap_or_default();
    let parked: Api<ConfigMap> = Api::namespaced(target.client.clone(), &parked_namespace());
    let entry = parked
        .get_opt(PARKED_CONFIGMAP)
        .await
        .ok()
        .flatten()
        .and_then(|m| m.data?.remove(web.metadata.uid.as_deref()?));
    if annotated {
        assert_eq!(annotations["ops-pod-cleaner.io/replicas-before"], "2");
    } else {
        assert!(
            entry.is_some_and(|e| e.contains(r#""replicas":2"#)),
            "recorded in {PARKED_CONFIGMAP}"
        );
        assert!(!annotations.contains_key("ops-pod-cleaner.io/replicas-before"));
    }
    let undo = ScalableWorkload::new(WorkloadKind::Deployment, ns, "web");
    let outcome = executor.run(&Action::UndoScale(undo), Origin::Manual).await;
    assert!(matches!(outcome, Outcome::Done(_)), "{outcome:?}");
    assert_eq!(
        deployments.get("web").await.unwrap().spec.unwrap().replicas,
        Some(2)
    );
}

/// One pod per state, held unscheduled by a gate; states written through the status subresource.
async fn seed_pods(pods: &Api<Pod>) {
    let waiting = |reason: &str, restarts: u32| json!({"phase": "Pending", "containerStatuses": [container(json!({"waiting": {"reason": reason, "message": "e2e"}}), restarts)]});
    let states = [
        (
            "evicted-1",
            json!({"phase": "Failed", "reason": "Evicted", "message": "The node was low on resource: memory."}),
        ),
        ("pull-1", waiting("ImagePullBackOff", 0)),
        ("crash-1", waiting("CrashLoopBackOff", 6)),
        ("config-1", waiting("CreateContainerConfigError", 0)),
        (
            "failed-1",
            json!({"phase": "Failed", "containerStatuses": [container(json!({"terminated": {"reason": "Error", "exitCode": 2}}), 0)]}),
        ),
        ("unknown-1", json!({"phase": "Unknown"})),
    ];
    for name in ["pending-1", "terminating-1"]
        .into_iter()
        .chain(states.iter().map(|(n, _)| *n))
    {
        pods.create(&PostParams::default(), &typed(gated_pod(name)))
            .await
            .unwrap_or_else(|e| panic!("create {name}: {e}"));
    }
    for (name, status) in states {
        let patch = json!({"status": status});
        pods.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap_or_else(|e| panic!("status of {name}: {e}"));
    }
    pods.delete("terminating-1", &DeleteParams::default())
        .await
        .expect("delete the held pod");
}

async fn pod_ref(pods: &Api<Pod>, name: &str) -> PodRef {
    let pod = pods
        .get(name)
        .await
        .unwrap_or_else(|e| panic!("get {name}: {e}"));
    let namespace = pod.metadata.namespace.unwrap_or_default();
    PodRef {
        namespace,
        name: name.to_string(),
        uid: pod.metadata.uid.unwrap_or_default(),
    }
}

fn container(state: Value, restarts: u32) -> Value {
    json!({"name": "app", "image": "registry.local/app:1", "imageID": "", "ready": false, "restartCount": restarts, "state": state})
}

fn gated_pod(name: &str) -> Value {
    let mut pod = json!({
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {"schedulingGates": [{"name": GATE}], "terminationGracePeriodSeconds": 0,
                 "containers": [{"name": "app", "image": "registry.local/app:1"}]},
    });
    if name == "terminating-1" {
        pod["metadata"]["finalizers"] = json!([HOLD]);
    }
    pod
}

pub(crate) fn deployment(name: &str, replicas: i32) -> Value {
    json!({
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"terminationGracePeriodSeconds": 0,
                                       "containers": [{"name": name, "image": BAD_IMAGE}]}}},
    })
}

/// Every rule at once, only in the test namespace.
pub(crate) fn write_config(scratch: &Path, ns: &str) -> PathBuf {
    let rules: Vec<String> = RuleKind::ALL
        .iter()
        .map(|r| format!("  - rule: {r}\n    after: 0\n    namespaces: {{include: [{ns}]}}\n"))
        .collect();
    let path = scratch.join("e2e-config.yaml");
    std::fs::write(&path, format!("rules:\n{}", rules.concat())).unwrap();
    path
}

/// Auto-clean for `evicted` in the test namespace; the audit log in the scratch dir.
fn write_auto_config(scratch: &Path, ns: &str, audit: &Path) -> PathBuf {
    let path = scratch.join("e2e-auto.yaml");
    let text = format!(
        "rules:\n  - rule: evicted\n    auto: true\n    namespaces: {{include: [{ns}]}}\naudit:\n  path: {}\n  events: true\n",
        audit.display()
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// `scan --output json` on the binary: name → category.
fn scan(kubeconfig: &Path, config: &Path, ns: &str) -> BTreeMap<String, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_ops-pod-cleaner"))
        .args(["scan", "-n", ns, "--output", "json", "--kubeconfig"])
        .arg(kubeconfig)
        .arg("--config")
        .arg(config)
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "abnormal pods found: {stderr}");
    let rows: Vec<Value> =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("JSON ({e}): {stderr}"));
    rows.iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["category"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}
