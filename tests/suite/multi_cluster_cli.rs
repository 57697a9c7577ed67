//! Several clusters on the command line: the two demo clusters, `--all-contexts`,
//! `headless` refusing more than one, and `report` combining them into one message.

use crate::support;

use std::collections::BTreeSet;
use std::process::Output;

use k8s_openapi::api::core::v1::Pod;
use kube_sim::{SimCluster, SimServer};
use serde_json::Value;
use support::contexts::{Scratch, binary, run, stderr, stdout};
use support::pods::pod;

fn demo(args: &[&str]) -> Output {
    binary(args).output().expect("the binary runs")
}

fn json_rows(out: &Output) -> Vec<Value> {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("one JSON array ({e}): {}", stderr(out)))
}

/// The values of `field` in `rows`, each once.
fn distinct<'a>(rows: &'a [Value], field: &str) -> BTreeSet<&'a str> {
    rows.iter().filter_map(|r| r[field].as_str()).collect()
}

fn of_cluster<'a>(rows: &'a [Value], cluster: &str) -> Vec<&'a Value> {
    rows.iter().filter(|r| r["cluster"] == cluster).collect()
}

#[test]
fn demo_scan_shows_both_simulated_clusters_by_name() {
    let out = demo(&["--demo", "scan", "-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let rows = json_rows(&out);
    assert_eq!(
        distinct(&rows, "cluster"),
        BTreeSet::from(["demo-eu", "demo-us"])
    );
    let (eu, us) = (of_cluster(&rows, "demo-eu"), of_cluster(&rows, "demo-us"));
    let namespaces = |rows: &[&Value]| -> BTreeSet<String> {
        rows.iter()
            .map(|r| r["namespace"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(
        namespaces(&eu).is_disjoint(&namespaces(&us)),
        "different workloads in each cluster: {:?} / {:?}",
        namespaces(&eu),
        namespaces(&us)
    );
    let categories = |rows: &[&Value]| -> BTreeSet<String> {
        rows.iter()
            .map(|r| r["category"].as_str().unwrap().to_string())
            .collect()
    };
    assert_ne!(
        categories(&eu),
        categories(&us),
        "a different mix of problems"
    );

    let table = demo(&["--demo", "scan"]);
    let text = stdout(&table);
    assert!(text.starts_with("CLUSTER"), "{text}");
    assert!(
        text.contains("demo-eu") && text.contains("demo-us"),
        "{text}"
    );
}

#[test]
fn one_demo_context_scans_only_that_cluster() {
    let out = demo(&["--demo", "--context", "demo-us", "scan", "-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let rows = json_rows(&out);
    assert!(!rows.is_empty());
    assert_eq!(distinct(&rows, "cluster"), BTreeSet::from(["demo-us"]));
    let table = stdout(&demo(&["--demo", "--context", "demo-us", "scan"]));
    assert!(
        table.starts_with("CATEGORY"),
        "one cluster, no cluster column: {table}"
    );
}

#[test]
fn an_unknown_demo_context_is_a_usage_error_naming_the_two() {
    let out = demo(&["--demo", "--context", "demo-ap", "scan"]);
    let error = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{error}");
    assert!(
        error.contains("demo-ap") && error.contains("demo-eu") && error.contains("demo-us"),
        "{error}"
    );
}

#[test]
fn all_contexts_under_demo_means_both_demo_clusters() {
    let out = demo(&["--demo", "--all-contexts", "scan", "-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        distinct(&json_rows(&out), "cluster"),
        BTreeSet::from(["demo-eu", "demo-us"])
    );
}

#[test]
fn a_namespace_found_in_one_cluster_only_is_scanned_there() {
    // `ml` is a namespace of demo-eu only.
    let out = demo(&["--demo", "scan", "-n", "ml", "-o", "json"]);
    let error = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{error}");
    assert_eq!(
        distinct(&json_rows(&out), "cluster"),
        BTreeSet::from(["demo-eu"])
    );
    assert!(
        error.contains("namespace ml does not exist in context demo-us"),
        "{error}"
    );

    let nowhere = demo(&["--demo", "scan", "-n", "no-such-namespace"]);
    let error = stderr(&nowhere);
    assert_eq!(nowhere.status.code(), Some(3), "{error}");
    assert!(
        error.contains("does not exist in context demo-eu")
            && error.contains("does not exist in context demo-us"),
        "{error}"
    );
}

fn sim_with_evicted(name: &str) -> SimCluster {
    let sim = SimCluster::new();
    let evicted: Pod = serde_json::from_value(pod(name).evicted().json()).unwrap();
    sim.create_pod(evicted);
    sim
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_contexts_reads_every_context_of_the_kubeconfig() {
    let east = SimServer::start(sim_with_evicted("east-1")).await.unwrap();
    let west = SimServer::start(sim_with_evicted("west-1")).await.unwrap();
    let scratch = Scratch::new(&[("east", &east), ("west", &west)], "");

    let out = run(scratch.args(&["--all-contexts", "scan", "-o", "json"])).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let rows = json_rows(&out);
    let pairs: BTreeSet<(&str, &str)> = rows
        .iter()
        .map(|r| (r["cluster"].as_str().unwrap(), r["name"].as_str().unwrap()))
        .collect();
    assert_eq!(
        pairs,
        BTreeSet::from([("east", "east-1"), ("west", "west-1")])
    );

    let current = run(scratch.args(&["scan", "-o", "json"])).await;
    assert_eq!(
        distinct(&json_rows(&current), "cluster"),
        BTreeSet::from(["east"]),
        "without the flag: the current context only"
    );
}

#[test]
fn headless_runs_on_one_cluster_and_says_which_to_pick() {
    // `--demo` alone runs on demo-eu (tests/suite/cli.rs); naming both is refused.
    for args in [
        vec!["--demo", "--all-contexts", "headless", "--once"],
        vec![
            "--demo",
            "--context",
            "demo-eu",
            "--context",
            "demo-us",
            "headless",
            "--once",
        ],
    ] {
        let out = demo(&args);
        let error = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {error}");
        assert!(
            error.contains("one cluster") && error.contains("--context demo-eu"),
            "{args:?}: {error}"
        );
    }
}
