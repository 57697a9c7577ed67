//! A burst in one namespace pauses a rule there only: a tenant with one namespace must not
//! switch auto-clean off for everyone. The worker on the simulated cluster.

use crate::support;
use opc_core::cluster::ClusterName;

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube_sim::SimCluster;
use opc_core::actions::{Audit, Executor};
use opc_core::config::Config;
use opc_core::place::PauseScope;
use opc_core::policy::{Flags, Policy};
use opc_core::rules::RuleKind;
use opc_core::worker::{self, Bound, Pause, PauseCause, WorkerHandle, WorkerOptions};
use serde_json::json;
use support::pods::pod;
use support::sim::{Watched, eventually, typed};

fn config_with_auto(rule: RuleKind) -> Config {
    let mut config = Config::default();
    for spec in &mut config.rules {
        spec.auto = spec.kind == rule;
        spec.after = Duration::ZERO;
    }
    config
}

fn worker(watched: &Watched, config: &Config) -> WorkerHandle {
    let policy = Policy::new(Flags::default(), config);
    let executor = Executor::new(
        watched.server.client(),
        watched.cache.clone(),
        &policy,
        ClusterName::new("sim"),
        Audit::Off,
    );
    let options = WorkerOptions {
        master_auto: true,
        tick: Duration::from_millis(50),
        cluster: ClusterName::new("sim"),
        ..WorkerOptions::default()
    };
    // As a session does: the cache classifies under the worker's policy.
    watched.cache.set_chain(policy.chain().to_vec());
    worker::spawn(watched.cache.clone(), Arc::new(executor), &policy, options)
}

/// A one-replica Deployment whose image cannot be pulled: nothing of it is available.
fn failing_deployment(namespace: &str, name: &str) -> Deployment {
    typed(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "app",
                                                       "image": "registry.invalid/x:1"}]}}}
    }))
}

fn replicas(sim: &SimCluster, namespace: &str, name: &str) -> i32 {
    sim.deployment(namespace, name)
        .and_then(|d| d.spec)
        .and_then(|s| s.replicas)
        .unwrap_or(-1)
}

/// A pod that failed a moment ago: part of a failure happening now.
/// The first pause of `rule` the worker reports.
async fn paused_where(handle: &WorkerHandle, rule: RuleKind) -> Pause {
    let mut status = handle.status.clone();
    let paused = status.wait_for(|s| s.rules.get(&rule).is_some_and(|r| !r.paused.is_empty()));
    let status = tokio::time::timeout(Duration::from_secs(10), paused)
        .await
        .unwrap_or_else(|_| panic!("{rule} pauses"))
        .unwrap();
    status.rules[&rule].paused[0].clone()
}

fn failed_pod(namespace: &str, name: &str) -> Pod {
    let mut pod = pod(name).ns(namespace).failed_with(1).json();
    let terminated = &mut pod["status"]["containerStatuses"][0]["state"]["terminated"];
    terminated["finishedAt"] = json!(chrono::Utc::now().to_rfc3339());
    typed(pod)
}

#[tokio::test]
async fn throwaway_workloads_in_one_namespace_do_not_pause_scaling_elsewhere() {
    let sim = SimCluster::new();
    for i in 1..=4 {
        sim.create_deployment(failing_deployment("tenant", &format!("junk-{i}")));
    }
    let watched = Watched::start(sim.clone()).await;
    let handle = worker(&watched, &config_with_auto(RuleKind::ImagePull));
    let paused = paused_where(&handle, RuleKind::ImagePull).await;
    assert_eq!(paused.scope, PauseScope::Namespace("tenant".into()));
    let PauseCause::Workloads(Bound::InNamespace { next, acted, .. }) = &paused.cause else {
        panic!("the bound on workloads in one namespace: {paused:?}");
    };
    assert_eq!((acted.len(), &*next.namespace), (3, "tenant"), "{paused}");
    // A real outage of one workload in another namespace, after the tenant's burst.
    sim.create_deployment(failing_deployment("shop", "web"));
    eventually("shop/web scaled to zero", || {
        replicas(&sim, "shop", "web") == 0
    })
    .await;
    let untouched = (1..=4)
        .filter(|i| replicas(&sim, "tenant", &format!("junk-{i}")) == 1)
        .count();
    assert_eq!(untouched, 1, "the fourth throw-away workload was held");
}

#[tokio::test]
async fn failing_pods_in_one_namespace_do_not_pause_deletion_elsewhere() {
    let sim = SimCluster::new();
    for i in 1..=5 {
        sim.create_pod(failed_pod("tenant", &format!("junk-{i}")));
    }
    sim.create_pod(failed_pod("shop", "batch-1"));
    for i in 1..=3 {
        sim.create_pod(typed(pod(&format!("web-{i}")).ns("shop").json()));
    }
    let watched = Watched::start(sim.clone()).await;
    let handle = worker(&watched, &config_with_auto(RuleKind::Failed));
    let paused = paused_where(&handle, RuleKind::Failed).await;
    assert_eq!(paused.scope, PauseScope::Namespace("tenant".into()));
    eventually("shop's failed pod deleted", || {
        sim.pod("shop", "batch-1").is_none()
    })
    .await;
    let left = (1..=5)
        .filter(|i| sim.pod("tenant", &format!("junk-{i}")).is_some())
        .count();
    assert_eq!(left, 5, "the tenant's burst is paused in its namespace");
}

/// A Deployment of `replicas` whose image `image` cannot be pulled.
fn unpullable(namespace: &str, name: &str, replicas: i32, image: &str) -> Deployment {
    let mut d = failing_deployment(namespace, name);
    let spec = d.spec.as_mut().unwrap();
    spec.replicas = Some(replicas);
    let pod = spec.template.spec.as_mut().unwrap();
    pod.containers[0].image = Some(image.into());
    d
}

/// One tenant's two namespaces fail to pull from their registry; a third namespace fails to
/// pull from another. The tenant's bursts pause imagePull in its namespaces and for its
/// registry, never for everyone: the third namespace's workload is still scaled.
#[tokio::test]
async fn a_tenants_two_namespaces_do_not_pause_a_rule_for_a_namespace_that_shares_nothing() {
    let sim = SimCluster::new();
    for ns in ["t1", "t2"] {
        sim.create_deployment(unpullable(ns, "app", 6, "registry-a.invalid/app:1"));
    }
    sim.create_deployment(unpullable("t3", "other", 2, "registry-b.invalid/other:1"));
    let watched = Watched::start(sim.clone()).await;
    let handle = worker(&watched, &config_with_auto(RuleKind::ImagePull));
    eventually("t3/other scaled to zero", || {
        replicas(&sim, "t3", "other") == 0
    })
    .await;
    let status = handle.status.borrow().clone();
    let scopes: Vec<PauseScope> = status.rules[&RuleKind::ImagePull]
        .paused
        .iter()
        .map(|p| p.scope.clone())
        .collect();
    assert_eq!(
        scopes,
        [
            PauseScope::Namespace("t1".into()),
            PauseScope::Namespace("t2".into()),
            PauseScope::Registry("registry-a.invalid".into()),
        ]
    );
    for ns in ["t1", "t2"] {
        assert_eq!(replicas(&sim, ns, "app"), 6, "{ns} is paused");
    }
}

/// A scale the worker refused because the pod is no evidence against the workload is kept in
/// its status, so the row can say `unproven` once the proof was tried.
#[tokio::test]
async fn a_workload_refused_as_unproven_is_named_in_the_workers_status() {
    let sim = SimCluster::new();
    sim.create_deployment(typed(crate::support::sim::workload(
        "Deployment",
        "checkout",
        1,
    )));
    let uid = sim
        .deployment("default", "checkout")
        .and_then(|d| d.metadata.uid)
        .unwrap();
    let mut evil = pod("evil")
        .waiting_with("ImagePullBackOff", "Back-off pulling image \"x:1\"")
        .json();
    evil["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet",
        "name": "checkout-0000000000", "uid": uid, "controller": true}]);
    sim.create_pod(typed(evil));
    let watched = Watched::start(sim.clone()).await;
    let handle = worker(&watched, &config_with_auto(RuleKind::ImagePull));
    let mut status = handle.status.clone();
    let named = status.wait_for(|s| {
        s.rules
            .get(&RuleKind::ImagePull)
            .is_some_and(|r| !r.unproven.is_empty())
    });
    let status = tokio::time::timeout(Duration::from_secs(10), named)
        .await
        .expect("the refusal is in the status")
        .unwrap();
    let unproven = &status.rules[&RuleKind::ImagePull].unproven;
    assert_eq!(unproven.len(), 1, "{unproven:?}");
    assert_eq!(replicas(&sim, "default", "checkout"), 1);
}
