//! Who the audit log says acted: the account a run without `$USER` is under, as the system
//! names it.

use crate::support;

use kube_sim::{SimCluster, SimServer};
use support::contexts::{Scratch, binary, stderr};
use support::pods::pod;
use support::sim::typed;

/// Without `$USER` the audit names the account as `id -un` does, not the host alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_account_is_named_as_the_system_names_it() {
    let id = std::process::Command::new("id")
        .arg("-un")
        .output()
        .expect("id runs");
    let expected = String::from_utf8_lossy(&id.stdout).trim().to_string();
    // A `headless --once` run with neither `$USER` nor `$LOGNAME`, on a host it is told.
    let sim = SimCluster::new();
    sim.create_pod(typed(pod("gone-1").ns("shop").evicted().json()));
    let server = SimServer::start(sim.clone()).await.unwrap();
    let rules = "rules:\n  - {rule: evicted, auto: true, after: 0}\n";
    let scratch = Scratch::new(&[("sim", &server)], rules);
    let args = scratch.args(&["headless", "--once"]);
    let out = tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut command = binary(&args);
        command
            .env_remove("USER")
            .env_remove("LOGNAME")
            .env("HOSTNAME", "the-host");
        command.output().expect("the binary runs")
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(sim.pod("shop", "gone-1").is_none(), "it acted");
    let audit = std::fs::read_to_string(scratch.path("audit.jsonl")).unwrap();
    let intent: serde_json::Value = serde_json::from_str(audit.lines().next().unwrap()).unwrap();
    assert_eq!(intent["actor"], format!("{expected}@the-host"), "{audit}");
}
