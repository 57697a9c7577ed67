//! Tier 3: actions on the real client path against the simulated API, re-checked against a
//! live watch cache, with their effects read back through the API.

use crate::support;
use opc_core::cluster::ClusterName;

use std::time::Duration;

use chrono::Utc;
use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use k8s_openapi::api::core::v1::Pod;
use kube_sim::SimCluster;
use opc_core::actions::{
    Action, Audit, DEFAULT_NAMESPACE, Denied, Executor, Origin, Outcome, PARKED_CONFIGMAP,
    ParkedRecord, PodRef, REPLICAS_BEFORE_ANNOTATION, Refusal, ScalableWorkload, WorkloadKind,
};
use opc_core::cluster::Cache;
use serde_json::json;
use support::pods::pod;
use support::policy::{at_once, policy, quick_retry};
use support::sim::{Watched, eventually, typed, unpullable, workload};

struct Harness(Watched);

impl std::ops::Deref for Harness {
    type Target = Watched;
    fn deref(&self) -> &Watched {
        &self.0
    }
}

impl Harness {
    async fn start(sim: SimCluster) -> Harness {
        Harness(Watched::start(sim).await)
    }

    fn executor(&self, events: bool) -> Executor {
        Executor::new(
            self.server.client(),
            self.cache.clone(),
            &at_once(false, events),
            ClusterName::new("sim"),
            Audit::Off,
        )
        .with_retry(quick_retry())
    }

    fn pod_ref(&self, ns: &str, name: &str) -> PodRef {
        let pod = self
            .sim
            .pod(ns, name)
            .unwrap_or_else(|| panic!("no pod {ns}/{name}"));
        PodRef {
            namespace: ns.into(),
            name: name.into(),
            uid: pod.metadata.uid.unwrap(),
        }
    }

    async fn cached(&self, p: &PodRef) {
        eventually("the pod in the cache", || self.cache.get(&p.uid).is_some()).await;
    }
}

#[tokio::test]
async fn delete_removes_an_evicted_pod_and_records_an_event() {
    let sim = SimCluster::new();
    sim.create_pod(typed(pod("web-1").evicted().json()));
    let h = Harness::start(sim).await;
    let target = h.pod_ref("default", "web-1");
    h.cached(&target).await;
    let outcome = h
        .executor(true)
        .run(&Action::Delete(target), Origin::Manual)
        .await;
    assert!(matches!(outcome, Outcome::Done(_)), "{outcome:?}");
    assert!(h.sim.pod("default", "web-1").is_none());
    let events = h.sim.events();
    assert!(
        events
            .iter()
            .any(|e| e.reason.as_deref() == Some("PodDeleted")
                && e.involved_object.name.as_deref() == Some("web-1"))
    );
}

#[tokio::test]
async fn a_stale_plan_never_deletes_the_replacement_pod_of_the_same_name() {
    let sim = SimCluster::new();
    sim.create_statefulset(typed(workload("StatefulSet", "db", 1)));
    let h = Harness::start(sim).await;
    eventually("db-0", || h.sim.pod("default", "db-0").is_some()).await;
    let old = h.pod_ref("default", "db-0");
    h.cached(&old).await;
    // A stale cache still holds the old pod while the StatefulSet has replaced it.
    let stale = Cache::new();
    stale.upsert(
        serde_json::from_value(
            serde_json::to_value(h.sim.pod("default", "db-0").unwrap()).unwrap(),
        )
        .unwrap(),
        Utc::now(),
    );
    let client = h.server.client();
    let now = kube::api::DeleteParams::default().grace_period(0);
    kube::Api::<Pod>::namespaced(client, "default")
        .delete("db-0", &now)
        .await
        .unwrap();
    eventually("the replacement", || {
        h.sim
            .pod("default", "db-0")
            .is_some_and(|p| p.metadata.uid.as_deref() != Some(old.uid.as_str()))
    })
    .await;
    let executor = Executor::new(
        h.server.client(),
        stale,
        &policy(false, false),
        ClusterName::new("sim"),
        Audit::Off,
    );
    let outcome = executor
        .run(&Action::ForceDelete(old.clone()), Origin::Manual)
        .await;
    // The live read before a person's action finds another pod under that name: the one
    // planned is gone, and nothing is sent.
    assert_eq!(outcome, Outcome::AlreadyGone);
    let replacement = h
        .sim
        .pod("default", "db-0")
        .expect("the new db-0 is still there");
    assert_ne!(replacement.metadata.uid.unwrap(), old.uid);
}

#[tokio::test]
async fn force_delete_on_a_lost_node_and_finalizers_that_hold_a_pod() {
    let sim = SimCluster::new();
    sim.set_node_alive("sim-node-3", false);
    sim.create_pod(typed(
        pod("stuck")
            .on_node("sim-node-3")
            .terminating_since("2026-11-20T09:00:00Z")
            .json(),
    ));
    sim.create_pod(typed(
        pod("held")
            .on_node("sim-node-3")
            .terminating_since("2026-11-20T09:00:00Z")
            .finalizers(&["example.com/hook"])
            .json(),
    ));
    let h = Harness::start(sim).await;
    let (stuck, held) = (h.pod_ref("default", "stuck"), h.pod_ref("default", "held"));
    h.cached(&stuck).await;
    h.cached(&held).await;
    let exec = h.executor(false);
    assert!(matches!(
        exec.run(&Action::ForceDelete(stuck), Origin::Manual).await,
        Outcome::Done(_)
    ));
    assert!(h.sim.pod("default", "stuck").is_none());
    let outcome = exec
        .run(&Action::ForceDelete(held.clone()), Origin::Manual)
        .await;
    assert!(
        matches!(&outcome, Outcome::Done(_) if outcome.detail().contains("example.com/hook")),
        "{outcome:?}"
    );
    assert!(h.sim.pod("default", "held").is_some(), "finalizers keep it");
    let outcome = exec
        .run(&Action::RemoveFinalizers(held), Origin::Manual)
        .await;
    assert!(matches!(outcome, Outcome::Done(_)), "{outcome:?}");
    eventually("the held pod to go", || {
        h.sim.pod("default", "held").is_none()
    })
    .await;
}

/// The parked record for `uid` in the simulated cluster's ConfigMap, if any.
fn parked(sim: &SimCluster, uid: &str) -> Option<ParkedRecord> {
    let map = sim.config_map(DEFAULT_NAMESPACE, PARKED_CONFIGMAP)?;
    let text = map.data?.remove(uid)?;
    Some(serde_json::from_str(&text).expect("a parked record"))
}

fn annotations(d: &Deployment) -> std::collections::BTreeMap<String, String> {
    d.metadata.annotations.clone().unwrap_or_default()
}

fn web() -> ScalableWorkload {
    ScalableWorkload::new(WorkloadKind::Deployment, "default", "web")
}

/// The ClusterRole and Role of `assets/deploy/base/rbac.yaml`, as the simulator's denials: no
/// write on any workload object, no create on ConfigMaps (the manifests ship the one needed).
fn deny_what_the_deployed_roles_do_not_grant(sim: &SimCluster) {
    for resource in [
        "deployments",
        "statefulsets",
        "replicasets",
        "rollouts",
        "replicationcontrollers",
    ] {
        for verb in ["patch", "update"] {
            sim.faults().deny(verb, resource, None);
        }
    }
    sim.faults().deny("create", "configmaps", None);
}

/// `assets/deploy/base/parked.yaml`, applied.
fn ship_the_parked_config_map(sim: &SimCluster) {
    sim.create_config_map(typed(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": PARKED_CONFIGMAP, "namespace": DEFAULT_NAMESPACE}})));
}

#[tokio::test]
async fn scale_to_zero_and_undo_through_a_deployment() {
    let sim = SimCluster::new();
    sim.create_deployment(typed(unpullable("Deployment", "web", 3)));
    let h = Harness::start(sim).await;
    eventually("three pods", || h.sim.live_pods("web-").len() == 3).await;
    let name = h.sim.live_pods("web-")[0].metadata.name.clone().unwrap();
    let target = h.pod_ref("default", &name);
    h.cached(&target).await;
    let exec = h.executor(false);
    let outcome = exec.run(&Action::ScaleToZero(target), Origin::Manual).await;
    assert_eq!(
        outcome.to_string(),
        "done: scaled Deployment default/web from 3 to 0 (undo restores 3)"
    );
    let deployment: Deployment = h.sim.deployment("default", "web").unwrap();
    assert_eq!(deployment.spec.as_ref().unwrap().replicas, Some(0));
    let uid = deployment.metadata.uid.clone().unwrap();
    let record = parked(&h.sim, &uid).expect("the replicas are recorded in the ConfigMap");
    assert_eq!(
        (
            record.kind.as_str(),
            record.namespace.as_str(),
            record.name.as_str(),
            record.replicas
        ),
        ("Deployment", "default", "web", 3)
    );
    assert_eq!(record.pod.as_deref(), Some(name.as_str()));
    assert_eq!(record.workload(), Some(web()));
    assert!(
        !annotations(&deployment).contains_key(REPLICAS_BEFORE_ANNOTATION),
        "the workload object is not written"
    );
    assert_eq!(exec.reads().parked_records().await.unwrap(), vec![record]);
    eventually("the pods to go", || h.sim.live_pods("web-").is_empty()).await;

    let outcome = exec.run(&Action::UndoScale(web()), Origin::Manual).await;
    assert_eq!(
        outcome.to_string(),
        "done: restored Deployment default/web to 3 replicas"
    );
    let deployment: Deployment = h.sim.deployment("default", "web").unwrap();
    assert_eq!(deployment.spec.unwrap().replicas, Some(3));
    assert!(parked(&h.sim, &uid).is_none(), "the entry is removed");
    eventually("the pods to return", || h.sim.live_pods("web-").len() == 3).await;
    // Undo again: nothing recorded any more.
    let again = exec.run(&Action::UndoScale(web()), Origin::Manual).await;
    assert!(
        matches!(
            &again,
            Outcome::Refused(Refusal::NotParked {
                unavailable: None,
                ..
            })
        ),
        "{again:?}"
    );
}

#[tokio::test]
async fn with_only_the_deployed_permissions_scale_and_undo_never_write_the_workload() {
    let sim = SimCluster::new();
    sim.create_deployment(typed(unpullable("Deployment", "web", 2)));
    ship_the_parked_config_map(&sim);
    deny_what_the_deployed_roles_do_not_grant(&sim);
    let h = Harness::start(sim).await;
    eventually("two pods", || h.sim.live_pods("web-").len() == 2).await;
    let name = h.sim.live_pods("web-")[0].metadata.name.clone().unwrap();
    let target = h.pod_ref("default", &name);
    h.cached(&target).await;
    let exec = h.executor(true);
    let outcome = exec.run(&Action::ScaleToZero(target), Origin::Manual).await;
    assert_eq!(
        outcome.to_string(),
        "done: scaled Deployment default/web from 2 to 0 (undo restores 2)"
    );
    let uid = h
        .sim
        .deployment("default", "web")
        .unwrap()
        .metadata
        .uid
        .unwrap();
    assert_eq!(parked(&h.sim, &uid).map(|r| r.replicas), Some(2));
    // The Event on the workload names it too.
    assert!(
        h.sim
            .events()
            .iter()
            .any(|e| e.reason.as_deref() == Some("ScaledToZero")
                && e.involved_object.name.as_deref() == Some("web"))
    );
    let outcome = exec.run(&Action::UndoScale(web()), Origin::Manual).await;
    assert_eq!(
        outcome.to_string(),
        "done: restored Deployment default/web to 2 replicas"
    );
    assert_eq!(
        h.sim
            .deployment("default", "web")
            .unwrap()
            .spec
            .unwrap()
            .replicas,
        Some(2)
    );
    assert!(parked(&h.sim, &uid).is_none());
}

#[tokio::test]
async fn with_only_the_deployed_permissions_an_old_annotation_is_honoured_once() {
    let sim = SimCluster::new();
    // Scaled down by an earlier version: replicas 0, the count in the annotation.
    let mut old = workload("Deployment", "web", 0);
    old["metadata"]["annotations"] = json!({REPLICAS_BEFORE_ANNOTATION: "2"});
    sim.create_deployment(typed(old));
    ship_the_parked_config_map(&sim);
    deny_what_the_deployed_roles_do_not_grant(&sim);
    let h = Harness::start(sim).await;
    let exec = h.executor(false);
    let outcome = exec.run(&Action::UndoScale(web()), Origin::Manual).await;
    assert!(
        matches!(&outcome, Outcome::Done(_) if outcome.detail().starts_with("restored Deployment default/web to 2 replicas; the ops-pod-cleaner.io/replicas-before annotation an earlier version left stays")),
        "{outcome:?}"
    );
    let deployment = h.sim.deployment("default", "web").unwrap();
    assert_eq!(deployment.spec.as_ref().unwrap().replicas, Some(2));
    assert_eq!(annotations(&deployment)[REPLICAS_BEFORE_ANNOTATION], "2");
    // It runs again: the annotation left in place cannot restore it a second time.
    let again = exec.run(&Action::UndoScale(web()), Origin::Manual).await;
    assert_eq!(
        again,
        Outcome::Refused(Refusal::NotAtZero {
            workload: web(),
            current: 2,
            removed: None,
        })
    );
    assert_eq!(
        again.detail(),
        "Deployment default/web is not at 0 replicas any more: already restored to 2; left as it is"
    );
}

#[tokio::test]
async fn a_person_who_may_not_use_the_config_map_keeps_undo_state_in_the_annotation() {
    let sim = SimCluster::new();
    sim.create_deployment(typed(unpullable("Deployment", "web", 3)));
    sim.faults()
        .deny("get", "configmaps", Some(DEFAULT_NAMESPACE));
    let h = Harness::start(sim).await;
    eventually("three pods", || h.sim.live_pods("web-").len() == 3).await;
    let name = h.sim.live_pods("web-")[0].metadata.name.clone().unwrap();
    let target = h.pod_ref("default", &name);
    h.cached(&target).await;
    let exec = h.executor(false);
    let outcome = exec.run(&Action::ScaleToZero(target), Origin::Manual).await;
    assert!(
        matches!(&outcome, Outcome::Done(_) if outcome.detail().contains("recorded in its ops-pod-cleaner.io/replicas-before annotation (this identity may not get ConfigMap ops-pod-cleaner/ops-pod-cleaner-parked)")),
        "{outcome:?}"
    );
    let deployment = h.sim.deployment("default", "web").unwrap();
    assert_eq!(annotations(&deployment)[REPLICAS_BEFORE_ANNOTATION], "3");
    assert!(
        h.sim
            .config_map(DEFAULT_NAMESPACE, PARKED_CONFIGMAP)
            .is_none()
    );
    let outcome = exec.run(&Action::UndoScale(web()), Origin::Manual).await;
    assert_eq!(
        outcome.to_string(),
        "done: restored Deployment default/web to 3 replicas"
    );
    let deployment = h.sim.deployment("default", "web").unwrap();
    assert_eq!(deployment.spec.as_ref().unwrap().replicas, Some(3));
    assert!(!annotations(&deployment).contains_key(REPLICAS_BEFORE_ANNOTATION));
}

#[tokio::test]
async fn replicas_parking_at_once_keep_every_entry() {
    let sim = SimCluster::new();
    let names = ["web", "api", "shop", "cart"];
    for name in names {
        sim.create_deployment(typed(unpullable("Deployment", name, 1)));
    }
    ship_the_parked_config_map(&sim);
    let h = Harness::start(sim).await;
    let mut targets = Vec::new();
    for name in names {
        let prefix = format!("{name}-");
        eventually("a pod", || h.sim.live_pods(&prefix).len() == 1).await;
        let pod = h.sim.live_pods(&prefix)[0].metadata.name.clone().unwrap();
        let target = h.pod_ref("default", &pod);
        h.cached(&target).await;
        targets.push(target);
    }
    // One executor each, as separate processes would be; their writes race on one ConfigMap.
    let executors: Vec<Executor> = names.iter().map(|_| h.executor(false)).collect();
    let actions: Vec<Action> = targets.into_iter().map(Action::ScaleToZero).collect();
    let outcomes = futures::future::join_all(
        executors
            .iter()
            .zip(&actions)
            .map(|(exec, action)| exec.run(action, Origin::Manual)),
    )
    .await;
    for outcome in &outcomes {
        assert!(matches!(outcome, Outcome::Done(_)), "{outcome:?}");
    }
    let recorded = executors[0].reads().parked_records().await.unwrap();
    let mut parked_names: Vec<&str> = recorded.iter().map(|r| r.name.as_str()).collect();
    parked_names.sort_unstable();
    assert_eq!(parked_names, ["api", "cart", "shop", "web"]);
}

#[tokio::test]
async fn the_simulator_guards_config_map_updates_by_resource_version() {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Api, PostParams};
    let sim = SimCluster::new();
    let server = kube_sim::SimServer::start(sim.clone()).await.unwrap();
    let maps: Api<ConfigMap> = Api::namespaced(server.client(), "ops");
    let created = maps
        .create(
            &PostParams::default(),
            &typed(json!({"metadata": {"name": "m"}, "data": {"a": "1"}})),
        )
        .await
        .unwrap();
    let mut first = created.clone();
    first.data = Some([("b".to_string(), "2".to_string())].into());
    let written = maps
        .replace("m", &PostParams::default(), &first)
        .await
        .unwrap();
    assert_ne!(
        written.metadata.resource_version,
        created.metadata.resource_version
    );
    // A write with the version read before that one loses.
    let mut stale = created;
    stale.data = Some([("c".to_string(), "3".to_string())].into());
    let lost = maps
        .replace("m", &PostParams::default(), &stale)
        .await
        .unwrap_err();
    assert!(
        matches!(&lost, kube::Error::Api(s) if s.code == 409),
        "{lost:?}"
    );
    // A denied verb is a 403 for that verb only.
    sim.faults().deny("update", "configmaps", Some("ops"));
    let denied = maps
        .replace("m", &PostParams::default(), &written)
        .await
        .unwrap_err();
    assert!(
        matches!(&denied, kube::Error::Api(s) if s.code == 403),
        "{denied:?}"
    );
    assert_eq!(maps.get("m").await.unwrap().data, written.data);
    assert!(sim.config_map("ops", "m").is_some());
}

#[tokio::test]
async fn scale_to_zero_of_a_statefulset_and_an_argo_rollout() {
    let sim = SimCluster::new();
    let mut db = unpullable("StatefulSet", "db", 2);
    db["spec"]["podManagementPolicy"] = json!("Parallel");
    sim.create_statefulset(typed(db));
    let mut rollout = unpullable("Deployment", "canary", 2);
    rollout["apiVersion"] = json!("argoproj.io/v1alpha1");
    rollout["kind"] = json!("Rollout");
    sim.create_rollout(rollout);
    let h = Harness::start(sim).await;
    eventually("pods", || {
        h.sim.live_pods("db-").len() == 2 && h.sim.live_pods("canary-").len() == 2
    })
    .await;
    let exec = h.executor(false);
    for prefix in ["db-", "canary-"] {
        let name = h.sim.live_pods(prefix)[0].metadata.name.clone().unwrap();
        let target = h.pod_ref("default", &name);
        h.cached(&target).await;
        let outcome = exec.run(&Action::ScaleToZero(target), Origin::Manual).await;
        assert!(
            matches!(&outcome, Outcome::Done(_) if outcome.detail().contains("from 2 to 0")),
            "{prefix}: {outcome:?}"
        );
        eventually("the pods to go", || h.sim.live_pods(prefix).is_empty()).await;
    }
    let db: StatefulSet = h.sim.statefulset("default", "db").unwrap();
    assert_eq!(db.spec.unwrap().replicas, Some(0));
    assert_eq!(
        h.sim.rollout("default", "canary").unwrap()["spec"]["replicas"],
        0
    );
}

#[tokio::test]
async fn eviction_honours_a_disruption_budget() {
    let sim = SimCluster::new();
    // Its pods crash-loop: abnormal, so a person may act on them, and none is healthy.
    sim.set_pod_shaper(|pod| {
        let status = pod.status.as_mut().unwrap();
        for c in status.container_statuses.iter_mut().flatten() {
            c.ready = false;
            c.restart_count = 9;
            c.state = Some(k8s_openapi::api::core::v1::ContainerState {
                waiting: Some(k8s_openapi::api::core::v1::ContainerStateWaiting {
                    reason: Some("CrashLoopBackOff".into()),
                    message: None,
                }),
                ..Default::default()
            });
        }
    });
    sim.create_deployment(typed(workload("Deployment", "api", 2)));
    sim.create_pdb(typed(
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "api", "namespace": "default"},
        "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "api"}}}}),
    ));
    let h = Harness::start(sim).await;
    eventually("two pods", || h.sim.live_pods("api-").len() == 2).await;
    let name = h.sim.live_pods("api-")[0].metadata.name.clone().unwrap();
    let target = h.pod_ref("default", &name);
    h.cached(&target).await;
    let outcome = h
        .executor(false)
        .run(&Action::Evict(target), Origin::Manual)
        .await;
    assert!(
        matches!(&outcome, Outcome::Failed(_) if outcome.detail().contains("disruption budget")),
        "{outcome:?}"
    );
    assert!(h.sim.pod("default", &name).is_some());
}

#[tokio::test]
async fn a_denied_verb_is_refused_with_the_missing_permission() {
    let sim = SimCluster::new();
    sim.create_pod(typed(pod("web-1").evicted().json()));
    sim.faults().deny("delete", "pods", Some("default"));
    let h = Harness::start(sim).await;
    let target = h.pod_ref("default", "web-1");
    h.cached(&target).await;
    let outcome = h
        .executor(false)
        .run(&Action::Delete(target), Origin::Manual)
        .await;
    assert!(
        matches!(
            &outcome,
            Outcome::Refused(Refusal::Forbidden(Denied {
                verb: "delete",
                resource: "pods",
                namespace,
                ..
            })) if namespace == "default"
        ),
        "{outcome:?}"
    );
    assert!(h.sim.pod("default", "web-1").is_some());
}

#[tokio::test]
async fn throttling_is_waited_out() {
    let sim = SimCluster::new();
    sim.create_pod(typed(pod("web-1").evicted().json()));
    let h = Harness::start(sim).await;
    let target = h.pod_ref("default", "web-1");
    h.cached(&target).await;
    h.sim
        .faults()
        .throttle_next(1, Some("DELETE"), "/api/v1/namespaces/default/pods", 1);
    let started = std::time::Instant::now();
    let outcome = h
        .executor(false)
        .run(&Action::Delete(target), Origin::Manual)
        .await;
    assert!(matches!(outcome, Outcome::Done(_)), "{outcome:?}");
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After was honoured"
    );
    assert!(h.sim.pod("default", "web-1").is_none());
}

#[tokio::test]
async fn with_only_the_deployed_permissions_and_no_parked_config_map_nothing_is_scaled() {
    let sim = SimCluster::new();
    sim.create_deployment(typed(unpullable("Deployment", "web", 2)));
    deny_what_the_deployed_roles_do_not_grant(&sim);
    let h = Harness::start(sim).await;
    eventually("two pods", || h.sim.live_pods("web-").len() == 2).await;
    let name = h.sim.live_pods("web-")[0].metadata.name.clone().unwrap();
    let target = h.pod_ref("default", &name);
    h.cached(&target).await;
    let outcome = h
        .executor(false)
        .run(&Action::ScaleToZero(target), Origin::Manual)
        .await;
    let Outcome::Refused(Refusal::Unrecorded { replicas: 2, .. }) = &outcome else {
        panic!("{outcome:?}")
    };
    let why = outcome.detail();
    assert!(why.starts_with("nowhere to record the 2 replicas"), "{why}");
    assert!(why.contains("assets/deploy/base/parked.yaml"), "{why}");
    assert_eq!(
        h.sim
            .deployment("default", "web")
            .unwrap()
            .spec
            .unwrap()
            .replicas,
        Some(2)
    );
}
