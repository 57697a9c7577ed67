//! `headless --once` as a CronJob. A target refused before anything was sent is
//! held (listed, exit 0), not failed; a Lease left by a run that died is taken over once its
//! holder has not renewed for a lease duration; a live holder is left alone.

use crate::support;

use std::time::Duration;

use chrono::{SecondsFormat, TimeZone, Utc};
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube_sim::{SimCluster, SimServer};
use opc_core::actions::DEFAULT_NAMESPACE;
use serde_json::json;
use support::contexts::{Scratch, run, stderr};
use support::pods::pod;
use support::sim::typed;

const LEASE: &str = "ops-pod-cleaner";

fn once(scratch: &Scratch) -> Vec<String> {
    scratch.args(&["headless", "--once"])
}

/// A simulated cluster holding `pod`, served, and a scratch config with `rule` on auto at once.
struct OneCluster {
    sim: SimCluster,
    server: SimServer,
    scratch: Scratch,
}

impl OneCluster {
    async fn start(pod: support::pods::PodBuilder, rule: &str) -> OneCluster {
        let sim = SimCluster::new();
        sim.create_pod(typed(pod.json()));
        let server = SimServer::start(sim.clone()).await.unwrap();
        let rules = format!("rules:\n  - {{rule: {rule}, auto: true, after: 0}}\n");
        let scratch = Scratch::new(&[("sim", &server)], &rules);
        OneCluster {
            sim,
            server,
            scratch,
        }
    }

    fn leases(&self) -> Api<Lease> {
        Api::namespaced(self.server.client(), DEFAULT_NAMESPACE)
    }
}

fn lease(holder: &str, seconds: i32) -> Lease {
    typed(json!({
        "metadata": { "name": LEASE, "namespace": DEFAULT_NAMESPACE },
        "spec": { "holderIdentity": holder, "leaseDurationSeconds": seconds,
                  "renewTime": Utc::now().to_rfc3339_opts(SecondsFormat::Micros, true) },
    }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_refused_before_sending_is_held_and_the_run_succeeds() {
    let stuck = pod("stuck-1")
        .ns("shop")
        .terminating_since("2020-01-01T00:00:00Z")
        .finalizers(&["example.com/keep"]);
    let cluster = OneCluster::start(stuck, "terminating").await;
    let (sim, scratch) = (&cluster.sim, &cluster.scratch);
    let out = run(once(scratch)).await;
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("0 failed"), "{text}");
    assert!(text.contains("terminating held 1"), "{text}");
    assert!(text.contains("held by finalizers"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.contains("sim: auto terminating holds") && l.contains("shop/stuck-1")),
        "{text}"
    );
    assert!(sim.pod("shop", "stuck-1").is_some());
}

/// A `--once` run killed while it held the Lease: its record never changes again. The next
/// run waits out one lease duration on its own clock, takes over and acts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_left_by_a_dead_run_is_taken_over() {
    let cluster = OneCluster::start(pod("gone-1").ns("shop").evicted(), "evicted").await;
    let (sim, leases) = (&cluster.sim, cluster.leases());
    leases
        .create(
            &PostParams::default(),
            &lease("ops-pod-cleaner-0-1-dead", 2),
        )
        .await
        .unwrap();
    let out = run(once(&cluster.scratch)).await;
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(!text.contains("another replica leads"), "{text}");
    assert!(text.contains("1 action taken"), "{text}");
    // Every automatic action is a line in the default output, naming the cluster and rule.
    assert!(
        text.lines()
            .any(|l| l.contains("sim: auto evicted: deleted") && l.contains("shop/gone-1")),
        "{text}"
    );
    assert!(sim.pod("shop", "gone-1").is_none());
    let holder = leases
        .get(LEASE)
        .await
        .unwrap()
        .spec
        .unwrap()
        .holder_identity;
    assert_ne!(holder.as_deref(), Some("ops-pod-cleaner-0-1-dead"));
}

/// A holder that renews is alive: the run stands by and acts on nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_a_live_replica_renews_is_left_alone() {
    let cluster = OneCluster::start(pod("gone-1").ns("shop").evicted(), "evicted").await;
    let (sim, leases) = (&cluster.sim, cluster.leases());
    leases
        .create(
            &PostParams::default(),
            &lease("ops-pod-cleaner-0-1-live", 2),
        )
        .await
        .unwrap();
    let renewing = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let renewed = json!({ "spec": {
                "renewTime": Utc::now().to_rfc3339_opts(SecondsFormat::Micros, true) } });
            let _ = leases
                .patch(LEASE, &PatchParams::default(), &Patch::Merge(renewed))
                .await;
        }
    });
    let scratch = &cluster.scratch;
    let out = run(once(scratch)).await;
    renewing.abort();
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("another replica leads (ops-pod-cleaner-0-1-live)"),
        "{text}"
    );
    assert!(sim.pod("shop", "gone-1").is_some());
}

/// `--log-format json`: every line on stderr is one JSON object, for log shippers; the start
/// line, each action and the summary among them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_carry_the_start_line_every_action_and_the_summary() {
    let cluster = OneCluster::start(pod("gone-1").ns("shop").evicted(), "evicted").await;
    let scratch = &cluster.scratch;
    let out = run(scratch.args(&["headless", "--once", "--log-format", "json"])).await;
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let messages: Vec<String> = text
        .lines()
        .map(|line| {
            let record: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            assert_eq!(record["target"], "action", "{line}");
            record["fields"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    let said = |what: &str| messages.iter().any(|m| m.contains(what));
    assert!(
        said("headless: watching all namespaces of cluster sim"),
        "{messages:?}"
    );
    assert!(said("leading: this process"), "{messages:?}");
    assert!(
        said("sim: auto evicted: deleted pod shop/gone-1"),
        "{messages:?}"
    );
    assert!(said("one pass: 1 action taken, 0 failed"), "{messages:?}");
}

/// A newcomer's first run, before the manifests made the namespace: the error names the
/// missing namespace and both ways out, in the API server's words, not a debug dump.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_lease_namespace_says_how_to_create_or_choose_one() {
    let cluster = OneCluster::start(pod("ok-1").ns("shop"), "evicted").await;
    cluster.sim.require_namespaces();
    let out = run(once(&cluster.scratch)).await;
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(
        text.contains(&format!("namespace \"{DEFAULT_NAMESPACE}\" does not exist")),
        "{text}"
    );
    assert!(
        text.contains(&format!("kubectl create namespace {DEFAULT_NAMESPACE}")),
        "{text}"
    );
    assert!(text.contains("POD_NAMESPACE"), "{text}");
    assert!(!text.contains("Status {"), "a debug dump: {text}");
    assert!(!text.contains("get/create/update leases"), "{text}");
}

/// Refused by RBAC: then, and only then, the hint is about this identity's permissions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forbidden_lease_points_at_the_rbac() {
    let cluster = OneCluster::start(pod("ok-1").ns("shop"), "evicted").await;
    cluster
        .sim
        .faults()
        .deny("create", "leases", Some(DEFAULT_NAMESPACE));
    let out = run(once(&cluster.scratch)).await;
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("permission denied"), "{text}");
    assert!(text.contains("get/create/update leases"), "{text}");
    assert!(!text.contains("Status {"), "a debug dump: {text}");
}

/// The run keeps the time it is given: the Lease it renews and the audit log it writes carry
/// its clock's time, not the machine's (an elector on the machine's clock once mixed the two).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_writes_the_time_of_the_clock_it_is_given() {
    use clap::Parser;
    use opc_core::clock::Clock;
    use ops_pod_cleaner::cli::Cli;

    let cluster = OneCluster::start(pod("gone-1").ns("shop").evicted(), "evicted").await;
    let at = Utc.with_ymd_and_hms(2031, 1, 2, 3, 4, 5).unwrap();
    let args = std::iter::once("ops-pod-cleaner".to_string()).chain(once(&cluster.scratch));
    let code = ops_pod_cleaner::commands::run(Cli::parse_from(args), Clock::starting_at(at)).await;
    assert_eq!(code, std::process::ExitCode::SUCCESS);
    assert!(cluster.sim.pod("shop", "gone-1").is_none(), "it acted");
    let lease = serde_json::to_value(cluster.leases().get(LEASE).await.unwrap()).unwrap();
    let renewed = lease["spec"]["renewTime"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(renewed.starts_with("2031-01-02T03:04:"), "{lease}");
    let audit = std::fs::read_to_string(cluster.scratch.dir.path().join("audit.jsonl")).unwrap();
    assert!(audit.contains("\"2031-01-02T03:04:"), "{audit}");
}
