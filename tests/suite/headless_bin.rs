//! The `headless` binary against the simulated cluster: what SIGTERM does mid-action.

use crate::support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use kube_sim::{SimCluster, SimServer};
use support::pods::pod;
use support::sim::eventually;

const CONFIG: &str =
    "rules:\n  - rule: evicted\n    auto: true\naudit:\n  path: AUDIT\n  events: false\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_an_action_waits_for_its_audit_record_then_releases_the_lease() {
    let sim = SimCluster::new();
    sim.create_pod(serde_json::from_value(pod("stuck-1").ns("shop").evicted().json()).unwrap());
    sim.faults()
        .hang(Some("delete"), "/api/v1/namespaces/shop/pods/stuck-1");
    let server = SimServer::start(sim.clone()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (kubeconfig, config, audit) = (
        dir.path().join("kubeconfig"),
        dir.path().join("config.yaml"),
        dir.path().join("audit.jsonl"),
    );
    server.write_kubeconfig(&kubeconfig).unwrap();
    let text = CONFIG.replace("AUDIT", audit.to_str().unwrap());
    std::fs::write(&config, text).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ops-pod-cleaner"))
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .arg("--config")
        .arg(&config)
        .args(["headless", "--listen", "127.0.0.1:0"])
        .args(["--findings-listen", "127.0.0.1:0"])
        .env("POD_NAMESPACE", "ops")
        .env("OPS_POD_CLEANER_REQUEST_TIMEOUT", "2s")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();

    eventually("the delete to be in flight", || {
        sim.faults().hung_requests() == 1
    })
    .await;
    let lease = Api::<Lease>::namespaced(server.client(), "ops")
        .get("ops-pod-cleaner")
        .await
        .unwrap();
    let holder = lease.spec.unwrap().holder_identity;
    assert!(holder.is_some(), "the acting replica holds the lease");
    let term = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let signalled = Instant::now();
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    let took = signalled.elapsed();
    assert!(status.success(), "{status:?}");
    assert!(
        took < Duration::from_secs(10),
        "bounded by the action's deadline, not the hang: {took:?}"
    );
    let records = std::fs::read_to_string(&audit).unwrap();
    assert!(
        records
            .lines()
            .any(|l| l.contains("stuck-1") && l.contains("\"outcome\":\"failed\"")),
        "the action in flight is on record before exit:\n{records}"
    );
    let lease = Api::<Lease>::namespaced(server.client(), "ops")
        .get("ops-pod-cleaner")
        .await
        .unwrap();
    assert_eq!(
        lease.spec.unwrap().holder_identity,
        None,
        "released on the way out"
    );
}
