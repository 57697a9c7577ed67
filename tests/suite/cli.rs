//! The command-line contract (commands, flags, exit codes, output), on the real binary.

use crate::support;

use std::process::{Command, Output};

use k8s_openapi::api::core::v1::Pod;
use kube_sim::{SimCluster, SimServer};
use serde_json::Value;
use support::pods::pod;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ops-pod-cleaner"))
        .args(args)
        .env_remove("OPS_POD_CLEANER_CONFIG")
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .output()
        .expect("the binary runs")
}

async fn run_async(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || run(&args.iter().map(String::as_str).collect::<Vec<_>>()))
        .await
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn scan_demo_json_has_every_category_and_the_contract_fields() {
    let out = run(&["scan", "--demo", "--output", "json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "abnormal pods found means exit 1; stderr: {}",
        text(&out.stderr)
    );
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).expect("one JSON array");
    for row in &rows {
        for field in [
            "cluster",
            "namespace",
            "name",
            "uid",
            "category",
            "reason",
            "since",
            "restarts",
            "node",
            "owner",
            "action",
        ] {
            assert!(row.get(field).is_some(), "missing {field} in {row}");
        }
        assert!(chrono::DateTime::parse_from_rfc3339(row["since"].as_str().unwrap()).is_ok());
    }
    let mut categories: Vec<&str> = rows
        .iter()
        .map(|r| r["category"].as_str().unwrap())
        .collect();
    categories.dedup();
    assert_eq!(
        categories,
        [
            "evicted",
            "terminating",
            "imagePull",
            "crashLoop",
            "configError",
            "pending",
            "failed",
            "unknown"
        ],
        "chain order, every category"
    );
}

#[test]
fn scan_exits_zero_when_nothing_is_abnormal() {
    // kube-public exists and holds no pods.
    let out = run(&["scan", "--demo", "-n", "kube-public"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    assert!(
        text(&out.stderr).contains("no abnormal pods"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn scan_of_a_namespace_that_does_not_exist_says_so_with_exit_three() {
    let out = run(&["scan", "--demo", "-n", "shop", "-n", "no-such-namespace"]);
    let error = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{error}");
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert!(
        error.contains("namespace no-such-namespace does not exist in context demo-eu"),
        "{error}"
    );
    assert!(
        error.contains("kube-system") && error.contains("shop"),
        "lists the namespaces there are: {error}"
    );
    assert!(!error.contains("no abnormal pods"), "{error}");
}

#[test]
fn report_of_a_namespace_that_does_not_exist_says_so_too() {
    let out = run(&["report", "--demo", "-n", "no-such-namespace"]);
    let error = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{error}");
    assert!(
        error.contains("namespace no-such-namespace does not exist"),
        "{error}"
    );
}

/// `scan` against a simulated cluster through a kubeconfig; `deny` is applied first.
async fn scan_sim(deny: &[(&str, &str)], namespace: &str) -> Output {
    let sim = SimCluster::new();
    let healthy: Pod = serde_json::from_value(pod("api-1").ns("payments").json()).unwrap();
    sim.create_pod(healthy);
    for (verb, resource) in deny {
        sim.faults().deny(verb, resource, None);
    }
    let server = SimServer::start(sim).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let kubeconfig = kubeconfig.to_str().unwrap().to_string();
    run_async(vec![
        "scan".into(),
        "--kubeconfig".into(),
        kubeconfig,
        "-n".into(),
        namespace.into(),
    ])
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_namespace_is_named_even_when_namespaces_cannot_be_listed() {
    let out = scan_sim(&[("list", "namespaces")], "paymnets").await;
    let error = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{error}");
    assert!(
        error.contains("namespace paymnets does not exist in context sim")
            && error.contains("kubectl get namespaces"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_identity_that_may_not_read_namespaces_scans_as_before() {
    // Namespace-scoped RBAC: pods may be listed, the namespace object may not be read.
    let out = scan_sim(&[("get", "namespaces")], "empty-but-maybe-there").await;
    let error = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{error}");
    assert!(error.contains("no abnormal pods among 0"), "{error}");
}

#[test]
fn scan_table_is_scoped_by_namespace() {
    // One demo cluster: one table without a cluster column (ml and batch are demo-eu's).
    let out = run(&[
        "scan",
        "--demo",
        "--context",
        "demo-eu",
        "-n",
        "ml",
        "-n",
        "batch",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let table = text(&out.stdout);
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("CATEGORY"), "{table}");
    assert_eq!(lines.len(), 3, "{table}");
    assert!(
        table.contains("trainer-gpu-0") && table.contains("Unschedulable"),
        "{table}"
    );
    assert!(table.contains("nightly-report-28345-x7k2q"), "{table}");
}

/// `check-config` checks the file every other command would read: `--config FILE` is as good
/// as the positional FILE, and two different files are refused rather than one ignored.
#[test]
fn check_config_takes_the_config_flag_too() {
    let seed = "tests/fixtures/config/seed.yaml";
    let by_flag = run(&["--config", seed, "check-config"]);
    assert_eq!(by_flag.status.code(), Some(0), "{}", text(&by_flag.stderr));
    assert_eq!(
        text(&by_flag.stdout),
        text(&run(&["check-config", seed]).stdout)
    );
    let both = run(&["--config", "other.yaml", "check-config", seed]);
    assert_eq!(both.status.code(), Some(2), "{}", text(&both.stderr));
    assert!(
        text(&both.stderr).contains("two config files"),
        "{}",
        text(&both.stderr)
    );
    let help = text(&run(&["check-config", "--help"]).stdout);
    assert!(help.contains("default: --config"), "{help}");
}

/// The built-in config, printed whole: every key at its default with what it does, to start a
/// config file from. Written to a file, it is the configuration a run without one has.
#[test]
fn default_config_prints_the_built_in_config_to_start_from() {
    let out = run(&["default-config"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    assert!(printed.contains("# "), "commented: {printed}");
    let read = opc_core::config::Config::from_yaml(&printed, "default-config").unwrap();
    let builtin = opc_core::config::Config::builtin();
    assert_eq!(read.rules, builtin.rules);
    assert_eq!(read.safety, builtin.safety);
    assert_eq!(read.report, builtin.report);
    assert_eq!(
        read.describe().lines().skip(1).collect::<Vec<_>>(),
        builtin.describe().lines().skip(1).collect::<Vec<_>>()
    );
    let help = text(&run(&["--help"]).stdout);
    assert!(help.contains("default-config"), "{help}");
}

#[test]
fn check_config_prints_the_seed_rules_in_chain_order() {
    let out = run(&["check-config", "tests/fixtures/config/seed.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    let at = |rule: &str| {
        shown
            .find(rule)
            .unwrap_or_else(|| panic!("{rule} missing from:\n{shown}"))
    };
    assert!(
        at("evicted") < at("terminating")
            && at("terminating") < at("imagePull")
            && at("imagePull") < at("crashLoop")
    );
    // The seed says nothing of the breaker: a burst pauses one namespace, two the cluster.
    assert!(
        shown
            .contains("for their registry once 2 namespaces pulling from it burst (minNamespaces)"),
        "{shown}"
    );
}

#[test]
fn bad_config_is_exit_two_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.yml");
    std::fs::write(
        &file,
        "errImagePull:\n  namespaces: default\n  hours: 5 seconds\n",
    )
    .unwrap();
    let path = file.to_str().unwrap();
    for args in [
        vec!["check-config", path],
        vec!["scan", "--demo", "--config", path],
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let error = text(&out.stderr);
        assert!(
            error.contains("config.yml:3:10") && error.contains("errImagePull.hours"),
            "{error}"
        );
    }
}

#[test]
fn an_unreachable_cluster_is_exit_three_and_says_what_to_try() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: gone\n  cluster: {server: 'http://127.0.0.1:9'}\n\
         users:\n- name: u\n  user: {}\ncontexts:\n- name: gone\n  context: {cluster: gone, user: u}\ncurrent-context: gone\n",
    )
    .unwrap();
    let out = run(&["scan", "--kubeconfig", kubeconfig.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
    let error = text(&out.stderr);
    assert!(
        error.contains("gone") && error.contains("--demo"),
        "{error}"
    );
}

#[test]
fn the_bare_command_without_a_cluster_says_what_to_try() {
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(3));
    let error = text(&out.stderr);
    assert!(
        error.contains("--kubeconfig") && error.contains("--demo"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_reads_a_cluster_through_a_kubeconfig_file() {
    let sim = SimCluster::new();
    let evicted: Pod =
        serde_json::from_value(pod("web-1").evicted().on_node("sim-node-1").json()).unwrap();
    sim.create_pod(evicted);
    let healthy: Pod = serde_json::from_value(pod("api-1").ns("payments").json()).unwrap();
    sim.create_pod(healthy);
    let server = SimServer::start(sim).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let args = vec![
        "scan".to_string(),
        "--kubeconfig".into(),
        kubeconfig.to_str().unwrap().into(),
        "-o".into(),
        "json".into(),
    ];
    let out = run_async(args).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["cluster"], "sim");
    assert_eq!(rows[0]["name"], "web-1");
    assert_eq!(rows[0]["category"], "evicted");
    assert_eq!(rows[0]["action"], "delete");
    assert!(
        text(&out.stderr).contains("1 abnormal of 2 pods"),
        "{}",
        text(&out.stderr)
    );
}

/// `scan … | head -1` and `report … | head -1`: the reader goes away after one line. The
/// output ends quietly with the command's usual status, as for any Unix tool, not a panic.
#[test]
fn a_reader_that_goes_away_ends_the_output_quietly() {
    for args in [
        &["scan", "--demo", "--context", "demo-eu", "-o", "json"][..],
        &["report", "--demo", "--context", "demo-eu", "-o", "json"][..],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ops-pod-cleaner"))
            .args(args)
            .env_remove("OPS_POD_CLEANER_CONFIG")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Closed before anything is read: every write to stdout meets a broken pipe.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = text(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{args:?}: {:?} {err}",
            out.status
        );
    }
}

/// `check-config FILE --context prod` would read as a check against prod: it is refused.
#[test]
fn check_config_refuses_a_cluster_it_would_not_reach() {
    let out = run(&[
        "check-config",
        "tests/fixtures/config/seed.yaml",
        "--context",
        "prod",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("--context names a cluster"),
        "{}",
        text(&out.stderr)
    );
}

/// `--help` says what running with no command does: a newcomer's first question.
#[test]
fn help_says_no_command_opens_the_tui() {
    let help = text(&run(&["--help"]).stdout);
    assert!(
        help.contains("With no command it opens the terminal UI"),
        "{help}"
    );
}

/// `report --help` says what --send does.
#[test]
fn report_send_has_help() {
    let out = run(&["report", "--help"]);
    let help = text(&out.stdout);
    let send = help
        .lines()
        .find(|l| l.trim_start().starts_with("--send"))
        .unwrap_or_default();
    assert!(send.contains("sinks"), "{help}");
}

/// `headless --demo --once`, the natural first try: it runs on demo-eu and says so.
#[test]
fn headless_demo_runs_on_the_first_demo_cluster_and_says_so() {
    let (out, _dir) = headless_demo_once(&[], "");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("demo cluster demo-eu"), "{err}");
    assert!(err.contains("--context demo-us"), "{err}");
    assert!(err.contains("one pass:"), "{err}");
}

/// `headless --demo --once` with `args`, its audit log set to `audit.jsonl` in a scratch
/// directory (returned, so it outlives the run) and `config` (YAML) after it.
fn headless_demo_once(args: &[&str], config: &str) -> (Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.yaml");
    let audit = dir.path().join("audit.jsonl");
    std::fs::write(
        &path,
        format!("audit:\n  path: {}\n{config}", audit.display()),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ops-pod-cleaner"))
        .args(["headless", "--demo", "--once"])
        .args(args)
        .arg("--config")
        .arg(&path)
        .env_remove("OPS_POD_CLEANER_CONFIG")
        .output()
        .unwrap();
    (out, dir)
}

/// What is done to the simulated clusters is recorded apart from the real ones: under
/// `--demo` the audit log is `demo-audit.jsonl` beside the configured one.
#[test]
fn demo_actions_have_an_audit_log_of_their_own() {
    let rules = "  events: false\nrules:\n  - rule: evicted\n    auto: true\n";
    let (out, dir) = headless_demo_once(&["--context", "demo-eu"], rules);
    let audit = dir.path().join("audit.jsonl");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let demo = std::fs::read_to_string(dir.path().join("demo-audit.jsonl")).unwrap_or_default();
    assert!(demo.contains(r#""cluster":"demo-eu""#), "{demo}");
    assert!(!audit.exists(), "the real audit log is untouched");
}

/// What the binary's own error says it is, run with `argv0` as its name.
fn named_as(argv0: &str) -> String {
    use std::os::unix::process::CommandExt;
    let out = Command::new(env!("CARGO_BIN_EXE_ops-pod-cleaner"))
        .arg0(argv0)
        .args(["check-config", "--demo"])
        .env_remove("OPS_POD_CLEANER_CONFIG")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    let (name, _) = said.split_once(": ").expect("a name before the error");
    name.to_string()
}

#[test]
fn krews_link_name_is_the_kubectl_plugin_wherever_it_lies() {
    for argv0 in [
        "kubectl-pod_cleaner",
        "/home/me/.krew/bin/kubectl-pod_cleaner",
        "kubectl-pod_cleaner.exe",
    ] {
        assert_eq!(named_as(argv0), "kubectl pod-cleaner", "{argv0}");
    }
    for argv0 in [
        "ops-pod-cleaner",
        "/usr/bin/ops-pod-cleaner",
        "kubectl-pod_cleanerx",
        "",
    ] {
        assert_eq!(named_as(argv0), "ops-pod-cleaner", "{argv0}");
    }
}

/// A context the kubeconfig does not hold is a usage error, not a cluster out of reach.
#[test]
fn a_missing_context_is_a_usage_error() {
    let kubeconfig = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        kubeconfig.path(),
        "apiVersion: v1\nkind: Config\nclusters: [{name: s, cluster: {server: 'https://127.0.0.1:1'}}]\n\
         users: [{name: u, user: {}}]\ncontexts: [{name: staging, context: {cluster: s, user: u}}]\n",
    )
    .unwrap();
    // Found through $KUBECONFIG, as ~/.kube/config would be: no --kubeconfig names it.
    let out = Command::new(env!("CARGO_BIN_EXE_ops-pod-cleaner"))
        .args(["scan", "--context", "prod"])
        .env_remove("OPS_POD_CLEANER_CONFIG")
        .env("KUBECONFIG", kubeconfig.path())
        .output()
        .unwrap();
    let missing = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{missing}");
    assert!(
        missing.starts_with("ops-pod-cleaner: no context \"prod\""),
        "{missing}"
    );
}
