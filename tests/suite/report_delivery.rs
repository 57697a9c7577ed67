//! Delivery against a local HTTP receiver: exact payloads, the Feishu signature, retries,
//! and failure → spool → resend.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use opc_core::config::{FileFormat, ReportConfig, Secret, SecretSource, Sink};
use opc_core::report::{
    DeliveryPolicy, DeliveryResult, Reporter, RestartReport, RestartRow, SpoolCap, WorkloadGroup,
    payload, sink_id,
};
use serde_json::{Value, json};

#[derive(Clone, Default)]
struct Receiver {
    got: Arc<Mutex<Vec<(String, Value)>>>,
    /// Status codes and bodies to answer with, in order; 200 and Feishu's "success" after.
    answers: Arc<Mutex<VecDeque<(u16, &'static str)>>>,
    addr: Option<SocketAddr>,
}

impl Receiver {
    async fn start(answers: &[(u16, &'static str)]) -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let receiver = Receiver {
            addr: Some(listener.local_addr().unwrap()),
            ..Receiver::default()
        };
        receiver.answers.lock().unwrap().extend(answers);
        let shared = receiver.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let shared = shared.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                        let shared = shared.clone();
                        async move {
                            let path = req.uri().path().to_string();
                            let body = req.into_body().collect().await.unwrap().to_bytes();
                            let value: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                            shared.got.lock().unwrap().push((path, value));
                            let (code, text) = shared
                                .answers
                                .lock()
                                .unwrap()
                                .pop_front()
                                .unwrap_or((200, OK));
                            let answer = hyper::Response::builder()
                                .status(code)
                                .body(Full::new(Bytes::from_static(text.as_bytes())))
                                .unwrap();
                            Ok::<_, hyper::Error>(answer)
                        }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        receiver
    }

    fn url(&self, path: &str) -> Secret {
        Secret::new(format!("http://{}{path}", self.addr.unwrap()))
    }

    fn received(&self) -> Vec<(String, Value)> {
        self.got.lock().unwrap().clone()
    }
}

const OK: &str = r#"{"code":0,"msg":"success"}"#;

fn at() -> DateTime<Utc> {
    "2026-11-20T09:00:00Z".parse().unwrap()
}

fn sample() -> RestartReport {
    RestartReport {
        terms: None,
        title: "Restarts".into(),
        cluster: "prod".into(),
        generated: at(),
        groups: vec![WorkloadGroup {
            cluster: None,
            namespace: "shop".into(),
            workload: "Deployment/web".into(),
            rows: vec![RestartRow {
                pod: "web-1".into(),
                container: "app".into(),
                restarts: 12,
                since_previous: Some(3),
                last_reason: Some("OOMKilled".into()),
                exit_code: Some(137),
                last_restart: Some(at()),
                node: Some("n1".into()),
            }],
        }],
        clusters: Vec::new(),
    }
}

fn reporter(sinks: Vec<Sink>, spool: &std::path::Path) -> Reporter {
    let config = ReportConfig {
        sinks,
        spool_dir: spool.join("spool"),
        state_file: spool.join("state.json"),
        ..ReportConfig::default()
    };
    let policy = DeliveryPolicy {
        attempts: 3,
        first_wait: Duration::from_millis(10),
        max_wait: Duration::from_millis(20),
        timeout: Duration::from_secs(5),
        ..DeliveryPolicy::default()
    };
    Reporter::new(&config, policy).unwrap()
}

#[test]
fn feishu_signature_matches_the_documented_algorithm() {
    // Computed independently: base64(HMAC-SHA256(key = "1700000000\ns3cret", message = "")).
    assert_eq!(
        payload::feishu_sign("s3cret", 1_700_000_000).unwrap(),
        "IX3eHI0/v/Td7jqJ0ynSEK3Dq5JY3HUZeoeMgVZeZGo="
    );
}

#[tokio::test]
async fn feishu_gets_a_signed_card() {
    let rx = Receiver::start(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let sink = Sink::Feishu {
        url: rx.url("/open-apis/bot/v2/hook/abc"),
        secret: Some(Secret::new("s3cret")),
    };
    let deliveries = reporter(vec![sink], dir.path()).deliver(&sample()).await;
    assert_eq!(deliveries[0].result, DeliveryResult::Sent);

    let got = rx.received();
    let (path, body) = &got[0];
    assert_eq!(path, "/open-apis/bot/v2/hook/abc");
    let timestamp: i64 = body["timestamp"].as_str().unwrap().parse().unwrap();
    assert!(
        (Utc::now().timestamp() - timestamp).abs() < 60,
        "signed with the current time"
    );
    assert_eq!(
        body["sign"],
        json!(payload::feishu_sign("s3cret", timestamp).unwrap())
    );
    assert_eq!(body["msg_type"], "interactive");
    assert_eq!(
        body["card"]["header"]["title"],
        json!({"tag": "plain_text", "content": "Restarts"})
    );
    assert_eq!(
        body["card"]["elements"][0]["content"],
        "Cluster prod, 2026-11-20T09:00:00Z: 1 container in 1 workload restarts too often.\n\n\
         **shop · Deployment/web**\n- web-1 / app: 12 restarts (+3), OOMKilled, exit 137, last 2026-11-20 09:00 UTC, node n1"
    );
}

#[tokio::test]
async fn slack_and_the_generic_webhook_get_their_shapes() {
    let rx = Receiver::start(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let sinks = vec![
        Sink::Slack {
            url: rx.url("/slack"),
        },
        Sink::Webhook {
            url: rx.url("/hook"),
        },
    ];
    reporter(sinks, dir.path()).deliver(&sample()).await;
    let got = rx.received();
    let slack = &got.iter().find(|(p, _)| p == "/slack").unwrap().1;
    assert_eq!(
        slack["blocks"][0],
        json!({"type": "header", "text": {"type": "plain_text", "text": "Restarts"}})
    );
    assert_eq!(
        slack["blocks"][2]["text"]["text"],
        "*shop · Deployment/web*\n- web-1 / app: 12 restarts (+3), OOMKilled, exit 137, last 2026-11-20 09:00 UTC, node n1"
    );
    let hook = &got.iter().find(|(p, _)| p == "/hook").unwrap().1;
    assert_eq!(*hook, serde_json::to_value(sample()).unwrap());
    assert_eq!(hook["groups"][0]["rows"][0]["sincePrevious"], 3);
}

#[tokio::test]
async fn retries_then_spools_then_resends_and_deletes_only_after_success() {
    // Three tries in all: three 503s spool the report; the next send succeeds.
    let rx = Receiver::start(&[(503, "busy"), (503, "busy"), (503, "busy")]).await;
    let dir = tempfile::tempdir().unwrap();
    let sink = Sink::Webhook {
        url: rx.url("/hook"),
    };
    let id = sink_id(&sink);
    let reporter = reporter(vec![sink], dir.path());

    let deliveries = reporter.deliver(&sample()).await;
    assert!(
        matches!(&deliveries[0].result, DeliveryResult::Spooled { why } if why.contains("503")),
        "{deliveries:?}"
    );
    assert_eq!(rx.received().len(), 3);
    let pending = reporter.spool().pending();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].1.sink, id);
    assert_eq!(pending[0].1.report, sample());

    let resent = reporter.resend_spooled().await;
    assert_eq!(resent[0].result, DeliveryResult::Resent);
    assert!(
        reporter.spool().pending().is_empty(),
        "deleted after the 2xx"
    );
    assert_eq!(rx.received()[3].1, serde_json::to_value(sample()).unwrap());
}

#[tokio::test]
async fn an_unreachable_sink_spools_and_a_failed_resend_keeps_the_file() {
    let dir = tempfile::tempdir().unwrap();
    // Nothing listens on this port once the listener is dropped.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let sink = Sink::Slack {
        url: Secret::new(format!("http://127.0.0.1:{port}/slack")),
    };
    let reporter = reporter(vec![sink], dir.path());
    let deliveries = reporter.deliver(&sample()).await;
    let DeliveryResult::Spooled { why } = &deliveries[0].result else {
        panic!("{:?}", deliveries[0].result);
    };
    // The cause under reqwest's own words; never the path, which holds the token.
    assert!(why.contains("could not be reached"), "{why}");
    assert!(why.contains("Connection refused"), "{why}");
    assert!(!why.contains("/slack"), "{why}");
    let resent = reporter.resend_spooled().await;
    assert!(matches!(resent[0].result, DeliveryResult::Spooled { .. }));
    assert_eq!(
        reporter.spool().pending().len(),
        1,
        "kept until a sink takes it"
    );
}

#[tokio::test]
async fn file_sinks_write_each_format_to_a_dated_path() {
    let dir = tempfile::tempdir().unwrap();
    let sinks = [FileFormat::Markdown, FileFormat::Json, FileFormat::Csv]
        .into_iter()
        .map(|format| Sink::File {
            path: dir
                .path()
                .join(format!("out/restarts-%Y-%m-%d.{}", format.name())),
            format,
        })
        .collect();
    let deliveries = reporter(sinks, dir.path()).deliver(&sample()).await;
    assert!(
        deliveries.iter().all(|d| d.result == DeliveryResult::Sent),
        "{deliveries:?}"
    );
    let md = std::fs::read_to_string(dir.path().join("out/restarts-2026-11-20.markdown")).unwrap();
    assert!(
        md.contains("| web-1 | app | 12 | +3 | OOMKilled | 137 |"),
        "{md}"
    );
    let json: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/restarts-2026-11-20.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(json, serde_json::to_value(sample()).unwrap());
    let csv = std::fs::read_to_string(dir.path().join("out/restarts-2026-11-20.csv")).unwrap();
    assert_eq!(
        csv.lines().nth(1),
        Some("shop,Deployment/web,web-1,app,12,3,OOMKilled,137,2026-11-20T09:00:00Z,n1")
    );
}

#[test]
fn sink_ids_follow_where_the_url_is_read_from_and_never_show_it() {
    let from_file = |value: &str| Sink::Feishu {
        url: Secret::from_source(value, SecretSource::File("/etc/hooks/feishu-url".into())),
        secret: None,
    };
    let before = sink_id(&from_file("https://open.feishu.cn/hook/old-t0ken"));
    let rotated = sink_id(&from_file("https://open.feishu.cn/hook/new-t0ken"));
    assert_eq!(
        before, rotated,
        "a rotated Secret keeps its spooled reports"
    );
    assert!(
        before.starts_with("feishu-") && before.len() == "feishu-".len() + 8,
        "{before}"
    );

    let inline = |value: &str| Sink::Slack {
        url: Secret::new(value),
    };
    let a = sink_id(&inline("https://hooks.slack.com/services/T0/B0/a1b2c3"));
    let b = sink_id(&inline("https://hooks.slack.com/services/T0/B0/d4e5f6"));
    assert_ne!(a, b, "two inline hooks are two sinks");
    for id in [a, b] {
        assert!(!id.contains("a1b2c3") && !id.contains("d4e5f6"), "{id}");
    }
}

// ---------------------------------------------------------------------------------------------
// Permanent rejections go to the dead letters; the spool is capped.

/// The files in `dir` (not below it), sorted.
fn files_in(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map(|entries| entries.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.is_file());
    files.sort();
    files
}

#[tokio::test]
async fn a_client_error_is_a_dead_letter_and_never_resent() {
    let rx = Receiver::start(&[(400, "bad payload")]).await;
    let dir = tempfile::tempdir().unwrap();
    let sink = Sink::Webhook {
        url: rx.url("/hook"),
    };
    let id = sink_id(&sink);
    let reporter = reporter(vec![sink], dir.path());
    let deliveries = reporter.deliver(&sample()).await;
    assert_eq!(rx.received().len(), 1, "a 400 is not retried");
    assert!(reporter.spool().pending().is_empty(), "not spooled");
    let dead = files_in(&dir.path().join("spool/dead"));
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert!(
        matches!(&deliveries[0].result, DeliveryResult::DeadLettered { why, path }
            if why.contains("answered 400: bad payload") && *path == dead[0]),
        "{deliveries:?}"
    );
    assert_eq!(deliveries[0].result.label(), "deadLetter");
    assert!(!deliveries[0].result.delivered());
    let letter: Value = serde_json::from_slice(&std::fs::read(&dead[0]).unwrap()).unwrap();
    assert_eq!(letter["sink"], json!(id));
    assert_eq!(reporter.spool().dead_letters().len(), 1);
    assert_eq!(letter["report"], serde_json::to_value(sample()).unwrap());
    assert!(
        letter["why"].as_str().unwrap().contains("answered 400"),
        "{letter}"
    );

    reporter.resend_spooled().await;
    assert_eq!(rx.received().len(), 1, "a dead letter is never resent");
}

#[tokio::test]
async fn a_feishu_refusal_inside_a_200_answer_is_a_dead_letter() {
    let rx = Receiver::start(&[(200, r#"{"code":19021,"msg":"sign match fail or timestamp is not within one hour from current time"}"#)]).await;
    let dir = tempfile::tempdir().unwrap();
    let sink = Sink::Feishu {
        url: rx.url("/hook"),
        secret: Some(Secret::new("wrong")),
    };
    let reporter = reporter(vec![sink], dir.path());
    let deliveries = reporter.deliver(&sample()).await;
    assert!(
        matches!(&deliveries[0].result, DeliveryResult::DeadLettered { why, .. } if why.contains("code 19021")),
        "{deliveries:?}"
    );
    assert!(reporter.spool().pending().is_empty(), "not spooled");
    assert_eq!(files_in(&dir.path().join("spool/dead")).len(), 1);
    assert_eq!(rx.received().len(), 1, "a refusal is not retried");
}

#[tokio::test]
async fn request_timeout_and_too_many_requests_are_retried() {
    let rx = Receiver::start(&[(408, "slow"), (429, "slow down")]).await;
    let dir = tempfile::tempdir().unwrap();
    let sink = Sink::Slack {
        url: rx.url("/slack"),
    };
    let reporter = reporter(vec![sink], dir.path());
    let deliveries = reporter.deliver(&sample()).await;
    assert!(deliveries[0].result.delivered(), "{deliveries:?}");
    assert_eq!(rx.received().len(), 3, "408, 429, then 200");
}

#[tokio::test]
async fn feishu_frequency_limit_is_retried_not_dead() {
    let limited = r#"{"code":11232,"msg":"frequency limited"}"#;
    let rx = Receiver::start(&[(200, limited), (400, limited), (200, limited)]).await;
    let dir = tempfile::tempdir().unwrap();
    let sink = Sink::Feishu {
        url: rx.url("/hook"),
        secret: None,
    };
    let reporter = reporter(vec![sink], dir.path());
    reporter.deliver(&sample()).await;
    assert_eq!(reporter.spool().pending().len(), 1, "spooled, not dead");
    assert!(files_in(&dir.path().join("spool/dead")).is_empty());
    assert_eq!(rx.received().len(), 3, "every try was made");
}

#[tokio::test]
async fn a_spooled_report_rejected_on_resend_moves_to_the_dead_letters() {
    let rx = Receiver::start(&[(503, "busy"), (503, "busy"), (503, "busy"), (404, "gone")]).await;
    let dir = tempfile::tempdir().unwrap();
    let sink = Sink::Webhook {
        url: rx.url("/hook"),
    };
    let reporter = reporter(vec![sink], dir.path());
    reporter.deliver(&sample()).await;
    assert_eq!(reporter.spool().pending().len(), 1);

    let resent = reporter.resend_spooled().await;
    assert!(
        matches!(&resent[0].result, DeliveryResult::DeadLettered { why, .. } if why.contains("404")),
        "{resent:?}"
    );
    assert_eq!(rx.received().len(), 4);
    assert!(reporter.spool().pending().is_empty(), "out of the spool");
    assert_eq!(files_in(&dir.path().join("spool/dead")).len(), 1);
}
/// A spool file as an older build wrote it: the sink and the report, nothing else.
fn write_old_spool_file(spool: &std::path::Path, sink: &str, generated: DateTime<Utc>) {
    let report = RestartReport {
        terms: None,
        generated,
        ..sample()
    };
    let stamp = generated.format("%Y%m%dT%H%M%S%.3fZ");
    let entry = json!({"sink": sink, "report": report});
    std::fs::create_dir_all(spool).unwrap();
    std::fs::write(
        spool.join(format!("{stamp}-{sink}.json")),
        entry.to_string(),
    )
    .unwrap();
}

#[tokio::test]
async fn spooled_reports_older_than_the_cap_are_dropped_unsent() {
    let rx = Receiver::start(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let sink = Sink::Webhook {
        url: rx.url("/hook"),
    };
    let id = sink_id(&sink);
    let spool = dir.path().join("spool");
    write_old_spool_file(&spool, &id, Utc::now() - chrono::Duration::days(30));
    write_old_spool_file(&spool, &id, Utc::now() - chrono::Duration::hours(1));
    let reporter = reporter(vec![sink], dir.path());

    let resent = reporter.resend_spooled().await;
    assert_eq!(rx.received().len(), 1, "only the fresh one is resent");
    assert!(files_in(&spool).is_empty(), "{:?}", files_in(&spool));
    assert_eq!(resent.len(), 2, "{resent:?}");
    assert_eq!(resent[0].sink, id);
    let week = Duration::from_secs(7 * 86_400);
    assert!(
        matches!(resent[0].result, DeliveryResult::Dropped { age, cap: SpoolCap::MaxAge(max) }
            if max == week && age > Duration::from_secs(29 * 86_400)),
        "{resent:?}"
    );
    assert_eq!(resent[0].result.label(), "dropped");
    assert_eq!(resent[1].result, DeliveryResult::Resent);
}

#[tokio::test]
async fn the_spool_keeps_at_most_the_capped_count_dropping_the_oldest() {
    let rx = Receiver::start(&[(503, "busy"); 3]).await;
    let dir = tempfile::tempdir().unwrap();
    let sink = Sink::Webhook {
        url: rx.url("/hook"),
    };
    let id = sink_id(&sink);
    let spool = dir.path().join("spool");
    // The default cap is 100 files: 100 waiting already, from the last hour.
    for minute in 0..100 {
        let at = Utc::now() - chrono::Duration::minutes(100 - minute);
        write_old_spool_file(&spool, &id, at);
    }
    let oldest = files_in(&spool)[0].clone();
    let reporter = reporter(vec![sink], dir.path());
    let report = RestartReport {
        terms: None,
        generated: Utc::now(),
        ..sample()
    };
    let deliveries = reporter.deliver(&report).await;
    let left = files_in(&spool);
    assert_eq!(left.len(), 100, "capped");
    assert!(!left.contains(&oldest), "the oldest went first");
    assert!(
        matches!(deliveries[1].result, DeliveryResult::Dropped { age, cap: SpoolCap::MaxFiles(100) }
            if age > Duration::from_secs(99 * 60)),
        "{deliveries:?}"
    );
}

/// A reporter with its own spool caps.
fn capped(sinks: Vec<Sink>, dir: &std::path::Path, max_age: Duration, max_files: u32) -> Reporter {
    let config = ReportConfig {
        sinks,
        spool_dir: dir.join("spool"),
        state_file: dir.join("state.json"),
        spool_max_age: max_age,
        spool_max_files: max_files,
        ..ReportConfig::default()
    };
    let policy = DeliveryPolicy {
        attempts: 1,
        first_wait: Duration::from_millis(10),
        max_wait: Duration::from_millis(10),
        timeout: Duration::from_secs(5),
        ..DeliveryPolicy::default()
    };
    Reporter::new(&config, policy).unwrap()
}

fn at_minute(minute: i64) -> RestartReport {
    RestartReport {
        terms: None,
        generated: at() + chrono::Duration::minutes(minute),
        ..sample()
    }
}

#[tokio::test]
async fn dead_letters_are_kept_under_the_same_caps() {
    let rx = Receiver::start(&[(410, "gone"); 3]).await;
    let dir = tempfile::tempdir().unwrap();
    let sink = Sink::Webhook {
        url: rx.url("/hook"),
    };
    let reporter = capped(vec![sink], dir.path(), Duration::from_secs(3600), 2);
    for minute in 0..3 {
        reporter.deliver(&at_minute(minute)).await;
    }
    let letters = reporter.spool().dead_letters();
    let kept: Vec<_> = letters.iter().map(|(_, d)| d.report.generated).collect();
    assert_eq!(kept, [at_minute(1).generated, at_minute(2).generated]);

    // An hour and a bit later, every letter is past the age cap.
    reporter
        .spool()
        .trim(Utc::now() + chrono::Duration::minutes(61));
    assert!(reporter.spool().dead_letters().is_empty());
}

#[tokio::test]
async fn zero_caps_keep_everything() {
    let rx = Receiver::start(&[(503, "busy"); 3]).await;
    let dir = tempfile::tempdir().unwrap();
    let sink = Sink::Webhook {
        url: rx.url("/hook"),
    };
    let reporter = capped(vec![sink], dir.path(), Duration::ZERO, 0);
    for minute in 0..3 {
        reporter.deliver(&at_minute(minute)).await;
    }
    let far = Utc::now() + chrono::Duration::days(3650);
    assert!(reporter.spool().trim(far).is_empty());
    assert_eq!(reporter.spool().pending().len(), 3);
}

#[tokio::test]
async fn a_resend_round_stops_at_a_sinks_first_transient_failure() {
    // Three reports spooled while the sink was down; it is still down.
    let rx = Receiver::start(&[(503, "busy"); 12]).await;
    let dir = tempfile::tempdir().unwrap();
    let sink = Sink::Webhook {
        url: rx.url("/hook"),
    };
    let reporter = capped(vec![sink], dir.path(), Duration::ZERO, 0);
    for minute in 0..3 {
        reporter
            .spool()
            .put(
                &sink_id(&reporter.config().sinks[0]),
                &at_minute(minute),
                Utc::now(),
            )
            .unwrap();
    }
    let before = rx.received().len();

    let resent = reporter.resend_spooled().await;
    assert_eq!(
        rx.received().len() - before,
        1,
        "one try for the oldest; the others wait for the next round"
    );
    assert_eq!(resent.len(), 1, "{resent:?}");
    assert!(matches!(resent[0].result, DeliveryResult::Spooled { .. }));
    assert_eq!(reporter.spool().pending().len(), 3, "all kept");
}

#[tokio::test]
async fn two_resend_rounds_at_once_send_each_report_once() {
    // headless resends at start in the background while the worker may send a report.
    let rx = Receiver::start(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let sink = Sink::Webhook {
        url: rx.url("/hook"),
    };
    let id = sink_id(&sink);
    let reporter = capped(vec![sink], dir.path(), Duration::ZERO, 0);
    reporter
        .spool()
        .put(&id, &at_minute(0), Utc::now())
        .unwrap();

    let (a, b) = tokio::join!(reporter.resend_spooled(), reporter.resend_spooled());
    assert_eq!(rx.received().len(), 1, "{a:?} {b:?}");
    assert!(reporter.spool().pending().is_empty());
}
