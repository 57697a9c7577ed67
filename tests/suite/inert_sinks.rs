//! Text a tenant wrote reaches the engineer's terminal inert (issue 28): an owner name the API
//! server accepts, holding escapes that clear the screen and write the clipboard and a
//! newline that forges a row, is shown escaped in `scan`'s tables.

use crate::parked_workloads::{deployment, record, ship_records};
use crate::support;

use k8s_openapi::api::core::v1::Pod;
use kube_sim::{SimCluster, SimServer};
use support::contexts::{Scratch, run, stderr, stdout};
use support::pods::pod;
use support::sim::typed;

const HOSTILE: &str =
    "x\x1b[2J\x1b[1;1HALL CLEAR\x1b]52;c;Y3VybCBldmls\x07\nimagePull  ns  fake-row\u{202e}";

/// What the escapes above look like once inert.
const SHOWN: &str =
    r"x\e[2J\e[1;1HALL CLEAR\e]52;c;Y3VybCBldmls\a\nimagePull  ns  fake-row\u{202e}";

/// No byte that a terminal acts on, and no character that reorders or hides text.
fn assert_inert(text: &str) {
    let hazard = text
        .chars()
        .find(|&c| c != '\n' && opc_core::inert::is_hazard(c));
    assert_eq!(hazard, None, "a raw hazard reached the terminal:\n{text:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_table_shows_a_hostile_owner_and_node_escaped_on_one_row() {
    let sim = SimCluster::new();
    let hostile: Pod = typed(
        pod("web-1")
            .ns("shop")
            .owned_by("apps/v1", "ReplicaSet", HOSTILE)
            .on_node(HOSTILE)
            .waiting("ImagePullBackOff")
            .json(),
    );
    sim.create_pod(hostile);
    let server = SimServer::start(sim).await.unwrap();
    let scratch = Scratch::new(&[("east", &server)], "");

    let out = run(scratch.args(&["scan"])).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let table = stdout(&out);
    assert_inert(&table);
    assert_eq!(table.lines().count(), 2, "a heading and one row:\n{table}");
    assert!(table.contains(&format!("ReplicaSet/{SHOWN}")), "{table}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_parked_shows_a_hostile_trigger_message_escaped() {
    let sim = SimCluster::new();
    let cart = deployment("shop", "cart").replicas(0).create(&sim);
    ship_records(&sim, vec![record(&cart, 3).message(HOSTILE)]);
    let server = SimServer::start(sim).await.unwrap();
    let scratch = Scratch::new(&[("east", &server)], "");

    let out = run(scratch.args(&["scan", "--parked"])).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let table = stdout(&out);
    assert_inert(&table);
    assert_eq!(table.lines().count(), 2, "a heading and one row:\n{table}");
    assert!(table.contains(r"x\e[2J\e[1;1HALL CLEAR"), "{table}");
}
