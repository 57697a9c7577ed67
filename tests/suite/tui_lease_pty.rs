//! One worker per cluster. The screen's auto-clean takes part in the cluster's
//! Lease: while the in-cluster worker holds it and renews, pressing `A` on a laptop adds no
//! second worker; the header says who acts. When the holder stops renewing, the screen's
//! worker takes over and acts.

use crate::support;

use std::time::Duration;

use chrono::{SecondsFormat, Utc};
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube_sim::{SimCluster, SimServer};
use opc_core::actions::DEFAULT_NAMESPACE;
use serde_json::json;
use support::pty::Screen;
use support::sim::{eventually, typed};

const HOLDER: &str = "ops-pod-cleaner-0-1-incluster";

fn now() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Micros, true)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_screen_stands_by_while_the_in_cluster_worker_leads_then_takes_over() {
    let sim = SimCluster::new();
    sim.create_pod(typed(
        support::pods::pod("gone-1").ns("shop").evicted().json(),
    ));
    let server = SimServer::start(sim.clone()).await.unwrap();
    let leases: Api<Lease> = Api::namespaced(server.client(), DEFAULT_NAMESPACE);
    let lease: Lease = typed(json!({
        "metadata": { "name": "ops-pod-cleaner", "namespace": DEFAULT_NAMESPACE },
        "spec": { "holderIdentity": HOLDER, "leaseDurationSeconds": 2, "renewTime": now() },
    }));
    leases.create(&PostParams::default(), &lease).await.unwrap();
    let renewing = {
        let leases = leases.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(300)).await;
                let renewed = json!({ "spec": { "renewTime": now() } });
                let _ = leases
                    .patch(
                        "ops-pod-cleaner",
                        &PatchParams::default(),
                        &Patch::Merge(renewed),
                    )
                    .await;
            }
        })
    };
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        support::contexts::kubeconfig(&[("sim", &server)]),
    )
    .unwrap();
    let path = kubeconfig.to_string_lossy().into_owned();
    let mut screen = Screen::start_with(&["--kubeconfig", &path], None);
    screen.wait_for("the first sync", |t| {
        t.contains("● synced") && t.contains("gone-1")
    });

    // Auto for the evicted rule, then the master switch: the in-cluster worker acts, not us.
    screen.keys("a");
    screen.wait_text("rules: evicted");
    screen.keys("A");
    screen.wait_text("Switch auto-clean on?");
    screen.keys("y");
    screen.wait_text(&format!("run by {HOLDER}"));
    assert!(
        sim.pod("shop", "gone-1").is_some(),
        "no second worker acts beside the one that holds the Lease"
    );

    // The holder dies: after a lease duration unchanged, the screen's worker takes over.
    renewing.abort();
    let holder_died = Utc::now();
    eventually("the screen's worker to act", || {
        sim.pod("shop", "gone-1").is_none()
    })
    .await;
    screen.wait_text("sim: auto evicted: deleted pod shop/gone-1");
    // Not slept on: the audit log says when the screen's worker first meant to act, and that
    // was only once the holder had stopped renewing (its A was pressed long before).
    let intents: Vec<chrono::DateTime<Utc>> = screen
        .audit_log()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|r| r["stage"] == "intent")
        .filter_map(|r| r["time"].as_str()?.parse().ok())
        .collect();
    assert!(!intents.is_empty(), "the takeover's action is audited");
    assert!(
        intents.iter().all(|at| *at >= holder_died),
        "acted before the holder died: {intents:?} vs {holder_died}"
    );
    let holder = leases
        .get("ops-pod-cleaner")
        .await
        .unwrap()
        .spec
        .unwrap()
        .holder_identity;
    assert_ne!(holder.as_deref(), Some(HOLDER));
}
