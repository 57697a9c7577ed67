//! The restart report: which pods, grouped how, compared with the previous report; renderers.

use crate::support;
use opc_core::cluster::ClusterName;

use chrono::{DateTime, Utc};
use opc_core::config::ReportConfig;
use opc_core::pod::{Interner, PodRecord};
use opc_core::report::{RestartReport, RestartState, build, render};
use support::pods::{PodBuilder, pod};

/// (namespace, workload, [(pod, restarts)])
type Group<'a> = (&'a str, &'a str, Vec<(&'a str, u32)>);

fn now() -> DateTime<Utc> {
    "2026-11-20T12:00:00Z".parse().unwrap()
}

fn records(builders: Vec<PodBuilder>) -> Vec<PodRecord> {
    let mut interner = Interner::default();
    builders
        .into_iter()
        .map(|b| b.wire().into_record(&mut interner))
        .collect()
}

fn config() -> ReportConfig {
    ReportConfig {
        title: "Restarts".into(),
        ..ReportConfig::default()
    }
}

fn web(name: &str, restarts: u32) -> PodBuilder {
    pod(name)
        .ns("shop")
        .on_node("n1")
        .owned_by("apps/v1", "ReplicaSet", "web-7d9f8c6b5")
        .crash_looping(restarts, "OOMKilled")
        .exit_code(137)
}

fn report(pods: Vec<PodBuilder>, previous: &RestartState) -> RestartReport {
    build(
        &records(pods),
        &config(),
        previous,
        &ClusterName::new("prod"),
        now(),
    )
}

#[test]
fn groups_by_deployment_sorted_by_restarts_and_filters_what_does_not_count() {
    let pods = vec![
        web("web-a", 7),
        web("web-b", 30),
        pod("db-0")
            .ns("data")
            .owned_by("apps/v1", "StatefulSet", "db")
            .crash_looping(12, "Error"),
        pod("lonely").ns("data").crash_looping(5, "Error"),
        // Too few restarts, and a reason the report does not list.
        pod("calm").ns("shop").crash_looping(4, "Error"),
        pod("odd").ns("shop").restarts(9, "Unlisted"),
    ];
    let r = report(pods, &RestartState::default());
    let groups: Vec<Group> = r
        .groups
        .iter()
        .map(|g| {
            (
                g.namespace.as_str(),
                g.workload.as_str(),
                g.rows
                    .iter()
                    .map(|r| (r.pod.as_str(), r.restarts))
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        groups,
        vec![
            ("shop", "Deployment/web", vec![("web-b", 30), ("web-a", 7)]),
            ("data", "StatefulSet/db", vec![("db-0", 12)]),
            ("data", "Pod/lonely", vec![("lonely", 5)]),
        ]
    );
    let row = &r.groups[0].rows[0];
    assert_eq!(row.container, "app");
    assert_eq!(
        row.last_reason.as_deref(),
        Some("OOMKilled"),
        "how the last run ended, not the back-off"
    );
    assert_eq!(row.exit_code, Some(137));
    assert_eq!(row.node.as_deref(), Some("n1"));
    assert_eq!(
        row.last_restart,
        Some("2026-11-20T09:00:00Z".parse().unwrap())
    );
    assert_eq!(
        (r.cluster.as_str(), r.title.as_str(), r.generated),
        ("prod", "Restarts", now())
    );
}

#[test]
fn namespaces_filter_the_report() {
    let mut config = config();
    config.namespaces.exclude = vec!["shop".into()];
    let pods = records(vec![
        web("web-a", 7),
        pod("x").ns("data").crash_looping(6, "Error"),
    ]);
    let r = build(
        &pods,
        &config,
        &RestartState::default(),
        &ClusterName::new("prod"),
        now(),
    );
    assert_eq!(r.groups.len(), 1);
    assert_eq!(r.groups[0].namespace, "data");
}

#[test]
fn restarts_since_the_previous_report_come_from_the_state_file() {
    let first = report(
        vec![web("web-a", 7), web("web-b", 30)],
        &RestartState::default(),
    );
    assert!(
        first.groups[0]
            .rows
            .iter()
            .all(|r| r.since_previous.is_none()),
        "nothing to compare with yet"
    );

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state/report-state.json");
    RestartState::of(&first).save(&path).unwrap();
    let previous = RestartState::load(&path).unwrap();
    assert_eq!(previous, RestartState::of(&first));

    // web-b restarted 4 more times; web-a is a new container counting from 2.
    let second = report(
        vec![web("web-a", 2 + 5), web("web-b", 34), web("web-c", 6)],
        &previous,
    );
    let since: Vec<(&str, Option<u32>)> = second.groups[0]
        .rows
        .iter()
        .map(|r| (r.pod.as_str(), r.since_previous))
        .collect();
    assert_eq!(
        since,
        vec![("web-b", Some(4)), ("web-a", Some(0)), ("web-c", None)]
    );
    // With a report before it, a container it did not hold is "new"; no first-report words.
    let md = render::markdown(&second);
    assert!(
        md.contains("| web-b | app | 34 | +4 |") && md.contains("| web-c | app | 6 | new |"),
        "{md}"
    );
    assert!(!md.contains("first report"), "{md}");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("state"))
        .unwrap()
        .collect();
    assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
}

#[test]
fn markdown_and_csv_show_every_column() {
    let r = report(
        vec![
            web("web-b", 30),
            pod("q,\"x\"").ns("data").crash_looping(6, "Error"),
        ],
        &RestartState::default(),
    );
    let md = render::markdown(&r);
    assert!(md.starts_with("# Restarts\n\nCluster prod, 2026-11-20T12:00:00Z: 2 containers in 2 workloads restart too often.\n"), "{md}");
    assert!(md.contains("## shop / Deployment/web"), "{md}");
    assert!(
        md.contains("| web-b | app | 30 | - | OOMKilled | 137 | 2026-11-20 09:00 UTC | n1 |"),
        "{md}"
    );
    // What "too often" means is said, and why no row has a "since previous" yet.
    let bar = ReportConfig::default();
    assert!(
        md.contains(&format!(
            "Too often: at least {} restarts, with reason ",
            bar.min_restarts
        )) && md.contains("This is the first report"),
        "{md}"
    );
    assert!(md.contains(bar.reasons.last().unwrap().as_str()), "{md}");
    let csv = render::csv(&r);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "namespace,workload,pod,container,restarts,sincePrevious,lastReason,exitCode,lastRestart,node"
    );
    assert_eq!(
        lines[1],
        "shop,Deployment/web,web-b,app,30,,OOMKilled,137,2026-11-20T09:00:00Z,n1"
    );
    assert_eq!(
        lines[2],
        "data,\"Pod/q,\"\"x\"\"\",\"q,\"\"x\"\"\",app,6,,Error,1,2026-11-20T09:00:00Z,"
    );
    let json: serde_json::Value = serde_json::from_str(&render::json(&r)).unwrap();
    assert_eq!(
        json["groups"][0]["rows"][0]["sincePrevious"],
        serde_json::Value::Null
    );
    assert_eq!(json["groups"][0]["rows"][0]["exitCode"], 137);
}

#[test]
fn chat_text_is_cut_with_a_count_of_what_is_left() {
    let pods = (0..50)
        .map(|i| web(&format!("web-{i:02}"), 10 + i))
        .collect();
    let r = report(pods, &RestartState::default());
    let text = render::chat(&r, 600, render::Chat::Lark);
    assert!(text.len() <= 700, "{}", text.len());
    assert!(
        text.contains("more containers (see the full report)"),
        "{text}"
    );
}

/// On the demo, as on a real cluster (the kubelet times every run that ended), the report's
/// "last restart" column has a time, not `-`.
#[test]
fn the_demo_report_says_when_each_container_last_restarted() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ops-pod-cleaner"))
        .args(["report", "--demo", "--context", "demo-eu", "-o", "json"])
        .env_remove("OPS_POD_CLEANER_CONFIG")
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows: Vec<&serde_json::Value> = report["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["rows"].as_array().into_iter().flatten())
        .collect();
    assert!(!rows.is_empty(), "{report}");
    for row in rows {
        assert!(row["lastRestart"].is_string(), "{row}");
    }
}

#[test]
fn an_oom_kill_names_the_memory_limit_it_reached() {
    let r = report(
        vec![web("web-a", 7).memory_limit("512Mi"), web("web-b", 9)],
        &RestartState::default(),
    );
    let reasons: Vec<(&str, Option<&str>)> = r.groups[0]
        .rows
        .iter()
        .map(|row| (row.pod.as_str(), row.last_reason.as_deref()))
        .collect();
    assert_eq!(
        reasons,
        [
            ("web-b", Some("OOMKilled")),
            ("web-a", Some("OOMKilled (limit 512Mi)"))
        ]
    );
}
