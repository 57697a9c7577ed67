//! Parked workloads: what ops-pod-cleaner scaled to zero, where, when and why,
//! listed by `scan --parked` across clusters and by the library for the screen, with undo
//! that refuses a workload someone scaled up since.

use crate::support;
use opc_core::cluster::ClusterName;

use chrono::{Duration, Utc};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, Patch, PatchParams};
use kube_sim::{SimCluster, SimServer};
use opc_core::actions::{
    Action, Audit, DEFAULT_NAMESPACE, Executor, Origin, Outcome, PARKED_CONFIGMAP, ParkedRow,
    ParkedState, PodRef, RecordedIn, Refusal, ScalableWorkload, WorkloadKind,
};
use opc_core::cluster::Scope;
use opc_core::config::Config;
use opc_core::policy::{Flags, Policy};
use opc_core::rules::RuleKind;
use serde_json::{Value, json};
use support::contexts::{Scratch, run, stderr, stdout};
use support::policy::quick_retry;
use support::sim::{Watched, eventually, typed};

/// A Deployment of `replicas` in `namespace`; an image from a `.invalid` registry never pulls.
pub(crate) struct DeploymentBuilder(Value);

pub(crate) fn deployment(namespace: &str, name: &str) -> DeploymentBuilder {
    DeploymentBuilder(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": name, "image": "registry.local/app:1"}]}}},
    }))
}

impl DeploymentBuilder {
    pub(crate) fn replicas(mut self, n: i32) -> Self {
        self.0["spec"]["replicas"] = json!(n);
        self
    }

    fn unpullable(mut self) -> Self {
        self.0["spec"]["template"]["spec"]["containers"][0]["image"] =
            json!("registry.invalid/shop/web:9.9");
        self
    }

    pub(crate) fn create(self, sim: &SimCluster) -> Deployment {
        sim.create_deployment(typed(self.0))
    }
}

/// A parked record as an earlier version wrote it: no `message`.
pub(crate) struct RecordBuilder(Value);

pub(crate) fn record(d: &Deployment, replicas: i32) -> RecordBuilder {
    RecordBuilder(json!({
        "kind": "Deployment", "namespace": d.metadata.namespace, "name": d.metadata.name,
        "uid": d.metadata.uid, "replicas": replicas,
        "at": (Utc::now() - Duration::hours(2)).to_rfc3339(), "cluster": "east",
        "actor": "ops-pod-cleaner-0", "origin": {"by": "auto", "rule": "imagePull"},
        "reason": "imagePull: ImagePullBackOff", "pod": "cart-7d9f-abcde",
    }))
}

impl RecordBuilder {
    /// The trigger's waiting message, as the pod said it.
    pub(crate) fn message(mut self, message: &str) -> Self {
        self.0["message"] = json!(message);
        self
    }

    fn parked_ago(mut self, ago: Duration) -> Self {
        self.0["at"] = json!((Utc::now() - ago).to_rfc3339());
        self
    }
}

/// The parked ConfigMap holding `records`, as the product (or an earlier version) wrote it.
pub(crate) fn ship_records(sim: &SimCluster, records: Vec<RecordBuilder>) {
    let data: serde_json::Map<String, Value> = records
        .into_iter()
        .map(|r| {
            (
                r.0["uid"].as_str().unwrap().to_string(),
                json!(r.0.to_string()),
            )
        })
        .collect();
    sim.create_config_map(typed(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": PARKED_CONFIGMAP, "namespace": DEFAULT_NAMESPACE}, "data": data})));
}

fn json_rows(out: &std::process::Output) -> Vec<Value> {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("one JSON array ({e}): {}", stderr(out)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_parked_lists_what_headless_scaled_to_zero_with_its_trigger() {
    let sim = SimCluster::new();
    deployment("shop", "web")
        .replicas(2)
        .unpullable()
        .create(&sim);
    let server = SimServer::start(sim.clone()).await.unwrap();
    eventually("two pods failing to pull", || {
        sim.live_pods("web-").len() == 2
    })
    .await;
    let scratch = Scratch::new(
        &[("east", &server)],
        "rules:\n  - {rule: imagePull, auto: true, after: 0}\n",
    );

    let once = run(scratch.args(&["headless", "--once", "--listen", "127.0.0.1:0"])).await;
    assert_eq!(once.status.code(), Some(0), "{}", stderr(&once));
    let parked = sim.deployment("shop", "web").unwrap();
    assert_eq!(parked.spec.unwrap().replicas, Some(0), "{}", stderr(&once));

    let out = run(scratch.args(&["scan", "--parked", "-o", "json"])).await;
    assert_eq!(out.status.code(), Some(1), "parked found: {}", stderr(&out));
    let rows = json_rows(&out);
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    assert_eq!(
        (
            &row["cluster"],
            &row["kind"],
            &row["namespace"],
            &row["name"]
        ),
        (
            &json!("east"),
            &json!("Deployment"),
            &json!("shop"),
            &json!("web")
        )
    );
    assert_eq!(row["replicasBefore"], 2);
    assert_eq!(row["origin"], json!({"by": "auto", "rule": "imagePull"}));
    assert_eq!(row["now"], json!({"state": "parked"}));
    assert!(row["parkedForSeconds"].as_i64().unwrap() < 120, "{row}");
    let trigger = &row["trigger"];
    assert!(
        trigger["pod"].as_str().unwrap().starts_with("web-"),
        "{row}"
    );
    assert_eq!(trigger["reason"], "imagePull: ImagePullBackOff");
    assert!(
        trigger["message"]
            .as_str()
            .unwrap()
            .contains("registry.invalid/shop/web:9.9"),
        "the waiting message is kept: {row}"
    );

    let table = run(scratch.args(&["scan", "--parked"])).await;
    let text = stdout(&table);
    for shown in [
        "shop",
        "Deployment/web",
        "auto imagePull",
        "ImagePullBackOff",
        "parked",
    ] {
        assert!(text.contains(shown), "{shown} missing:\n{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_parked_across_contexts_shows_age_and_workloads_scaled_up_since() {
    let east = SimCluster::new();
    let cart = deployment("shop", "cart").replicas(0).create(&east);
    ship_records(&east, vec![record(&cart, 3)]);
    let west = SimCluster::new();
    let thumbs = deployment("media", "thumbs").replicas(2).create(&west);
    ship_records(
        &west,
        vec![record(&thumbs, 2).parked_ago(Duration::minutes(30))],
    );
    let (east_server, west_server) = (
        SimServer::start(east).await.unwrap(),
        SimServer::start(west).await.unwrap(),
    );
    let scratch = Scratch::new(&[("east", &east_server), ("west", &west_server)], "");

    let out = run(scratch.args(&["--all-contexts", "scan", "--parked", "-o", "json"])).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let rows = json_rows(&out);
    assert_eq!(rows.len(), 2, "{rows:?}");
    let east_row = rows.iter().find(|r| r["cluster"] == "east").unwrap();
    let age = east_row["parkedForSeconds"].as_i64().unwrap();
    assert!((7190..7300).contains(&age), "parked two hours ago: {age}");
    assert_eq!(east_row["replicasBefore"], 3);
    assert_eq!(east_row["trigger"]["pod"], "cart-7d9f-abcde");
    assert!(
        east_row["trigger"].get("message").is_none(),
        "an old record has none"
    );
    let west_row = rows.iter().find(|r| r["cluster"] == "west").unwrap();
    assert_eq!(west_row["now"], json!({"state": "scaledUp", "replicas": 2}));

    let table = stdout(&run(scratch.args(&["--all-contexts", "scan", "--parked"])).await);
    let line = |name: &str| {
        table
            .lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("{name} missing:\n{table}"))
            .to_string()
    };
    assert!(table.starts_with("CLUSTER"), "{table}");
    assert!(line("Deployment/cart").contains("2h00m"), "{table}");
    assert!(
        line("Deployment/thumbs").contains("scaled up to 2"),
        "{table}"
    );
}

/// Once `replicas` pods of shop/web exist and the cache holds them: the first, as a target.
async fn failing_web_pod(watched: &Watched, replicas: usize) -> PodRef {
    eventually("the pods failing to pull", || {
        watched.sim.live_pods("web-").len() == replicas
    })
    .await;
    let pod = watched.sim.live_pods("web-").remove(0);
    let target = PodRef {
        namespace: "shop".into(),
        name: pod.metadata.name.clone().unwrap(),
        uid: pod.metadata.uid.clone().unwrap(),
    };
    eventually("the pod in the cache", || {
        watched.cache.get(&target.uid).is_some()
    })
    .await;
    target
}

/// An executor on `watched` whose imagePull rule matches at once.
fn executor(watched: &Watched) -> Executor {
    let mut config = Config::default();
    for rule in config
        .rules
        .iter_mut()
        .filter(|r| r.kind == RuleKind::ImagePull)
    {
        rule.after = std::time::Duration::ZERO;
    }
    let policy = Policy::new(Flags::default(), &config);
    Executor::new(
        watched.server.client(),
        watched.cache.clone(),
        &policy,
        ClusterName::new("east"),
        Audit::Off,
    )
    .with_retry(quick_retry())
}

async fn rows(exec: &Executor) -> Vec<ParkedRow> {
    exec.reads().parked_rows(&[Scope::All]).await.unwrap().rows
}

#[tokio::test]
async fn parked_rows_are_typed_and_undo_refuses_a_workload_scaled_up_since() {
    let sim = SimCluster::new();
    deployment("shop", "web")
        .replicas(3)
        .unpullable()
        .create(&sim);
    let watched = Watched::start(sim).await;
    let target = failing_web_pod(&watched, 3).await;
    let exec = executor(&watched);
    let outcome = exec
        .run(&Action::ScaleToZero(target.clone()), Origin::Manual)
        .await;
    assert!(matches!(outcome, Outcome::Done(_)), "{outcome:?}");

    let web = ScalableWorkload::new(WorkloadKind::Deployment, "shop", "web");
    let listed = rows(&exec).await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    let row = &listed[0];
    assert_eq!(
        (row.cluster.as_str(), &row.workload, row.replicas_before),
        ("east", &web, 3)
    );
    assert_eq!(row.now, ParkedState::Parked);
    assert_eq!(row.recorded_in, RecordedIn::ConfigMap);
    assert_eq!(row.origin, Some(Origin::Manual));
    let trigger = row.trigger.as_ref().expect("the trigger is recorded");
    assert_eq!(trigger.pod.as_deref(), Some(target.name.as_str()));
    assert_eq!(trigger.rule, Some(RuleKind::ImagePull));
    assert!(
        trigger
            .message
            .as_deref()
            .is_some_and(|m| m.contains("registry.invalid")),
        "{trigger:?}"
    );
    let plan = exec
        .reads()
        .check_undo(&row.workload)
        .await
        .expect("undo is possible");
    assert_eq!(plan.restores, 3);
    assert!(plan.to_string().contains("from 0 to 3"), "{plan}");
    assert_eq!(row.undo(), Action::UndoScale(web.clone()));

    // Someone else scales it up meanwhile: the row says so, and undo leaves it alone.
    let api: Api<Deployment> = Api::namespaced(watched.server.client(), "shop");
    let up = json!({"spec": {"replicas": 2}});
    api.patch_scale("web", &PatchParams::default(), &Patch::Merge(&up))
        .await
        .unwrap();
    let listed = rows(&exec).await;
    assert_eq!(listed[0].now, ParkedState::ScaledUp { replicas: 2 });
    let refused = exec
        .reads()
        .check_undo(&web)
        .await
        .expect_err("not at zero");
    assert!(
        matches!(
            &refused,
            Outcome::Refused(Refusal::NotAtZero { current: 2, .. })
        ),
        "{refused:?}"
    );
    let outcome = exec.run(&listed[0].undo(), Origin::Manual).await;
    assert!(
        matches!(
            outcome,
            Outcome::Refused(Refusal::NotAtZero { current: 2, .. })
        ),
        "{outcome:?}"
    );
    let now = watched.sim.deployment("shop", "web").unwrap();
    assert_eq!(
        now.spec.unwrap().replicas,
        Some(2),
        "left as someone set it"
    );
}

#[tokio::test]
async fn a_workload_parked_in_its_annotation_is_listed_too() {
    let sim = SimCluster::new();
    let mut annotated = deployment("shop", "legacy").replicas(0).0;
    annotated["metadata"]["annotations"] = json!({"ops-pod-cleaner.io/replicas-before": "4"});
    sim.create_deployment(typed(annotated));
    // An annotation an earlier version left on a workload that runs again: not parked.
    let mut restored = deployment("shop", "old").replicas(1).0;
    restored["metadata"]["annotations"] = json!({"ops-pod-cleaner.io/replicas-before": "1"});
    sim.create_deployment(typed(restored));
    let watched = Watched::start(sim).await;

    let listed = rows(&executor(&watched)).await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    let row = &listed[0];
    assert_eq!(row.workload.name(), "legacy");
    assert_eq!(row.replicas_before, 4);
    assert_eq!(row.recorded_in, RecordedIn::Annotation);
    assert_eq!((row.parked_at, row.trigger.as_ref()), (None, None));
    let plan = executor(&watched)
        .reads()
        .check_undo(&row.workload)
        .await
        .unwrap();
    assert_eq!(plan.restores, 4);
}

/// The workload is read, its replicas recorded, then scaled; someone rescaled it
/// in between (2 → 4). The scale carries the version it was read at, so the write is a 409
/// and re-planned: the record says 4 (undo restores what was there), not the stale 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workload_rescaled_before_the_scale_is_checked_again_and_recorded_at_its_new_count() {
    use opc_core::actions::ParkedRecord;
    let sim = SimCluster::new();
    let d = deployment("shop", "web")
        .replicas(2)
        .unpullable()
        .create(&sim);
    ship_records(&sim, Vec::new());
    let watched = Watched::start(sim.clone()).await;
    let target = failing_web_pod(&watched, 2).await;
    let parked = format!("/api/v1/namespaces/{DEFAULT_NAMESPACE}/configmaps");
    sim.faults().hang(Some("update"), &parked);
    let exec = executor(&watched);
    let running = tokio::spawn(async move {
        exec.run(
            &Action::ScaleToZero(target),
            Origin::Auto(RuleKind::ImagePull),
        )
        .await
    });
    eventually("the record's write to hang", || {
        sim.faults().hung_requests() > 0
    })
    .await;
    let deployments: Api<Deployment> = Api::namespaced(watched.server.client(), "shop");
    let rescale = json!({"spec": {"replicas": 4}});
    deployments
        .patch_scale("web", &PatchParams::default(), &Patch::Merge(&rescale))
        .await
        .unwrap();
    sim.faults().unhang(Some("update"), &parked);
    let outcome = running.await.unwrap();
    assert!(matches!(outcome, Outcome::Done(_)), "{outcome:?}");
    assert!(outcome.detail().contains("from 4 to 0"), "{outcome:?}");
    let map = sim.config_map(DEFAULT_NAMESPACE, PARKED_CONFIGMAP).unwrap();
    let uid = d.metadata.uid.clone().unwrap();
    let text = map.data.unwrap()[&uid].clone();
    let record: ParkedRecord = serde_json::from_str(&text).unwrap();
    assert_eq!(record.replicas, 4, "undo restores what was there: {text}");
}
