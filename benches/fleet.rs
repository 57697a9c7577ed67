//! Many clusters on one screen: the TUI reading N clusters through their in-cluster workers
//! (the API server's service proxy, `cluster.source: worker`) against the same N clusters
//! watched directly (every pod listed and watched from the laptop).
//!
//! Each cluster holds PODS realistic pods, one in ten abnormal. Fed: N simulated API servers,
//! each proxying `services/ops-pod-cleaner:9091` to a `headless` server whose cache holds those
//! pods (one server stands for every cluster's worker: the TUI's cost is what is measured).
//! Watched: N contexts on one loopback server that lists the pods (in one body, as a v1.24
//! watch cache does) and keeps a quiet watch open.
//!
//! For each N: the TUI (real binary, 200x60 pty, every context) until its header counts every
//! cluster's abnormal pods (the first complete view), then its resident memory, its peak and
//! its CPU over a quiet window.
//!
//! `cargo bench --bench fleet -- [N ...] [--pods PODS] [--watched-up-to M]` (default N = 1 10
//! 50, 50,000 pods, direct watches only up to 10 clusters: 50 would be 2.5 million pods).
//! `$OPC_BIN` runs another build; `$OPC_FLEET_HOLD=SECONDS` keeps each TUI that long after it
//! is measured, for a profiler.

// A test, bench or example fails by panicking: the workspace's panic policy is for the product.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

#[allow(dead_code)] // Shared by the benches; this one needs no free port.
mod common;
#[allow(dead_code)] // The tests read the worker status it serves; the bench does not.
#[path = "../tests/suite/support/served.rs"]
mod served;
#[path = "../tests/suite/support/terminal.rs"]
mod terminal;

use std::convert::Infallible;
use std::io::Read;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use chrono::Utc;
use common::{cpu_ticks, mib, proc_status};
use http_body_util::combinators::BoxBody;
use hyper::{Request, Response};
use k8s_openapi::api::core::v1::{Endpoints, Pod, Service};
use kube::api::{Api, PostParams};
use kube_sim::generate::{event_list_pages, list_pages, realistic_pod};
use kube_sim::{SimCluster, SimServer};
use opc_core::cluster::{Cache, SourceHealth};
use opc_core::pod::WirePod;
use ops_pod_cleaner::headless::FleetSettings;
use serde_json::json;
use served::serve_cache;
use terminal::open_pty;

type Body = BoxBody<Bytes, Infallible>;

const ROWS: u16 = 60;
const COLS: u16 = 200;
const NAMESPACE: &str = "ops-pod-cleaner";
const QUIET: Duration = Duration::from_secs(10);

struct Args {
    counts: Vec<usize>,
    pods: usize,
    watched_up_to: usize,
    bin: PathBuf,
}

fn args() -> Args {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| {
        raw.iter()
            .position(|a| a == flag)
            .and_then(|at| raw.get(at + 1))
            .and_then(|v| v.parse().ok())
    };
    let mut counts = Vec::new();
    let mut skip = false;
    for a in &raw {
        if std::mem::take(&mut skip) {
            continue;
        }
        if a.starts_with("--") {
            skip = a != "--bench";
            continue;
        }
        if let Ok(n) = a.parse() {
            counts.push(n);
        }
    }
    if counts.is_empty() {
        counts = vec![1, 10, 50];
    }
    let bin = std::env::var_os("OPC_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_ops-pod-cleaner")),
        PathBuf::from,
    );
    Args {
        counts,
        pods: value("--pods").unwrap_or(50_000),
        watched_up_to: value("--watched-up-to").unwrap_or(10),
        bin,
    }
}

#[tokio::main]
async fn main() {
    let args = args();
    let dir = tempfile::tempdir().expect("a scratch dir");
    let now = Utc::now();
    let cache = Cache::new();
    for i in 0..args.pods {
        let wire: WirePod = serde_json::from_value(realistic_pod(i, now)).expect("a pod");
        cache.upsert(wire, now);
    }
    let abnormal = cache.findings().len();
    keep_fresh(&cache);
    println!(
        "{} pods per cluster, {abnormal} abnormal; TUI {}x{} on every context",
        args.pods, COLS, ROWS
    );
    // One `headless` server over the pods stands for every cluster's worker.
    let worker = serve_cache(cache.reader(), true, FleetSettings::default()).await;
    let pages = |raw: Vec<Vec<u8>>| Arc::new(raw.into_iter().map(Bytes::from).collect());
    let lists = Lists {
        pods: pages(list_pages(args.pods, 500, now)),
        events: pages(event_list_pages(0, 500, now)),
    };
    let lister = common::serve(lists, answer).await;
    for &n in &args.counts {
        let clusters = fed_clusters(n, worker.findings).await;
        let urls: Vec<String> = clusters.iter().map(SimServer::url).collect();
        let fed = measure(&args, &dir, "fed by workers", &urls, "worker", n * abnormal).await;
        drop(clusters);
        let watched = (n <= args.watched_up_to).then(|| vec![lister.clone(); n]);
        let direct = match watched {
            Some(urls) => Some(measure(&args, &dir, "watched", &urls, "watch", n * abnormal).await),
            None => None,
        };
        report(n, &fed, direct.as_ref());
    }
}

/// What one run of the TUI showed.
struct Measured {
    first_view: Duration,
    /// The TUI's own CPU time until then.
    first_view_cpu: Duration,
    rss: u64,
    peak: u64,
    cpu: f64,
}

fn report(n: usize, fed: &Measured, direct: Option<&Measured>) {
    let line = |how: &str, m: &Measured| {
        println!(
            "{n:>3} clusters {how:<15} first view {:>6.2} s ({:>5.2} s CPU)  RSS {:>7.1} MiB ({:>5.2} MiB/cluster)  peak {:>7.1} MiB  CPU {:>5.2} % quiet",
            m.first_view.as_secs_f64(),
            m.first_view_cpu.as_secs_f64(),
            mib(m.rss),
            mib(m.rss) / n as f64,
            mib(m.peak),
            m.cpu
        );
    };
    line("fed by workers", fed);
    match direct {
        Some(d) => line("watched", d),
        None => println!("{n:>3} clusters watched: not run (past --watched-up-to)"),
    }
}

/// Start the TUI on `urls` (one context each) with `source`, wait for its header to count
/// `expected` abnormal pods, then read its memory and its CPU over a quiet window.
async fn measure(
    args: &Args,
    dir: &tempfile::TempDir,
    how: &str,
    urls: &[String],
    source: &str,
    expected: usize,
) -> Measured {
    let kubeconfig = dir.path().join(format!("{source}-{}.yaml", urls.len()));
    std::fs::write(&kubeconfig, kubeconfig_text(urls)).expect("write kubeconfig");
    let config = dir.path().join(format!("{source}.yaml"));
    std::fs::write(&config, format!("cluster:\n  source: {source}\n")).expect("config");
    let start = Instant::now();
    let (mut child, screen) = start_tui(&args.bin, &kubeconfig, &config, dir.path());
    let pid = child.id();
    let wanted = format!("abnormal {expected}");
    let deadline = start + Duration::from_secs(600);
    while !screen
        .lock()
        .expect("screen")
        .screen()
        .contents()
        .contains(&wanted)
    {
        if Instant::now() > deadline || child.try_wait().expect("wait").is_some() {
            let text = screen.lock().expect("screen").screen().contents();
            let _ = child.kill();
            panic!("{how}: never showed {wanted:?}; the screen:\n{text}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let first_view = start.elapsed();
    // What the TUI itself spent on it: the simulated API servers and workers share this
    // machine's cores with it, where each would have its own.
    let first_view_cpu = Duration::from_secs_f64(cpu_ticks(pid) as f64 / 100.0);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let ticks = cpu_ticks(pid);
    tokio::time::sleep(QUIET).await;
    let cpu = (cpu_ticks(pid) - ticks) as f64 / QUIET.as_secs_f64();
    let measured = Measured {
        first_view,
        first_view_cpu,
        rss: proc_status(pid, "VmRSS:"),
        peak: proc_status(pid, "VmHWM:"),
        cpu,
    };
    // `$OPC_FLEET_HOLD` seconds more, for a profiler to attach to the quiet TUI.
    if let Some(hold) = std::env::var("OPC_FLEET_HOLD")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        println!("holding the TUI (pid {pid}) for {hold} s");
        tokio::time::sleep(Duration::from_secs(hold)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    measured
}

fn start_tui(
    bin: &Path,
    kubeconfig: &Path,
    config: &Path,
    dir: &Path,
) -> (Child, Arc<Mutex<vt100::Parser>>) {
    let (master, slave) = open_pty(ROWS, COLS);
    let child = common::tui_command(bin, dir, config, slave)
        .args(["--all-contexts", "--dry-run", "--kubeconfig"])
        .arg(kubeconfig)
        .spawn()
        .expect("the binary runs");
    let parser = Arc::new(Mutex::new(vt100::Parser::new(ROWS, COLS, 0)));
    let feed = parser.clone();
    std::thread::spawn(move || {
        // Kept open for the child's life: the TUI's keyboard.
        let keyboard = master;
        let mut master = keyboard.try_clone().expect("pty");
        let mut buf = [0u8; 65536];
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            feed.lock().expect("screen").process(&buf[..n]);
        }
    });
    (child, parser)
}

/// The workers' view is current, as a healthy watch keeps it: a worker whose view is stale
/// says so every second, which is not the quiet cluster measured here.
fn keep_fresh(cache: &Cache) {
    let cache = cache.clone();
    tokio::spawn(async move {
        loop {
            cache.set_source_health(&SourceHealth {
                synced: true,
                proved: Some(Instant::now()),
                error: None,
            });
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    });
}

/// `n` simulated API servers, each with the worker's Service, its Endpoints and its pod, whose
/// address leads to `worker`.
async fn fed_clusters(n: usize, worker: SocketAddr) -> Vec<SimServer> {
    let ip = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 9));
    let mut servers = Vec::new();
    for _ in 0..n {
        let sim = SimCluster::new();
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "ops-pod-cleaner-0", "namespace": NAMESPACE,
                         "labels": {"app": "ops-pod-cleaner"}},
            "spec": {"containers": [{"name": "worker", "image": "registry.local/opc:1"}]},
            "status": {"phase": "Running", "podIP": ip.to_string()},
        }))
        .unwrap();
        let uid = sim.create_pod(pod).metadata.uid.unwrap_or_default();
        let server = SimServer::start(sim).await.expect("a simulated API server");
        let pp = PostParams::default();
        let service: Service = serde_json::from_value(json!({
            "metadata": {"name": "ops-pod-cleaner", "namespace": NAMESPACE},
            "spec": {"clusterIP": "None", "ports": [{"name": "findings", "port": 9091}]},
        }))
        .unwrap();
        Api::<Service>::namespaced(server.client(), NAMESPACE)
            .create(&pp, &service)
            .await
            .unwrap();
        let endpoints: Endpoints = serde_json::from_value(json!({
            "metadata": {"name": "ops-pod-cleaner", "namespace": NAMESPACE},
            "subsets": [{"addresses": [{"ip": ip.to_string(), "targetRef": {
                "kind": "Pod", "namespace": NAMESPACE, "name": "ops-pod-cleaner-0", "uid": uid}}],
                "ports": [{"name": "findings", "port": 9091}]}],
        }))
        .unwrap();
        Api::<Endpoints>::namespaced(server.client(), NAMESPACE)
            .create(&pp, &endpoints)
            .await
            .unwrap();
        server.serve_endpoint(ip, 9091, worker);
        servers.push(server);
    }
    servers
}

/// The direct watches' server: every pod in one body at `resourceVersion=0`, no Events,
/// quiet watches.
async fn answer(req: Request<hyper::body::Incoming>, lists: Lists) -> Response<Body> {
    common::answer_quiet(&req, &lists.pods, &lists.events, 0)
}

/// The list pages the direct watches read.
#[derive(Clone)]
struct Lists {
    pods: Arc<Vec<Bytes>>,
    events: Arc<Vec<Bytes>>,
}

/// A kubeconfig with one context per URL, `c0`, `c1`, ...; the first is current.
fn kubeconfig_text(urls: &[String]) -> String {
    let mut clusters = String::new();
    let mut contexts = String::new();
    for (i, url) in urls.iter().enumerate() {
        clusters.push_str(&format!("- name: k{i}\n  cluster:\n    server: {url}\n"));
        contexts.push_str(&format!(
            "- name: c{i}\n  context:\n    cluster: k{i}\n    user: bench\n"
        ));
    }
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n{clusters}users:\n- name: bench\n  user: {{}}\n\
         contexts:\n{contexts}current-context: c0\n"
    )
}
