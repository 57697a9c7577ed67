//! Tier 2: every action's exact requests, through the real `kube::Client` over a scripted API.

use crate::support;
use opc_core::cluster::ClusterName;

use chrono::Utc;
use opc_core::actions::{
    Action, Audit, AuditLog, AuditRecord, Denied, Executor, LOG_BYTES, LOG_LINES, OptOut, Origin,
    Outcome, PodRef, ReadError, Refusal, ScalableWorkload, Stage, WorkloadKind,
};
use opc_core::cluster::Cache;
use opc_core::place::PauseScope;
use opc_core::rules::{RuleKind, Verb};
use serde_json::{Value, json};
use support::mock_api::{Scenario, status};
use support::pods::{PodBuilder, pod};
use support::policy::{audit_config, policy};

const POD: &str = "/api/v1/namespaces/default/pods/web-1";

fn cache_with(pods: Vec<PodBuilder>) -> Cache {
    let cache = Cache::new();
    for p in pods {
        cache.upsert(p.wire(), Utc::now());
    }
    cache
}

fn executor(scenario: &Scenario, cache: &Cache, dry_run: bool) -> Executor {
    Executor::new(
        scenario.client(),
        cache.clone(),
        &policy(dry_run, false),
        ClusterName::new("test"),
        Audit::Off,
    )
}

fn web1() -> PodRef {
    PodRef {
        namespace: "default".into(),
        name: "web-1".into(),
        uid: "uid-web-1".into(),
    }
}

fn delete_body(grace: Option<u32>) -> Value {
    let mut body = json!({"preconditions": {"uid": "uid-web-1"}});
    if let Some(g) = grace {
        body["gracePeriodSeconds"] = json!(g);
    }
    body
}

fn ok_pod() -> Value {
    pod("web-1").json()
}

#[tokio::test]
async fn delete_sends_the_uid_precondition() {
    let scenario = Scenario::new().reads_live(pod("web-1").evicted()).expect(
        "DELETE",
        POD,
        Some(delete_body(None)),
        200,
        ok_pod(),
    );
    let cache = cache_with(vec![pod("web-1").evicted()]);
    let outcome = executor(&scenario, &cache, false)
        .run(&Action::Delete(web1()), Origin::Manual)
        .await;
    scenario.verify();
    assert_eq!(outcome.to_string(), "done: deleted pod default/web-1");
}

#[tokio::test]
async fn force_delete_uses_grace_zero() {
    let scenario = Scenario::new()
        .reads_live(pod("web-1").terminating_since("2026-11-20T09:00:00Z"))
        .expect("DELETE", POD, Some(delete_body(Some(0))), 200, ok_pod());
    let cache = cache_with(vec![pod("web-1").terminating_since("2026-11-20T09:00:00Z")]);
    let outcome = executor(&scenario, &cache, false)
        .run(&Action::ForceDelete(web1()), Origin::Manual)
        .await;
    scenario.verify();
    assert_eq!(
        outcome.to_string(),
        "done: deleted pod default/web-1 with grace 0s"
    );
}

#[tokio::test]
async fn force_delete_names_the_finalizers_and_auto_does_not_retry_them() {
    let stuck = || {
        pod("web-1")
            .terminating_since("2026-11-20T09:00:00Z")
            .finalizers(&["example.com/guard"])
    };
    let scenario = Scenario::new().reads_live(stuck()).expect(
        "DELETE",
        POD,
        Some(delete_body(Some(0))),
        200,
        ok_pod(),
    );
    let cache = cache_with(vec![stuck()]);
    let manual = executor(&scenario, &cache, false)
        .run(&Action::ForceDelete(web1()), Origin::Manual)
        .await;
    scenario.verify();
    assert!(
        matches!(&manual, Outcome::Done(_) if manual.detail().contains("example.com/guard") && manual.detail().contains("still hold")),
        "{manual:?}"
    );

    let untouched = Scenario::new();
    let auto = executor(&untouched, &cache, false)
        .run(
            &Action::ForceDelete(web1()),
            Origin::Auto(RuleKind::Terminating),
        )
        .await;
    untouched.verify();
    assert_eq!(
        auto,
        Outcome::Refused(Refusal::HeldByFinalizers {
            pod: web1(),
            finalizers: vec!["example.com/guard".into()],
        })
    );
    assert!(auto.detail().contains("example.com/guard"), "{auto:?}");
}

#[tokio::test]
async fn not_found_means_already_gone() {
    let scenario = Scenario::new().reads_live(pod("web-1").evicted()).expect(
        "DELETE",
        POD,
        None,
        404,
        status(404, "NotFound", "pods \"web-1\" not found"),
    );
    let cache = cache_with(vec![pod("web-1").evicted()]);
    let outcome = executor(&scenario, &cache, false)
        .run(&Action::Delete(web1()), Origin::Manual)
        .await;
    scenario.verify();
    assert_eq!(outcome, Outcome::AlreadyGone);
}

#[tokio::test]
async fn conflict_rereads_and_leaves_a_replacement_pod_alone() {
    let replacement = pod("web-1").uid("uid-new").json();
    let scenario = Scenario::new()
        .reads_live(pod("web-1").evicted())
        .expect(
            "DELETE",
            POD,
            Some(delete_body(None)),
            409,
            status(
                409,
                "Conflict",
                "Precondition failed: UID in precondition: uid-web-1, UID in object meta: uid-new",
            ),
        )
        .expect("GET", POD, None, 200, replacement);
    let cache = cache_with(vec![pod("web-1").evicted()]);
    let outcome = executor(&scenario, &cache, false)
        .run(&Action::Delete(web1()), Origin::Manual)
        .await;
    scenario.verify();
    assert!(
        matches!(&outcome, Outcome::Skipped(_) if outcome.detail().contains("uid-new")),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn conflict_on_the_same_pod_replans_and_retries_once() {
    let scenario = Scenario::new()
        .expect(
            "DELETE",
            POD,
            Some(delete_body(None)),
            409,
            status(409, "Conflict", "the object has been modified"),
        )
        .expect("GET", POD, None, 200, pod("web-1").evicted().json())
        .expect("DELETE", POD, Some(delete_body(None)), 200, ok_pod());
    let cache = cache_with(vec![pod("web-1").evicted()]);
    let outcome = executor(&scenario, &cache, false)
        .run(&Action::Delete(web1()), Origin::Auto(RuleKind::Evicted))
        .await;
    scenario.verify();
    assert!(matches!(outcome, Outcome::Done(_)), "{outcome:?}");
}

/// A refused action names the permission it lacked, and the `can-i` that checks it for the
/// identity of the context the action went through (without `--context`, kubectl checks the
/// current context's, which may answer yes).
#[tokio::test]
async fn forbidden_names_the_missing_permission() {
    let message = "pods \"web-1\" is forbidden: User \"system:serviceaccount:ops:cleaner\" cannot delete resource \"pods\" in API group \"\" in the namespace \"default\"";
    let scenario = Scenario::new().reads_live(pod("web-1").evicted()).expect(
        "DELETE",
        POD,
        None,
        403,
        status(403, "Forbidden", message),
    );
    let cache = cache_with(vec![pod("web-1").evicted()]);
    let outcome = executor(&scenario, &cache, false)
        .run(&Action::Delete(web1()), Origin::Manual)
        .await;
    scenario.verify();
    let Outcome::Refused(Refusal::Forbidden(denied)) = &outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!((denied.verb, denied.resource), ("delete", "pods"));
    let detail = outcome.detail();
    assert!(
        detail.contains("may not delete pods in namespace default"),
        "{detail}"
    );
    // Run as printed, the check asks about the same identity: the cluster's context.
    assert!(
        detail.contains("`kubectl auth can-i delete pods -n default --context test`"),
        "{detail}"
    );
}

#[tokio::test(start_paused = true)]
async fn too_many_requests_waits_as_told_then_succeeds() {
    let mut busy = status(429, "TooManyRequests", "slow down");
    busy["details"] = json!({"retryAfterSeconds": 7});
    let scenario = Scenario::new()
        .reads_live(pod("web-1").evicted())
        .expect("DELETE", POD, None, 429, busy.clone())
        .expect(
            "DELETE",
            POD,
            None,
            503,
            status(503, "ServiceUnavailable", "etcd leader changed"),
        )
        .expect("DELETE", POD, Some(delete_body(None)), 200, ok_pod());
    let cache = cache_with(vec![pod("web-1").evicted()]);
    let started = tokio::time::Instant::now();
    let outcome = executor(&scenario, &cache, false)
        .run(&Action::Delete(web1()), Origin::Manual)
        .await;
    scenario.verify();
    assert!(matches!(outcome, Outcome::Done(_)), "{outcome:?}");
    // 7 s as the server asked, then the policy's own backoff for the 503.
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(7),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(start_paused = true)]
async fn server_errors_give_up_after_the_policy() {
    let scenario = (0..4).fold(
        Scenario::new().reads_live(pod("web-1").evicted()),
        |s, _| {
            s.expect(
                "DELETE",
                POD,
                None,
                500,
                status(500, "InternalError", "boom"),
            )
        },
    );
    let cache = cache_with(vec![pod("web-1").evicted()]);
    let outcome = executor(&scenario, &cache, false)
        .run(&Action::Delete(web1()), Origin::Manual)
        .await;
    scenario.verify();
    assert!(
        matches!(&outcome, Outcome::Failed(_) if outcome.detail().contains("after 4 tries")),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn evict_posts_an_eviction_with_the_uid_precondition() {
    let body = json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web-1", "namespace": "default"},
        "deleteOptions": {"preconditions": {"uid": "uid-web-1"}}});
    let scenario = Scenario::new().reads_live(pod("web-1").evicted()).expect(
        "POST",
        &format!("{POD}/eviction"),
        Some(body),
        201,
        json!({"kind": "Status", "apiVersion": "v1", "status": "Success", "code": 201}),
    );
    let cache = cache_with(vec![pod("web-1").evicted()]);
    let outcome = executor(&scenario, &cache, false)
        .run(&Action::Evict(web1()), Origin::Manual)
        .await;
    scenario.verify();
    assert_eq!(outcome.to_string(), "done: evicted pod default/web-1");
}

fn replicaset(owner: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "web-5c6b7", "namespace": "default", "uid": "uid-web-5c6b7", "ownerReferences": [owner],
                     "labels": {"app": "web", "pod-template-hash": "5c6b7"},
                     "annotations": {"deployment.kubernetes.io/revision": "4"}},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web", "pod-template-hash": "5c6b7"}},
                 "template": template()}})
}

/// The pod template every workload here has: pod web-1's image.
fn template() -> Value {
    json!({"metadata": {"labels": {"app": "web"}},
           "spec": {"containers": [{"name": "app", "image": "registry.local/app:1"}]}})
}

/// A workload that names pod web-1's template and revision as its current ones.
fn workload(api_version: &str, kind: &str, name: &str, annotations: Value) -> Value {
    // A ReplicationController's selector is a plain map.
    let selector = match kind {
        "ReplicationController" => json!({"app": name}),
        _ => json!({"matchLabels": {"app": name}}),
    };
    let mut annotations = annotations;
    annotations["deployment.kubernetes.io/revision"] = json!("4");
    json!({"apiVersion": api_version, "kind": kind,
        "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"), "annotations": annotations},
        "spec": {"replicas": 3, "selector": selector, "template": template()},
        "status": {"currentRevision": "web-7d9f8", "updateRevision": "web-7d9f8", "currentPodHash": "5c6b7"}})
}

/// The reads that prove a workload before a scale: the owner at `path`, then the workload
/// read fresh, by the pod as read live before a person's action (the worker on a watched
/// cluster reads it for the proof: `proves_by_reading`).
trait ProvesWorkload {
    fn reads_live(self, pod: PodBuilder) -> Self;

    fn proves(self, path: &str, workload: Value) -> Self;

    /// The worker's proof: the owner, pod web-1 as it is now, the workload read fresh.
    fn proves_by_reading(self, path: &str, workload: Value) -> Self;

    fn proves_statefulset(self, path: &str) -> Self
    where
        Self: Sized,
    {
        self.proves(path, workload("apps/v1", "StatefulSet", "web", json!({})))
    }
}

impl ProvesWorkload for Scenario {
    fn reads_live(self, pod: PodBuilder) -> Scenario {
        self.expect("GET", POD, None, 200, labelled(pod.json()))
    }

    fn proves(self, path: &str, workload: Value) -> Scenario {
        self.expect("GET", path, None, 200, workload.clone())
            .expect("GET", path, None, 200, workload)
    }

    fn proves_by_reading(self, path: &str, workload: Value) -> Scenario {
        self.expect("GET", path, None, 200, workload.clone())
            .expect("GET", POD, None, 200, labelled_pod())
            .expect("GET", path, None, 200, workload)
    }
}

/// Pod web-1 as the API server has it: its labels prove which workload it belongs to.
fn labelled_pod() -> Value {
    labelled(pod("web-1").waiting("ErrImagePull").json())
}

/// `pod` with the labels its workload's selector and revision name.
fn labelled(mut pod: Value) -> Value {
    pod["metadata"]["labels"] = json!({"app": "web", "pod-template-hash": "5c6b7",
                                       "controller-revision-hash": "web-7d9f8"});
    pod
}

fn scale(replicas: i32) -> Value {
    json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": replicas}, "status": {"replicas": replicas}})
}

/// The parked-workloads ConfigMap in the product's namespace (no `$POD_NAMESPACE` in tests).
const PARKED: &str = "/api/v1/namespaces/ops-pod-cleaner/configmaps/ops-pod-cleaner-parked";
const CONFIGMAPS: &str = "/api/v1/namespaces/ops-pod-cleaner/configmaps";

/// A parked record as the store writes it.
fn parked_record(kind: &str, uid: &str, replicas: i32) -> Value {
    json!({"kind": kind, "namespace": "default", "name": "web", "uid": uid, "replicas": replicas,
        "at": "2026-11-20T09:00:00.000Z", "cluster": "test", "actor": "someone@host",
        "origin": {"by": "manual"}, "pod": "web-1"})
}

/// The ConfigMap at `rv` with these (uid, record) entries.
fn parked_map(rv: &str, entries: &[(&str, Value)]) -> Value {
    let data: serde_json::Map<String, Value> = entries
        .iter()
        .map(|(uid, record)| (uid.to_string(), json!(record.to_string())))
        .collect();
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "ops-pod-cleaner-parked", "namespace": "ops-pod-cleaner", "resourceVersion": rv},
        "data": data})
}

fn not_found(what: &str) -> Value {
    status(404, "NotFound", &format!("{what} not found"))
}

/// The written ConfigMap must carry `rv` (empty: a create), hold exactly `uids`, and the entry
/// for `fresh` must record `kind`, this workload and `replicas`, stamped now.
fn writes_parked(
    rv: &'static str,
    uids: &'static [&'static str],
    fresh: Option<(&'static str, &'static str, i32)>,
) -> impl Fn(&Value) -> Result<(), String> + Send + 'static {
    move |body| {
        let have_rv = body["metadata"]["resourceVersion"].as_str().unwrap_or("");
        if have_rv != rv {
            return Err(format!("resourceVersion {have_rv:?}, want {rv:?}"));
        }
        let data = body["data"].as_object().cloned().unwrap_or_default();
        let keys: Vec<&str> = data.keys().map(String::as_str).collect();
        if keys != uids {
            return Err(format!("entries {keys:?}, want {uids:?}"));
        }
        let Some((uid, kind, replicas)) = fresh else {
            return Ok(());
        };
        let record: Value =
            serde_json::from_str(data[uid].as_str().unwrap_or("")).map_err(|e| e.to_string())?;
        let want = [
            ("kind", json!(kind)),
            ("namespace", json!("default")),
            ("name", json!("web")),
            ("uid", json!(uid)),
            ("replicas", json!(replicas)),
            ("cluster", json!("test")),
            ("origin", json!({"by": "manual"})),
            ("pod", json!("web-1")),
        ];
        for (key, value) in want {
            if record[key] != value {
                return Err(format!("{key} is {}, want {value}", record[key]));
            }
        }
        let at = record["at"].as_str().unwrap_or("");
        let at = chrono::DateTime::parse_from_rfc3339(at).map_err(|e| format!("at {at:?}: {e}"))?;
        if (Utc::now() - at.with_timezone(&Utc)).num_seconds().abs() > 60 {
            return Err(format!("at {at} is not now"));
        }
        Ok(())
    }
}

fn web_deployment() -> ScalableWorkload {
    ScalableWorkload::new(WorkloadKind::Deployment, "default", "web")
}

#[tokio::test]
async fn scale_to_zero_records_the_replicas_in_the_parked_config_map_before_scaling() {
    let deploy = "/apis/apps/v1/namespaces/default/deployments/web";
    let other = parked_record("StatefulSet", "uid-db", 2);
    let scenario = Scenario::new()
        .reads_live(pod("web-1").waiting("ImagePullBackOff").owned_by("apps/v1", "ReplicaSet", "web-5c6b7",))
        .expect("GET", "/apis/apps/v1/namespaces/default/replicasets/web-5c6b7", None, 200,
            replicaset(json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "uid-web", "controller": true})))
        // The chain and the pod's labels prove the Deployment; then it is read fresh.
        .proves(deploy, workload("apps/v1", "Deployment", "web", json!({})))
        .expect("GET", &format!("{deploy}/scale"), None, 200, scale(3))
        // Read, add this workload's entry beside the others, write with the version read.
        .expect("GET", PARKED, None, 200, parked_map("5", &[("uid-db", other.clone())]))
        .expect_body("PUT", PARKED, writes_parked("5", &["uid-db", "uid-web"], Some(("uid-web", "Deployment", 3))), 200,
            parked_map("6", &[("uid-db", other), ("uid-web", parked_record("Deployment", "uid-web", 3))]))
        // Only then the scale; the workload object itself is never written.
        .expect("PATCH", &format!("{deploy}/scale"), Some(json!({"spec": {"replicas": 0}})), 200, scale(0));
    let cache = cache_with(vec![pod("web-1").waiting("ImagePullBackOff").owned_by(
        "apps/v1",
        "ReplicaSet",
        "web-5c6b7",
    )]);
    let outcome = executor(&scenario, &cache, false)
        .run(&Action::ScaleToZero(web1()), Origin::Manual)
        .await;
    scenario.verify();
    assert_eq!(
        outcome.to_string(),
        "done: scaled Deployment default/web from 3 to 0 (undo restores 3)"
    );
}

#[tokio::test]
async fn a_lost_race_for_the_parked_config_map_reads_it_again_and_keeps_both_entries() {
    let path = "/apis/apps/v1/namespaces/default/statefulsets/web";
    let theirs = parked_record("Deployment", "uid-other", 4);
    let scenario = Scenario::new()
        .reads_live(pod("web-1").waiting("ErrImagePull").owned_by("apps/v1", "StatefulSet", "web",))
        .proves_statefulset(path)
        .expect("GET", &format!("{path}/scale"), None, 200, scale(2))
        .expect("GET", PARKED, None, 200, parked_map("5", &[]))
        .expect_body("PUT", PARKED, writes_parked("5", &["uid-web"], None), 409,
            status(409, "Conflict", "Operation cannot be fulfilled on configmaps \"ops-pod-cleaner-parked\": the object has been modified"))
        // Another replica (or a person) wrote in between: read again, keep their entry.
        .expect("GET", PARKED, None, 200, parked_map("6", &[("uid-other", theirs.clone())]))
        .expect_body("PUT", PARKED, writes_parked("6", &["uid-other", "uid-web"], Some(("uid-web", "StatefulSet", 2))), 200,
            parked_map("7", &[("uid-other", theirs)]))
        .expect("PATCH", &format!("{path}/scale"), Some(json!({"spec": {"replicas": 0}})), 200, scale(0));
    let cache = cache_with(vec![pod("web-1").waiting("ErrImagePull").owned_by(
        "apps/v1",
        "StatefulSet",
        "web",
    )]);
    let outcome = executor(&scenario, &cache, false)
        .run(&Action::ScaleToZero(web1()), Origin::Manual)
        .await;
    scenario.verify();
    assert_eq!(
        outcome.to_string(),
        "done: scaled StatefulSet default/web from 2 to 0 (undo restores 2)"
    );
}

#[tokio::test]
async fn without_the_parked_config_map_a_person_records_in_the_annotation() {
    let path = "/apis/apps/v1/namespaces/default/statefulsets/web";
    let annotate =
        json!({"metadata": {"annotations": {"ops-pod-cleaner.io/replicas-before": "2"}}});
    let cache = cache_with(vec![pod("web-1").waiting("ErrImagePull").owned_by(
        "apps/v1",
        "StatefulSet",
        "web",
    )]);
    let reads = || {
        Scenario::new()
            .reads_live(pod("web-1").waiting("ErrImagePull").owned_by(
                "apps/v1",
                "StatefulSet",
                "web",
            ))
            .proves_statefulset(path)
            .expect("GET", &format!("{path}/scale"), None, 200, scale(2))
    };
    let then_annotate = |s: Scenario| {
        s.expect(
            "PATCH",
            path,
            Some(annotate.clone()),
            200,
            workload("apps/v1", "StatefulSet", "web", json!({})),
        )
        .expect(
            "PATCH",
            &format!("{path}/scale"),
            Some(json!({"spec": {"replicas": 0}})),
            200,
            scale(0),
        )
    };
    // May not read the ConfigMap.
    let forbidden = then_annotate(reads().expect(
        "GET",
        PARKED,
        None,
        403,
        status(
            403,
            "Forbidden",
            "configmaps \"ops-pod-cleaner-parked\" is forbidden",
        ),
    ));
    // Its namespace does not exist: the GET says the ConfigMap is missing, the create why.
    let no_namespace = then_annotate(
        reads()
            .expect(
                "GET",
                PARKED,
                None,
                404,
                not_found("configmaps \"ops-pod-cleaner-parked\""),
            )
            .expect_body(
                "POST",
                CONFIGMAPS,
                writes_parked("", &["uid-web"], Some(("uid-web", "StatefulSet", 2))),
                404,
                not_found("namespaces \"ops-pod-cleaner\""),
            ),
    );
    for (scenario, why) in [
        (
            forbidden,
            "this identity may not get ConfigMap ops-pod-cleaner/ops-pod-cleaner-parked",
        ),
        (no_namespace, "namespace ops-pod-cleaner does not exist"),
    ] {
        let outcome = executor(&scenario, &cache, false)
            .run(&Action::ScaleToZero(web1()), Origin::Manual)
            .await;
        scenario.verify();
        assert_eq!(
            outcome.to_string(),
            format!(
                "done: scaled StatefulSet default/web from 2 to 0 (undo restores 2); recorded in \
                 its ops-pod-cleaner.io/replicas-before annotation ({why})"
            )
        );
    }
}

#[tokio::test]
async fn nothing_is_scaled_that_could_not_be_recorded() {
    let path = "/apis/apps/v1/namespaces/default/statefulsets/web";
    let scenario = Scenario::new()
        .reads_live(
            pod("web-1")
                .waiting("ErrImagePull")
                .owned_by("apps/v1", "StatefulSet", "web"),
        )
        .proves_statefulset(path)
        .expect("GET", &format!("{path}/scale"), None, 200, scale(2))
        .expect(
            "GET",
            PARKED,
            None,
            403,
            status(403, "Forbidden", "no configmaps"),
        )
        .expect(
            "PATCH",
            path,
            None,
            403,
            status(403, "Forbidden", "no statefulsets"),
        );
    let cache = cache_with(vec![pod("web-1").waiting("ErrImagePull").owned_by(
        "apps/v1",
        "StatefulSet",
        "web",
    )]);
    let outcome = executor(&scenario, &cache, false)
        .run(&Action::ScaleToZero(web1()), Origin::Manual)
        .await;
    scenario.verify();
    let Outcome::Refused(Refusal::Unrecorded { replicas: 2, .. }) = &outcome else {
        panic!("{outcome:?}")
    };
    let why = outcome.detail();
    assert!(why.starts_with("nowhere to record the 2 replicas of StatefulSet default/web for undo, so it was not scaled"), "{why}");
    assert!(
        why.contains("may not patch statefulsets in namespace default"),
        "{why}"
    );

    // A scale the API refuses leaves no record behind: nothing was parked.
    let web = pod("web-1")
        .waiting("ErrImagePull")
        .owned_by("apps/v1", "StatefulSet", "web");
    let refused = Scenario::new()
        .reads_live(web)
        .proves_statefulset(path)
        .expect("GET", &format!("{path}/scale"), None, 200, scale(2))
        .expect("GET", PARKED, None, 200, parked_map("5", &[]))
        .expect_body(
            "PUT",
            PARKED,
            writes_parked("5", &["uid-web"], Some(("uid-web", "StatefulSet", 2))),
            200,
            parked_map(
                "6",
                &[("uid-web", parked_record("StatefulSet", "uid-web", 2))],
            ),
        )
        .expect(
            "PATCH",
            &format!("{path}/scale"),
            None,
            403,
            status(403, "Forbidden", "no scale"),
        )
        .expect(
            "GET",
            PARKED,
            None,
            200,
            parked_map(
                "6",
                &[("uid-web", parked_record("StatefulSet", "uid-web", 2))],
            ),
        )
        .expect_body(
            "PUT",
            PARKED,
            writes_parked("6", &[], None),
            200,
            parked_map("7", &[]),
        );
    let outcome = executor(&refused, &cache, false)
        .run(&Action::ScaleToZero(web1()), Origin::Manual)
        .await;
    refused.verify();
    assert!(
        matches!(
            &outcome,
            Outcome::Refused(Refusal::Forbidden(Denied {
                verb: "patch",
                resource: "statefulsets/scale",
                ..
            }))
        ),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn scale_to_zero_reaches_an_argo_rollout_through_the_dynamic_api() {
    let rollout = "/apis/argoproj.io/v1alpha1/namespaces/default/rollouts/web";
    let scenario = Scenario::new()
        .reads_live(pod("web-1").waiting("ErrImagePull").owned_by("apps/v1", "ReplicaSet", "web-5c6b7",))
        .expect("GET", "/apis/apps/v1/namespaces/default/replicasets/web-5c6b7", None, 200,
            replicaset(json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": "web", "uid": "uid-web", "controller": true})))
        .proves(rollout, workload("argoproj.io/v1alpha1", "Rollout", "web", json!({})))
        .expect("GET", &format!("{rollout}/scale"), None, 200, scale(2))
        // No ConfigMap yet (a person, where the manifests were not applied): created.
        .expect("GET", PARKED, None, 404, not_found("configmaps \"ops-pod-cleaner-parked\""))
        .expect_body("POST", CONFIGMAPS, writes_parked("", &["uid-web"], Some(("uid-web", "Rollout", 2))), 201,
            parked_map("1", &[("uid-web", parked_record("Rollout", "uid-web", 2))]))
        .expect("PATCH", &format!("{rollout}/scale"), Some(json!({"spec": {"replicas": 0}})), 200, scale(0));
    let cache = cache_with(vec![pod("web-1").waiting("ErrImagePull").owned_by(
        "apps/v1",
        "ReplicaSet",
        "web-5c6b7",
    )]);
    let outcome = executor(&scenario, &cache, false)
        .run(&Action::ScaleToZero(web1()), Origin::Manual)
        .await;
    scenario.verify();
    assert!(
        matches!(&outcome, Outcome::Done(_) if outcome.detail().starts_with("scaled Rollout default/web from 2 to 0")),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn scale_to_zero_of_a_statefulset_and_an_rc_needs_no_replicaset_lookup() {
    for (api_version, kind, path) in [
        (
            "apps/v1",
            "StatefulSet",
            "/apis/apps/v1/namespaces/default/statefulsets/web",
        ),
        (
            "v1",
            "ReplicationController",
            "/api/v1/namespaces/default/replicationcontrollers/web",
        ),
    ] {
        let scenario = Scenario::new()
            .reads_live(
                pod("web-1")
                    .waiting("ErrImagePull")
                    .owned_by(api_version, kind, "web"),
            )
            .proves(path, workload(api_version, kind, "web", json!({})))
            .expect("GET", &format!("{path}/scale"), None, 200, scale(1))
            .expect("GET", PARKED, None, 200, parked_map("5", &[]))
            .expect_body(
                "PUT",
                PARKED,
                move |body| writes_parked("5", &["uid-web"], Some(("uid-web", kind, 1)))(body),
                200,
                parked_map("6", &[]),
            )
            .expect(
                "PATCH",
                &format!("{path}/scale"),
                Some(json!({"spec": {"replicas": 0}})),
                200,
                scale(0),
            );
        let cache = cache_with(vec![pod("web-1").waiting("ErrImagePull").owned_by(
            api_version,
            kind,
            "web",
        )]);
        let outcome = executor(&scenario, &cache, false)
            .run(&Action::ScaleToZero(web1()), Origin::Manual)
            .await;
        scenario.verify();
        assert!(matches!(outcome, Outcome::Done(_)), "{kind}: {outcome:?}");
    }
}

#[tokio::test]
async fn jobs_daemonsets_and_bare_pods_cannot_be_scaled_and_say_why() {
    let cases = [
        (Some(("batch/v1", "Job")), "runs to completion"),
        (Some(("apps/v1", "DaemonSet")), "one pod per node"),
        (None, "no controller"),
    ];
    for (owner, why) in cases {
        let mut p = pod("web-1").waiting("ErrImagePull");
        if let Some((api_version, kind)) = owner {
            p = p.owned_by(api_version, kind, "web");
        }
        let scenario = Scenario::new().expect("GET", POD, None, 200, p.clone().json());
        let cache = cache_with(vec![p]);
        let outcome = executor(&scenario, &cache, false)
            .run(&Action::ScaleToZero(web1()), Origin::Manual)
            .await;
        scenario.verify();
        assert!(
            matches!(&outcome, Outcome::Refused(Refusal::Unscalable(d)) if d.to_string().contains(why)),
            "{outcome:?}"
        );
    }
}

#[tokio::test]
async fn auto_scale_respects_the_ignore_annotation_on_the_workload() {
    let path = "/apis/apps/v1/namespaces/default/statefulsets/web";
    let scenario = Scenario::new().expect(
        "GET",
        path,
        None,
        200,
        workload(
            "apps/v1",
            "StatefulSet",
            "web",
            json!({"ops-pod-cleaner.io/ignore": "true"}),
        ),
    );
    let mut chain_pod =
        pod("web-1")
            .waiting("ErrImagePull")
            .owned_by("apps/v1", "StatefulSet", "web");
    chain_pod = chain_pod.annotate("unrelated", "x");
    let cache = cache_with(vec![chain_pod]);
    let outcome = executor(&scenario, &cache, false)
        .run(
            &Action::ScaleToZero(web1()),
            Origin::Auto(RuleKind::ImagePull),
        )
        .await;
    scenario.verify();
    assert_eq!(
        outcome,
        Outcome::Refused(Refusal::OptedOut(OptOut::Owner {
            kind: "StatefulSet".into(),
            namespace: "default".into(),
            name: "web".into(),
        }))
    );
    assert_eq!(
        outcome.detail(),
        "StatefulSet default/web carries ops-pod-cleaner.io/ignore: left alone"
    );
}

#[tokio::test]
async fn undo_restores_from_the_parked_config_map_and_removes_the_entry() {
    let deploy = "/apis/apps/v1/namespaces/default/deployments/web";
    let ours = parked_record("Deployment", "uid-web", 3);
    let theirs = parked_record("StatefulSet", "uid-db", 2);
    let both = [("uid-db", theirs.clone()), ("uid-web", ours)];
    let scenario = Scenario::new()
        .expect(
            "GET",
            deploy,
            None,
            200,
            workload("apps/v1", "Deployment", "web", json!({})),
        )
        .expect("GET", PARKED, None, 200, parked_map("7", &both))
        .expect("GET", &format!("{deploy}/scale"), None, 200, scale(0))
        .expect(
            "PATCH",
            &format!("{deploy}/scale"),
            Some(json!({"spec": {"replicas": 3}})),
            200,
            scale(3),
        )
        .expect("GET", PARKED, None, 200, parked_map("7", &both))
        .expect_body(
            "PUT",
            PARKED,
            writes_parked("7", &["uid-db"], None),
            200,
            parked_map("8", &[("uid-db", theirs)]),
        );
    let outcome = executor(&scenario, &Cache::new(), false)
        .run(&Action::UndoScale(web_deployment()), Origin::Manual)
        .await;
    scenario.verify();
    assert_eq!(
        outcome.to_string(),
        "done: restored Deployment default/web to 3 replicas"
    );

    let never_scaled = Scenario::new()
        .expect(
            "GET",
            deploy,
            None,
            200,
            workload("apps/v1", "Deployment", "web", json!({})),
        )
        .expect("GET", PARKED, None, 200, parked_map("8", &[]));
    let outcome = executor(&never_scaled, &Cache::new(), false)
        .run(&Action::UndoScale(web_deployment()), Origin::Manual)
        .await;
    never_scaled.verify();
    assert!(
        matches!(
            &outcome,
            Outcome::Refused(Refusal::NotParked {
                unavailable: None,
                ..
            })
        ),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn undo_honours_the_annotation_an_earlier_version_left_and_leaves_it() {
    let deploy = "/apis/apps/v1/namespaces/default/deployments/web";
    let old = json!({"ops-pod-cleaner.io/replicas-before": "3"});
    // No entry in the ConfigMap: the annotation counts; the workload is never written.
    let scenario = Scenario::new()
        .expect(
            "GET",
            deploy,
            None,
            200,
            workload("apps/v1", "Deployment", "web", old.clone()),
        )
        .expect("GET", PARKED, None, 200, parked_map("8", &[]))
        .expect("GET", &format!("{deploy}/scale"), None, 200, scale(0))
        .expect(
            "PATCH",
            &format!("{deploy}/scale"),
            Some(json!({"spec": {"replicas": 3}})),
            200,
            scale(3),
        );
    let outcome = executor(&scenario, &Cache::new(), false)
        .run(&Action::UndoScale(web_deployment()), Origin::Manual)
        .await;
    scenario.verify();
    assert_eq!(
        outcome.to_string(),
        "done: restored Deployment default/web to 3 replicas; the \
         ops-pod-cleaner.io/replicas-before annotation an earlier version left stays (remove it \
         with `kubectl annotate deployment/web ops-pod-cleaner.io/replicas-before- -n default`)"
    );

    // A person who may not read the ConfigMap wrote the annotation themselves: they remove it.
    let personal = Scenario::new()
        .expect(
            "GET",
            deploy,
            None,
            200,
            workload("apps/v1", "Deployment", "web", old),
        )
        .expect(
            "GET",
            PARKED,
            None,
            403,
            status(403, "Forbidden", "no configmaps"),
        )
        .expect("GET", &format!("{deploy}/scale"), None, 200, scale(0))
        .expect(
            "PATCH",
            &format!("{deploy}/scale"),
            Some(json!({"spec": {"replicas": 3}})),
            200,
            scale(3),
        )
        .expect(
            "PATCH",
            deploy,
            Some(
                json!({"metadata": {"annotations": {"ops-pod-cleaner.io/replicas-before": null}}}),
            ),
            200,
            workload("apps/v1", "Deployment", "web", json!({})),
        );
    let outcome = executor(&personal, &Cache::new(), false)
        .run(&Action::UndoScale(web_deployment()), Origin::Manual)
        .await;
    personal.verify();
    assert_eq!(
        outcome.to_string(),
        "done: restored Deployment default/web to 3 replicas"
    );
}

#[tokio::test]
async fn undo_is_refused_when_the_workload_is_not_at_zero_any_more() {
    let deploy = "/apis/apps/v1/namespaces/default/deployments/web";
    // An old annotation on a workload someone already brought back: left alone.
    let annotated = Scenario::new()
        .expect(
            "GET",
            deploy,
            None,
            200,
            workload(
                "apps/v1",
                "Deployment",
                "web",
                json!({"ops-pod-cleaner.io/replicas-before": "3"}),
            ),
        )
        .expect("GET", PARKED, None, 200, parked_map("8", &[]))
        .expect("GET", &format!("{deploy}/scale"), None, 200, scale(2));
    let outcome = executor(&annotated, &Cache::new(), false)
        .run(&Action::UndoScale(web_deployment()), Origin::Manual)
        .await;
    annotated.verify();
    assert_eq!(
        outcome,
        Outcome::Refused(Refusal::NotAtZero {
            workload: web_deployment(),
            current: 2,
            removed: None,
        })
    );
    assert_eq!(
        outcome.detail(),
        "Deployment default/web is not at 0 replicas any more: already restored to 2; left as it is"
    );

    // A parked entry for a workload running again no longer describes it: removed.
    let entry = [("uid-web", parked_record("Deployment", "uid-web", 3))];
    let parked = Scenario::new()
        .expect(
            "GET",
            deploy,
            None,
            200,
            workload("apps/v1", "Deployment", "web", json!({})),
        )
        .expect("GET", PARKED, None, 200, parked_map("8", &entry))
        .expect("GET", &format!("{deploy}/scale"), None, 200, scale(3))
        .expect("GET", PARKED, None, 200, parked_map("8", &entry))
        .expect_body(
            "PUT",
            PARKED,
            writes_parked("8", &[], None),
            200,
            parked_map("9", &[]),
        );
    let outcome = executor(&parked, &Cache::new(), false)
        .run(&Action::UndoScale(web_deployment()), Origin::Manual)
        .await;
    parked.verify();
    assert_eq!(
        outcome,
        Outcome::Refused(Refusal::NotAtZero {
            workload: web_deployment(),
            current: 3,
            removed: Some((3, "2026-11-20T09:00:00.000Z".into())),
        })
    );
    assert_eq!(
        outcome.detail(),
        "Deployment default/web is not at 0 replicas any more: already restored to 3; left as \
         it is and its record (parked from 3 at 2026-11-20T09:00:00.000Z) removed"
    );

    // Dry-run reads the same and writes nothing.
    let dry = Scenario::new()
        .expect(
            "GET",
            deploy,
            None,
            200,
            workload("apps/v1", "Deployment", "web", json!({})),
        )
        .expect("GET", PARKED, None, 200, parked_map("8", &entry))
        .expect("GET", &format!("{deploy}/scale"), None, 200, scale(0));
    let outcome = executor(&dry, &Cache::new(), true)
        .run(&Action::UndoScale(web_deployment()), Origin::Manual)
        .await;
    dry.verify();
    assert_eq!(
        outcome.to_string(),
        "dryRun: would restore Deployment default/web to 3 replicas"
    );
}

#[tokio::test]
async fn remove_finalizers_is_a_json_patch_guarded_by_the_uid() {
    let body = json!([{"op": "test", "path": "/metadata/uid", "value": "uid-web-1"},
                      {"op": "add", "path": "/metadata/finalizers", "value": []}]);
    let scenario = Scenario::new()
        .reads_live(
            pod("web-1")
                .terminating_since("2026-11-20T09:00:00Z")
                .finalizers(&["a/b"]),
        )
        .expect("PATCH", POD, Some(body), 200, ok_pod());
    let cache = cache_with(vec![
        pod("web-1")
            .terminating_since("2026-11-20T09:00:00Z")
            .finalizers(&["a/b"]),
    ]);
    let exec = executor(&scenario, &cache, false);
    let outcome = exec
        .run(&Action::RemoveFinalizers(web1()), Origin::Manual)
        .await;
    scenario.verify();
    assert_eq!(
        outcome.to_string(),
        "done: removed the finalizers of pod default/web-1"
    );
    let auto = exec
        .run(
            &Action::RemoveFinalizers(web1()),
            Origin::Auto(RuleKind::Terminating),
        )
        .await;
    assert_eq!(
        auto,
        Outcome::Refused(Refusal::ManualOnly(Verb::RemoveFinalizers)),
        "the worker may never remove finalizers"
    );
}

#[tokio::test]
async fn dry_run_reads_but_never_writes() {
    let scenario = Scenario::new();
    let cache = cache_with(vec![pod("web-1").evicted()]);
    let outcome = executor(&scenario, &cache, true)
        .run(&Action::Delete(web1()), Origin::Auto(RuleKind::Evicted))
        .await;
    scenario.verify();
    assert_eq!(
        outcome.to_string(),
        "dryRun: would delete pod default/web-1"
    );

    let path = "/apis/apps/v1/namespaces/default/statefulsets/web";
    let web = pod("web-1")
        .waiting("ErrImagePull")
        .owned_by("apps/v1", "StatefulSet", "web");
    let reads = Scenario::new()
        .reads_live(web.clone())
        .proves_statefulset(path)
        .expect("GET", &format!("{path}/scale"), None, 200, scale(4));
    let cache = cache_with(vec![web]);
    let outcome = executor(&reads, &cache, true)
        .run(&Action::ScaleToZero(web1()), Origin::Manual)
        .await;
    reads.verify();
    assert_eq!(
        outcome.to_string(),
        "dryRun: would scale StatefulSet default/web from 4 to 0"
    );
}

#[tokio::test]
async fn recheck_against_the_cache_before_acting() {
    // Gone, as a person's action reads it live: nothing to do, and no other request.
    let gone = Scenario::new().expect(
        "GET",
        POD,
        None,
        404,
        status(404, "NotFound", "pods \"web-1\" not found"),
    );
    let outcome = executor(&gone, &Cache::new(), false)
        .run(&Action::Delete(web1()), Origin::Manual)
        .await;
    gone.verify();
    assert_eq!(outcome, Outcome::AlreadyGone);
    let scenario = Scenario::new();
    // The worker does not touch a pod that opted out, or one that no longer matches its rule.
    let ignored = cache_with(vec![
        pod("web-1")
            .evicted()
            .annotate("ops-pod-cleaner.io/ignore", "true"),
    ]);
    let outcome = executor(&scenario, &ignored, false)
        .run(&Action::Delete(web1()), Origin::Auto(RuleKind::Evicted))
        .await;
    assert_eq!(
        outcome,
        Outcome::Refused(Refusal::OptedOut(OptOut::Pod {
            namespace: "default".into(),
            name: "web-1".into(),
        }))
    );
    assert_eq!(
        outcome.detail(),
        "pod default/web-1 carries ops-pod-cleaner.io/ignore: left alone"
    );
    let healthy = cache_with(vec![pod("web-1")]);
    let outcome = executor(&scenario, &healthy, false)
        .run(&Action::Delete(web1()), Origin::Auto(RuleKind::Evicted))
        .await;
    assert!(
        matches!(&outcome, Outcome::Skipped(_) if outcome.detail().contains("no longer matches")),
        "{outcome:?}"
    );
    scenario.verify();
}

#[tokio::test]
async fn every_attempt_is_audited_and_evented() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit/actions.jsonl");
    let audit = AuditLog::open(&audit_config(&path)).unwrap();
    let event_body_ok = json!({"kind": "Event", "apiVersion": "v1", "metadata": {"name": "web-1.1", "namespace": "default"}});
    let scenario = Scenario::new()
        .expect("DELETE", POD, Some(delete_body(None)), 200, ok_pod())
        .expect(
            "POST",
            "/api/v1/namespaces/default/events",
            None,
            201,
            event_body_ok,
        )
        .expect("GET", POD, None, 200, pod("web-1").evicted().json())
        .expect("DELETE", POD, None, 403, status(403, "Forbidden", "no"))
        .expect(
            "POST",
            "/api/v1/namespaces/default/events",
            None,
            403,
            status(403, "Forbidden", "cannot create events"),
        )
        .expect(
            "GET",
            "/api/v1/namespaces/default/pods/web-2",
            None,
            200,
            pod("web-2").evicted().json(),
        )
        .expect(
            "DELETE",
            "/api/v1/namespaces/default/pods/web-2",
            None,
            200,
            pod("web-2").json(),
        );
    let cache = cache_with(vec![pod("web-1").evicted(), pod("web-2").evicted()]);
    let exec = Executor::new(
        scenario.client(),
        cache.clone(),
        &policy(false, true),
        ClusterName::new("prod"),
        Audit::Log(audit),
    );
    exec.run(&Action::Delete(web1()), Origin::Auto(RuleKind::Evicted))
        .await;
    exec.run(&Action::Delete(web1()), Origin::Manual).await;
    // Events are now known to be forbidden: the third action makes no Event request.
    let web2 = PodRef {
        name: "web-2".into(),
        uid: "uid-web-2".into(),
        ..web1()
    };
    exec.run(&Action::Delete(web2), Origin::Manual).await;
    scenario.verify();
    let lines: Vec<Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Each action: an intent before its request, then its outcome with the same id.
    assert_eq!(lines.len(), 6);
    let (intent, outcome) = (&lines[0], &lines[1]);
    assert_eq!(intent["stage"], "intent");
    assert_eq!(intent["origin"], json!({"by": "auto", "rule": "evicted"}));
    assert_eq!(intent["cluster"], "prod");
    assert_eq!(intent["uid"], "uid-web-1");
    assert_eq!(intent["reason"], "evicted: Evicted");
    assert_eq!(intent["podPhase"], "Failed");
    assert!(intent.get("outcome").is_none());
    assert!(!intent["actor"].as_str().unwrap().is_empty());
    assert_eq!(outcome["stage"], "outcome");
    assert_eq!(outcome["id"], intent["id"]);
    assert_eq!(outcome["outcome"], "done");
    assert_ne!(lines[2]["id"], intent["id"], "one id per action");
    assert_eq!(lines[2]["origin"], json!({"by": "manual"}));
    assert_eq!(lines[3]["outcome"], "refused");
    assert_eq!(lines[5]["outcome"], "done");
    assert_eq!(lines[5]["name"], "web-2");
}

#[tokio::test]
async fn the_intent_is_on_disk_before_the_request_and_a_crash_between_is_found_on_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let config = audit_config(&path);
    let cache = cache_with(vec![pod("web-1").evicted()]);
    // The server answers the DELETE; the test reads the log as the request arrives, then
    // "crashes": the executor's future is dropped before the outcome is written.
    let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let probe = {
        let (seen, path) = (seen.clone(), path.clone());
        move || *seen.lock().unwrap() = std::fs::read_to_string(&path).unwrap_or_default()
    };
    let scenario = Scenario::new()
        .expect("GET", POD, None, 200, pod("web-1").evicted().json())
        .expect_then("DELETE", POD, Some(delete_body(None)), 200, ok_pod(), probe)
        .hang_after();
    let exec = Executor::new(
        scenario.client(),
        cache.clone(),
        &policy(false, false),
        ClusterName::new("prod"),
        Audit::Log(AuditLog::open(&config).unwrap()),
    );
    let delete = Action::Delete(web1());
    let run = exec.run(&delete, Origin::Manual);
    let _ = tokio::time::timeout(std::time::Duration::from_millis(300), run).await;
    drop(exec);
    let at_request = seen.lock().unwrap().clone();
    assert_eq!(at_request.lines().count(), 1, "{at_request}");
    assert!(at_request.contains(r#""stage":"intent""#), "{at_request}");

    // The restart: the pod is gone now, so the action most likely happened.
    let restarted = Scenario::new().expect(
        "GET",
        POD,
        None,
        404,
        status(404, "NotFound", "pods \"web-1\" not found"),
    );
    let exec = Executor::new(
        restarted.client(),
        Cache::new(),
        &policy(false, false),
        ClusterName::new("prod"),
        Audit::Log(AuditLog::open(&config).unwrap()),
    );
    let reported = exec.resolve_interrupted().await;
    restarted.verify();
    assert_eq!(reported.len(), 1, "{reported:?}");
    assert!(reported[0].contains("delete default/web-1"), "{reported:?}");
    assert!(reported[0].contains("the pod is gone"), "{reported:?}");
    let log = std::fs::read_to_string(&path).unwrap();
    assert!(
        log.lines()
            .last()
            .unwrap()
            .contains(r#""outcome":"unknown""#),
        "{log}"
    );
    assert!(exec.resolve_interrupted().await.is_empty(), "reported once");
}

#[tokio::test]
async fn without_a_writable_audit_log_nothing_acts_unless_told_to() {
    let dir = tempfile::tempdir().unwrap();
    // A directory where the file should be: it cannot be opened for appending.
    let path = dir.path().join("audit.jsonl");
    std::fs::create_dir(&path).unwrap();
    let config = opc_core::config::Config {
        audit: opc_core::config::AuditConfig {
            events: false,
            ..audit_config(&path)
        },
        ..Default::default()
    };
    let flags = opc_core::policy::Flags::default();
    let strict = opc_core::policy::Policy::new(flags, &config);
    let audit = Audit::open(&strict);
    assert!(matches!(audit, Audit::Unavailable { .. }));
    let scenario = Scenario::new().reads_live(pod("web-1").evicted());
    let cache = cache_with(vec![pod("web-1").evicted()]);
    let exec = Executor::new(
        scenario.client(),
        cache.clone(),
        &strict,
        ClusterName::new("prod"),
        audit,
    );
    let outcome = exec.run(&Action::Delete(web1()), Origin::Manual).await;
    scenario.verify();
    let Outcome::Refused(Refusal::AuditBroken(_)) = &outcome else {
        panic!("{outcome:?}")
    };
    let why = outcome.detail();
    assert!(why.contains(&path.display().to_string()), "{why}");
    assert!(why.contains("--no-audit"), "{why}");
    assert!(exec.audit_problem().is_some(), "the worker is blocked too");

    let flags = opc_core::policy::Flags {
        no_audit: true,
        ..Default::default()
    };
    let unaudited = opc_core::policy::Policy::new(flags, &config);
    let scenario = Scenario::new()
        .expect("GET", POD, None, 200, pod("web-1").evicted().json())
        .expect("DELETE", POD, Some(delete_body(None)), 200, ok_pod());
    let exec = Executor::new(
        scenario.client(),
        cache,
        &unaudited,
        ClusterName::new("prod"),
        Audit::open(&unaudited),
    );
    assert!(exec.unaudited());
    let outcome = exec.run(&Action::Delete(web1()), Origin::Manual).await;
    scenario.verify();
    assert!(matches!(outcome, Outcome::Done(_)), "{outcome:?}");
}

#[test]
fn the_log_is_private_and_rotates_by_size() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    std::fs::write(&path, "").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let config = opc_core::config::AuditConfig {
        max_size_mib: 1,
        keep: 2,
        ..audit_config(&path)
    };
    let log = AuditLog::open(&config).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(
        mode & 0o777,
        0o644,
        "a file the tool did not create keeps its mode (a warning says to tighten it)"
    );
    let record = |stage| AuditRecord {
        time: AuditRecord::stamp(Utc::now()),
        id: log.next_id(Utc::now()),
        stage,
        cluster: ClusterName::new("prod"),
        origin: Origin::Manual,
        actor: "test".into(),
        action: Verb::Delete,
        namespace: "default".into(),
        name: "x".repeat(4096),
        uid: None,
        workload: None,
        owner: None,
        pod_phase: None,
        shares: None,
        reason: None,
        dry_run: false,
        outcome: None,
        detail: None,
    };
    // ~8 KiB per pair: 1 MiB fills after ~128 pairs; 400 pairs rotate three times.
    for _ in 0..400 {
        log.write(&record(Stage::Intent)).unwrap();
        log.write(&record(Stage::Outcome)).unwrap();
    }
    let numbered = |n: u32| dir.path().join(format!("audit.jsonl.{n}"));
    assert!(numbered(1).exists() && numbered(2).exists());
    assert!(!numbered(3).exists(), "only `keep` rotated files stay");
    for file in [path.clone(), numbered(1), numbered(2)] {
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{}", file.display());
        let text = std::fs::read_to_string(&file).unwrap();
        let first = text.lines().next().unwrap_or_default();
        assert!(
            first.is_empty() || first.contains(r#""stage":"intent""#),
            "pairs stay together"
        );
    }
}

#[tokio::test]
async fn an_owner_lookup_refused_says_which_permission_is_missing() {
    let web = pod("web-1").owned_by("apps/v1", "ReplicaSet", "web-5c6b7");
    let scenario = Scenario::new()
        .expect("GET", POD, None, 200, web.json())
        .expect(
            "GET",
            "/apis/apps/v1/namespaces/default/replicasets/web-5c6b7",
            None,
            403,
            status(
                403,
                "Forbidden",
                "replicasets.apps \"web-5c6b7\" is forbidden",
            ),
        );
    let cache = cache_with(vec![pod("web-1").owned_by(
        "apps/v1",
        "ReplicaSet",
        "web-5c6b7",
    )]);
    let error = executor(&scenario, &cache, false)
        .reads()
        .inspect(&web1(), true)
        .await
        .unwrap_err();
    scenario.verify();
    let ReadError::Forbidden(denied) = &error else {
        panic!("a typed 403: {error:?}");
    };
    assert_eq!((denied.verb, denied.resource), ("get", "replicasets"));
    let error = error.to_string();
    assert!(
        error.contains("may not get replicasets in namespace default"),
        "{error}"
    );
    assert!(
        !error.contains("Forbidden(") && !error.contains("cannot reach"),
        "{error}"
    );
}

/// `l` on a pod whose node is lost: the API server cannot reach the kubelet and answers 500
/// (as a real one does for a node with no address); the answer names the node and what to do.
#[tokio::test]
async fn logs_on_a_lost_node_say_what_it_means() {
    let refused = status(
        500,
        "InternalError",
        "no preferred addresses found; known addresses: []",
    );
    let error = logs_on_node_7_answered(500, refused).await;
    assert!(
        matches!(&error, ReadError::NodeUnreachable { node: Some(n), .. } if n == "node-7"),
        "{error:?}"
    );
    let error = error.to_string();
    assert!(
        error.contains("cannot reach the kubelet on node node-7")
            && error.contains("kubectl get node node-7")
            && error.contains("no preferred addresses found"),
        "{error}"
    );
}

/// A node deleted under its pod: a real API server answers the logs with 404 `pods "NODE"
/// not found`; that is the node gone, not the pod.
#[tokio::test]
async fn logs_on_a_deleted_node_do_not_call_the_pod_gone() {
    let mut gone = status(404, "NotFound", "pods \"node-7\" not found");
    gone["details"] = json!({"name": "node-7", "kind": "pods"});
    let error = logs_on_node_7_answered(404, gone).await;
    assert!(
        matches!(&error, ReadError::NodeUnreachable { node: Some(n), .. } if n == "node-7"),
        "{error:?}"
    );
}

/// The error `l` gets for web-1 on node-7 when the logs request is answered so.
async fn logs_on_node_7_answered(code: u16, answer: Value) -> ReadError {
    let scenario = Scenario::new().expect(
        "GET",
        &format!("{POD}/log?tailLines={LOG_LINES}&limitBytes={LOG_BYTES}"),
        None,
        code,
        answer,
    );
    let cache = cache_with(vec![pod("web-1").on_node("node-7")]);
    let error = executor(&scenario, &cache, false)
        .reads()
        .logs(&web1(), None, false)
        .await
        .unwrap_err();
    scenario.verify();
    error
}

fn deployment_status(annotations: Value, available: i32) -> Value {
    let mut d = workload("apps/v1", "Deployment", "web", annotations);
    d["status"] = json!({"replicas": 4, "availableReplicas": available});
    d
}

fn owned_by_web_rs(name: &str) -> PodBuilder {
    pod(name).owned_by("apps/v1", "ReplicaSet", "web-5c6b7")
}

#[tokio::test]
async fn the_worker_reads_each_owner_once_and_honours_an_opt_out_on_the_deployment() {
    let rs = "/apis/apps/v1/namespaces/default/replicasets/web-5c6b7";
    let deploy = "/apis/apps/v1/namespaces/default/deployments/web";
    let controller = json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "uid-web", "controller": true});
    // One read per owner for both pods: no DELETE at all.
    let scenario = Scenario::new()
        .expect("GET", rs, None, 200, replicaset(controller))
        .expect(
            "GET",
            deploy,
            None,
            200,
            deployment_status(json!({"ops-pod-cleaner.io/ignore": "true"}), 3),
        );
    let cache = cache_with(vec![
        owned_by_web_rs("web-1").evicted(),
        owned_by_web_rs("web-2").uid("uid-web-2").evicted(),
    ]);
    let exec = executor(&scenario, &cache, false);
    for (name, uid) in [("web-1", "uid-web-1"), ("web-2", "uid-web-2")] {
        let target = PodRef {
            name: name.into(),
            uid: uid.into(),
            ..web1()
        };
        let outcome = exec
            .run(&Action::Delete(target), Origin::Auto(RuleKind::Evicted))
            .await;
        assert_eq!(
            outcome,
            Outcome::Refused(Refusal::OptedOut(OptOut::Owner {
                kind: "Deployment".into(),
                namespace: "default".into(),
                name: "web".into(),
            }))
        );
        assert_eq!(
            outcome.detail(),
            "Deployment default/web carries ops-pod-cleaner.io/ignore: left alone"
        );
    }
    scenario.verify();
}

#[tokio::test]
async fn the_worker_never_scales_a_bad_rollout_unless_the_rule_opts_in() {
    let rs = "/apis/apps/v1/namespaces/default/replicasets/web-5c6b7";
    let deploy = "/apis/apps/v1/namespaces/default/deployments/web";
    let controller = json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "uid-web", "controller": true});
    let cache = cache_with(vec![owned_by_web_rs("web-1").waiting("ImagePullBackOff")]);
    let scale_action = Action::ScaleToZero(web1());
    let auto = Origin::Auto(RuleKind::ImagePull);

    // The chain (ReplicaSet, Deployment), then the Deployment read fresh: 3 still serve.
    let held = Scenario::new()
        .expect("GET", rs, None, 200, replicaset(controller.clone()))
        .expect("GET", deploy, None, 200, deployment_status(json!({}), 3))
        .expect("GET", POD, None, 200, labelled_pod())
        .expect("GET", deploy, None, 200, deployment_status(json!({}), 3));
    let mut config = opc_core::config::Config::default();
    config.audit.events = false;
    for rule in &mut config.rules {
        rule.after = std::time::Duration::ZERO;
    }
    let flags = opc_core::policy::Flags::default();
    let strict = opc_core::policy::Policy::new(flags, &config);
    let outcome = Executor::new(
        held.client(),
        cache.clone(),
        &strict,
        ClusterName::new("test"),
        Audit::Off,
    )
    .run(&scale_action, auto)
    .await;
    held.verify();
    assert_eq!(
        outcome,
        Outcome::Refused(Refusal::BadRollout {
            workload: web_deployment(),
            available: 3,
        })
    );
    assert_eq!(
        outcome.detail(),
        "bad rollout: 3 replicas still available in Deployment default/web; scaling to 0 \
         would stop them (rule option scaleWhileAvailable), consider \
         `kubectl rollout undo deployment/web -n default`"
    );

    // A rule that opts in scales anyway.
    for rule in &mut config.rules {
        rule.scale_while_available = true;
    }
    let opted_in = opc_core::policy::Policy::new(flags, &config);
    let scaled = Scenario::new()
        .expect("GET", rs, None, 200, replicaset(controller))
        .proves_by_reading(deploy, deployment_status(json!({}), 3))
        .expect("GET", &format!("{deploy}/scale"), None, 200, scale(4))
        .expect("GET", PARKED, None, 200, parked_map("5", &[]))
        .expect("PUT", PARKED, None, 200, parked_map("6", &[]))
        .expect(
            "PATCH",
            &format!("{deploy}/scale"),
            Some(json!({"spec": {"replicas": 0}})),
            200,
            scale(0),
        );
    let outcome = Executor::new(
        scaled.client(),
        cache,
        &opted_in,
        ClusterName::new("test"),
        Audit::Off,
    )
    .run(&scale_action, auto)
    .await;
    scaled.verify();
    assert!(matches!(outcome, Outcome::Done(_)), "{outcome:?}");
}

#[tokio::test]
async fn dry_run_writes_no_event_and_no_annotation() {
    // Events on, dry-run on: only reads go out.
    let deploy = "/apis/apps/v1/namespaces/default/deployments/web";
    let scenario = Scenario::new()
        .reads_live(owned_by_web_rs("web-1").waiting("ImagePullBackOff"))
        .expect("GET", "/apis/apps/v1/namespaces/default/replicasets/web-5c6b7", None, 200,
            replicaset(json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "uid-web", "controller": true})))
        .proves(deploy, deployment_status(json!({}), 0))
        .expect("GET", &format!("{deploy}/scale"), None, 200, scale(3))
        .expect(
            "GET",
            "/api/v1/namespaces/default/pods/web-2",
            None,
            200,
            pod("web-2").uid("uid-web-2").evicted().json(),
        );
    let cache = cache_with(vec![
        owned_by_web_rs("web-1").waiting("ImagePullBackOff"),
        pod("web-2").uid("uid-web-2").evicted(),
    ]);
    let exec = Executor::new(
        scenario.client(),
        cache,
        &policy(true, true),
        ClusterName::new("test"),
        Audit::Off,
    );
    let outcome = exec.run(&Action::ScaleToZero(web1()), Origin::Manual).await;
    assert_eq!(
        outcome.to_string(),
        "dryRun: would scale Deployment default/web from 3 to 0"
    );
    let web2 = PodRef {
        name: "web-2".into(),
        uid: "uid-web-2".into(),
        ..web1()
    };
    let outcome = exec.run(&Action::Delete(web2), Origin::Manual).await;
    assert!(matches!(outcome, Outcome::DryRun(_)), "{outcome:?}");
    scenario.verify();
}

/// The README documents the record as a JSON schema; every field written is in it.
#[test]
fn the_readme_schema_names_every_field_the_log_writes() {
    let readme = include_str!("../../README.md");
    let section = readme.split("## The audit log").nth(1).unwrap();
    let schema = section
        .split("```json")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    let schema: Value = serde_json::from_str(schema).unwrap();
    let record = AuditRecord {
        time: AuditRecord::stamp(Utc::now()),
        id: "1".into(),
        stage: Stage::Outcome,
        cluster: ClusterName::new("prod"),
        origin: Origin::Auto(RuleKind::ImagePull),
        actor: "a@b".into(),
        action: Verb::ScaleToZero,
        namespace: "shop".into(),
        name: "web-1".into(),
        uid: Some("u".into()),
        workload: Some("Deployment shop/web".into()),
        owner: Some("Deployment/web".into()),
        pod_phase: Some("Pending"),
        shares: Some(PauseScope::Registry("quay.io".into())),
        reason: Some("imagePull: ImagePullBackOff".into()),
        dry_run: false,
        outcome: Some("done"),
        detail: Some("scaled".into()),
    };
    let written = serde_json::to_value(&record).unwrap();
    let properties = schema["properties"].as_object().unwrap();
    for key in written.as_object().unwrap().keys() {
        assert!(
            properties.contains_key(key),
            "{key} is written but not documented"
        );
    }
    for key in schema["required"].as_array().unwrap() {
        assert!(written.get(key.as_str().unwrap()).is_some(), "{key}");
    }
    // The documented action names are exactly the verbs' names.
    let documented: Vec<&str> = properties["action"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(documented, Verb::ALL.map(Verb::name));
}

/// `--readonly` holds in the executor itself, not only in the screen that hides the keys.
#[tokio::test]
async fn readonly_refuses_every_action_without_a_request() {
    let scenario = Scenario::new();
    let cache = cache_with(vec![pod("web-1").evicted()]);
    let flags = opc_core::policy::Flags {
        readonly: true,
        ..Default::default()
    };
    let config = opc_core::config::Config::default();
    let policy = opc_core::policy::Policy::new(flags, &config);
    let exec = Executor::new(
        scenario.client(),
        cache,
        &policy,
        ClusterName::new("test"),
        Audit::Off,
    );
    for origin in [Origin::Manual, Origin::Auto(RuleKind::Evicted)] {
        let outcome = exec.run(&Action::Delete(web1()), origin).await;
        assert_eq!(outcome, Outcome::Refused(Refusal::Readonly));
        assert_eq!(outcome.detail(), "read-only mode (--readonly): no actions");
    }
    scenario.verify();
}
