//! A stand-in for `headless`'s `/v1/watch`, put behind kube-sim's service proxy as
//! `assets/deploy` runs the real one: it serves JSON lines built from the protocol's own types
//! (a snapshot or the frames missed since `since`, then each change, and a heartbeat every
//! `heartbeat`), so the client is tested through the API server without the real server.

use opc_core::cluster::ClusterName;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use k8s_openapi::api::core::v1::{Endpoints, Pod, Service};
use kube::api::{Api, PostParams};
use kube_sim::SimServer;
use opc_core::fleet::{Epoch, FindingRow, Frame, Publisher, Ring, ViewHealth, WorkerView};
use opc_core::rules::{ActionKind, Cause, CauseClass, RuleKind};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::sim::typed;

/// Where `assets/deploy` runs the worker.
pub const NS: &str = "ops-pod-cleaner";
pub const SERVICE: &str = "ops-pod-cleaner";
pub const PORT: u16 = 9091;
/// The worker pod's address; kube-sim's proxy reaches it on loopback.
const WORKER_IP: &str = "10.0.0.9";

/// One worker run: its frames, what it was asked, and what it answered.
pub struct FakeWorker {
    addr: SocketAddr,
    served: Arc<Mutex<Served>>,
    changed: watch::Sender<u64>,
    accept: JoinHandle<()>,
}

struct Served {
    publisher: Publisher,
    ring: Ring<Frame>,
    /// Each request's target (`/v1/watch?since=…`), in order.
    requests: Vec<String>,
    snapshots: usize,
    heartbeat: Duration,
    /// Moved by a restart: connections of an older run close.
    run: u64,
    /// Moved when streams end at their lifetime: open ones end cleanly.
    ends: u64,
}

impl FakeWorker {
    /// A worker of run `epoch`, synced and current, with no findings yet.
    pub async fn start(epoch: u64, heartbeat: Duration) -> FakeWorker {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let served = Arc::new(Mutex::new(Served {
            publisher: current(Epoch(epoch)),
            ring: Ring::new(1024),
            requests: Vec::new(),
            snapshots: 0,
            heartbeat,
            run: 0,
            ends: 0,
        }));
        let (changed, _) = watch::channel(0);
        let accept = {
            let (served, changed) = (served.clone(), changed.clone());
            tokio::spawn(async move {
                while let Ok((conn, _)) = listener.accept().await {
                    tokio::spawn(answer(conn, served.clone(), changed.subscribe()));
                }
            })
        };
        FakeWorker {
            addr,
            served,
            changed,
            accept,
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The findings are now `findings`: the frames that say so go to every stream.
    pub fn set(&self, findings: Vec<FindingRow>) {
        self.change(|served| {
            for frame in served.publisher.findings(findings) {
                served.ring.push(frame.seq(), frame);
            }
        });
    }

    /// How current the worker's own view is, said in the next heartbeat.
    pub fn set_view(&self, view: ViewHealth) {
        self.change(|served| {
            let worker = served.publisher.snapshot().worker;
            served.publisher.status(worker, view, t0());
        });
    }

    /// The worker restarts as run `epoch` with `findings`: open streams close, and numbers
    /// count from zero again.
    pub fn restart(&self, epoch: u64, findings: Vec<FindingRow>) {
        self.change(|served| {
            served.publisher = current(Epoch(epoch));
            served.ring = Ring::new(1024);
            served.publisher.findings(findings);
            served.run += 1;
        });
    }

    /// Every open stream ends cleanly, as the real worker's do at the end of their lifetime.
    pub fn end_streams(&self) {
        self.change(|served| served.ends += 1);
    }

    pub fn requests(&self) -> Vec<String> {
        self.served.lock().unwrap().requests.clone()
    }

    pub fn snapshots_sent(&self) -> usize {
        self.served.lock().unwrap().snapshots
    }

    /// The sequence number of the last change.
    pub fn seq(&self) -> u64 {
        self.served.lock().unwrap().publisher.seq()
    }

    fn change(&self, change: impl FnOnce(&mut Served)) {
        change(&mut self.served.lock().unwrap());
        self.changed.send_modify(|n| *n += 1);
    }
}

impl Drop for FakeWorker {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// A publisher of `epoch` whose view is synced and current.
fn current(epoch: Epoch) -> Publisher {
    let mut publisher = Publisher::new(epoch, t0());
    let view = ViewHealth {
        synced: true,
        age_seconds: Some(1),
        ..ViewHealth::default()
    };
    publisher.status(WorkerView::default(), view, t0());
    publisher
}

/// One watch request, answered until the client goes or the worker restarts.
async fn answer(
    mut conn: TcpStream,
    served: Arc<Mutex<Served>>,
    mut changed: watch::Receiver<u64>,
) {
    let Some(target) = request_target(&mut conn).await else {
        return;
    };
    if let Some(uid) = target.strip_prefix("/v1/findings/") {
        let row = served.lock().unwrap().publisher.finding(uid).cloned();
        let body = serde_json::to_string(&row).unwrap();
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        let _ = conn.write_all(format!("{head}{body}").as_bytes()).await;
        return;
    }
    let (first, mut cursor, run, ends, heartbeat) = {
        let mut s = served.lock().unwrap();
        s.requests.push(target.clone());
        let (since, epoch) = resume_of(&target);
        let (seq, current) = (s.publisher.seq(), s.publisher.epoch());
        let missed = (epoch == Some(current))
            .then(|| since.and_then(|since| s.ring.after(since, seq)))
            .flatten();
        let first = missed.unwrap_or_else(|| {
            s.snapshots += 1;
            vec![Frame::Snapshot(s.publisher.snapshot())]
        });
        (first, seq, s.run, s.ends, s.heartbeat)
    };
    let head =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    if conn.write_all(head.as_bytes()).await.is_err() || send(&mut conn, &first).await.is_err() {
        return;
    }
    let mut beat = tokio::time::interval(heartbeat);
    loop {
        let next = tokio::select! {
            gone = changed.changed() => match gone {
                Ok(()) => next_frames(&served, &mut cursor, run, ends),
                Err(_) => Next::Close,
            },
            // What is pending first: a heartbeat says the stream is at the latest number.
            _ = beat.tick() => next_frames(&served, &mut cursor, run, ends),
        };
        let sent = match next {
            Next::Send(frames) => send(&mut conn, &frames).await,
            Next::End => {
                let _ = conn.write_all(b"0\r\n\r\n").await;
                return;
            }
            Next::Close => return,
        };
        if sent.is_err() {
            return;
        }
    }
}

/// What an open stream does after a change.
enum Next {
    Send(Vec<Frame>),
    /// End the stream cleanly.
    End,
    /// Drop the connection, as a process that stops does.
    Close,
}

/// The frames after `cursor` (or a snapshot), then a heartbeat; or the stream's end.
fn next_frames(served: &Mutex<Served>, cursor: &mut u64, run: u64, ends: u64) -> Next {
    let mut s = served.lock().unwrap();
    if s.run != run {
        return Next::Close;
    }
    if s.ends != ends {
        return Next::End;
    }
    let seq = s.publisher.seq();
    let mut frames = s.ring.after(*cursor, seq).unwrap_or_else(|| {
        s.snapshots += 1;
        vec![Frame::Snapshot(s.publisher.snapshot())]
    });
    *cursor = seq;
    frames.push(s.publisher.heartbeat(t0()));
    Next::Send(frames)
}

/// Each frame as one chunk of one JSON line.
async fn send(conn: &mut TcpStream, frames: &[Frame]) -> std::io::Result<()> {
    for frame in frames {
        let line = serde_json::to_string(frame).unwrap();
        let chunk = format!("{:x}\r\n{line}\n\r\n", line.len() + 1);
        conn.write_all(chunk.as_bytes()).await?;
    }
    Ok(())
}

/// The target of a request's first line, once its head is read.
async fn request_target(conn: &mut TcpStream) -> Option<String> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = conn.read(&mut buf).await.ok().filter(|n| *n > 0)?;
        got.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&got);
    text.split(' ').nth(1).map(String::from)
}

/// `since` and `epoch` of a watch's query, where given.
fn resume_of(target: &str) -> (Option<u64>, Option<Epoch>) {
    let query = target.split_once('?').map_or("", |(_, q)| q);
    let value = |key: &str| {
        query
            .split('&')
            .find_map(|pair| pair.strip_prefix(key)?.strip_prefix('='))
            .and_then(|v| v.parse::<u64>().ok())
    };
    (value("since"), value("epoch").map(Epoch))
}

/// The worker's pod, Service and ready Endpoints, made through the API as `assets/deploy`
/// names them, and `worker` (a stand-in or the real server) listening for the pod's address.
pub async fn expose(server: &SimServer, worker: SocketAddr) {
    server.cluster().create_pod(typed::<Pod>(json!({
        "metadata": { "name": "ops-pod-cleaner-0", "namespace": NS,
                      "labels": { "app": SERVICE } },
        "spec": { "nodeName": "sim-node-1",
                  "containers": [{ "name": "ops-pod-cleaner", "image": "opc:1" }] },
        "status": { "phase": "Running", "podIP": WORKER_IP, "podIPs": [{ "ip": WORKER_IP }],
                    "conditions": [{ "type": "Ready", "status": "True" }] },
    })));
    let pp = PostParams::default();
    let service: Service = typed(json!({
        "metadata": { "name": SERVICE, "namespace": NS },
        "spec": { "clusterIP": "None", "selector": { "app": SERVICE },
                  "ports": [{ "name": "findings", "port": PORT, "targetPort": "findings" }] },
    }));
    Api::<Service>::namespaced(server.client(), NS)
        .create(&pp, &service)
        .await
        .unwrap();
    let endpoints: Endpoints = typed(json!({
        "metadata": { "name": SERVICE, "namespace": NS },
        "subsets": [{
            "addresses": [{ "ip": WORKER_IP,
                            "targetRef": { "kind": "Pod", "namespace": NS,
                                           "name": "ops-pod-cleaner-0" } }],
            "ports": [{ "name": "findings", "port": PORT, "protocol": "TCP" }],
        }],
    }));
    Api::<Endpoints>::namespaced(server.client(), NS)
        .create(&pp, &endpoints)
        .await
        .unwrap();
    server.serve_endpoint(WORKER_IP.parse().unwrap(), PORT, worker);
}

/// The worker pod's port now answered by `worker`: as when the worker restarts, its streams
/// end and the next reaches the new one.
pub fn move_worker(server: &SimServer, worker: SocketAddr) {
    server.serve_endpoint(WORKER_IP.parse().unwrap(), PORT, worker);
}

pub fn t0() -> DateTime<Utc> {
    "2026-11-20T09:00:00Z".parse().unwrap()
}

/// A finding of pod `uid` (named `pod-{uid}` in `shop`).
pub fn finding(uid: &str, category: RuleKind) -> FindingRow {
    FindingRow {
        cluster: ClusterName::new("east"),
        namespace: "shop".into(),
        name: format!("pod-{uid}"),
        uid: uid.into(),
        category,
        reason: "ImagePullBackOff".into(),
        message: None,
        container: Some("app".into()),
        since: t0(),
        for_seconds: 60,
        restarts: 0,
        node: None,
        owner: None,
        action: ActionKind::Delete,
        held: None,
        cause: Cause {
            class: CauseClass::ImageNotFound,
            detail: "no such image".into(),
            evidence: Vec::new(),
            next: "fix the image".into(),
        },
    }
}
