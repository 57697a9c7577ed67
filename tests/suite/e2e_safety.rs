//! The safety guards of auto-clean, end to end: `headless --once` on the binary, with
//! auto-clean on and the rate limits opened wide, against the simulated cluster always and
//! against `OPC_E2E_KUBECONFIG` with `--ignored` (see `tests/e2e.rs` for what that needs).
//!
//! Each scenario is one a user met on a real API server before these guards existed:
//! the opt-out annotation on a Deployment, a bad rollout, and a registry outage spread thin.
//! On a real cluster the bad-rollout scenario pulls `registry.k8s.io/pause:3.10`.

use crate::support;

use std::path::{Path, PathBuf};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use support::e2e::{BAD_IMAGE, GATE, Target, pull_failing};
use support::pty::Screen;
use support::sim::typed;

const GOOD_IMAGE: &str = "registry.k8s.io/pause:3.10";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opt_out_on_the_deployment_keeps_its_evicted_pod_simulated() {
    let dir = tempfile::tempdir().unwrap();
    opt_out_up_the_owner_chain(&Target::simulated(dir.path()).await, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_rollout_is_never_scaled_to_zero_simulated() {
    let dir = tempfile::tempdir().unwrap();
    bad_rollout(&Target::simulated(dir.path()).await, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_spread_thin_scales_at_most_three_workloads_simulated() {
    let dir = tempfile::tempdir().unwrap();
    outage_spread_thin(&Target::simulated(dir.path()).await, dir.path()).await;
}

/// `--once` is run by CronJobs: an action that fails must fail the job, with true counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_once_exits_non_zero_when_an_action_fails() {
    let dir = tempfile::tempdir().unwrap();
    let target = &Target::simulated(dir.path()).await;
    let scratch = dir.path();
    target
        .in_namespaces(1, |names| async move {
            let ns = &names[0];
            let pods: Api<Pod> = Api::namespaced(target.client.clone(), ns);
            pods.create(&PostParams::default(), &typed(gated_pod("gone-1")))
                .await
                .unwrap();
            evict(&pods, "gone-1").await;
            target
                .sim()
                .unwrap()
                .faults()
                .deny("delete", "pods", Some(ns));
            let audit = scratch.join("failing-audit.jsonl");
            let config = auto_config(scratch, ns, "evicted", &audit);
            let (code, out) = target.headless_once(&config, &names);
            assert_eq!(code, Some(3), "{out}");
            assert!(out.contains("0 actions taken, 1 failed"), "{out}");
            assert!(pods.get_opt("gone-1").await.unwrap().is_some());
        })
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tui_honours_dry_run_from_the_config_simulated() {
    let dir = tempfile::tempdir().unwrap();
    tui_dry_run_from_the_config(&Target::simulated(dir.path()).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real cluster: OPC_E2E_KUBECONFIG=<kubeconfig> cargo test --test suite e2e_safety:: -- --ignored"]
async fn safety_scenarios_on_a_real_cluster() {
    let target = Target::real().await;
    let dir = tempfile::tempdir().unwrap();
    tui_dry_run_from_the_config(&target).await;
    opt_out_up_the_owner_chain(&target, dir.path()).await;
    bad_rollout(&target, dir.path()).await;
    outage_spread_thin(&target, dir.path()).await;
}

/// `safety: {dryRun: true}` in the config and no `--dry-run` flag: the TUI, driven through a
/// pseudo-terminal, shows DRY-RUN and its confirmed delete changes nothing in the cluster.
async fn tui_dry_run_from_the_config(target: &Target) {
    target
        .in_namespaces(1, |names| async move {
            let ns = &names[0];
            let pods: Api<Pod> = Api::namespaced(target.client.clone(), ns);
            pods.create(&PostParams::default(), &typed(gated_pod("evicted-1")))
                .await
                .unwrap();
            evict(&pods, "evicted-1").await;
            let kubeconfig = target.kubeconfig.to_string_lossy().into_owned();
            let config = format!(
                "rules:\n  - rule: evicted\n    namespaces: {{include: [{ns}]}}\nsafety:\n  dryRun: true\n"
            );
            // The screen is read with blocking waits: off the runtime that serves the simulator.
            let namespace = ns.clone();
            tokio::task::spawn_blocking(move || {
                let args = ["--kubeconfig", &kubeconfig, "-n", &namespace];
                let mut screen = Screen::start_with(&args, Some(&config));
                let text = screen.wait_for("the evicted pod on screen", |t| {
                    t.contains("● synced") && t.contains("evicted-1")
                });
                assert!(text.contains("DRY-RUN"), "{text}");
                screen.keys("d");
                screen.wait_text("Delete this pod?");
                screen.keys("y");
                screen.wait_text(&format!("would delete pod {namespace}/evicted-1"));
            })
            .await
            .unwrap();
            assert!(
                pods.get_opt("evicted-1").await.unwrap().is_some(),
                "dry-run from the config deleted nothing"
            );
        })
        .await;
}

/// `ops-pod-cleaner.io/ignore=true` on a Deployment, not on its pods: its Evicted pod stays,
/// while an Evicted pod nobody opted out is deleted in the same pass, and the pass says so.
async fn opt_out_up_the_owner_chain(target: &Target, scratch: &Path) {
    target
        .in_namespaces(1, |names| async move {
            let ns = &names[0];
            let deployments: Api<Deployment> = Api::namespaced(target.client.clone(), ns);
            let mut opted_out = deployment("quiet", 1, GOOD_IMAGE);
            opted_out["metadata"]["annotations"] = json!({"ops-pod-cleaner.io/ignore": "true"});
            opted_out["spec"]["template"]["spec"]["schedulingGates"] = json!([{"name": GATE}]);
            deployments
                .create(&PostParams::default(), &typed(opted_out))
                .await
                .expect("create the opted-out deployment");
            let pods: Api<Pod> = Api::namespaced(target.client.clone(), ns);
            let quiet = target
                .wait_for("the opted-out deployment's pod", || async {
                    let list = pods.list(&ListParams::default().labels("app=quiet")).await;
                    list.ok()?.items.first()?.metadata.name.clone()
                })
                .await;
            evict(&pods, &quiet).await;
            pods.create(&PostParams::default(), &typed(gated_pod("loose")))
                .await
                .expect("create a pod nobody opted out");
            evict(&pods, "loose").await;

            let audit = scratch.join(format!("{ns}-audit.jsonl"));
            let config = auto_config(scratch, ns, "evicted", &audit);
            let (code, out) = target.headless_once(&config, &names);
            assert_eq!(code, Some(0), "{out}");
            assert!(
                pods.get_opt(&quiet).await.unwrap().is_some(),
                "the opt-out on Deployment {ns}/quiet keeps its pod: {out}"
            );
            assert!(
                pods.get_opt("loose").await.unwrap().is_none(),
                "a pod nobody opted out is cleaned: {out}"
            );
            assert!(out.contains("1 action taken, 0 failed"), "{out}");
            assert!(
                out.contains(&format!(
                    "Deployment {ns}/quiet carries ops-pod-cleaner.io/ignore"
                )),
                "the pass names where the opt-out sits: {out}"
            );
        })
        .await;
}

/// A rollout to an image that cannot be pulled: the old ReplicaSet still serves 3 replicas
/// and one new pod waits in ImagePullBackOff. Scaling the Deployment to 0 would cause the very
/// outage the rule is meant to clean up, so it is held, and the pass says why.
async fn bad_rollout(target: &Target, scratch: &Path) {
    target
        .in_namespaces(1, |names| async move {
            let ns = &names[0];
            let deployments: Api<Deployment> = Api::namespaced(target.client.clone(), ns);
            deployments
                .create(
                    &PostParams::default(),
                    &typed(deployment("web", 3, GOOD_IMAGE)),
                )
                .await
                .expect("create the deployment");
            target
                .wait_for("3 available replicas", || async {
                    let d = deployments.get("web").await.ok()?;
                    (d.status?.available_replicas? == 3).then_some(())
                })
                .await;
            let typo = json!({"spec": {"template": {"spec": {"containers": [{"name": "web", "image": BAD_IMAGE}]}}}});
            deployments
                .patch("web", &PatchParams::default(), &Patch::Strategic(&typo))
                .await
                .expect("set the image to a typo");
            let pods: Api<Pod> = Api::namespaced(target.client.clone(), ns);
            target
                .wait_for("a new pod failing to pull", || async {
                    let list = pods.list(&ListParams::default().labels("app=web")).await;
                    list.ok()?.items.iter().any(pull_failing).then_some(())
                })
                .await;

            let audit = scratch.join(format!("{ns}-audit.jsonl"));
            let config = auto_config(scratch, ns, "imagePull", &audit);
            let (code, out) = target.headless_once(&config, &names);
            assert_eq!(code, Some(0), "{out}");
            let web = deployments.get("web").await.unwrap();
            assert_eq!(
                web.spec.and_then(|s| s.replicas),
                Some(3),
                "a bad rollout keeps its replicas: {out}"
            );
            assert!(
                out.contains("bad rollout: 3 replicas still available"),
                "{out}"
            );
            assert!(out.contains("kubectl rollout undo"), "{out}");
        })
        .await;
}

/// A registry outage across 8 namespaces, one single-replica Deployment each, every pod in
/// ImagePullBackOff: no namespace or workload looks like a mass failure on its own, yet the
/// rule stops after 3 workloads and says which.
async fn outage_spread_thin(target: &Target, scratch: &Path) {
    target
        .in_namespaces(8, |names| async move {
            for ns in &names {
                let deployments: Api<Deployment> = Api::namespaced(target.client.clone(), ns);
                deployments
                    .create(
                        &PostParams::default(),
                        &typed(deployment("app", 1, BAD_IMAGE)),
                    )
                    .await
                    .expect("create a deployment");
            }
            for ns in &names {
                let pods: Api<Pod> = Api::namespaced(target.client.clone(), ns);
                target
                    .wait_for("every pod failing to pull", || async {
                        let list = pods.list(&ListParams::default()).await;
                        list.ok()?.items.iter().any(pull_failing).then_some(())
                    })
                    .await;
            }
            let audit = scratch.join("spread-audit.jsonl");
            let config = auto_config(scratch, &names.join(","), "imagePull", &audit);
            let (code, out) = target.headless_once(&config, &names);
            assert_eq!(code, Some(0), "{out}");
            let mut scaled = Vec::new();
            for ns in &names {
                let deployments: Api<Deployment> = Api::namespaced(target.client.clone(), ns);
                let replicas = deployments
                    .get("app")
                    .await
                    .unwrap()
                    .spec
                    .and_then(|s| s.replicas);
                if replicas == Some(0) {
                    scaled.push(ns.clone());
                }
            }
            assert_eq!(scaled.len(), 3, "scaled: {scaled:?}\n{out}");
            assert!(out.contains("3 actions taken, 0 failed"), "{out}");
            assert!(out.contains("imagePull paused"), "{out}");
            for ns in &scaled {
                assert!(
                    out.contains(&format!("{ns}/Deployment/app")),
                    "the pause lists the workloads acted on: {out}"
                );
            }
        })
        .await;
}

fn deployment(name: &str, replicas: i32, image: &str) -> Value {
    json!({
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"terminationGracePeriodSeconds": 0,
                                       "containers": [{"name": name, "image": image}]}}},
    })
}

fn gated_pod(name: &str) -> Value {
    json!({
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {"schedulingGates": [{"name": GATE}], "terminationGracePeriodSeconds": 0,
                 "containers": [{"name": "app", "image": GOOD_IMAGE}]},
    })
}

/// What the kubelet reports for a pod evicted under memory pressure.
async fn evict(pods: &Api<Pod>, name: &str) {
    let status = json!({"status": {"phase": "Failed", "reason": "Evicted",
        "message": "The node was low on resource: memory."}});
    pods.patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap_or_else(|e| panic!("status of {name}: {e}"));
}

/// Auto-clean for one rule at once (`after: 0`) in `namespaces` (comma-separated), the rate
/// limits opened wide as in the reports, the audit log in the scratch dir.
fn auto_config(scratch: &Path, namespaces: &str, rule: &str, audit: &Path) -> PathBuf {
    let path = scratch.join(format!("auto-{rule}-{}.yaml", namespaces.len()));
    let text = format!(
        "rules:\n  - rule: {rule}\n    auto: true\n    after: 0\n    namespaces: {{include: [{namespaces}]}}\n\
         safety:\n  maxActionsPerMinute: 1000\n  maxActionsPerNamespacePerMinute: 1000\n\
         audit:\n  path: {}\n  events: true\n",
        audit.display()
    );
    std::fs::write(&path, text).unwrap();
    path
}
