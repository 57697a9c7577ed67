//! A tenant who may create pods and Events in a namespace writes what the tool reads: forged
//! owner references must not get a workload scaled, by a person's key or by the worker, and
//! oversized fields must not be acted on.

use crate::support;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use kube_sim::SimCluster;
use opc_core::actions::{Action, Audit, Executor, Origin, Outcome, PodRef, Refusal};
use opc_core::config::Config;
use opc_core::policy::{Flags, Policy};
use opc_core::rules::RuleKind;
use serde_json::{Value, json};
use support::pods::pod;
use support::policy::quick_retry;
use support::sim::{Watched, eventually, typed, workload};

/// Rules that would scale a pulling pod's workload at once, even while it serves: what an
/// attacker hopes for.
fn eager_policy() -> Policy {
    let mut config = Config::default();
    config.audit.events = false;
    for rule in &mut config.rules {
        rule.after = std::time::Duration::ZERO;
        rule.scale_while_available = true;
    }
    Policy::new(Flags::default(), &config)
}

/// A pod with a failing image whose controller reference the tenant wrote.
fn forged(name: &str, owner: Value) -> Value {
    let mut p = pod(name).waiting("ErrImagePull").json();
    p["metadata"]["ownerReferences"] = json!([owner]);
    p["metadata"].as_object_mut().unwrap().remove("uid");
    p
}

fn reference(api_version: &str, kind: &str, name: &str, uid: &str) -> Value {
    json!({"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "controller": true})
}

struct Cluster {
    watched: Watched,
}

impl Cluster {
    async fn start(sim: SimCluster) -> Cluster {
        Cluster {
            watched: Watched::start(sim).await,
        }
    }

    fn sim(&self) -> &SimCluster {
        &self.watched.sim
    }

    async fn plant(&self, pod: Value) -> PodRef {
        let created = self.sim().create_pod(typed(pod));
        let target = PodRef {
            namespace: "default".into(),
            name: created.metadata.name.unwrap(),
            uid: created.metadata.uid.unwrap(),
        };
        let cache = &self.watched.cache;
        eventually("the pod in the cache", || cache.get(&target.uid).is_some()).await;
        target
    }

    /// Scale to zero for `target`, by a person and by the worker: both must be refused as
    /// unscalable, with `why` in the words.
    async fn refused(&self, target: PodRef, why: &str) {
        let executor = self.executor();
        let action = Action::ScaleToZero(target);
        for origin in [Origin::Manual, Origin::Auto(RuleKind::ImagePull)] {
            let outcome = executor.run(&action, origin).await;
            assert!(
                matches!(&outcome, Outcome::Refused(Refusal::Unscalable(_))),
                "{origin:?}: {outcome:?}"
            );
            assert!(outcome.detail().contains(why), "{origin:?}: {outcome:?}");
        }
    }

    fn executor(&self) -> Executor {
        Executor::new(
            self.watched.server.client(),
            self.watched.cache.clone(),
            &eager_policy(),
            "sim",
            Audit::Off,
        )
        .with_retry(quick_retry())
    }

    fn replicas(&self, kind: &str, name: &str) -> Option<i32> {
        match kind {
            "Deployment" => {
                let d: Deployment = self.sim().deployment("default", name).unwrap();
                d.spec.unwrap().replicas
            }
            _ => {
                let s: StatefulSet = self.sim().statefulset("default", name).unwrap();
                s.spec.unwrap().replicas
            }
        }
    }
}

async fn with_checkout() -> (Cluster, String) {
    let sim = SimCluster::new();
    sim.create_deployment(typed(workload("Deployment", "checkout", 2)));
    let cluster = Cluster::start(sim).await;
    eventually("two pods", || {
        cluster.sim().live_pods("checkout-").len() == 2
    })
    .await;
    let uid = cluster
        .sim()
        .deployment("default", "checkout")
        .unwrap()
        .metadata
        .uid
        .unwrap();
    (cluster, uid)
}

#[tokio::test]
async fn a_pod_claiming_a_deployment_directly_does_not_scale_it() {
    let (cluster, uid) = with_checkout().await;
    let evil = forged("evil", reference("apps/v1", "Deployment", "checkout", &uid));
    let target = cluster.plant(evil).await;
    cluster
        .refused(target, "a Deployment only ever owns ReplicaSets")
        .await;
    assert_eq!(cluster.replicas("Deployment", "checkout"), Some(2));
}

#[tokio::test]
async fn a_pod_claiming_the_real_replicaset_without_its_labels_does_not_scale_it() {
    let (cluster, _) = with_checkout().await;
    let rs: ReplicaSet = cluster
        .sim()
        .replicasets()
        .into_iter()
        .find(|rs| {
            rs.metadata
                .name
                .as_deref()
                .unwrap_or("")
                .starts_with("checkout-")
        })
        .unwrap();
    let (name, uid) = (rs.metadata.name.unwrap(), rs.metadata.uid.unwrap());
    let evil = forged("evil", reference("apps/v1", "ReplicaSet", &name, &uid));
    let target = cluster.plant(evil).await;
    cluster.refused(target, "do not match the selector").await;

    // The right name with another uid: another object than the one named.
    let evil = forged(
        "evil2",
        reference("apps/v1", "ReplicaSet", &name, "not-its-uid"),
    );
    let target = cluster.plant(evil).await;
    cluster.refused(target, "not the uid not-its-uid").await;
    assert_eq!(cluster.replicas("Deployment", "checkout"), Some(2));
}

#[tokio::test]
async fn a_pod_claiming_a_statefulset_is_refused_unless_it_is_one_of_its_ordinals() {
    let sim = SimCluster::new();
    sim.create_statefulset(typed(workload("StatefulSet", "db", 2)));
    let cluster = Cluster::start(sim).await;
    eventually("two pods", || cluster.sim().live_pods("db-").len() == 2).await;
    let uid = cluster
        .sim()
        .statefulset("default", "db")
        .unwrap()
        .metadata
        .uid
        .unwrap();
    let evil = forged("evil", reference("apps/v1", "StatefulSet", "db", &uid));
    let target = cluster.plant(evil).await;
    cluster.refused(target, "names its pods db-<ordinal>").await;
    assert_eq!(cluster.replicas("StatefulSet", "db"), Some(2));
}

#[tokio::test]
async fn a_pod_whose_owner_name_no_object_can_have_is_never_acted_on() {
    let sim = SimCluster::new();
    let cluster = Cluster::start(sim).await;
    let long = "x".repeat(100_000);
    let mut evil = forged("evil", reference("apps/v1", "ReplicaSet", &long, "u"));
    evil["status"] = pod("evil").evicted().json()["status"].clone();
    let target = cluster.plant(evil).await;
    let kept = cluster.watched.cache.get(&target.uid).unwrap();
    assert!(kept.malformed);
    assert!(kept.owner.unwrap().name.len() <= 253);
    let executor = cluster.executor();
    for action in [
        Action::Delete(target.clone()),
        Action::ScaleToZero(target.clone()),
    ] {
        let outcome = executor.run(&action, Origin::Manual).await;
        assert_eq!(
            outcome,
            Outcome::Refused(Refusal::Malformed(target.clone()))
        );
    }
    assert!(cluster.sim().pod("default", "evil").is_some());
}
