//! A tenant who may create pods and Events in a namespace writes what the tool reads: forged
//! owner references must not get a workload scaled, by a person's key or by the worker, and
//! oversized fields must not be acted on.

use crate::support;
use opc_core::cluster::ClusterName;

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
            ClusterName::new("sim"),
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

/// StatefulSet `db` (3 replicas, OrderedReady) whose `db-0` runs but is not Ready, so the
/// controller has not made `db-1` yet: the ordinal a tenant can squat.
async fn with_db_waiting_on_its_first_pod() -> (Cluster, StatefulSet) {
    let sim = SimCluster::new();
    sim.set_pod_shaper(|pod| {
        if pod.metadata.name.as_deref() == Some("db-0") {
            let status = pod.status.as_mut().unwrap();
            for c in status.conditions.iter_mut().flatten() {
                if c.type_ == "Ready" || c.type_ == "ContainersReady" {
                    c.status = "False".into();
                }
            }
            for c in status.container_statuses.iter_mut().flatten() {
                c.ready = false;
            }
        }
    });
    sim.create_statefulset(typed(workload("StatefulSet", "db", 3)));
    let cluster = Cluster::start(sim).await;
    eventually("db-0 alone", || cluster.sim().live_pods("db-").len() == 1).await;
    let set = cluster.sim().statefulset("default", "db").unwrap();
    (cluster, set)
}

/// `db-1` as a tenant makes it: the set's uid as controller, its selector labels, its current
/// revision, and an image of the tenant's that fails to pull.
fn squatter(set: &StatefulSet, image: &str) -> Value {
    let revision = set
        .status
        .as_ref()
        .unwrap()
        .current_revision
        .clone()
        .unwrap();
    let uid = set.metadata.uid.clone().unwrap();
    let mut p = pod("db-1").waiting("ErrImagePull").json();
    p["metadata"]["ownerReferences"] = json!([reference("apps/v1", "StatefulSet", "db", &uid)]);
    p["metadata"]["labels"] = json!({"app": "db", "controller-revision-hash": revision,
                                     "statefulset.kubernetes.io/pod-name": "db-1"});
    p["metadata"].as_object_mut().unwrap().remove("uid");
    p["spec"]["containers"][0]["image"] = json!(image);
    p["spec"]["containers"][0]["name"] = json!("db");
    p["status"]["containerStatuses"][0]["image"] = json!(image);
    p["status"]["containerStatuses"][0]["name"] = json!("db");
    p
}

#[tokio::test]
async fn a_squatted_statefulset_ordinal_with_a_foreign_image_does_not_scale_the_set() {
    let (cluster, set) = with_db_waiting_on_its_first_pod().await;
    let target = cluster
        .plant(squatter(&set, "registry.invalid/tenant:1"))
        .await;
    cluster
        .refused(
            target,
            "container db runs image registry.invalid/tenant:1, which is not in the pod template of StatefulSet db",
        )
        .await;
    assert_eq!(cluster.replicas("StatefulSet", "db"), Some(3));
    assert!(cluster.sim().pod("default", "db-0").is_some());
}

/// The same squat with the set's own image, made to fail: pulled only if present
/// (`imagePullPolicy: Never`), which the set's template never asks for.
#[tokio::test]
async fn a_squatted_ordinal_that_fails_its_own_way_on_the_sets_image_does_not_scale_it() {
    let (cluster, set) = with_db_waiting_on_its_first_pod().await;
    let mut squat = squatter(&set, "registry.local/app:1");
    // The set's own image and container, as the set would make them.
    squat["spec"]["containers"][0]["imagePullPolicy"] = json!("Never");
    squat["status"]["containerStatuses"][0]["state"] = json!({"waiting": {
        "reason": "ErrImageNeverPull",
        "message": "Container image \"registry.local/app:1\" is not present with pull policy of Never"}});
    let target = cluster.plant(squat).await;
    cluster
        .refused(
            target,
            "container db pulls its image with imagePullPolicy Never, unlike the pod template of StatefulSet db",
        )
        .await;
    assert_eq!(cluster.replicas("StatefulSet", "db"), Some(3));
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

/// A Warning Event a tenant writes in its own namespace about a pod of another namespace,
/// stamped far in the future so that nothing newer could replace it.
fn forged_event(namespace: &str, uid: &str, message: &str) -> k8s_openapi::api::core::v1::Event {
    typed(json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "evil.1", "namespace": namespace},
        "involvedObject": {"kind": "Pod", "name": "web-1", "namespace": namespace, "uid": uid,
                           "apiVersion": "v1"},
        "reason": "Failed", "type": "Warning", "count": 1, "message": message,
        "source": {"component": "kubelet"},
        "firstTimestamp": "2099-01-01T00:00:00Z", "lastTimestamp": "2099-01-01T00:00:00Z",
    }))
}

#[tokio::test]
async fn an_event_in_one_namespace_never_sets_the_cause_of_a_pod_in_another() {
    use k8s_openapi::api::core::v1::Event;
    use kube::api::{Api, PostParams};
    use opc_core::rules::CauseClass;
    let sim = SimCluster::new();
    let victim = sim.create_pod(typed(
        pod("web-1")
            .ns("shop")
            .owned_by("apps/v1", "ReplicaSet", "web-5c6b7")
            .waiting_with("ImagePullBackOff", "Back-off pulling image \"web:1\"")
            .json(),
    ));
    let uid = victim.metadata.uid.unwrap();
    let server = kube_sim::SimServer::start(sim.clone()).await.unwrap();
    let policy = eager_policy();
    let session =
        support::sim::open_session(&server.client(), &[opc_core::cluster::Scope::All], &policy);
    let cause = || {
        let found = session.cache.findings();
        found.first().map(|f| (f.cause, f.events().len()))
    };
    eventually("the pod's cause from its status", || {
        cause() == Some((CauseClass::PullUnknown, 0))
    })
    .await;
    let auth = "Failed to pull image \"web:1\": rpc error: code = Unknown desc = failed to \
                authorize: failed to fetch anonymous token: unexpected status: 401 Unauthorized";
    let events: Api<Event> = Api::namespaced(server.client(), "tenant");
    events
        .create(&PostParams::default(), &forged_event("tenant", &uid, auth))
        .await
        .expect("the API server takes an Event about any object");
    // The shop's own kubelet then says something else; only it may set the cause.
    let unreachable =
        "Failed to pull image \"web:1\": dial tcp: lookup registry.example: no such host";
    let shop: Api<Event> = Api::namespaced(server.client(), "shop");
    let mut own = forged_event("shop", &uid, unreachable);
    own.first_timestamp = None;
    own.last_timestamp = None;
    shop.create(&PostParams::default(), &own).await.unwrap();
    eventually("the pod's cause from its own namespace's Event", || {
        cause() == Some((CauseClass::RegistryUnreachable, 1))
    })
    .await;
    // Deleted, the Event no longer speaks for the pod.
    shop.delete("evil.1", &Default::default()).await.unwrap();
    eventually("the pod's cause from its status again", || {
        cause() == Some((CauseClass::PullUnknown, 0))
    })
    .await;
}

#[test]
fn an_event_stamped_in_the_future_ages_from_its_arrival_and_a_deleted_one_stops_counting() {
    use opc_core::clock::Clock;
    use opc_core::cluster::Cache;
    use opc_core::pod::EventTarget;
    use opc_core::rules::CauseClass;
    let now = chrono::Utc::now();
    let chain: Vec<_> = opc_core::rules::default_chain()
        .into_iter()
        .map(|mut r| {
            r.after = std::time::Duration::ZERO;
            r
        })
        .collect();
    let cache = Cache::for_cluster(ClusterName::default(), chain, Clock::real());
    cache.upsert(
        pod("web-1")
            .ns("shop")
            .uid("u-web")
            .owned_by("apps/v1", "ReplicaSet", "web-5c6b7")
            .waiting_with("ImagePullBackOff", "Back-off pulling image \"web:1\"")
            .wire(),
        now,
    );
    let cause = || cache.findings()[0].cause;
    let target = EventTarget {
        namespace: "shop".into(),
        uid: "u-web".into(),
    };
    let auth = "Failed to pull image \"web:1\": 401 Unauthorized";
    let far: chrono::DateTime<chrono::Utc> = "2099-01-01T00:00:00Z".parse().unwrap();
    let wire = |message: &str, last: chrono::DateTime<chrono::Utc>| -> opc_core::pod::WireEvent {
        typed(json!({"metadata": {"name": "e", "namespace": "shop"},
            "involvedObject": {"kind": "Pod", "namespace": "shop", "uid": "u-web"},
            "type": "Warning", "reason": "Failed", "message": message, "count": 1,
            "lastTimestamp": last.to_rfc3339()}))
    };
    let (at, forged) = opc_core::pod::pod_event(&wire(auth, far), now).unwrap();
    assert_eq!(
        forged.last,
        Some(now),
        "a future stamp is taken as the arrival"
    );
    cache.events().record(at, forged.clone(), now);
    assert_eq!(cause(), CauseClass::RegistryAuth);
    // The kubelet's next word, a minute on, replaces it.
    let later = now + chrono::Duration::minutes(1);
    let unreachable = "Failed to pull image \"web:1\": dial tcp: lookup r.example: no such host";
    let (_, real) = opc_core::pod::pod_event(&wire(unreachable, later), later).unwrap();
    cache.events().record(target.clone(), real.clone(), later);
    assert_eq!(cause(), CauseClass::RegistryUnreachable);
    // Deleting an Event that is no longer kept changes nothing; deleting the kept one does.
    cache.events().forget(&target, &forged, later);
    assert_eq!(cause(), CauseClass::RegistryUnreachable);
    cache.events().forget(&target, &real, later);
    assert_eq!(cause(), CauseClass::PullUnknown);
    assert_eq!(cache.events().pod_count(), 0);
}

#[test]
fn an_event_keeps_only_a_few_capped_fields_whatever_it_carries() {
    let huge = "x".repeat(1_400_000);
    let event: opc_core::pod::WireEvent = serde_json::from_value(json!({
        "metadata": {"name": "e", "namespace": "shop", "annotations": {"a": huge},
                     "labels": {"b": huge}, "managedFields": [{"manager": huge}]},
        "involvedObject": {"kind": "Pod", "namespace": "shop", "uid": huge, "name": huge},
        "type": "Warning", "reason": "Failed",
        "message": format!("Failed to pull image \"x\": {huge}"),
        "source": {"component": huge}, "count": 3,
    }))
    .unwrap();
    assert!(!format!("{:?}", event.metadata).contains(&huge));
    assert!(event.message.as_ref().unwrap().0.len() <= opc_core::pod::MESSAGE_CAP);
    assert!(event.involved_object.uid.as_ref().unwrap().0.len() <= 64);
    let (_, kept) = opc_core::pod::pod_event(&event, chrono::Utc::now()).unwrap();
    assert!(kept.message.len() <= opc_core::pod::MESSAGE_CAP);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_shows_a_forged_owner_as_unproven_and_says_why() {
    use support::contexts::{Scratch, run, stdout};
    let sim = SimCluster::new();
    sim.create_deployment(typed(workload("Deployment", "checkout", 2)));
    let uid = sim
        .deployment("default", "checkout")
        .unwrap()
        .metadata
        .uid
        .unwrap();
    sim.create_pod(typed(forged(
        "evil",
        reference("apps/v1", "Deployment", "checkout", &uid),
    )));
    let server = kube_sim::SimServer::start(sim).await.unwrap();
    let scratch = Scratch::new(&[("east", &server)], "");
    let table = stdout(&run(scratch.args(&["scan"])).await);
    let row = table.lines().find(|l| l.contains("evil")).expect(&table);
    assert!(row.trim_end().ends_with("unproven"), "{table}");
    let json = stdout(&run(scratch.args(&["scan", "--output", "json"])).await);
    let rows: Vec<Value> = serde_json::from_str(&json).unwrap();
    let evil = rows.iter().find(|r| r["name"] == "evil").unwrap();
    assert_eq!(evil["action"], "scaleToZero");
    assert!(
        evil["held"]
            .as_str()
            .unwrap()
            .contains("a Deployment only ever owns ReplicaSets"),
        "{evil}"
    );
}

/// What a real API server takes from a tenant, the simulator takes too: an owner reference of
/// any name and uid, with escapes and a newline in it.
#[tokio::test]
async fn the_simulator_takes_any_owner_name_through_its_api() {
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::{Api, PostParams};
    let server = kube_sim::SimServer::start(SimCluster::new()).await.unwrap();
    let pods: Api<Pod> = Api::namespaced(server.client(), "default");
    let name = "x\u{1b}[2J\u{1b}]52;c;SGVsbG8=\u{7}\nimagePull  ns  fake-row";
    let evil = forged(
        "evil",
        reference("x.example/v1", "Thing", name, "not-a-uid"),
    );
    let created = pods
        .create(&PostParams::default(), &typed(evil))
        .await
        .expect("the API server takes any owner name");
    let owner = &created.metadata.owner_references.unwrap()[0];
    assert_eq!(
        (owner.name.as_str(), owner.uid.as_str()),
        (name, "not-a-uid")
    );
}

/// A tenant writes Warning Events about a fresh pod uid each: every one was kept for ten
/// minutes, so a few hundred a second grew the worker (and every TUI) by hundreds of MB. The
/// Events of pods nobody holds are kept up to a bound per namespace, the rest counted as
/// dropped; a real pod of that namespace still has its Events read.
#[tokio::test]
async fn events_about_pods_that_do_not_exist_are_bounded_per_namespace() {
    use k8s_openapi::api::core::v1::Event;
    use kube::api::{Api, PostParams};
    const WRITTEN: usize = 1_100;
    let sim = SimCluster::new();
    let server = kube_sim::SimServer::start(sim.clone()).await.unwrap();
    let policy = eager_policy();
    let session =
        support::sim::open_session(&server.client(), &[opc_core::cluster::Scope::All], &policy);
    let events: Api<Event> = Api::namespaced(server.client(), "tenant");
    for i in 0..WRITTEN {
        let mut event = forged_event("tenant", &format!("ghost-{i}"), "Failed to pull image");
        event.metadata.name = Some(format!("ghost.{i}"));
        events.create(&PostParams::default(), &event).await.unwrap();
    }
    let cache = &session.cache;
    eventually("every Event read", || {
        cache.events().pod_count() + cache.reader().events_dropped() as usize == WRITTEN
    })
    .await;
    assert_eq!(cache.events().pod_count(), 1_000);
    assert_eq!(cache.reader().events_dropped(), 100);
    // A pod that exists, in that namespace, still gets its Events kept.
    let real = sim.create_pod(typed(
        pod("web-1")
            .ns("tenant")
            .waiting_with("ImagePullBackOff", "Back-off pulling image \"web:1\"")
            .json(),
    ));
    let uid = real.metadata.uid.unwrap();
    eventually("the real pod in the cache", || cache.get(&uid).is_some()).await;
    let mut event = forged_event("tenant", &uid, "Failed to pull image \"web:1\": not found");
    event.metadata.name = Some("web-1.real".into());
    events.create(&PostParams::default(), &event).await.unwrap();
    eventually("the real pod's Event kept", || {
        cache
            .findings()
            .iter()
            .any(|f| *f.pod.uid == *uid && !f.events().is_empty())
    })
    .await;
    assert_eq!(
        cache.events().pod_count(),
        1_000,
        "it took an orphan's place"
    );
}
