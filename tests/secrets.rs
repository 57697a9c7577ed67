//! Secrets never appear in output: one canary webhook token and one canary
//! signing secret pushed through every output path: config errors, `check-config`, `Debug`,
//! delivery errors and log lines for 4xx/5xx/unreachable sinks, the spool, `/metrics`.

// A test, bench or example fails by panicking: the workspace's panic policy is for the product.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use chrono::{DateTime, Utc};
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use opc_core::cluster::Health;
use opc_core::config::{self, Config, FixedEnvironment, ReportConfig, Secret, SecretSource, Sink};
use opc_core::report::{DeliveryPolicy, Reporter, RestartReport};
use opc_core::worker::{Counters, WorkerStatus};
use ops_pod_cleaner::headless::metrics::{Snapshot, render};

/// The canaries. The short tails catch a partial echo too.
const TOKEN: &str = "CANARYtok3n9f2d";
const SIGNING: &str = "CANARYs1gn7a4e";
const NUMERIC: &str = "8675309042";
const CANARIES: [&str; 5] = [TOKEN, SIGNING, NUMERIC, "tok3n9f2d", "s1gn7a4e"];

fn assert_clean(what: &str, text: &str) {
    if let Some(canary) = CANARIES.iter().find(|c| text.contains(*c)) {
        panic!("{what} leaks {canary:?}:\n{text}");
    }
}

fn feishu_url(host: &str) -> String {
    format!("https://{host}/open-apis/bot/v2/hook/{TOKEN}")
}

/// A `report.sinks` section, one flow mapping per entry.
fn sinks(entries: &[String]) -> String {
    let mut text = "report:\n  sinks:\n".to_string();
    for entry in entries {
        text.push_str(&format!("    - {entry}\n"));
    }
    text
}

fn binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ops-pod-cleaner"));
    command
        .env_remove("OPS_POD_CLEANER_CONFIG")
        .env("KUBECONFIG", "/nonexistent/kubeconfig");
    command
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `check-config` on `yaml` written to a file in `dir`, with `TYPO_URL` set to a canary URL.
fn check_config(dir: &Path, yaml: &str) -> Output {
    let path = dir.join("config.yml");
    std::fs::write(&path, yaml).unwrap();
    binary()
        .arg("check-config")
        .arg(&path)
        .env("TYPO_URL", format!("htps://open.feishu.cn/hook/{TOKEN}"))
        .env("CANARY_URL", feishu_url("open.feishu.cn"))
        .env("CANARY_SECRET", SIGNING)
        .output()
        .expect("the binary runs")
}

// ---------------------------------------------------------------------------------------------
// Config errors and check-config

/// Broken configs that carry a canary where a secret goes, or in the wrong place.
fn broken_configs() -> Vec<(&'static str, String)> {
    let url = feishu_url("open.feishu.cn");
    let typo = format!("htps://open.feishu.cn/open-apis/bot/v2/hook/{TOKEN}");
    vec![
        (
            "mistyped scheme",
            sinks(&[format!("{{type: feishu, url: \"{typo}\"}}")]),
        ),
        (
            "not a URL",
            sinks(&[format!("{{type: slack, url: \"{TOKEN}\"}}")]),
        ),
        (
            "numeric secret",
            sinks(&[format!(
                "{{type: feishu, url: \"{url}\", secret: {NUMERIC}}}"
            )]),
        ),
        (
            "secret as a list",
            sinks(&[format!(
                "{{type: feishu, url: \"{url}\", secret: [{SIGNING}]}}"
            )]),
        ),
        (
            "secret as a mapping",
            sinks(&[format!(
                "{{type: feishu, url: \"{url}\", secret: {{s: {SIGNING}}}}}"
            )]),
        ),
        (
            "url as a number",
            sinks(&[format!("{{type: slack, url: {NUMERIC}}}")]),
        ),
        (
            "url and urlFrom",
            sinks(&[format!(
                "{{type: slack, url: \"{url}\", urlFrom: {{env: CANARY_URL}}}}"
            )]),
        ),
        (
            "secret and secretFrom",
            sinks(&[format!(
                "{{type: feishu, url: \"{url}\", secret: {SIGNING}, secretFrom: {{env: CANARY_SECRET}}}}"
            )]),
        ),
        (
            "env holds a mistyped URL",
            sinks(&["{type: slack, urlFrom: {env: TYPO_URL}}".into()]),
        ),
        (
            "unset variable after a canary",
            sinks(&[format!(
                "{{type: feishu, url: \"{url}\", secretFrom: {{env: OPC_UNSET_CANARY}}}}"
            )]),
        ),
        (
            "URL pasted as a key",
            sinks(&[format!("{{type: feishu, \"{url}\": x}}")]),
        ),
        (
            "URL as the sink type",
            sinks(&[format!("{{type: \"{url}\"}}")]),
        ),
        (
            "url on a file sink",
            sinks(&[format!("{{type: file, path: r.md, url: \"{url}\"}}")]),
        ),
        (
            "secret on a slack sink",
            sinks(&[format!(
                "{{type: slack, url: \"{url}\", secret: {SIGNING}}}"
            )]),
        ),
        (
            "URL as a spool dir list",
            format!("report:\n  spoolDir: [\"{url}\"]\n"),
        ),
        (
            "seed apiurl mistyped",
            format!("tooManyRestart:\n  apiurl: \"{typo}\"\n"),
        ),
        (
            "seed apiurl as a number",
            format!("tooManyRestart:\n  apiurl: {NUMERIC}\n"),
        ),
        (
            "unclosed quote",
            format!("report:\n  sinks:\n    - {{type: feishu, url: \"{url}}}\n"),
        ),
        (
            "mapping value in a URL",
            format!("report:\n  sinks:\n    - type: feishu\n      url: {url}: x\n"),
        ),
        (
            "bad escape in a secret",
            format!("report:\n  sinks:\n    - type: feishu\n      secret: \"{SIGNING}\\q\"\n"),
        ),
        (
            "duplicate url",
            format!("report:\n  sinks:\n    - type: feishu\n      url: {url}\n      url: {url}\n"),
        ),
        (
            "bad indentation after a secret",
            format!("report:\n  sinks:\n    - type: feishu\n      secret: {SIGNING}\n     x: 1\n"),
        ),
    ]
}

#[test]
fn config_errors_name_the_key_never_the_secret() {
    let env = FixedEnvironment::default()
        .with_var("TYPO_URL", &format!("htps://open.feishu.cn/hook/{TOKEN}"))
        .with_var("CANARY_URL", &feishu_url("open.feishu.cn"))
        .with_var("CANARY_SECRET", SIGNING);
    let dir = tempfile::tempdir().unwrap();
    for (case, yaml) in broken_configs() {
        let msg = match Config::from_yaml_in(&yaml, "config.yml", &env) {
            Err(e) => e.to_string(),
            Ok(c) => panic!("{case}: expected an error, got {c:?}"),
        };
        assert_clean(case, &msg);
        let out = check_config(dir.path(), &yaml);
        assert_eq!(out.status.code(), Some(2), "{case}");
        assert_clean(case, &text(&out.stderr));
        assert_clean(case, &text(&out.stdout));
    }
}

#[test]
fn the_issues_examples_name_the_key_and_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let typo = format!("htps://open.feishu.cn/open-apis/bot/v2/hook/{TOKEN}");
    let out = check_config(
        dir.path(),
        &sinks(&[format!("{{type: feishu, url: \"{typo}\"}}")]),
    );
    assert!(
        text(&out.stderr).contains(
            "report.sinks[0].url: expected an http:// or https:// URL, found htps://open.feishu.cn/… \
             (the rest is not shown: it may hold a token)"
        ),
        "{}",
        text(&out.stderr)
    );
    let url = feishu_url("open.feishu.cn");
    let out = check_config(
        dir.path(),
        &sinks(&[format!(
            "{{type: feishu, url: \"{url}\", secret: {NUMERIC}}}"
        )]),
    );
    assert!(
        text(&out.stderr).contains("report.sinks[0].secret: expected a string"),
        "{}",
        text(&out.stderr)
    );
}

/// A valid config with the canaries inline, from the environment and from a file.
fn valid_config(secret_file: &Path) -> String {
    let url = feishu_url("open.feishu.cn");
    let mut yaml = sinks(&[
        format!("{{type: feishu, url: \"{url}/\", secret: \"{SIGNING}\"}}"),
        format!(
            "{{type: feishu, urlFrom: {{env: CANARY_URL}}, secretFrom: {{file: {}}}}}",
            secret_file.display()
        ),
        format!("{{type: slack, url: \"https://hooks.slack.com/services/T0/{TOKEN}/x\"}}"),
        format!(
            "{{type: webhook, url: \"https://bot:{TOKEN}@example.com/h?token={TOKEN}#{TOKEN}\"}}"
        ),
        format!("{{type: webhook, url: \"http://127.0.0.1:9/{TOKEN}\"}}"),
    ]);
    yaml.push_str("  title: restarts\n");
    yaml
}

#[test]
fn check_config_and_debug_show_where_secrets_are_never_what() {
    let dir = tempfile::tempdir().unwrap();
    let secret_file = dir.path().join("feishu-secret");
    std::fs::write(&secret_file, format!("{SIGNING}\n")).unwrap();
    let yaml = valid_config(&secret_file);

    let out = check_config(dir.path(), &yaml);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_clean("check-config", &stdout);
    for want in [
        "feishu  https://open.feishu.cn/… (url inline; signed, secret inline)",
        "feishu  https://open.feishu.cn/… (url from env CANARY_URL; signed, secret from file",
        "slack   https://hooks.slack.com/… (url inline)",
        "webhook https://example.com/… (url inline)",
        "webhook http://127.0.0.1:9/… (url inline)",
    ] {
        assert!(stdout.contains(want), "{want:?} in:\n{stdout}");
    }

    let env = FixedEnvironment::default()
        .with_var("CANARY_URL", &feishu_url("open.feishu.cn"))
        .with_file(&secret_file, SIGNING);
    let config = Config::from_yaml_in(&yaml, "config.yml", &env).unwrap();
    assert_clean("Debug of the config", &format!("{config:?}"));
    assert_clean("pretty Debug of the config", &format!("{config:#?}"));
    for sink in &config.report.sinks {
        assert_clean("Debug of a sink", &format!("{sink:?}"));
    }
    assert_clean("describe", &config.describe());
}

// ---------------------------------------------------------------------------------------------
// Delivery: a local receiver that echoes the request line back, as many servers do.

#[derive(Clone, Default)]
struct Receiver {
    /// Path and query of each request, and its Authorization header.
    seen: Arc<Mutex<Vec<String>>>,
}

/// Answers by the first path segment: `/e400/…` 400, `/e503/…` 503, `/refuse/…` a Feishu
/// refusal inside a 200; every answer quotes the path and query it was sent to.
async fn start_receiver() -> (Receiver, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let receiver = Receiver::default();
    let shared = receiver.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let shared = shared.clone();
            let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                let shared = shared.clone();
                async move {
                    let target = req.uri().to_string();
                    let auth = req
                        .headers()
                        .get("authorization")
                        .map(|v| v.to_str().unwrap_or("").to_string());
                    let _ = req.into_body().collect().await;
                    shared
                        .seen
                        .lock()
                        .unwrap()
                        .push(format!("{target} {auth:?}"));
                    let (code, body) = match target.split('/').nth(1) {
                        Some("e400") => (400, format!("Cannot POST {target}")),
                        Some("e503") => (503, format!("{target} is busy")),
                        _ => (
                            200,
                            format!(r#"{{"code":19021,"msg":"sign match fail for {target}"}}"#),
                        ),
                    };
                    let answer = hyper::Response::builder()
                        .status(code)
                        .body(Full::new(Bytes::from(body)))
                        .unwrap();
                    Ok::<_, hyper::Error>(answer)
                }
            });
            tokio::spawn(http1::Builder::new().serve_connection(TokioIo::new(stream), service));
        }
    });
    (receiver, base)
}

/// A port nothing listens on once the probe is dropped.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Every sink shape with the canaries, against the receiver and a closed port.
fn canary_sinks(base: &str) -> Vec<Sink> {
    let signing = || Some(Secret::new(SIGNING));
    let with_userinfo = base.replace("http://", &format!("http://bot:{TOKEN}@"));
    vec![
        Sink::Feishu {
            url: Secret::new(format!("{base}/e400/hook/{TOKEN}")),
            secret: signing(),
        },
        Sink::Feishu {
            url: Secret::new(format!("{base}/refuse/hook/{TOKEN}/")),
            secret: signing(),
        },
        Sink::Webhook {
            url: Secret::new(format!("{base}/e503/{TOKEN}/x?token={TOKEN}")),
        },
        Sink::Slack {
            url: Secret::new(format!("{with_userinfo}/e400/services/{TOKEN}")),
        },
        Sink::Slack {
            url: Secret::new(format!(
                "http://127.0.0.1:{}/services/{TOKEN}",
                closed_port()
            )),
        },
    ]
}

/// An empty report generated `minute` minutes past nine (spool files are named by it).
fn report(minute: u32) -> RestartReport {
    let at: DateTime<Utc> = format!("2026-11-20T09:{minute:02}:00Z").parse().unwrap();
    RestartReport {
        terms: None,
        title: "Restarts".into(),
        cluster: "prod".into(),
        generated: at,
        groups: vec![],
        clusters: Vec::new(),
    }
}

/// Everything any test in this binary logs, at every level, from every crate.
fn captured_logs() -> Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let writer = buffer.clone();
        let _ = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || Capture(writer.clone()))
            .try_init();
        buffer
    })
    .clone()
}

struct Capture(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Capture {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn delivery_errors_logs_spool_and_metrics_never_show_a_secret() {
    let logs = captured_logs();
    let (receiver, base) = start_receiver().await;
    let dir = tempfile::tempdir().unwrap();
    let config = ReportConfig {
        sinks: canary_sinks(&base),
        spool_dir: dir.path().join("spool"),
        state_file: dir.path().join("state.json"),
        ..ReportConfig::default()
    };
    let policy = DeliveryPolicy {
        attempts: 2,
        first_wait: Duration::from_millis(10),
        max_wait: Duration::from_millis(10),
        timeout: Duration::from_secs(5),
        ..DeliveryPolicy::default()
    };
    let reporter = Reporter::new(&config, policy).unwrap();

    let first = reporter.send_report(&report(0)).await;
    let second = reporter.send_report(&report(1)).await;
    let resent = reporter.resend_spooled().await;

    let seen = receiver.seen.lock().unwrap().join("\n");
    assert!(
        seen.contains(TOKEN),
        "the canary reached the receiver:\n{seen}"
    );
    let counters = Counters::default();
    for summary in [&first, &second] {
        assert!(
            !summary.all_sent(),
            "every sink fails: {}",
            summary.describe()
        );
        assert_clean("the delivery summary", &summary.describe());
        assert_clean("the delivery results", &format!("{:?}", summary.deliveries));
        for d in &summary.deliveries {
            counters.count_delivery(&d.sink, d.result.label());
        }
    }
    assert_clean("the resend results", &format!("{resent:?}"));
    assert_eq!(first.deliveries.len(), 5, "{first:?}");

    let spooled = files_below(&config.spool_dir);
    let dead = files_below(&config.spool_dir.join("dead"));
    assert_eq!(
        (spooled.len() - dead.len(), dead.len()),
        (4, 6),
        "two reports for each of five sinks: the 503 and the unreachable one spooled, \
         the two 400s and the Feishu refusal dead letters: {spooled:?}"
    );
    for path in &spooled {
        assert_clean(
            "a spool or dead-letter file name",
            &path.display().to_string(),
        );
        assert_clean(
            "a spool or dead-letter file",
            &std::fs::read_to_string(path).unwrap(),
        );
    }

    let snapshot = Snapshot {
        pods: 0,
        nodes_not_reporting: 0,
        events_dropped: 0,
        findings: Default::default(),
        actions: Default::default(),
        deliveries: counters.deliveries(),
        health: Health { scopes: vec![] },
        worker: WorkerStatus::default(),
        leader: true,
    };
    let metrics = render(&snapshot, Instant::now());
    assert!(
        metrics.contains("opc_report_deliveries_total{sink=\"feishu-"),
        "{metrics}"
    );
    assert!(
        metrics.contains("result=\"deadLetter\"} 2"),
        "each permanent refusal counted: {metrics}"
    );
    assert_clean("/metrics", &metrics);

    let logs = text(&logs.lock().unwrap());
    assert!(
        logs.contains("restart report not delivered"),
        "logs were captured:\n{logs}"
    );
    assert!(
        logs.contains("restart report rejected by sink feishu-"),
        "the dead letters were logged:\n{logs}"
    );
    assert_clean("the log", &logs);
}

#[tokio::test]
async fn spool_caps_drop_and_log_by_sink_id_only() {
    let logs = captured_logs();
    let dir = tempfile::tempdir().unwrap();
    let sink = Sink::Slack {
        url: Secret::new(format!(
            "http://bot:{TOKEN}@127.0.0.1:{}/services/{TOKEN}",
            closed_port()
        )),
    };
    let config = ReportConfig {
        sinks: vec![sink],
        spool_dir: dir.path().join("spool"),
        state_file: dir.path().join("state.json"),
        spool_max_files: 1,
        ..ReportConfig::default()
    };
    let policy = DeliveryPolicy {
        attempts: 1,
        first_wait: Duration::from_millis(10),
        max_wait: Duration::from_millis(10),
        timeout: Duration::from_secs(5),
        ..DeliveryPolicy::default()
    };
    let reporter = Reporter::new(&config, policy).unwrap();
    reporter.send_report(&report(10)).await;
    let second = reporter.send_report(&report(11)).await;

    let dropped: Vec<_> = second
        .deliveries
        .iter()
        .filter(|d| d.result.label() == "dropped")
        .collect();
    assert_eq!(dropped.len(), 1, "{second:?}");
    assert!(dropped[0].sink.starts_with("slack-"), "{dropped:?}");
    assert_clean("the summary", &second.describe());
    assert_clean("the results", &format!("{second:?}"));
    let logs = text(&logs.lock().unwrap());
    assert!(
        logs.contains(&format!(
            "spooled restart report for sink {} dropped unsent",
            dropped[0].sink
        )),
        "{logs}"
    );
    assert_clean("the log", &logs);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_send_on_the_binary_never_shows_a_secret() {
    let (receiver, base) = start_receiver().await;
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    let secret_file = dir.path().join("secret");
    std::fs::write(&secret_file, SIGNING).unwrap();
    let mut yaml = sinks(&[
        format!("{{type: feishu, url: \"{base}/e400/hook/{TOKEN}\", secret: \"{SIGNING}\"}}"),
        format!(
            "{{type: feishu, urlFrom: {{env: CANARY_URL}}, secretFrom: {{file: {}}}}}",
            secret_file.display()
        ),
    ]);
    yaml.push_str(&format!(
        "  spoolDir: {}\n  stateFile: {}\n",
        spool.display(),
        dir.path().join("state.json").display()
    ));
    let path = dir.path().join("config.yml");
    std::fs::write(&path, yaml).unwrap();
    let refuse = format!("{base}/refuse/hook/{TOKEN}");
    let out = tokio::task::spawn_blocking(move || {
        binary()
            .args(["report", "--demo", "--send", "--config"])
            .arg(&path)
            .env("OPS_POD_CLEANER_LOG", "trace")
            .env("CANARY_URL", refuse)
            .output()
            .unwrap()
    })
    .await
    .unwrap();

    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "a sink failed:\n{stderr}");
    assert!(stderr.contains("answered 400"), "{stderr}");
    assert!(stderr.contains("refused the message"), "{stderr}");
    assert_eq!(receiver.seen.lock().unwrap().len(), 2);
    assert_clean("report --send stderr", &stderr);
    assert_clean("report --send stdout", &text(&out.stdout));
    let dead = files_below(&spool.join("dead"));
    assert_eq!(dead.len(), 2, "both sinks refused: {dead:?}");
    assert!(stderr.contains("never resent"), "{stderr}");
    for path in files_below(&spool) {
        assert_clean("a spool file name", &path.display().to_string());
        assert_clean("a spool file", &std::fs::read_to_string(&path).unwrap());
    }
}

/// Every file in `dir` and below it.
fn files_below(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_below(&path));
        } else {
            files.push(path);
        }
    }
    files.sort();
    files
}

// ---------------------------------------------------------------------------------------------
// The pieces: the type, the one masking function, the scrubber.

#[test]
fn mask_url_shows_scheme_and_host_only_for_every_shape() {
    let cases = [
        (
            format!("https://open.feishu.cn/open-apis/bot/v2/hook/{TOKEN}"),
            "https://open.feishu.cn/…",
        ),
        (
            format!("https://open.feishu.cn/open-apis/bot/v2/hook/{TOKEN}/"),
            "https://open.feishu.cn/…",
        ),
        (
            format!("https://hooks.slack.com/services/{TOKEN}/B0/xyz"),
            "https://hooks.slack.com/…",
        ),
        (
            format!("https://example.com/hook?token={TOKEN}&a=b"),
            "https://example.com/…",
        ),
        (
            format!("https://example.com/hook#{TOKEN}"),
            "https://example.com/…",
        ),
        (
            format!("https://bot:{TOKEN}@example.com/hook"),
            "https://example.com/…",
        ),
        (
            format!("https://{TOKEN}@example.com/hook"),
            "https://example.com/…",
        ),
        (
            format!("http://127.0.0.1:8080/{TOKEN}"),
            "http://127.0.0.1:8080/…",
        ),
        (format!("http://[::1]:9/{TOKEN}"), "http://[::1]:9/…"),
        (
            format!("  HTTPS://Open.Feishu.CN/{TOKEN}  "),
            "https://open.feishu.cn/…",
        ),
        (
            format!("htps://open.feishu.cn/open-apis/bot/v2/hook/{TOKEN}"),
            "htps://open.feishu.cn/…",
        ),
        (
            "https://open.feishu.cn".to_string(),
            "https://open.feishu.cn/…",
        ),
        (format!("not a url {TOKEN}"), "…"),
        (TOKEN.to_string(), "…"),
        (format!("{TOKEN}:rest"), "…"),
        (format!("https://exa mple.com/{TOKEN}"), "…"),
        (String::new(), "…"),
    ];
    for (url, want) in cases {
        assert_eq!(config::mask_url(&url), want, "{url}");
    }
}

#[test]
fn scrub_removes_what_a_server_may_echo() {
    let url = Secret::new(format!(
        "https://bot:pw{TOKEN}@example.com/open-apis/hook/{TOKEN}/x?sig={TOKEN}a&k=v"
    ));
    let signing = Secret::new(SIGNING);
    let answers = [
        format!("Cannot POST /open-apis/hook/{TOKEN}/x?sig={TOKEN}a&k=v"),
        format!("invalid token {TOKEN}"),
        format!("bad sig {TOKEN}a"),
        format!("sign for {SIGNING} does not match"),
        format!("user pw{TOKEN} unknown"),
        url.expose().to_string(),
    ];
    for answer in answers {
        assert_clean(&answer, &config::scrub(&answer, &[&url, &signing]));
    }
    assert_eq!(
        config::scrub("no_service: /services/x", &[&url, &signing]),
        "no_service: /services/x",
        "the rest stays readable"
    );
    let plain = Secret::new("https://example.com/");
    assert_eq!(config::scrub("a/b", &[&plain]), "a/b", "nothing to hide");
}

#[test]
fn secrets_redact_themselves_when_printed() {
    let secret = Secret::from_source(TOKEN, SecretSource::Env("FEISHU_URL".into()));
    assert_eq!(format!("{secret:?}"), "Secret(<redacted>, env FEISHU_URL)");
    assert_eq!(format!("{secret}"), "<redacted>");
    assert_eq!(
        format!("{:#?}", Secret::new(SIGNING)),
        "Secret(<redacted>, inline)"
    );
    assert_eq!(
        secret.expose(),
        TOKEN,
        "the value is there for whoever asks by name"
    );
}

/// A bearer token in a kubeconfig the YAML parser rejects: its message quotes the lines around
/// the error (a syntax error) or the value (a type mismatch). The error keeps the position.
#[test]
fn a_broken_kubeconfig_is_not_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubeconfig");
    let broken = [
        (
            format!(
                "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: {TOKEN}\n     x: 1\n"
            ),
            "line 7",
        ),
        (
            format!("apiVersion: v1\nkind: Config\nusers: {TOKEN}\n"),
            "line 3",
        ),
    ];
    for (kubeconfig, position) in broken {
        std::fs::write(&path, kubeconfig).unwrap();
        let out = binary()
            .args(["scan", "--kubeconfig"])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3));
        let stderr = text(&out.stderr);
        assert_clean("scan stderr", &stderr);
        assert!(stderr.contains("not valid kubeconfig YAML"), "{stderr}");
        assert!(stderr.contains(position), "{stderr}");
    }
}
