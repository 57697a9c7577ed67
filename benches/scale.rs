//! At scale, the real binary against a loopback server of realistic pods:
//! - time to the first complete classified view (`scan`) beside a bare paginated LIST of the
//!   same pods through the same client, unpaced (decode-bound) and paced like a real API server;
//! - peak memory of `scan`, and resident memory and idle CPU of a long-running `headless` after
//!   its cache has synced;
//! - `headless` from start to synced, and its peak: the watch loop's first list, which asks the
//!   watch cache (`resourceVersion=0`) and gets every pod in one body, as from every server whose
//!   watch cache cannot page (a streaming list is refused with 422, as on v1.24).
//!
//! - the same `scan` over two clusters of that many pods each (two contexts on the same
//!   server, listed at once): a second cluster should cost no more per pod than the first.
//!
//! `cargo bench --bench scale [-- PODS]` (default 50,000). `-- PODS serve` only serves the pods
//! and prints a kubeconfig, for measuring by hand (e.g. the TUI at 150,000 pods). `-- PODS scan`
//! measures only `scan`, one cluster and two, without `headless`. `-- PODS hostile` makes the
//! first 300 pods a tenant's worst (a controller named in 1.4 MB) and the first 500 Warning
//! Events 1 MB of message and of annotations each. `unpaced` skips the run paced like a real
//! API server. `$OPC_BIN` runs another build of the binary
//! (an older commit, for a before/after).

// A test, bench or example fails by panicking: the workspace's panic policy is for the product.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

#[allow(dead_code)] // The TUI in a pty is the churn and fleet benches'.
mod common;

use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use chrono::Utc;
use common::{cpu_ticks, free_port, mib, proc_status};
use http_body_util::combinators::BoxBody;
use hyper::{Request, Response};
use kube::core::Request as KubeRequest;
use kube::core::params::ListParams;
use kube_sim::generate::{hostile_event_list_pages, hostile_list_pages};

const PAGE: usize = 500;
/// A hostile namespace: this many pods with an owner name of `HOSTILE_OWNER` bytes, and this
/// many Events of `HOSTILE_EVENT` bytes of message and of annotations.
const HOSTILE_PODS: usize = 300;
const HOSTILE_OWNER: usize = 1_400_000;
const HOSTILE_EVENTS: usize = 500;
const HOSTILE_EVENT: usize = 1_000_000;
/// What a real kube-apiserver was measured at: 526 MB of pods listed in about 20 s.
const API_SERVER_BYTES_PER_SEC: u64 = 26_000_000;

#[tokio::main]
async fn main() {
    let pods: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(50_000);
    let hostile = std::env::args().any(|a| a == "hostile");
    let (bad_pods, bad_events) = match hostile {
        true => (HOSTILE_PODS, HOSTILE_EVENTS),
        false => (0, 0),
    };
    let pages: Arc<Vec<Bytes>> = Arc::new(
        hostile_list_pages(pods, PAGE, Utc::now(), bad_pods, HOSTILE_OWNER)
            .into_iter()
            .map(Bytes::from)
            .collect(),
    );
    let bytes: usize = pages.iter().map(Bytes::len).sum();
    println!(
        "{pods} pods in {} pages of {PAGE}, {:.0} MiB of JSON",
        pages.len(),
        bytes as f64 / 1048576.0
    );
    // The abnormal pods' Warning Events, which `scan` lists beside the pods.
    let warnings: Arc<Vec<Bytes>> = Arc::new(
        hostile_event_list_pages(pods, PAGE, Utc::now(), bad_events, HOSTILE_EVENT)
            .into_iter()
            .map(Bytes::from)
            .collect(),
    );
    println!(
        "and their Warning Events in {} pages, {:.0} MiB of JSON",
        warnings.len(),
        warnings.iter().map(Bytes::len).sum::<usize>() as f64 / 1048576.0
    );
    let pace = Arc::new(AtomicU64::new(0));
    let served = Served {
        pods: pages.clone(),
        warnings,
        pace: pace.clone(),
    };
    let url = common::serve(served, answer_paced).await;
    let dir = tempfile::tempdir().expect("a temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, kubeconfig_text(&url, &["bench"])).expect("write kubeconfig");
    let two_clusters = dir.path().join("kubeconfig-two");
    std::fs::write(
        &two_clusters,
        kubeconfig_text(&url, &["bench", "bench-two"]),
    )
    .expect("write kubeconfig");
    if std::env::args().any(|a| a == "serve") {
        println!("serving; kubeconfig: {}", kubeconfig.display());
        let _keep = dir.keep();
        std::future::pending::<()>().await;
    }
    let client =
        kube::Client::try_from(kube::Config::new(url.parse().expect("url"))).expect("client");

    let paces: &[(&str, u64)] = match std::env::args().any(|a| a == "unpaced") {
        true => &[("unpaced loopback", 0)],
        false => &[
            ("unpaced loopback", 0),
            ("paced like a real API server", API_SERVER_BYTES_PER_SEC),
        ],
    };
    for &(label, rate) in paces {
        pace.store(rate, Ordering::Relaxed);
        let runs = if rate == 0 { 3 } else { 1 };
        let (mut list, mut view, mut peak) = (Duration::MAX, Duration::MAX, 0);
        let (mut two_view, mut two_peak) = (Duration::MAX, 0);
        let (mut watch_view, mut watch_peak) = (Duration::MAX, 0);
        for _ in 0..runs {
            list = list.min(bare_list(&client).await);
            let (took, hwm) = headless_first_view(&kubeconfig).await;
            watch_view = watch_view.min(took);
            watch_peak = watch_peak.max(hwm);
            let (took, hwm) = first_view(&kubeconfig, &[]).await;
            view = view.min(took);
            peak = peak.max(hwm);
            let (took, hwm) = first_view(&two_clusters, &["--all-contexts"]).await;
            two_view = two_view.min(took);
            two_peak = two_peak.max(hwm);
        }
        println!("{label}:");
        println!(
            "  bare paginated LIST:        {:>7.2} s",
            list.as_secs_f64()
        );
        println!(
            "  first complete view (scan): {:>7.2} s   ratio {:.2}",
            view.as_secs_f64(),
            view.as_secs_f64() / list.as_secs_f64()
        );
        println!(
            "  scan peak RSS:              {:>7.0} MiB ({:.0} bytes per pod)",
            mib(peak),
            peak as f64 / pods as f64
        );
        println!(
            "  headless synced (one-body list at resourceVersion=0): {:>7.2} s   ratio {:.2}, peak RSS {:.0} MiB ({:.0} bytes per pod)",
            watch_view.as_secs_f64(),
            watch_view.as_secs_f64() / list.as_secs_f64(),
            mib(watch_peak),
            watch_peak as f64 / pods as f64
        );
        let per_pod = |took: Duration, n: usize| took.as_secs_f64() * 1e6 / n as f64;
        println!("  two clusters of {pods} pods each, listed at once:");
        println!(
            "    first complete view (scan): {:>7.2} s   {:.2} µs per pod vs {:.2} µs for one cluster, ratio {:.2}",
            two_view.as_secs_f64(),
            per_pod(two_view, 2 * pods),
            per_pod(view, pods),
            per_pod(two_view, 2 * pods) / per_pod(view, pods)
        );
        println!(
            "    scan peak RSS:              {:>7.0} MiB ({:.0} bytes per pod vs {:.0} for one cluster, ratio {:.2})",
            mib(two_peak),
            two_peak as f64 / (2 * pods) as f64,
            peak as f64 / pods as f64,
            (two_peak as f64 / (2 * pods) as f64) / (peak as f64 / pods as f64)
        );
    }
    if std::env::args().any(|a| a == "scan") {
        return;
    }
    pace.store(0, Ordering::Relaxed);
    // Auto on for `unknown` (action none): every pass classifies every pod, but nothing acts.
    for (label, rules) in [
        ("auto off (built-in config)", ""),
        (
            "auto on for one rule",
            "rules:\n  - {rule: unknown, auto: true}\n",
        ),
    ] {
        let (rss, hwm, cpu) = headless_footprint(&kubeconfig, rules).await;
        println!(
            "headless after sync, {label}: RSS {:.0} MiB ({:.0} bytes per pod), peak {:.0} MiB, idle CPU {cpu:.2} % over 10 s",
            mib(rss),
            rss as f64 / pods as f64,
            mib(hwm)
        );
    }
}

/// Every page fetched through the same client stack, only the continue token read.
async fn bare_list(client: &kube::Client) -> Duration {
    let start = Instant::now();
    let request = KubeRequest::new("/api/v1/pods");
    let mut token: Option<String> = None;
    loop {
        let mut params = ListParams::default().limit(PAGE as u32);
        if let Some(t) = &token {
            params = params.continue_token(t);
        }
        let text = client
            .request_text(request.list(&params).expect("request"))
            .await
            .expect("page");
        token = continue_token(&text);
        if token.is_none() {
            return start.elapsed();
        }
    }
}

fn continue_token(page: &str) -> Option<String> {
    let at = page.find("\"continue\":\"")? + 12;
    let end = page[at..].find('"')?;
    Some(page[at..at + end].to_string())
}

/// The release binary, from start to a printed, classified view of every pod (of every
/// cluster `global` names); with its peak RSS.
async fn first_view(kubeconfig: &Path, global: &[&'static str]) -> (Duration, u64) {
    let path = kubeconfig.to_path_buf();
    let mut args = global.to_vec();
    args.extend(["scan", "--output", "json"]);
    tokio::task::spawn_blocking(move || {
        let start = Instant::now();
        let mut child = spawn(&args, &path, "");
        // VmHWM only grows, so the last reading before exit is the peak (to 5 ms).
        let mut peak = 0;
        loop {
            peak = peak.max(proc_status(child.id(), "VmHWM:"));
            if let Some(status) = child.try_wait().expect("wait") {
                assert_eq!(
                    status.code(),
                    Some(1),
                    "scan finds the generated abnormal pods"
                );
                return (start.elapsed(), peak);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    })
    .await
    .expect("join")
}

/// `headless --dry-run` until /readyz says synced, then its memory and 10 s of its CPU.
async fn headless_footprint(kubeconfig: &Path, rules: &str) -> (u64, u64, f64) {
    let (mut child, _) = headless_synced(kubeconfig, rules).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (rss, hwm) = (
        proc_status(child.id(), "VmRSS:"),
        proc_status(child.id(), "VmHWM:"),
    );
    let before = cpu_ticks(child.id());
    tokio::time::sleep(Duration::from_secs(10)).await;
    let used = cpu_ticks(child.id()) - before;
    let ticks_per_sec = 100.0; // USER_HZ on Linux
    let _ = child.kill();
    let _ = child.wait();
    (rss, hwm, used as f64 / ticks_per_sec / 10.0 * 100.0)
}

/// `headless --dry-run` from start to synced (its first list in one body, from the watch cache),
/// and its peak RSS to then: the watch loop's first view, the TUI's too.
async fn headless_first_view(kubeconfig: &Path) -> (Duration, u64) {
    let (mut child, took) = headless_synced(kubeconfig, "").await;
    let peak = proc_status(child.id(), "VmHWM:");
    let _ = child.kill();
    let _ = child.wait();
    (took, peak)
}

async fn headless_synced(kubeconfig: &Path, rules: &str) -> (Child, Duration) {
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let start = Instant::now();
    let mut child = spawn(
        &["headless", "--dry-run", "--listen", &listen],
        kubeconfig,
        rules,
    );
    let deadline = start + Duration::from_secs(600);
    while !ready(port).await {
        assert!(Instant::now() < deadline, "headless never reported synced");
        assert!(child.try_wait().expect("wait").is_none(), "headless exited");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    (child, start.elapsed())
}

fn spawn(args: &[&str], kubeconfig: &Path, rules: &str) -> Child {
    let bin = std::env::var_os("OPC_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_ops-pod-cleaner")));
    Command::new(bin)
        .args(args)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .env("OPS_POD_CLEANER_CONFIG", bench_config(rules))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary runs")
}

/// The built-in config plus `rules`, with the audit log in a temp dir, not the user's data dir.
fn bench_config(rules: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("opc-bench-config-{}.yaml", rules.len()));
    let audit = std::env::temp_dir().join("opc-bench-audit.jsonl");
    let text = format!(
        "{rules}audit:\n  path: {}\n  events: false\n",
        audit.display()
    );
    std::fs::write(&path, text).expect("write config");
    path
}

/// `/readyz` answers 200 once the cache has synced (`/healthz` does from the start).
async fn ready(port: u16) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(mut stream) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
        return false;
    };
    if stream
        .write_all(b"GET /readyz HTTP/1.0\r\n\r\n")
        .await
        .is_err()
    {
        return false;
    }
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    answer.starts_with(b"HTTP/1.1 200") || answer.starts_with(b"HTTP/1.0 200")
}

type Body = BoxBody<Bytes, Infallible>;

/// What the loopback server serves: list pages of pods and of their Warning Events, at a pace.
#[derive(Clone)]
struct Served {
    pods: Arc<Vec<Bytes>>,
    warnings: Arc<Vec<Bytes>>,
    pace: Arc<AtomicU64>,
}

async fn answer_paced(req: Request<hyper::body::Incoming>, served: Served) -> Response<Body> {
    answer(&req, &served, served.pace.load(Ordering::Relaxed))
}

fn answer(
    req: &Request<hyper::body::Incoming>,
    served: &Served,
    bytes_per_sec: u64,
) -> Response<Body> {
    common::answer_quiet(req, &served.pods, &served.warnings, bytes_per_sec)
}

/// A kubeconfig whose `contexts` all reach the server at `url`; the first is current.
fn kubeconfig_text(url: &str, contexts: &[&str]) -> String {
    let named: String = contexts
        .iter()
        .map(|name| format!("- name: {name}\n  context:\n    cluster: bench\n    user: bench\n"))
        .collect();
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: bench\n  cluster:\n    server: {url}\nusers:\n- name: bench\n  user: {{}}\n\
         contexts:\n{named}current-context: {}\n",
        contexts[0]
    )
}
