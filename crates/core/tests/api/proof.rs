//! Proving, hop by hop, that a pod belongs to the workload its owner references name: a
//! person's scale to zero (dry-run) against an API server that holds the pod and its owners.

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use opc_core::actions::{
    Action, Audit, Change, Executor, Origin, Outcome, PodRef, Refusal, ScalableWorkload, Unproven,
    Unscalable,
};
use opc_core::cluster::{Cache, ClusterName};
use opc_core::config::Config;
use opc_core::pod::{Interner, PodRecord, WorkloadId, decode_pod};
use opc_core::policy::{Flags, Policy};
use serde_json::{Value, json};

/// The label a ReplicaSet made by a Deployment puts on itself and its pods.
const TEMPLATE_HASH: &str = "pod-template-hash";
/// The revision a StatefulSet's controller stamps on each pod it makes.
const REVISION_HASH: &str = "controller-revision-hash";

/// Where the client asks for `object`.
fn path_of(object: &Value) -> String {
    let text = |pointer: &str| object.pointer(pointer).and_then(Value::as_str).unwrap();
    let (api_version, kind) = (text("/apiVersion"), text("/kind"));
    let (namespace, name) = (text("/metadata/namespace"), text("/metadata/name"));
    let root = if api_version.contains('/') {
        "apis"
    } else {
        "api"
    };
    let plural = format!("{}s", kind.to_lowercase());
    format!("/{root}/{api_version}/namespaces/{namespace}/{plural}/{name}")
}

/// What the server says to a GET of `path`: an object it holds, a held workload's Scale (at
/// two replicas), or 404.
fn answer(objects: &[Value], path: &str) -> (u16, Value) {
    let held = |path: &str| objects.iter().find(|o| path_of(o) == path);
    if let Some(object) = held(path) {
        return (200, object.clone());
    }
    if let Some(workload) = path.strip_suffix("/scale").and_then(held) {
        let scale = json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
            "metadata": {"name": workload["metadata"]["name"], "namespace": "shop",
                         "resourceVersion": "1"},
            "spec": {"replicas": 2}});
        return (200, scale);
    }
    let missing = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
        "message": format!("{path} not found"), "reason": "NotFound", "code": 404});
    (404, missing)
}

/// A client of an API server that holds `objects`.
fn serving(objects: Vec<Value>) -> kube::Client {
    let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let (code, body) = answer(&objects, request.uri().path());
        let response = http::Response::builder()
            .status(code)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body.to_string())))
            .unwrap();
        async move { Ok::<_, Infallible>(response) }
    });
    kube::Client::new(service, "default")
}

/// What a person's scale to zero of `pod` (as `objects` hold it) comes to, in a dry run with
/// every rule matching at once: the workload it would scale, or what did not check out.
pub(crate) async fn scale(pod: &Value, objects: &[Value]) -> Result<ScalableWorkload, Unproven> {
    let mut config = Config::default();
    config.audit.events = false;
    for rule in &mut config.rules {
        rule.after = Duration::ZERO;
    }
    let dry_run = Flags {
        dry_run: true,
        ..Flags::default()
    };
    let policy = Policy::new(dry_run, &config);
    let held = std::iter::once(pod.clone()).chain(objects.iter().cloned());
    let client = serving(held.collect());
    let cluster = ClusterName::new("shop-cluster");
    let executor = Executor::new(client, Cache::new(), &policy, cluster, Audit::Off);
    let target = PodRef {
        namespace: "shop".into(),
        name: pod["metadata"]["name"].as_str().unwrap().into(),
        uid: "p".into(),
    };
    match executor
        .run(&Action::ScaleToZero(target), Origin::Manual)
        .await
    {
        Outcome::DryRun(Change::Scaled { workload, .. }) => Ok(workload),
        Outcome::Refused(Refusal::Unscalable(Unscalable::Unproven(why))) => Err(why),
        other => panic!("{other:?}"),
    }
}

/// Pod `name` of namespace `shop` (uid `p`), controlled by `kind` `owner` (uid `uid`).
pub(crate) fn pod_json(name: &str, kind: &str, owner: &str, uid: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "shop", "uid": "p",
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": kind,
                                 "name": owner, "uid": uid, "controller": true}]},
        "spec": {"containers": [{"name": "app"}]},
        "status": {"phase": "Pending"}})
}

/// `pod` as read now: `labels`, its container `app` failing to pull `image`.
fn live(mut pod: Value, labels: Value, image: &str) -> Value {
    pod["metadata"]["labels"] = labels;
    pod["spec"]["containers"][0] = pulled(image);
    pod["status"]["containerStatuses"] = json!([{"name": "app", "image": image,
        "imageID": "", "ready": false, "restartCount": 0,
        "state": {"waiting": {"reason": "ErrImagePull"}}}]);
    pod
}

pub(crate) fn pulled(image: &str) -> Value {
    json!({"name": "app", "image": image, "imagePullPolicy": "IfNotPresent"})
}

fn record(pod: &Value) -> PodRecord {
    decode_pod(pod.to_string().as_bytes(), &mut Interner::default()).unwrap()
}

fn web_pod() -> Value {
    pod_json("web-1", "ReplicaSet", "web-5c6b7", "rs")
}

/// `kind` `name` (uid `uid`) of `shop`: it selects `app: web`, its template runs `shop/web:2`
/// in container `app`, and it names revision 3; a ReplicaSet carries hash `5c6b7`.
fn owner(kind: &str, name: &str, uid: &str, next: Option<Value>) -> Value {
    let mut owner = json!({"apiVersion": "apps/v1", "kind": kind,
        "metadata": {"name": name, "namespace": "shop", "uid": uid,
            "annotations": {"deployment.kubernetes.io/revision": "3"}},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
            "template": {"spec": {"containers": [pulled("shop/web:2")]}}}});
    if kind == "ReplicaSet" {
        owner["metadata"]["labels"] = json!({TEMPLATE_HASH: "5c6b7"});
    }
    if let Some(next) = next {
        owner["metadata"]["ownerReferences"] = json!([next]);
    }
    owner
}

/// The ReplicaSet `web-5c6b7` (uid `rs`) of Deployment `web`, read with uid `found`.
fn chain(found: &str) -> Vec<Value> {
    let link = json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
        "uid": "d", "controller": true});
    vec![
        owner("ReplicaSet", "web-5c6b7", "rs", Some(link)),
        owner("Deployment", "web", found, None),
    ]
}

#[tokio::test]
async fn a_deployment_is_proven_through_its_replicaset_hop_by_hop() {
    let pod = web_pod();
    let prove = |labels: &Value, chain: &[Value]| {
        let live = live(pod.clone(), labels.clone(), "shop/web:2");
        let chain = chain.to_vec();
        async move { scale(&live, &chain).await }
    };
    let ours = json!({"app": "web", TEMPLATE_HASH: "5c6b7"});
    // Proven with uid `d`: the Deployment read again before its Scale must still have the
    // uid proven, and it has `d`, so the scale lands.
    let proven = prove(&ours, &chain("d")).await.unwrap();
    assert_eq!(proven.name(), "web");
    // The workload scaled is the one its pods are keyed by: one identity, not two.
    assert_eq!(proven.id(), &WorkloadId::of(&record(&pod)));
    // Another Deployment of that name than the one the ReplicaSet names.
    assert!(matches!(
        prove(&ours, &chain("other")).await,
        Err(Unproven::UidMismatch { .. })
    ));
    // The selector matches, the template hash is another ReplicaSet's.
    let stale = json!({"app": "web", TEMPLATE_HASH: "9f9f9"});
    assert_eq!(
        prove(&stale, &chain("d")).await,
        Err(Unproven::TemplateHash {
            replicaset: "web-5c6b7".into()
        })
    );
    // The Deployment above could not be read.
    assert!(matches!(
        prove(&ours, &chain("d")[..1]).await,
        Err(Unproven::Missing { .. })
    ));
}

#[tokio::test]
async fn a_replicaset_proves_nothing_about_its_deployment_unless_the_deployment_made_the_pod() {
    let ours = json!({"app": "web", TEMPLATE_HASH: "5c6b7"});
    // A tenant's image under the right references, labels and hash.
    let theirs = live(web_pod(), ours.clone(), "registry.invalid/tenant:1");
    let why = scale(&theirs, &chain("d")).await.unwrap_err();
    assert_eq!(
        why,
        Unproven::ForeignImage {
            container: "app".into(),
            image: "registry.invalid/tenant:1".into(),
            kind: "Deployment".into(),
            name: "web".into(),
        }
    );
    assert!(
        why.to_string()
            .contains("not in the pod template of Deployment web")
    );
    // An older ReplicaSet than the one the Deployment's revision names.
    let mut old = chain("d");
    old[0]["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = json!("2");
    let ours_live = live(web_pod(), ours.clone(), "shop/web:2");
    assert!(matches!(
        scale(&ours_live, &old).await,
        Err(Unproven::StaleRevision { revision: Some(r), .. }) if r == "2"
    ));
    // The template's own image, pulled only if present: it fails on every node without
    // it, which the template never asked for.
    let mut never = live(web_pod(), ours.clone(), "shop/web:2");
    never["spec"]["containers"][0]["imagePullPolicy"] = json!("Never");
    let why = scale(&never, &chain("d")).await.unwrap_err();
    assert!(matches!(why, Unproven::ForeignPull { .. }), "{why:?}");
    assert!(why.to_string().contains("imagePullPolicy Never"), "{why}");
    // Nothing failing in the pod as read now (it is abnormal only for its eviction): nothing
    // to scale for.
    let mut healthy = web_pod();
    healthy["metadata"]["labels"] = ours;
    healthy["status"] = json!({"phase": "Failed", "reason": "Evicted"});
    assert_eq!(
        scale(&healthy, &chain("d")).await,
        Err(Unproven::NothingFailing)
    );
}

#[tokio::test]
async fn a_statefulset_pod_must_carry_a_revision_the_set_names() {
    let pod = pod_json("db-1", "StatefulSet", "db", "s");
    let mut set = owner("StatefulSet", "db", "s", None);
    set["status"] = json!({"currentRevision": "db-6c8f", "updateRevision": "db-7d9a"});
    let prove = |revision: &str, image: &str| {
        let labels = json!({"app": "web", REVISION_HASH: revision});
        let live = live(pod.clone(), labels, image);
        let set = set.clone();
        async move { scale(&live, &[set]).await }
    };
    assert!(prove("db-7d9a", "shop/web:2").await.is_ok());
    assert!(matches!(
        prove("db-0000", "shop/web:2").await,
        Err(Unproven::StaleRevision { .. })
    ));
    // The squatter copies the current revision but not the image.
    assert!(matches!(
        prove("db-6c8f", "registry.invalid/tenant:1").await,
        Err(Unproven::ForeignImage { .. })
    ));
}
