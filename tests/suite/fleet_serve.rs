//! `headless` serves its findings under `/v1/`: a snapshot, and a watch stream of frames a
//! client folds into its own copy, resumes by sequence number, and bounds as it reads.

use crate::support;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

use chrono::Utc;
use kube_sim::{SimCluster, SimServer};
use opc_core::clock::Clock;
use opc_core::cluster::{Cache, CacheReader, ClusterName, Scope, WatchSettings, spawn_watches};
use opc_core::fleet::{
    DecodeError, Epoch, FindingRow, FleetView, Frame, Limits, LineReader, Resume, Snapshot,
    uid_segment,
};
use opc_core::rules::{RuleKind, default_chain};
use opc_core::worker::{Blocked, BlockedKind};
use ops_pod_cleaner::headless::FleetSettings;
use serde_json::Value;
use tokio::io::AsyncWriteExt;

use support::contexts::{Scratch, run, stdout};
use support::pods::pod;
use support::served::{Served, serve_cache};
use support::sim::{eventually, quick_watch, typed};

/// Publications 20 ms apart, heartbeats every 200 ms, a short ring and a short queue.
fn quick() -> FleetSettings {
    FleetSettings {
        coalesce: Duration::from_millis(20),
        heartbeat: Duration::from_millis(200),
        ring: 64,
        queue: 8,
        stream_lifetime: Duration::from_secs(60),
        ..FleetSettings::default()
    }
}

async fn serve_worker(cache: CacheReader, fleet: FleetSettings) -> Served {
    serve_cache(cache, true, fleet).await
}

async fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let response = reqwest::get(format!("http://{addr}{path}")).await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

async fn snapshot(addr: SocketAddr) -> Snapshot {
    let (status, body) = get(addr, "/v1/snapshot").await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

/// A watch as a client reads it: bounded lines, one frame at a time.
struct Stream {
    response: reqwest::Response,
    reader: LineReader,
    read: VecDeque<Frame>,
}

impl Stream {
    async fn open(addr: SocketAddr, query: &str) -> Stream {
        Stream::open_for(addr, query, None).await
    }

    /// A watch the API server's service proxy forwards for `client` (its `X-Forwarded-For`).
    async fn open_for(addr: SocketAddr, query: &str, client: Option<&str>) -> Stream {
        let mut request = reqwest::Client::new().get(format!("http://{addr}/v1/watch{query}"));
        if let Some(client) = client {
            request = request.header("x-forwarded-for", client);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status().as_u16(), 200);
        Stream {
            response,
            reader: LineReader::new(Limits::default()),
            read: VecDeque::new(),
        }
    }

    /// The next frame, within two seconds.
    async fn next(&mut self) -> Frame {
        while self.read.is_empty() {
            let chunk = tokio::time::timeout(Duration::from_secs(2), self.response.chunk())
                .await
                .expect("a frame within 2 s")
                .unwrap()
                .expect("the stream is open");
            self.read.extend(self.reader.feed(&chunk).unwrap());
        }
        self.read.pop_front().unwrap()
    }

    /// Frames up to and including the first that `done` accepts.
    async fn until(&mut self, done: impl Fn(&Frame) -> bool) -> Vec<Frame> {
        let mut frames = Vec::new();
        loop {
            let frame = self.next().await;
            let last = done(&frame);
            frames.push(frame);
            if last {
                return frames;
            }
        }
    }
}

fn is_snapshot(frame: &Frame) -> bool {
    matches!(frame, Frame::Snapshot(_))
}

fn names(snapshot: &Snapshot) -> Vec<&str> {
    let mut names: Vec<&str> = snapshot.findings.iter().map(|r| r.name.as_str()).collect();
    names.sort_unstable();
    names
}

fn held(view: &FleetView) -> Vec<String> {
    let mut names: Vec<String> = view.findings().map(|a| a.name().to_string()).collect();
    names.sort_unstable();
    names
}

/// A cache of one cluster's pods, filled by hand.
fn cache() -> Cache {
    Cache::for_cluster(ClusterName::new("east"), default_chain(), Clock::real())
}

fn evicted(cache: &Cache, name: &str) {
    cache.upsert(pod(name).ns("shop").evicted().wire(), Utc::now());
}

fn uid(name: &str) -> String {
    format!("uid-{name}")
}

/// The rows served are the rows `scan --output json` prints for the same cluster, field for
/// field (the time in state is read a moment apart).
#[tokio::test]
async fn the_snapshot_holds_the_rows_scan_prints_for_the_same_cluster() {
    let sim = SimCluster::new();
    for p in [
        pod("gone").ns("shop").evicted(),
        pod("batch").ns("jobs").failed_with(2),
        pod("web").ns("shop").crash_looping(7, "OOMKilled"),
        pod("queued")
            .ns("shop")
            .unscheduled_since("2026-11-20T08:00:00Z"),
        pod("fine").ns("shop"),
    ] {
        sim.create_pod(typed(p.json()));
    }
    let server = SimServer::start(sim).await.unwrap();
    let cache = cache();
    let _watches = spawn_watches(&server.client(), &[Scope::All], &cache, &quick_watch());
    eventually("the first sync", || cache.health().synced()).await;
    let worker = serve_worker(cache.reader(), quick()).await;
    let scratch = Scratch::new(&[("east", &server)], "");
    let printed: Vec<Value> =
        serde_json::from_str(&stdout(&run(scratch.args(&["scan", "-o", "json"])).await)).unwrap();
    let (status, body) = get(worker.findings, "/v1/snapshot").await;
    assert_eq!(status, 200, "{body}");
    let served: Value = serde_json::from_str(&body).unwrap();
    let timeless = |rows: &[Value]| -> Vec<Value> {
        let mut rows: Vec<Value> = rows
            .iter()
            .map(|r| {
                let mut r = r.clone();
                let secs = r["forSeconds"].take().as_i64().unwrap();
                assert!(secs > 0, "{r}");
                r
            })
            .collect();
        rows.sort_by_key(|r| r["uid"].to_string());
        rows
    };
    let served_rows = served["findings"].as_array().unwrap();
    assert_eq!(served_rows.len(), 4, "{body}");
    assert_eq!(timeless(served_rows), timeless(&printed));
    let counts = &served["counts"];
    assert_eq!(counts["evicted"], 1, "{counts}");
    assert_eq!(counts["crashLoop"], 1, "{counts}");
}

/// One pod's row, for a screen that keeps only its cause's class: the row as the snapshot has
/// it, `null` for a pod the worker does not list, whatever the uid holds.
#[tokio::test]
async fn one_pods_row_is_served_by_its_uid() {
    let sim = SimCluster::new();
    sim.create_pod(typed(
        pod("web").ns("shop").crash_looping(7, "OOMKilled").json(),
    ));
    let server = SimServer::start(sim).await.unwrap();
    let cache = cache();
    let _watches = spawn_watches(&server.client(), &[Scope::All], &cache, &quick_watch());
    eventually("the first sync", || cache.health().synced()).await;
    let worker = serve_worker(cache.reader(), quick()).await;
    let snapshot = snapshot(worker.findings).await;
    let row = &snapshot.findings[0];
    let (status, body) = get(
        worker.findings,
        &format!("/v1/findings/{}", uid_segment(&row.uid)),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let served: Option<FindingRow> = serde_json::from_str(&body).unwrap();
    let served = served.expect("the row");
    assert_eq!(served.cause, row.cause);
    assert!(served.same_state(row));
    for unknown in ["no-such-uid", "..%2Fsnapshot", ""] {
        let (status, body) = get(worker.findings, &format!("/v1/findings/{unknown}")).await;
        assert_eq!((status, body.as_str()), (200, "null"), "{unknown}");
    }
}

/// A pod turns abnormal: an upsert and the counts; it goes: a removal and the counts. A
/// client folding the frames holds what a fresh snapshot says.
#[tokio::test]
async fn a_watch_sends_a_snapshot_then_the_changes() {
    let cache = cache();
    evicted(&cache, "old");
    let worker = serve_worker(cache.reader(), quick()).await;
    let mut stream = Stream::open(worker.findings, "").await;
    let mut view = FleetView::new(ClusterName::default(), 100);
    let first = stream.next().await;
    let Frame::Snapshot(start) = &first else {
        panic!("{first:?}")
    };
    assert_eq!(names(start), ["old"]);
    view.apply(first).unwrap();
    evicted(&cache, "new");
    let frames = stream.until(|f| matches!(f, Frame::Counts { .. })).await;
    assert!(
        matches!(&frames[..], [Frame::Upsert { row, .. }, Frame::Counts { counts, .. }]
            if row.uid == uid("new") && counts[&RuleKind::Evicted] == 2),
        "{frames:?}"
    );
    cache.remove(&uid("old"));
    let more = stream.until(|f| matches!(f, Frame::Counts { .. })).await;
    assert!(
        matches!(&more[..], [Frame::Remove { pod, .. }, Frame::Counts { counts, .. }]
            if pod.uid == uid("old") && counts[&RuleKind::Evicted] == 1),
        "{more:?}"
    );
    worker
        .status
        .send_modify(|s| s.blocked = Some(Blocked::Readonly));
    let told = stream.next().await;
    assert!(
        matches!(&told, Frame::Worker { worker, .. }
            if worker.leading && worker.blocked.as_ref().is_some_and(|b| b.kind == BlockedKind::Readonly)),
        "{told:?}"
    );
    for frame in frames.into_iter().chain(more).chain([told]) {
        view.apply(frame).unwrap();
    }
    let now = snapshot(worker.findings).await;
    assert_eq!(view.resume().map(|r| r.seq), Some(now.seq));
    assert_eq!(held(&view), names(&now));
    assert_eq!(view.counts(), &now.counts);
}

/// A client that reconnects with its sequence number gets exactly the frames it missed, the
/// ones a client that stayed connected read, and no snapshot.
#[tokio::test]
async fn resuming_from_a_sequence_number_gets_exactly_the_missed_frames() {
    let cache = cache();
    let worker = serve_worker(cache.reader(), quick()).await;
    let mut stayed = Stream::open(worker.findings, "").await;
    let mut left = Stream::open(worker.findings, "").await;
    let mut view = FleetView::new(ClusterName::default(), 100);
    view.apply(left.next().await).unwrap();
    let resume = view.resume().unwrap();
    drop(left);
    evicted(&cache, "a");
    evicted(&cache, "b");
    cache.remove(&uid("a"));
    let mut seen = Vec::new();
    let mut stayed_view = FleetView::new(ClusterName::default(), 100);
    stayed_view.apply(stayed.next().await).unwrap();
    while held(&stayed_view) != ["b"] {
        let frame = stayed.next().await;
        seen.push(frame.clone());
        stayed_view.apply(frame).unwrap();
    }
    let last = stayed_view.resume().unwrap().seq;
    let mut back = Stream::open(worker.findings, &format!("?{}", resume.query())).await;
    let mut missed = Vec::new();
    while missed.last().is_none_or(|f: &Frame| f.seq() < last) {
        let frame = back.next().await;
        assert!(!is_snapshot(&frame), "a snapshot where frames were kept");
        if !matches!(frame, Frame::Heartbeat { .. }) {
            missed.push(frame);
        }
    }
    let deltas: Vec<&Frame> = seen
        .iter()
        .filter(|f| !matches!(f, Frame::Heartbeat { .. }))
        .collect();
    assert_eq!(missed.iter().collect::<Vec<_>>(), deltas);
    for frame in missed {
        view.apply(frame).unwrap();
    }
    assert_eq!(held(&view), ["b"]);
}

/// A sequence number of another run of the worker, or one the ring no longer holds, gets a
/// snapshot; the old copy folds it without a gap.
#[tokio::test]
async fn resuming_from_another_epoch_or_a_forgotten_number_gets_a_snapshot() {
    let cache = cache();
    evicted(&cache, "a");
    let first = serve_worker(cache.reader(), quick()).await;
    let before = snapshot(first.findings).await;
    // The worker restarts: a new process, the same cluster.
    let restarted = serve_worker(cache.reader(), quick()).await;
    let stale = Resume {
        epoch: before.epoch,
        seq: before.seq,
    };
    let mut stream = Stream::open(restarted.findings, &format!("?{}", stale.query())).await;
    let again = stream.next().await;
    let Frame::Snapshot(fresh) = &again else {
        panic!("{again:?}")
    };
    assert_ne!(fresh.epoch, before.epoch);
    assert_eq!(names(fresh), ["a"]);
    // The ring holds 64 frames: 100 changes later, the first are gone.
    let mut stream = Stream::open(first.findings, "").await;
    let start = stream.next().await.seq();
    for i in 0..50 {
        let name = format!("p{i}");
        evicted(&cache, &name);
        // Each change in a publication of its own: wait for it rather than for the clock.
        stream
            .until(|f| matches!(f, Frame::Upsert { row, .. } if row.name == name))
            .await;
    }
    let now = snapshot(first.findings).await;
    assert!(now.seq > start + 64, "{} frames", now.seq - start);
    let forgotten = Resume {
        epoch: now.epoch,
        seq: start,
    };
    let mut stream = Stream::open(first.findings, &format!("?{}", forgotten.query())).await;
    assert!(is_snapshot(&stream.next().await));
    let garbage = Resume {
        epoch: Epoch(now.epoch.0 ^ 1),
        seq: now.seq,
    };
    let mut stream = Stream::open(first.findings, &format!("?{}", garbage.query())).await;
    assert!(is_snapshot(&stream.next().await));
}

/// An idle stream hears a heartbeat at the view's sequence number.
#[tokio::test]
async fn an_idle_stream_hears_heartbeats() {
    let cache = cache();
    evicted(&cache, "a");
    let worker = serve_worker(cache.reader(), quick()).await;
    let mut stream = Stream::open(worker.findings, "").await;
    let mut view = FleetView::new(ClusterName::default(), 10);
    view.apply(stream.next().await).unwrap();
    for _ in 0..2 {
        let beat = stream.next().await;
        assert!(matches!(beat, Frame::Heartbeat { .. }), "{beat:?}");
        view.apply(beat).unwrap();
    }
}

/// A worker whose own view is past its freshness bound says so: in the snapshot, and on the
/// stream without waiting for any change.
#[tokio::test]
async fn a_stale_worker_view_is_served_as_stale() {
    let sim = SimCluster::new();
    sim.set_bookmark_interval(Duration::from_millis(100));
    sim.create_pod(typed(pod("gone").evicted().json()));
    let server = SimServer::start(sim.clone()).await.unwrap();
    let cache = cache();
    let settings = WatchSettings {
        stale_after: Duration::from_millis(600),
        ..quick_watch()
    };
    let _watches = spawn_watches(&server.client(), &[Scope::All], &cache, &settings);
    eventually("the first sync", || cache.health().synced()).await;
    let worker = serve_worker(cache.reader(), quick()).await;
    let mut stream = Stream::open(worker.findings, "").await;
    let Frame::Snapshot(fresh) = stream.next().await else {
        panic!("a snapshot first")
    };
    assert!(fresh.view.synced && !fresh.view.stale, "{:?}", fresh.view);
    sim.faults().freeze(true);
    let frames = stream
        .until(|f| matches!(f, Frame::Heartbeat { view, .. } if view.stale))
        .await;
    assert!(frames.len() < 20, "{frames:?}");
    assert!(snapshot(worker.findings).await.view.stale);
    sim.faults().freeze(false);
}

/// A client that stops reading neither holds up the worker nor another client; once it
/// reads again it is brought up to date by a snapshot and folds everything without a gap.
#[tokio::test]
async fn a_client_that_stops_reading_gets_a_snapshot_and_slows_nobody() {
    let cache = cache();
    // Room for a round's 51 frames: a reader that keeps up is never sent a snapshot.
    let settings = FleetSettings {
        queue: 128,
        ..quick()
    };
    let worker = serve_worker(cache.reader(), settings).await;
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut slow = socket.connect(worker.findings).await.unwrap();
    slow.write_all(b"GET /v1/watch HTTP/1.1\r\nHost: w\r\n\r\n")
        .await
        .unwrap();
    let mut reader = Stream::open(worker.findings, "").await;
    let mut view = FleetView::new(ClusterName::default(), 10_000);
    view.apply(reader.next().await).unwrap();
    // Long messages make many bytes: the slow client's socket fills within the first rounds.
    let long = "m".repeat(1000);
    for round in 0..30 {
        let started = std::time::Instant::now();
        for i in 0..50 {
            let p = pod(&format!("p{i}"))
                .ns("shop")
                .evicted()
                .status_message(&format!("round {round} {long}"));
            cache.upsert(p.wire(), Utc::now());
        }
        assert!(
            started.elapsed() < Duration::from_millis(500),
            "the cache waited"
        );
        let marker = format!("round {round} ");
        let told = |row: &FindingRow| {
            row.uid == uid("p49")
                && row
                    .message
                    .as_deref()
                    .is_some_and(|m| m.starts_with(&marker))
        };
        let frames = reader
            .until(|f| match f {
                Frame::Upsert { row, .. } => told(row),
                Frame::Snapshot(s) => s.findings.iter().any(told),
                _ => false,
            })
            .await;
        for frame in frames {
            view.apply(frame).unwrap();
        }
    }
    assert_eq!(view.len(), 50);
    // The slow client reads now: what was queued, then a snapshot of the state now.
    // Its write half stays open: a half-closed connection is one the server may end.
    let (read, _write) = slow.into_split();
    let snapshot_now = snapshot(worker.findings).await;
    let mut raw = tokio::io::BufReader::new(read);
    let mut slow_view = FleetView::new(ClusterName::default(), 10_000);
    let mut snapshots = 0;
    let mut line = String::new();
    use tokio::io::AsyncBufReadExt;
    // Past the response head; the body is chunked: each line of JSON is one frame.
    loop {
        line.clear();
        let n = tokio::time::timeout(Duration::from_secs(2), raw.read_line(&mut line))
            .await
            .expect("frames for the slow client")
            .unwrap();
        assert!(n > 0, "the stream ended");
        let Ok(frame) = serde_json::from_str::<Frame>(line.trim()) else {
            continue;
        };
        snapshots += usize::from(is_snapshot(&frame));
        slow_view.apply(frame).unwrap();
        if snapshots >= 2 && slow_view.resume().map(|r| r.seq) >= Some(snapshot_now.seq) {
            break;
        }
    }
    assert_eq!(slow_view.len(), 50);
    let message = |v: &FleetView| {
        v.findings()
            .find(|a| a.uid() == uid("p49"))
            .and_then(|a| a.message().map(String::from))
    };
    assert_eq!(message(&slow_view), message(&view));
}

/// A pod name with terminal escapes arrives as the same text, escaped on the wire; a client
/// whose bound a line passes refuses it with a typed error.
#[tokio::test]
async fn hostile_text_is_data_and_a_line_past_the_client_bound_is_refused() {
    let hostile = "x\u{1b}[2J\u{1b}]52;c;SGVsbG8=\u{7}\nimagePull  ns  fake-row";
    let cache = cache();
    cache.upsert(
        pod(hostile).uid("uid-evil").ns("shop").evicted().wire(),
        Utc::now(),
    );
    let worker = serve_worker(cache.reader(), quick()).await;
    let (_, body) = get(worker.findings, "/v1/snapshot").await;
    assert!(
        !body.contains('\u{1b}') && !body.contains('\u{7}'),
        "{body:?}"
    );
    assert_eq!(snapshot(worker.findings).await.findings[0].name, hostile);
    let response = reqwest::get(format!("http://{}/v1/watch", worker.findings))
        .await
        .unwrap();
    let mut reader = LineReader::new(Limits {
        max_line: 256,
        max_rows: 10,
    });
    let mut response = response;
    let refused = loop {
        let chunk = response.chunk().await.unwrap().expect("a frame");
        if let Err(e) = reader.feed(&chunk) {
            break e;
        }
    };
    assert_eq!(refused, DecodeError::LineTooLong { max: 256 });
}

/// `/v1/` says what is there; watches hold connection slots like anyone else, so a probe is
/// still answered however many are open.
#[tokio::test]
async fn the_index_answers_and_watches_do_not_starve_the_probe() {
    let worker = serve_worker(cache().reader(), quick()).await;
    let (status, index) = get(worker.findings, "/v1/").await;
    assert_eq!(status, 200);
    assert!(
        index.contains("/v1/snapshot") && index.contains("/v1/watch"),
        "{index}"
    );
    let mut streams = Vec::new();
    for _ in 0..40 {
        streams.push(
            reqwest::get(format!("http://{}/v1/watch", worker.findings))
                .await
                .unwrap(),
        );
    }
    let (status, _) = tokio::time::timeout(Duration::from_secs(2), get(worker.addr, "/healthz"))
        .await
        .expect("the probe is answered");
    assert_eq!(status, 200);
}

/// Through the API server's service proxy every watch comes from the API server's address: a
/// dozen engineers looking at one cluster must not push each other's streams out.
#[tokio::test]
async fn many_watches_from_one_address_all_stay_open() {
    let worker = serve_worker(cache().reader(), quick()).await;
    let mut streams = Vec::new();
    for i in 0..12 {
        let engineer = format!("192.0.2.{i}");
        let mut stream = Stream::open_for(worker.findings, "", Some(&engineer)).await;
        assert!(is_snapshot(&stream.next().await));
        streams.push(stream);
    }
    // Every stream hears the next heartbeat: none was closed to make room for a later one.
    for (i, stream) in streams.iter_mut().enumerate() {
        let next = tokio::time::timeout(Duration::from_secs(2), stream.response.chunk()).await;
        let heard = matches!(next, Ok(Ok(Some(_))));
        assert!(heard, "stream {i} of 12 was closed or silent: {next:?}");
    }
    let (status, _) = tokio::time::timeout(Duration::from_secs(2), get(worker.addr, "/healthz"))
        .await
        .expect("the probe is answered");
    assert_eq!(status, 200);
}

/// A stream ends at its own bound, and the client resumes where it was: the frames it
/// missed (none here), no snapshot.
#[tokio::test]
async fn a_stream_past_its_lifetime_ends_and_the_client_resumes_without_a_snapshot() {
    let cache = cache();
    evicted(&cache, "a");
    let settings = FleetSettings {
        stream_lifetime: Duration::from_millis(300),
        ..quick()
    };
    let worker = serve_worker(cache.reader(), settings).await;
    let mut stream = Stream::open(worker.findings, "").await;
    let mut view = FleetView::new(ClusterName::default(), 10);
    view.apply(stream.next().await).unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(2), async {
        while let Some(chunk) = stream.response.chunk().await.unwrap() {
            for frame in stream.reader.feed(&chunk).unwrap() {
                view.apply(frame).unwrap();
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the stream outlived its bound");
    let resume = view.resume().unwrap();
    let mut again = Stream::open(worker.findings, &format!("?{}", resume.query())).await;
    let first = again.next().await;
    assert!(matches!(first, Frame::Heartbeat { .. }), "{first:?}");
    view.apply(first).unwrap();
}

/// One client that opens stream after stream (a script, a compromised laptop) pushes out its
/// own oldest, never another engineer's.
#[tokio::test]
async fn one_client_cannot_take_another_clients_stream_slot() {
    let worker = serve_worker(cache().reader(), quick()).await;
    let mut engineer = Stream::open_for(worker.findings, "", Some("192.0.2.1")).await;
    assert!(is_snapshot(&engineer.next().await));
    let mut flood = Vec::new();
    for _ in 0..20 {
        let mut stream = Stream::open_for(worker.findings, "", Some("10.1.2.3, 192.0.2.66")).await;
        assert!(is_snapshot(&stream.next().await));
        flood.push(stream);
    }
    let next = tokio::time::timeout(Duration::from_secs(2), engineer.response.chunk()).await;
    assert!(
        matches!(next, Ok(Ok(Some(_)))),
        "the engineer's stream was closed: {next:?}"
    );
    let mut open = 0;
    for stream in &mut flood {
        let next = tokio::time::timeout(Duration::from_secs(2), stream.response.chunk()).await;
        open += usize::from(matches!(next, Ok(Ok(Some(_)))));
    }
    assert_eq!(open, 8, "the flooding client keeps its share");
}

/// The findings are behind their own door: the probes' port does not serve them.
#[tokio::test]
async fn the_findings_are_not_served_on_the_probes_port() {
    let worker = serve_worker(cache().reader(), quick()).await;
    let (status, body) = get(worker.addr, "/v1/snapshot").await;
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("--findings-listen"), "{body}");
    let (status, _) = get(worker.findings, "/metrics").await;
    assert_eq!(status, 404);
    let (status, _) = get(worker.findings, "/v1/snapshot").await;
    assert_eq!(status, 200);
}
