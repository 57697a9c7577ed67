//! `report` over several clusters: one report, grouped by cluster, one message per sink; with
//! one cluster it is the report it always was.

use crate::support;

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use support::contexts::{run, stderr, stdout};

/// A webhook on 127.0.0.1 that takes every POST and keeps its JSON body.
struct Hook {
    url: String,
    bodies: Arc<Mutex<Vec<Value>>>,
}

impl Hook {
    async fn start() -> Hook {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let kept = bodies.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let kept = kept.clone();
                let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let kept = kept.clone();
                    async move {
                        let body = req.into_body().collect().await?.to_bytes();
                        kept.lock()
                            .unwrap()
                            .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
                        Ok::<_, hyper::Error>(hyper::Response::new(Full::new(Bytes::new())))
                    }
                });
                tokio::spawn(http1::Builder::new().serve_connection(TokioIo::new(stream), service));
            }
        });
        Hook { url, bodies }
    }
}

/// A config with a webhook sink at `url` and a Markdown file sink, both under `dir`.
fn config(dir: &std::path::Path, url: &str) -> String {
    let path = dir.join("config.yaml");
    let yaml = format!(
        "report:\n  sinks:\n    - {{type: webhook, url: \"{url}\"}}\n    - {{type: file, path: {report}, format: markdown}}\n  \
         spoolDir: {spool}\n  stateFile: {state}\naudit:\n  path: {audit}\n",
        report = dir.join("report.md").display(),
        spool = dir.join("spool").display(),
        state = dir.join("state.json").display(),
        audit = dir.join("audit.jsonl").display(),
    );
    std::fs::write(&path, yaml).unwrap();
    path.to_string_lossy().into_owned()
}

fn args(config: &str, extra: &[&str]) -> Vec<String> {
    let mut all: Vec<String> = ["--config", config, "--demo"]
        .iter()
        .map(|a| a.to_string())
        .collect();
    all.extend(extra.iter().map(|a| a.to_string()));
    all
}

/// Where each of `needles` first stands in `text`, failing on a missing one.
fn positions(text: &str, needles: &[&str]) -> Vec<usize> {
    needles
        .iter()
        .map(|n| {
            text.find(n)
                .unwrap_or_else(|| panic!("{n:?} missing from:\n{text}"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_demo_clusters_make_one_report_grouped_by_cluster_and_one_message_per_sink() {
    let hook = Hook::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &hook.url);

    let out = run(args(&config, &["report", "--send"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let printed = stdout(&out);
    assert_eq!(
        printed.matches("# Pods restarting too often").count(),
        1,
        "one report: {printed}"
    );
    let at = positions(
        &printed,
        &["## demo-eu", "ledger-worker", "## demo-us", "thumbnailer"],
    );
    assert!(
        at.windows(2).all(|w| w[0] < w[1]),
        "grouped by cluster: {printed}"
    );

    let bodies = hook.bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 1, "one message to the webhook: {bodies:?}");
    let report = &bodies[0];
    assert_eq!(
        report["clusters"],
        serde_json::json!(["demo-eu", "demo-us"])
    );
    let group_clusters: Vec<&str> = report["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["cluster"].as_str().unwrap())
        .collect();
    assert!(group_clusters.contains(&"demo-eu") && group_clusters.contains(&"demo-us"));
    assert!(
        group_clusters.windows(2).all(|w| w[0] <= w[1]),
        "groups ordered by cluster: {group_clusters:?}"
    );

    let files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("report"))
        .collect();
    assert_eq!(files.len(), 1, "one file written");
    let written = std::fs::read_to_string(files[0].path()).unwrap();
    positions(&written, &["## demo-eu", "## demo-us"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_cluster_reports_as_before_without_cluster_sections() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), "http://127.0.0.1:9/unused");

    let json = run(args(
        &config,
        &["--context", "demo-eu", "report", "-o", "json"],
    ))
    .await;
    assert_eq!(json.status.code(), Some(0), "{}", stderr(&json));
    let report: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report["cluster"], "demo-eu");
    assert!(report.get("clusters").is_none(), "{report}");
    let groups = report["groups"].as_array().unwrap();
    assert!(!groups.is_empty());
    assert!(
        groups.iter().all(|g| g.get("cluster").is_none()),
        "{report}"
    );

    let markdown = stdout(&run(args(&config, &["--context", "demo-eu", "report"])).await);
    assert!(markdown.contains("\n## payments / "), "{markdown}");
    assert!(!markdown.contains("## demo-eu"), "{markdown}");
    assert!(
        markdown.contains("Cluster demo-eu, "),
        "the headline names the cluster: {markdown}"
    );
}

mod library {
    use chrono::{DateTime, Utc};
    use opc_core::cluster::ClusterName;
    use opc_core::config::ReportConfig;
    use opc_core::pod::{Interner, PodRecord};
    use opc_core::report::{DeliveryPolicy, Reporter, RestartState, render};

    use crate::support::pods::pod;

    fn now() -> DateTime<Utc> {
        "2026-11-20T12:00:00Z".parse().unwrap()
    }

    /// The same StatefulSet pod, `db-0` in `data`, restarting `restarts` times.
    fn db(restarts: u32) -> Vec<PodRecord> {
        let wire = pod("db-0")
            .ns("data")
            .owned_by("apps/v1", "StatefulSet", "db")
            .crash_looping(restarts, "Error")
            .wire();
        vec![wire.into_record(&mut Interner::default())]
    }

    fn reporter(dir: &std::path::Path) -> Reporter {
        let config = ReportConfig {
            state_file: dir.join("state.json"),
            spool_dir: dir.join("spool"),
            ..ReportConfig::default()
        };
        Reporter::new(&config, DeliveryPolicy::default()).unwrap()
    }

    #[test]
    fn since_the_previous_report_is_counted_per_cluster() {
        let dir = tempfile::tempdir().unwrap();
        let reporter = reporter(dir.path());
        let first = reporter.build_combined(
            &[
                (ClusterName::new("eu"), db(10)),
                (ClusterName::new("us"), db(20)),
            ],
            now(),
        );
        RestartState::of(&first)
            .save(&dir.path().join("state.json"))
            .unwrap();
        // Same namespace, pod and container in both clusters: each compares with its own.
        let second = reporter.build_combined(
            &[
                (ClusterName::new("eu"), db(12)),
                (ClusterName::new("us"), db(25)),
            ],
            now(),
        );
        let since: Vec<(Option<&str>, Option<u32>)> = second
            .groups
            .iter()
            .map(|g| (g.cluster.as_deref(), g.rows[0].since_previous))
            .collect();
        assert_eq!(since, [(Some("eu"), Some(2)), (Some("us"), Some(5))]);

        let csv = render::csv(&second);
        assert!(csv.starts_with("cluster,namespace,"), "{csv}");
        assert!(
            csv.contains("\neu,data,") && csv.contains("\nus,data,"),
            "{csv}"
        );
        let chat = render::chat(&second, 10_000, render::Chat::Lark);
        let (eu, us) = (chat.find("**Cluster eu**"), chat.find("**Cluster us**"));
        assert!(eu.is_some() && eu < us, "{chat}");
    }

    /// A screen over two clusters: each cluster's worker sends its own report (on schedule or
    /// on `s`) through the one shared reporter. Neither may forget, or borrow, the other's
    /// counts from the previous report.
    #[tokio::test]
    async fn one_clusters_report_keeps_the_others_previous_counts() {
        let dir = tempfile::tempdir().unwrap();
        let reporter = reporter(dir.path());
        reporter
            .send_report(&reporter.build(&db(10), &ClusterName::new("eu"), now()))
            .await;
        reporter
            .send_report(&reporter.build(&db(20), &ClusterName::new("us"), now()))
            .await;
        let since =
            |report: opc_core::report::RestartReport| report.groups[0].rows[0].since_previous;
        assert_eq!(
            since(reporter.build(&db(12), &ClusterName::new("eu"), now())),
            Some(2)
        );
        assert_eq!(
            since(reporter.build(&db(25), &ClusterName::new("us"), now())),
            Some(5)
        );
        // And a combined report (the pane, `report --context a --context b`) reads the same.
        let combined = reporter.build_combined(
            &[
                (ClusterName::new("eu"), db(12)),
                (ClusterName::new("us"), db(25)),
            ],
            now(),
        );
        let since: Vec<Option<u32>> = combined
            .groups
            .iter()
            .map(|g| g.rows[0].since_previous)
            .collect();
        assert_eq!(since, [Some(2), Some(5)]);
    }

    /// A state file from before counts were kept per cluster still counts for the next report.
    #[test]
    fn a_state_file_without_clusters_still_counts() {
        let dir = tempfile::tempdir().unwrap();
        let reporter = reporter(dir.path());
        let container = reporter
            .build(&db(10), &ClusterName::new("eu"), now())
            .groups[0]
            .rows[0]
            .container
            .clone();
        let legacy = format!(r#"{{"restarts": {{"data/db-0/{container}": 10}}}}"#);
        std::fs::write(dir.path().join("state.json"), legacy).unwrap();
        let report = reporter.build(&db(12), &ClusterName::new("eu"), now());
        assert_eq!(report.groups[0].rows[0].since_previous, Some(2));
    }

    #[test]
    fn one_cluster_builds_the_report_it_always_did() {
        let dir = tempfile::tempdir().unwrap();
        let reporter = reporter(dir.path());
        let combined = reporter.build_combined(&[(ClusterName::new("eu"), db(10))], now());
        assert_eq!(
            combined,
            reporter.build(&db(10), &ClusterName::new("eu"), now())
        );
        assert!(render::csv(&combined).starts_with("namespace,"));
        let chat = render::chat(&combined, 10_000, render::Chat::Lark);
        assert!(!chat.contains("Cluster"), "{chat}");
    }
}
