//! Text a tenant wrote reaches the engineer's terminal inert: an owner name the API
//! server accepts, holding escapes that clear the screen and write the clipboard and a
//! newline that forges a row, is shown escaped in `scan`'s tables.

use crate::parked_workloads::{deployment, record, ship_records};
use crate::support;

use k8s_openapi::api::core::v1::Pod;
use kube_sim::{SimCluster, SimServer};
use support::contexts::{Scratch, run, stderr, stdout};
use support::inert::assert_inert;
use support::pods::pod;
use support::sim::typed;

const HOSTILE: &str =
    "x\x1b[2J\x1b[1;1HALL CLEAR\x1b]52;c;Y3VybCBldmls\x07\nimagePull  ns  fake-row\u{202e}";

/// What the escapes above look like once inert.
const SHOWN: &str =
    r"x\e[2J\e[1;1HALL CLEAR\e]52;c;Y3VybCBldmls\a\nimagePull  ns  fake-row\u{202e}";

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

/// Bidi overrides turn text around and zero-width characters hide it; the screen drops ESC
/// but passed both. A wide name was cut by characters, not cells: silently, no ellipsis.
mod screen {
    use std::sync::Arc;

    use k8s_openapi::api::core::v1::Pod;
    use opc_core::actions::{PodReading, ReadError};
    use opc_core::config::KeyBinding;
    use opc_core::pod::OwnerRef;
    use opc_core::report::{RestartReport, RestartRow, WorkloadGroup};
    use opc_core::rules::RuleKind;
    use ops_pod_cleaner::ui::{Event, PodDetails, State, update};
    use serde_json::json;

    use super::assert_inert;
    use crate::ui_support::{abnormal, now, replace, screen, state};

    const TURNED: &str = "invoice\u{202e}fdp.exe\u{200b}\u{2066}";
    const WIDE: &str = "支付服务支付服务支付服务支付服务支付服务支付服务支付服务支付服务";

    fn hostile_state() -> State {
        let mut s = state();
        let mut found = abnormal(RuleKind::Evicted, "shop", "web-1", "Evicted", 30);
        let mut pod = (*found.pod).clone();
        pod.owner = Some(OwnerRef {
            api_version: Arc::from("apps/v1"),
            kind: Arc::from("ReplicaSet"),
            name: WIDE.into(),
            uid: "rs-uid".into(),
        });
        pod.node = Some(Arc::from(TURNED));
        found.pod = Arc::new(pod);
        let mut finding = (*found.finding).clone();
        finding.message = Some(format!("evicted by {TURNED}\nforged line").into());
        found.finding = Arc::new(finding);
        replace(&mut s, vec![found]);
        s
    }

    #[test]
    fn the_table_shows_bidi_and_zero_width_escaped_and_cuts_in_cells() {
        let text = screen(&hostile_state(), 150, 20);
        assert_inert(&text);
        assert!(
            text.contains(r"invoice\u{"),
            "shown escaped, cut to the column: {text}"
        );
        let row = text.lines().find(|l| l.contains("web-1")).unwrap();
        let owner = row.split("ReplicaSet/").nth(1).unwrap();
        assert!(owner.contains('…'), "cut in cells, and marked: {row}");
    }

    #[test]
    fn the_details_pane_shows_what_the_pod_says_escaped() {
        let mut s = hostile_state();
        update(&mut s, Event::Key(KeyBinding::parse("Enter").unwrap()));
        let loading = screen(&s, 120, 30);
        assert_inert(&loading);
        assert!(loading.contains(r"evicted by invoice\u{202e}"), "{loading}");
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "web-1", "namespace": "shop", "uid": "uid-shop-web-1",
                         "finalizers": [TURNED]},
            "spec": {"nodeName": TURNED, "containers": [{"name": "app"}]},
            "status": {"phase": "Failed", "reason": "Evicted", "message": TURNED,
                       "containerStatuses": [{"name": "app", "image": TURNED, "imageID": "",
                           "ready": false, "restartCount": 0,
                           "state": {"waiting": {"reason": "x", "message": TURNED}}}]}
        }))
        .unwrap();
        let refused = ReadError::Failed {
            what: TURNED.into(),
            why: TURNED.into(),
        };
        let details = PodDetails::from_reading(&PodReading {
            pod,
            inspection: Err(refused.clone()),
            events: Err(refused),
            worker: None,
        });
        update(
            &mut s,
            Event::Details {
                uid: "uid-shop-web-1".into(),
                result: Ok(details),
            },
        );
        let text = screen(&s, 120, 40);
        assert_inert(&text);
        assert!(text.contains(r"message: invoice\u{202e}"), "{text}");
    }

    #[test]
    fn the_report_pane_shows_names_escaped() {
        let mut s = hostile_state();
        let row = RestartRow {
            pod: "web-1".into(),
            container: TURNED.into(),
            restarts: 12,
            since_previous: None,
            last_reason: Some(TURNED.into()),
            exit_code: Some(1),
            last_restart: None,
            node: Some(TURNED.into()),
        };
        let report = RestartReport {
            terms: None,
            title: "restarts".into(),
            cluster: "demo".into(),
            generated: now(),
            groups: vec![WorkloadGroup {
                cluster: None,
                namespace: "shop".into(),
                workload: format!("Deployment/{TURNED}"),
                rows: vec![row],
            }],
            clusters: Vec::new(),
        };
        update(&mut s, Event::Report(report));
        update(&mut s, Event::Key(KeyBinding::parse("h").unwrap()));
        let text = screen(&s, 120, 30);
        assert_inert(&text);
        assert!(
            text.contains(r"Deployment/invoice\u{202e}fdp.exe"),
            "{text}"
        );
    }
}

/// One story per pod: `scan` prints the row the screen shows. A bare pod has no workload to
/// scale (`-`, as its own next step says), a Deployment's pod names the Deployment, a stuck
/// deletion's next action is the force delete, and the CAUSE column is there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_prints_the_row_the_screen_shows() {
    let sim = SimCluster::new();
    let pulling = |name: &str| {
        pod(name)
            .ns("shop")
            .waiting_with("ImagePullBackOff", "Back-off pulling image \"web:9\"")
    };
    sim.create_pod(typed(pulling("bare").json()));
    sim.create_pod(typed(
        pulling("web-7d9f8c6b5-x2x9p")
            .owned_by("apps/v1", "ReplicaSet", "web-7d9f8c6b5")
            .json(),
    ));
    sim.create_pod(typed(
        pod("stuck")
            .ns("shop")
            .on_node("node-1")
            .terminating_since("2026-11-20T09:00:00Z")
            .finalizers(&["example.com/hold"])
            .json(),
    ));
    let server = SimServer::start(sim).await.unwrap();
    let scratch = Scratch::new(
        &[("east", &server)],
        "rules:\n  - {rule: imagePull, after: 0}\n",
    );
    let table = stdout(&run(scratch.args(&["scan"])).await);
    let row = |name: &str| -> Vec<String> {
        let line = table
            .lines()
            .find(|l| l.split_whitespace().nth(2) == Some(name))
            .unwrap_or_else(|| panic!("{name} in\n{table}"));
        line.split_whitespace().map(String::from).collect()
    };
    let heading: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        heading,
        [
            "CATEGORY",
            "NAMESPACE",
            "NAME",
            "REASON",
            "CAUSE",
            "FOR",
            "RESTARTS",
            "NODE",
            "OWNER",
            "ACTION"
        ]
    );
    let bare = row("bare");
    assert_eq!((bare[8].as_str(), bare[9].as_str()), ("-", "-"), "{table}");
    let web = row("web-7d9f8c6b5-x2x9p");
    assert_eq!(
        (web[8].as_str(), web[9].as_str()),
        ("Deployment/web", "scaleToZero"),
        "{table}"
    );
    let stuck = row("stuck");
    assert_eq!(stuck[9], "forceDelete", "{table}");
}

/// Blind is never "nothing abnormal": `scan` with a context that may not list pods exits 3
/// with the reason, and the `can-i` it suggests checks that context's identity.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_where_pods_may_not_be_listed_says_so_for_that_context() {
    let sim = SimCluster::new();
    sim.create_pod(typed(pod("gone").ns("shop").evicted().json()));
    for verb in ["list", "watch"] {
        sim.faults().deny(verb, "pods", None);
    }
    let server = SimServer::start(sim).await.unwrap();
    let scratch = Scratch::new(&[("east", &server)], "");
    let out = run(scratch.args(&["scan"])).await;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("permission denied"), "{said}");
    assert!(
        said.contains("kubectl auth can-i list pods -A --context east"),
        "{said}"
    );
    assert!(
        stdout(&out).is_empty(),
        "no table that reads as nothing abnormal"
    );
}
