//! The real release binary at scale under a steady churn of pod MODIFIED events: the TUI under a
//! pseudo-terminal, and `headless --dry-run` with auto on for one rule. A loopback server serves
//! the generated pods as list pages, then streams MODIFIED events on the watch at a set rate.
//! For each process: CPU % of one core (`utime + stime` from `/proc/PID/stat`) and resident
//! memory (`VmRSS` from `/proc/PID/status`) at 0 (idle), 100 and 1,000 events/s; optionally a
//! soak at 100 events/s with the RSS sampled every 10 s and its least-squares slope.
//!
//! `cargo bench --bench churn -- [PODS] [--window SECS] [--soak SECS] [--only NAME,...] [--checks]
//! [--paged-cache] [--transient] [--no-warnings]` (defaults: 150,000 pods, 30 s windows, no soak, `--only tui,headless`).
//! `$OPC_BIN` runs another build of the binary instead of this one (e.g. an older commit, for a
//! before/after). `--transient` streams pods that come and go instead of MODIFIED events (new
//! namespaces, Jobs, bare pods and nodes; see `transient_event`), for a soak that shows whether
//! anything kept for them stays behind. `--no-warnings` forbids Events (403), for the product
//! without its Event store. The first list (`resourceVersion=0`) comes in one body, as from every server
//! whose watch cache cannot page; `--paged-cache` serves it in pages of 500 instead. The peak
//! printed after the list is the process's `VmHWM`, the first list included.
//!
//! `--only watch-ours,watch-runtime` measures the watch layer alone instead: our loop against
//! kube-runtime's `watcher` over the same compact decode, each feeding the cache in a child
//! process of its own (see `churn/watchers.rs`). `--checks` first tries the watcher where a
//! real cluster leaves the happy path: a server without streaming lists, and a list holding one
//! pod that does not decode.
//!
//! The churn: 2,000 pods spread over the cluster are modified in turn, each event a full
//! realistic pod (9–13 KB of JSON) with a fresh resourceVersion. One pod in ten of the churned
//! set flips between healthy and abnormal on every visit, so one event in ten moves a pod in or
//! out of the findings; the rest change nothing a screen shows (like a patcher's annotations).

// A test, bench or example fails by panicking: the workspace's panic policy is for the product.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;
#[path = "../tests/suite/support/terminal.rs"]
mod terminal;
#[path = "churn/warnings.rs"]
mod warnings;
#[path = "churn/watchers.rs"]
mod watchers;

use std::convert::Infallible;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use chrono::Utc;
use common::{cpu_ticks, free_port, mib, proc_status};
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::body::Frame;
use hyper::{Request, Response};
use kube_sim::generate::{Shape, list_pages, realistic_pod};
use serde_json::{Value, json};
use terminal::open_pty;

const PAGE: usize = 500;
const POOL: usize = 2_000;
const PLACEHOLDER: &[u8] = b"9999999999";
const COLS: u16 = 200;
const ROWS: u16 = 60;
const TICKS_PER_SEC: f64 = 100.0; // USER_HZ on Linux

struct Args {
    pods: usize,
    window: Duration,
    soak: Duration,
    only: Vec<Target>,
    checks: bool,
    paged_cache: bool,
    transient: bool,
    /// Events are forbidden, as to an account without `list events`: the product without its
    /// Event store, for a before/after in one run.
    no_warnings: bool,
    bin: PathBuf,
}

fn args() -> Args {
    let mut args = Args {
        pods: 150_000,
        window: Duration::from_secs(30),
        soak: Duration::ZERO,
        only: vec![Target::Tui, Target::Headless],
        checks: false,
        paged_cache: false,
        transient: false,
        no_warnings: false,
        bin: std::env::var_os("OPC_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_ops-pod-cleaner"))),
    };
    let all: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < all.len() {
        let value = || all.get(i + 1).cloned().unwrap_or_default();
        match all[i].as_str() {
            "--window" => args.window = Duration::from_secs(value().parse().expect("seconds")),
            "--soak" => args.soak = Duration::from_secs(value().parse().expect("seconds")),
            "--only" => {
                args.only = value()
                    .split(',')
                    .map(|name| {
                        Target::from_name(name).expect("tui, headless, watch-ours or watch-runtime")
                    })
                    .collect()
            }
            "--checks" => {
                args.checks = true;
                i += 1;
                continue;
            }
            "--paged-cache" => {
                args.paged_cache = true;
                i += 1;
                continue;
            }
            "--transient" => {
                args.transient = true;
                i += 1;
                continue;
            }
            "--no-warnings" => {
                args.no_warnings = true;
                i += 1;
                continue;
            }
            other => {
                if let Ok(n) = other.parse() {
                    args.pods = n;
                }
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    args
}

/// What the loopback server serves, and what it has streamed.
struct Server {
    pages: Vec<Bytes>,
    /// Whether a list at `resourceVersion=0` is paged (a paginated watch cache) rather than
    /// sent in one body.
    paged_cache: bool,
    /// Pods that come and go (see [`transient_event`]) instead of MODIFIED events.
    transient: bool,
    /// Every Events request is answered 403.
    no_warnings: bool,
    /// When the server started: the generated pods' clock.
    now: chrono::DateTime<Utc>,
    /// Per churned pod: its event line as generated, and flipped (healthy ⇄ abnormal); each with
    /// the offset of its resourceVersion placeholder.
    pool: Vec<[(Vec<u8>, usize); 2]>,
    /// MODIFIED events per second on every open watch.
    rate: AtomicU64,
    /// Events streamed so far (also numbers the next event).
    sent: AtomicU64,
    /// Watch requests received: the first one means the binary has listed every page.
    watches: AtomicU64,
    /// The Lease `headless` holds, as last written.
    lease: Mutex<Option<Value>>,
    /// The abnormal pods' Warning Events, listed and repeated while the pods churn.
    warnings: Arc<warnings::Warnings>,
}

#[tokio::main]
async fn main() {
    if let Ok(which) = std::env::var(watchers::CHILD) {
        let which = watchers::Loop::from_name(&which).expect("a watch loop's name");
        let url = std::env::var(watchers::URL).expect("the server's URL");
        return watchers::run_child(which, &url).await;
    }
    let args = args();
    let now = Utc::now();
    let pages: Vec<Bytes> = list_pages(args.pods, PAGE, now)
        .into_iter()
        .map(Bytes::from)
        .collect();
    let bytes: usize = pages.iter().map(Bytes::len).sum();
    let pool = churn_pool(args.pods, now);
    let warnings = Arc::new(warnings::Warnings::generate(args.pods, PAGE, now));
    println!(
        "{} Warning Events about the abnormal pods in {} pages, {:.0} MiB of JSON; repeated at {}/s while pods churn",
        warnings.count,
        warnings.pages.len(),
        warnings.pages.iter().map(Bytes::len).sum::<usize>() as f64 / 1048576.0,
        warnings::RATE
    );
    println!(
        "{} pods in {} pages of {PAGE}, {:.0} MiB of JSON; churn over {POOL} pods, {:.1} KB per event; binary {}",
        args.pods,
        pages.len(),
        bytes as f64 / 1048576.0,
        pool.iter().map(|p| p[0].0.len()).sum::<usize>() as f64 / POOL as f64 / 1000.0,
        args.bin.display()
    );
    let server = Arc::new(Server {
        pages,
        paged_cache: args.paged_cache,
        transient: args.transient,
        no_warnings: args.no_warnings,
        now,
        pool,
        rate: AtomicU64::new(0),
        sent: AtomicU64::new(0),
        watches: AtomicU64::new(0),
        lease: Mutex::new(None),
        warnings,
    });
    let url = common::serve(server.clone(), answer).await;
    let dir = tempfile::tempdir().expect("a temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, kubeconfig_text(&url)).expect("write kubeconfig");

    if args.checks {
        checks(&url, now).await;
    }
    for &target in &args.only {
        let place = Place {
            url: &url,
            kubeconfig: &kubeconfig,
            dir: dir.path(),
        };
        measure(&args, target, &server, place).await;
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Target {
    Tui,
    Headless,
    Watch(watchers::Loop),
}

impl Target {
    fn name(self) -> &'static str {
        match self {
            Target::Tui => "tui",
            Target::Headless => "headless",
            Target::Watch(which) => which.name(),
        }
    }

    fn from_name(name: &str) -> Option<Target> {
        match name {
            "tui" => Some(Target::Tui),
            "headless" => Some(Target::Headless),
            other => watchers::Loop::from_name(other).map(Target::Watch),
        }
    }
}

/// Where a measured process finds the server, and its files.
struct Place<'a> {
    url: &'a str,
    kubeconfig: &'a Path,
    dir: &'a Path,
}

async fn measure(args: &Args, target: Target, server: &Arc<Server>, place: Place<'_>) {
    let Place {
        url,
        kubeconfig,
        dir,
    } = place;
    server.rate.store(0, Ordering::Relaxed);
    *server.lease.lock().expect("lease") = None;
    let watches = server.watches.load(Ordering::Relaxed);
    let start = Instant::now();
    let mut running = match target {
        Target::Tui => start_tui(&args.bin, kubeconfig, dir),
        Target::Headless => start_headless(&args.bin, kubeconfig, dir),
        Target::Watch(which) => start_watch_loop(which, url),
    };
    let pid = running.child.id();
    let deadline = start + Duration::from_secs(900);
    while server.watches.load(Ordering::Relaxed) == watches {
        assert!(Instant::now() < deadline, "{} never watched", target.name());
        assert!(
            running.child.try_wait().expect("wait").is_none(),
            "{} exited",
            target.name()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let synced = start.elapsed();
    if let Some(status) = running.child.try_wait().expect("wait") {
        let text = running
            .screen
            .as_ref()
            .map(|s| s.lock().expect("screen").screen().contents())
            .unwrap_or_default();
        panic!("{} exited ({status}); the screen:\n{text}", target.name());
    }
    // Let the first view settle and the allocator give back what the list left behind.
    tokio::time::sleep(Duration::from_secs(5)).await;
    println!(
        "{}: listed {} pods and watching after {:.1} s; RSS {:.0} MiB, peak {:.0} MiB",
        match target {
            Target::Tui => "TUI (200x60 pty, all namespaces)",
            Target::Headless => "headless --dry-run, auto on for one rule",
            Target::Watch(watchers::Loop::Ours) => "our watch loop into the cache (no screen)",
            Target::Watch(watchers::Loop::Runtime) =>
                "kube-runtime watcher (any_semantic, pages of 500) into the cache (no screen)",
        },
        args.pods,
        synced.as_secs_f64(),
        mib(proc_status(pid, "VmRSS:")),
        mib(proc_status(pid, "VmHWM:"))
    );
    if target == Target::Headless {
        let holder = server.lease.lock().expect("lease").as_ref().map(|l| {
            l["spec"]["holderIdentity"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        });
        println!("  holds the Lease (so its worker runs): {holder:?}");
    }
    if let Some(screen) = &running.screen {
        let text = screen.lock().expect("screen").screen().contents();
        for line in text.lines().take(2) {
            println!("  screen| {}", line.trim_end());
        }
    }
    for rate in [0, 100, 1_000] {
        server.rate.store(rate, Ordering::Relaxed);
        // The first events of a new rate are not measured.
        tokio::time::sleep(Duration::from_secs(3)).await;
        let sample = Sample::take(pid, server, &running);
        tokio::time::sleep(args.window).await;
        let (cpu, events, drawn) = sample.since(pid, server, &running);
        let secs = args.window.as_secs_f64();
        println!(
            "  {:>5} events/s (streamed {:>6.1}/s, and {:>4.1} Warning Events/s): CPU {:>5.2} % of one core, RSS {:>4.0} MiB, {:.1} µs CPU per pod event{}",
            rate,
            events as f64 / secs,
            sample.warned(server) as f64 / secs,
            cpu / secs * 100.0,
            mib(proc_status(pid, "VmRSS:")),
            if events > 0 {
                cpu / events as f64 * 1e6
            } else {
                0.0
            },
            match target {
                Target::Tui => format!(", {:.1} KB/s to the terminal", drawn as f64 / secs / 1e3),
                Target::Headless | Target::Watch(_) => String::new(),
            }
        );
    }
    if !args.soak.is_zero() {
        soak(args.soak, pid, server).await;
    }
    server.rate.store(0, Ordering::Relaxed);
    assert!(
        running.child.try_wait().expect("wait").is_none(),
        "{} exited while measured",
        target.name()
    );
    let _ = running.child.kill();
    let _ = running.child.wait();
}

/// 100 events/s for `length`, RSS every 10 s; the least-squares slope of RSS over time.
async fn soak(length: Duration, pid: u32, server: &Server) {
    server.rate.store(100, Ordering::Relaxed);
    let start = Instant::now();
    let (ticks, sent) = (cpu_ticks(pid), server.sent.load(Ordering::Relaxed));
    let mut points: Vec<(f64, f64)> = Vec::new();
    // CPU over each minute, so a trend (or a neighbour's build) shows.
    let mut minute = (Instant::now(), cpu_ticks(pid));
    while start.elapsed() < length {
        let rss = mib(proc_status(pid, "VmRSS:"));
        let minutes = start.elapsed().as_secs_f64() / 60.0;
        if points.len().is_multiple_of(6) {
            let (at, ticks) = (Instant::now(), cpu_ticks(pid));
            let secs = (at - minute.0).as_secs_f64().max(1e-9);
            let cpu = (ticks - minute.1) as f64 / TICKS_PER_SEC / secs * 100.0;
            if points.is_empty() {
                println!("  soak {minutes:>5.1} min: RSS {rss:.1} MiB");
            } else {
                println!(
                    "  soak {minutes:>5.1} min: RSS {rss:.1} MiB, CPU {cpu:.2} % over the last minute"
                );
            }
            minute = (at, ticks);
        }
        points.push((minutes, rss));
        tokio::time::sleep(Duration::from_secs(10)).await;
    }
    let secs = start.elapsed().as_secs_f64();
    let cpu = (cpu_ticks(pid) - ticks) as f64 / TICKS_PER_SEC;
    let events = server.sent.load(Ordering::Relaxed) - sent;
    let n = points.len() as f64;
    let (mx, my) = (
        points.iter().map(|p| p.0).sum::<f64>() / n,
        points.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let slope = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>()
        / points.iter().map(|p| (p.0 - mx).powi(2)).sum::<f64>();
    let (low, high) = points
        .iter()
        .fold((f64::MAX, 0.0f64), |(l, h), p| (l.min(p.1), h.max(p.1)));
    println!(
        "  soak at 100 events/s for {:.1} min ({events} events): CPU {:.2} %, RSS {low:.1}..{high:.1} MiB over {} samples, slope {slope:+.3} MiB/min",
        secs / 60.0,
        cpu / secs * 100.0,
        points.len()
    );
}

struct Sample {
    ticks: u64,
    sent: u64,
    warned: u64,
    drawn: u64,
}

impl Sample {
    fn take(pid: u32, server: &Server, running: &Running) -> Sample {
        Sample {
            ticks: cpu_ticks(pid),
            sent: server.sent.load(Ordering::Relaxed),
            warned: server.warnings.sent.load(Ordering::Relaxed),
            drawn: running.drawn.load(Ordering::Relaxed),
        }
    }

    /// CPU seconds, pod events streamed and bytes drawn since the sample.
    fn since(&self, pid: u32, server: &Server, running: &Running) -> (f64, u64, u64) {
        (
            (cpu_ticks(pid) - self.ticks) as f64 / TICKS_PER_SEC,
            server.sent.load(Ordering::Relaxed) - self.sent,
            running.drawn.load(Ordering::Relaxed) - self.drawn,
        )
    }

    /// Warning Events streamed since the sample.
    fn warned(&self, server: &Server) -> u64 {
        server.warnings.sent.load(Ordering::Relaxed) - self.warned
    }
}

struct Running {
    child: Child,
    /// The TUI's screen, as a terminal would show it.
    screen: Option<Arc<Mutex<vt100::Parser>>>,
    /// Bytes the TUI wrote to its terminal.
    drawn: Arc<AtomicU64>,
}

/// The TUI on all namespaces, in a 200x60 pseudo-terminal whose output is read (a terminal
/// that is not read would block the process).
fn start_tui(bin: &Path, kubeconfig: &Path, dir: &Path) -> Running {
    let (master, slave) = open_pty(ROWS, COLS);
    let child = common::tui_command(bin, dir, &bench_config(dir, ""), slave)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .spawn()
        .expect("the binary runs");
    let parser = Arc::new(Mutex::new(vt100::Parser::new(ROWS, COLS, 0)));
    let drawn = Arc::new(AtomicU64::new(0));
    let (feed, count) = (parser.clone(), drawn.clone());
    // Kept open for the child's life: the TUI's keyboard.
    let keyboard = master;
    let mut master = keyboard.try_clone().expect("pty");
    std::thread::spawn(move || {
        let _keyboard = keyboard;
        let mut buf = [0u8; 65536];
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            count.fetch_add(n as u64, Ordering::Relaxed);
            feed.lock().expect("screen").process(&buf[..n]);
        }
    });
    Running {
        child,
        screen: Some(parser),
        drawn,
    }
}

/// `headless --dry-run` with auto on for `unknown` (action none): the worker runs its passes,
/// but nothing acts (the same configuration as `benches/scale.rs`).
fn start_headless(bin: &Path, kubeconfig: &Path, dir: &Path) -> Running {
    let listen = format!("127.0.0.1:{}", free_port());
    let child = Command::new(bin)
        .args(["headless", "--dry-run", "--listen", &listen])
        .arg("--kubeconfig")
        .arg(kubeconfig)
        // The Lease this server serves is in `default`.
        .env("POD_NAMESPACE", "default")
        .env(
            "OPS_POD_CLEANER_CONFIG",
            bench_config(dir, "rules:\n  - {rule: unknown, auto: true}\n"),
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary runs");
    Running {
        child,
        screen: None,
        drawn: Arc::new(AtomicU64::new(0)),
    }
}

/// This bench binary again, running one watch loop into a cache until killed.
fn start_watch_loop(which: watchers::Loop, url: &str) -> Running {
    let child = Command::new(std::env::current_exe().expect("this binary"))
        .env(watchers::CHILD, which.name())
        .env(watchers::URL, url)
        .stdout(Stdio::null())
        .spawn()
        .expect("the bench binary runs");
    Running {
        child,
        screen: None,
        drawn: Arc::new(AtomicU64::new(0)),
    }
}

/// kube-runtime's watcher where a real cluster leaves the happy path, beside our loop.
async fn checks(url: &str, now: chrono::DateTime<Utc>) {
    let window = Duration::from_secs(20);
    let bad = common::serve(Bytes::from(one_bad_pod(now)), answer_list).await;
    let cases = [
        (
            "with streaming_lists() on a server without them (422)",
            url,
            kube_runtime::watcher::Config::default().streaming_lists(),
        ),
        (
            "listing 100 pods, one with an unreadable creationTimestamp",
            &bad,
            kube_runtime::watcher::Config::default().any_semantic(),
        ),
    ];
    for (what, url, config) in cases {
        let heard = watchers::listen(url, config, window).await;
        println!("check: watcher {what}, {}s: {heard}", window.as_secs());
    }
    match watchers::our_list(&bad).await {
        Ok((kept, took)) => println!(
            "check: our list of the same: {kept} pods kept, the bad one skipped and logged, in {:.0} ms",
            took.as_secs_f64() * 1e3
        ),
        Err(e) => println!("check: our list of the same failed: {e}"),
    }
}

/// One page of 100 realistic pods, the 50th with a creationTimestamp that is not a time.
fn one_bad_pod(now: chrono::DateTime<Utc>) -> Vec<u8> {
    let mut items: Vec<Value> = (0..100).map(|i| realistic_pod(i, now)).collect();
    items[50]["metadata"]["creationTimestamp"] = json!("yesterday");
    serde_json::to_vec(&json!({
        "kind": "PodList",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": "100"},
        "items": items,
    }))
    .expect("encode")
}

/// Answers every list with `page`; a watch is a 404, which the checks never reach.
async fn answer_list(req: Request<hyper::body::Incoming>, page: Bytes) -> Response<Body> {
    let watch = req.uri().query().unwrap_or("").contains("watch=true");
    let (status, body) = if watch {
        (404, Bytes::new())
    } else {
        (200, page)
    };
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(body).boxed())
        .expect("response")
}

/// `rules` over the built-in config, with the audit log in the temp dir.
fn bench_config(dir: &Path, rules: &str) -> PathBuf {
    let path = dir.join(format!("config-{}.yaml", rules.len()));
    let audit = dir.join("audit.jsonl");
    let text = format!(
        "{rules}audit:\n  path: {}\n  events: false\n",
        audit.display()
    );
    std::fs::write(&path, text).expect("write config");
    path
}

/// Event lines for `POOL` pods spread over the cluster: each as generated, and flipped (a
/// healthy pod given an image-pull failure, an abnormal one made healthy), same identity.
fn churn_pool(pods: usize, now: chrono::DateTime<Utc>) -> Vec<[(Vec<u8>, usize); 2]> {
    let step = (pods / POOL).max(1);
    (0..POOL)
        .map(|k| {
            let i = (k * step) % pods.max(1);
            let own = realistic_pod(i, now);
            let block = i - i % 200;
            // Pod `block` is an image-pull failure, `block + 100` healthy (`Shape::of`).
            let other = if Shape::of(i) == Shape::Healthy {
                block
            } else {
                block + 100
            };
            let mut flipped = realistic_pod(other, now);
            flipped["metadata"] = own["metadata"].clone();
            [event_line(own), event_line(flipped)]
        })
        .collect()
}

fn event_line(mut pod: Value) -> (Vec<u8>, usize) {
    pod["metadata"]["resourceVersion"] = json!(std::str::from_utf8(PLACEHOLDER).expect("ascii"));
    let mut line = br#"{"type":"MODIFIED","object":"#.to_vec();
    line.extend(serde_json::to_vec(&pod).expect("encode"));
    line.extend(b"}\n");
    let at = line
        .windows(PLACEHOLDER.len())
        .position(|w| w == PLACEHOLDER)
        .expect("the placeholder");
    (line, at)
}

/// How many transient pods are alive at once.
const TRANSIENT_LIVE: u64 = 1_000;

/// Event number `n` of a churn where nothing stays: even events add transient pod `n / 2`, odd
/// ones delete the one added `TRANSIENT_LIVE` before it. Four pods share a namespace that is
/// never used again, every other pod is a Job's (one Job per pod, as per CronJob run), the rest
/// are bare, and one in four runs on a node that is replaced every hundred pods: namespaces,
/// workloads and nodes come and go, and nothing the process keeps for them may stay behind.
fn transient_event(n: u64, now: chrono::DateTime<Utc>, out: &mut Vec<u8>) {
    let (kind, k) = if n.is_multiple_of(2) {
        ("ADDED", n / 2)
    } else if n / 2 >= TRANSIENT_LIVE {
        ("DELETED", n / 2 - TRANSIENT_LIVE)
    } else {
        return;
    };
    // A mix of states: the shape of generated pod `k * 37 % 200`.
    let mut pod = realistic_pod((k * 37 % 200) as usize, now);
    let name = format!("run-{k}-x7k2p");
    pod["metadata"]["name"] = json!(name);
    pod["metadata"]["namespace"] = json!(format!("ci-{}", k / 4));
    pod["metadata"]["uid"] = json!(format!("transient-{k}"));
    pod["metadata"]["resourceVersion"] = json!((3_000_000_000 + n).to_string());
    pod["metadata"]["ownerReferences"] = if k.is_multiple_of(2) {
        json!([{"apiVersion": "batch/v1", "kind": "Job", "name": format!("run-{k}"),
            "uid": format!("job-{k}"), "controller": true}])
    } else {
        json!([])
    };
    if k.is_multiple_of(4) {
        pod["spec"]["nodeName"] = json!(format!("spot-{}", k / 100));
    }
    out.extend_from_slice(format!(r#"{{"type":"{kind}","object":"#).as_bytes());
    out.extend(serde_json::to_vec(&pod).expect("encode"));
    out.extend_from_slice(b"}\n");
}

/// Event number `n`: pod `n % POOL`, flipped on even rounds if it is one of the tenth that flip
/// (from the first round on: the pods as listed are the unflipped ones, so a first round that
/// sent them again would change nothing and measure no screen work).
fn append_event(server: &Server, n: u64, out: &mut Vec<u8>) {
    if server.transient {
        return transient_event(n, server.now, out);
    }
    let k = (n % POOL as u64) as usize;
    let round = n / POOL as u64;
    let variant = usize::from(k.is_multiple_of(10) && round.is_multiple_of(2));
    let (line, at) = &server.pool[k][variant];
    let from = out.len();
    out.extend_from_slice(line);
    let version = format!("{:010}", 3_000_000_000 + n);
    out[from + at..from + at + PLACEHOLDER.len()].copy_from_slice(version.as_bytes());
}

type Body = BoxBody<Bytes, Infallible>;

async fn answer(req: Request<hyper::body::Incoming>, server: Arc<Server>) -> Response<Body> {
    let json = |body: Vec<u8>| {
        Response::builder()
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body)).boxed())
            .expect("response")
    };
    let query = req.uri().query().unwrap_or("").to_string();
    let path = req.uri().path().to_string();
    if path.starts_with(LEASES) {
        return lease(req, &server).await;
    }
    match path.as_str() {
        "/version" => json(br#"{"major":"1","minor":"33","gitVersion":"v1.33.0"}"#.to_vec()),
        // As a 1.33 server with the WatchList gate off (the default) answers a streaming list;
        // the product then lists, as it did when these figures were first taken.
        "/api/v1/pods" if query.contains("sendInitialEvents=true") => common::no_streaming_lists(),
        "/api/v1/pods" if query.contains("watch=true") => {
            server.watches.fetch_add(1, Ordering::Relaxed);
            let events = churn(server.clone());
            Response::builder()
                .header("content-type", "application/json")
                .body(StreamBody::new(events).boxed())
                .expect("response")
        }
        "/api/v1/events" if server.no_warnings => Response::builder()
            .status(403)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from_static(br#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"events is forbidden","reason":"Forbidden","code":403}"#)).boxed())
            .expect("response"),
        "/api/v1/events" if query.contains("watch=true") => {
            let churning = server.clone();
            server
                .warnings
                .watch(move || churning.rate.load(Ordering::Relaxed) > 0)
        }
        "/api/v1/events" => Response::builder()
            .header("content-type", "application/json")
            .body(common::list_body(&server.warnings.pages, &query, true, 0))
            .expect("response"),
        "/api/v1/pods" => Response::builder()
            .header("content-type", "application/json")
            .body(common::list_body(
                &server.pages,
                &query,
                server.paged_cache,
                0,
            ))
            .expect("response"),
        _ => Response::builder()
            .status(404)
            .body(Full::new(Bytes::new()).boxed())
            .expect("response"),
    }
}

const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/default/leases";

/// The one Lease `headless` elects itself with: 404 until created, then what was last written
/// (with a new resourceVersion), so the process leads and its worker runs.
async fn lease(req: Request<hyper::body::Incoming>, server: &Arc<Server>) -> Response<Body> {
    let respond = |code: u16, body: Vec<u8>| {
        Response::builder()
            .status(code)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body)).boxed())
            .expect("response")
    };
    let method = req.method().clone();
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let mut held = server.lease.lock().expect("lease");
    if method == hyper::Method::GET {
        return match &*held {
            Some(lease) => respond(200, serde_json::to_vec(lease).expect("encode")),
            None => respond(
                404,
                br#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"leases \"ops-pod-cleaner\" not found","reason":"NotFound","code":404}"#.to_vec(),
            ),
        };
    }
    let Ok(mut lease) = serde_json::from_slice::<Value>(&body) else {
        return respond(400, Vec::new());
    };
    let version = held
        .as_ref()
        .and_then(|l| {
            l["metadata"]["resourceVersion"]
                .as_str()?
                .parse::<u64>()
                .ok()
        })
        .unwrap_or(0)
        + 1;
    lease["metadata"]["resourceVersion"] = json!(version.to_string());
    *held = Some(lease.clone());
    let code = if method == hyper::Method::POST {
        201
    } else {
        200
    };
    respond(code, serde_json::to_vec(&lease).expect("encode"))
}

/// One watch's body: MODIFIED events at the server's current rate, written every 10 ms, and a
/// bookmark after 30 s without an event (as an API server's watch cache does for a quiet watch).
fn churn(
    server: Arc<Server>,
) -> impl futures::Stream<Item = Result<Frame<Bytes>, Infallible>> + Send {
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(64);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(10));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let (mut last, mut said, mut owed) = (Instant::now(), Instant::now(), 0.0f64);
        loop {
            tick.tick().await;
            let now = Instant::now();
            owed += server.rate.load(Ordering::Relaxed) as f64 * (now - last).as_secs_f64();
            last = now;
            let due = owed.floor() as u64;
            owed -= due as f64;
            let mut out = Vec::new();
            if due > 0 {
                let first = server.sent.fetch_add(due, Ordering::Relaxed);
                for n in first..first + due {
                    append_event(&server, n, &mut out);
                }
            } else if now - said > Duration::from_secs(30) {
                let version = 3_000_000_000 + server.sent.load(Ordering::Relaxed);
                out.extend(format!(
                    r#"{{"type":"BOOKMARK","object":{{"kind":"Pod","apiVersion":"v1","metadata":{{"resourceVersion":"{version}"}}}}}}"#
                ).bytes());
                out.push(b'\n');
            }
            if out.is_empty() {
                continue;
            }
            said = now;
            if tx.send(Bytes::from(out)).await.is_err() {
                return;
            }
        }
    });
    streamed(rx)
}

/// A response body that streams what is sent on `rx`, as a watch's chunks.
fn streamed(
    rx: tokio::sync::mpsc::Receiver<Bytes>,
) -> impl futures::Stream<Item = Result<Frame<Bytes>, Infallible>> + Send {
    futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok(Frame::data(b)), rx))
    })
}

fn kubeconfig_text(url: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: bench\n  cluster:\n    server: {url}\nusers:\n- name: bench\n  user: {{}}\n\
         contexts:\n- name: bench\n  context:\n    cluster: bench\n    user: bench\ncurrent-context: bench\n"
    )
}
