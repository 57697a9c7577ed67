//! `headless --once --send` on the simulated cluster: its exit code follows the typed delivery
//! summary (3 unless every sink took the report), whatever the summary's wording.

use std::process::Output;

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;

/// A sink on 127.0.0.1 that answers every POST with `status`; its URL.
async fn sink_answering(status: u16) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let service = service_fn(
                move |_req: hyper::Request<hyper::body::Incoming>| async move {
                    let answer = hyper::Response::builder()
                        .status(status)
                        .body(Full::new(Bytes::from_static(b"{\"error\":\"no\"}")))
                        .unwrap();
                    Ok::<_, hyper::Error>(answer)
                },
            );
            tokio::spawn(http1::Builder::new().serve_connection(TokioIo::new(stream), service));
        }
    });
    url
}

/// `headless --demo --context demo-eu --once --send` with one webhook sink at `url`.
async fn once_with_sink(url: &str) -> (Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.yaml");
    let yaml = format!(
        "report:\n  sinks:\n    - {{type: webhook, url: \"{url}\"}}\n  spoolDir: {spool}\n  \
         stateFile: {state}\naudit:\n  path: {audit}\n",
        spool = dir.path().join("spool").display(),
        state = dir.path().join("state.json").display(),
        audit = dir.path().join("audit.jsonl").display(),
    );
    std::fs::write(&config, yaml).unwrap();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_ops-pod-cleaner"))
            .arg("--config")
            .arg(&config)
            .args([
                "headless",
                "--demo",
                "--context",
                "demo-eu",
                "--once",
                "--send",
            ])
            .env_remove("OPS_POD_CLEANER_CONFIG")
            .env("KUBECONFIG", "/nonexistent/kubeconfig")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    (out, dir)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_taken_by_every_sink_exits_zero() {
    let (out, _dir) = once_with_sink(&sink_answering(200).await).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("report: sent to 1 sinks"),
        "{}",
        stderr(&out)
    );
}

/// A sink that refuses the report for good fails the CronJob: `--once --send` reads the typed
/// delivery summary, not its text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_refused_for_good_exits_three() {
    let (out, dir) = once_with_sink(&sink_answering(403).await).await;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("rejected, not resent"),
        "{}",
        stderr(&out)
    );
    let dead = std::fs::read_dir(dir.path().join("spool/dead")).unwrap();
    assert_eq!(dead.count(), 1);
}
