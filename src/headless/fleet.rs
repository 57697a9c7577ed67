//! `/v1/`: the worker's findings for a screen that watches many clusters, as a snapshot and
//! a watch stream of JSON lines (the protocol is `opc_core::fleet`'s).

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use tokio::sync::{broadcast, watch};

use super::sources::{FleetSettings, Sources};
use opc_core::fleet::{Epoch, FindingRow, Frame, Publisher, Resume, Ring, ViewHealth, WorkerView};

/// One per process: the last published state, the recent frames, and the queue every
/// stream reads from. Each diff is made and each frame encoded once, whatever the clients.
pub(crate) struct Feed {
    shared: Mutex<Shared>,
    lines: broadcast::Sender<Bytes>,
    settings: FleetSettings,
    restarts: Option<opc_core::report::LiveReport>,
    /// The log said the snapshot is over the feed's bound, and it has not fit since.
    pub(crate) over_bound_said: AtomicBool,
}

struct Shared {
    publisher: Publisher,
    /// Encoded frames by sequence number, for a client that resumes.
    ring: Ring<Bytes>,
    /// The last state encoded as a snapshot line, made when first asked for.
    snapshot: Option<Bytes>,
    /// When a line last went out: an idle stream hears a heartbeat after `settings.heartbeat`.
    last_sent: Instant,
}

impl Feed {
    /// The feed of `sources`, published until `stop`.
    pub(crate) fn start(sources: &Sources, stop: watch::Receiver<bool>) -> Arc<Feed> {
        let settings = sources.fleet;
        let feed = Arc::new(Feed {
            shared: Mutex::new(Shared {
                publisher: Publisher::new(Epoch::fresh(), sources.cache.clock().now()),
                ring: Ring::new(settings.ring),
                snapshot: None,
                last_sent: Instant::now(),
            }),
            lines: broadcast::channel(settings.queue.max(1)).0,
            settings,
            restarts: sources.restarts.clone(),
            over_bound_said: AtomicBool::new(false),
        });
        tokio::spawn(publish(feed.clone(), sources.clone(), stop));
        feed
    }

    pub(crate) fn settings(&self) -> FleetSettings {
        self.settings
    }

    fn shared(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The last published state as one line.
    pub(crate) fn snapshot(&self) -> Bytes {
        snapshot_line(&mut self.shared())
    }

    /// The restart report as it stands, as JSON; `None` where this worker builds none.
    pub(crate) fn restarts(&self) -> Option<Bytes> {
        let report = (self.restarts.as_ref()?)();
        serde_json::to_vec(&report).ok().map(Bytes::from)
    }

    /// The last published row of the pod of `uid` (percent-encoded), as JSON, or `null`.
    pub(crate) fn finding(&self, uid: &str) -> Bytes {
        let shared = self.shared();
        let row = shared.publisher.finding(uid);
        serde_json::to_vec(&row).map_or_else(|_| Bytes::from_static(b"null"), Bytes::from)
    }

    /// What a new stream starts with, and its queue: the frames after `resume` when they are
    /// all still kept and of this run, else a snapshot. Under the lock the publisher sends
    /// under, so nothing falls between the two.
    pub(crate) fn open(&self, resume: Option<Resume>) -> (Vec<Bytes>, broadcast::Receiver<Bytes>) {
        let mut shared = self.shared();
        let current = shared.publisher.seq();
        let missed = resume
            .filter(|r| r.epoch == shared.publisher.epoch())
            .and_then(|r| shared.ring.after(r.seq, current));
        let first = missed.unwrap_or_else(|| vec![snapshot_line(&mut shared)]);
        (first, self.lines.subscribe())
    }

    /// Send `frames` to every stream, in order, and keep the numbered ones for resuming.
    fn send(&self, frames: Vec<Frame>) {
        if frames.is_empty() {
            return;
        }
        let mut shared = self.shared();
        shared.snapshot = None;
        shared.last_sent = Instant::now();
        for frame in frames {
            let Some(line) = encode(&frame) else { continue };
            if !matches!(frame, Frame::Heartbeat { .. }) {
                shared.ring.push(frame.seq(), line.clone());
            }
            // No receiver is no error: nobody is watching.
            let _ = self.lines.send(line);
        }
    }

    fn beat_if_idle(&self, now: DateTime<Utc>) {
        let mut shared = self.shared();
        if shared.last_sent.elapsed() < self.settings.heartbeat {
            return;
        }
        shared.last_sent = Instant::now();
        if let Some(line) = encode(&shared.publisher.heartbeat(now)) {
            let _ = self.lines.send(line);
        }
    }
}

fn snapshot_line(shared: &mut Shared) -> Bytes {
    if let Some(line) = &shared.snapshot {
        return line.clone();
    }
    let line = encode(&Frame::Snapshot(shared.publisher.snapshot())).unwrap_or_default();
    shared.snapshot = Some(line.clone());
    line
}

/// One frame as a line of JSON. Text a tenant wrote is escaped by JSON: no control character
/// reaches the wire raw.
fn encode(frame: &Frame) -> Option<Bytes> {
    match serde_json::to_vec(frame) {
        Ok(mut line) => {
            line.push(b'\n');
            Some(Bytes::from(line))
        }
        Err(e) => {
            tracing::warn!("a frame could not be encoded: {e}");
            None
        }
    }
}

/// The publisher: every `coalesce`, the findings if the cache moved, the worker's status and
/// the view's freshness, and a heartbeat when idle. Never waits on a client: one that lags
/// loses the oldest lines, and is sent a snapshot.
async fn publish(feed: Arc<Feed>, sources: Sources, mut stop: watch::Receiver<bool>) {
    let mut changes = sources.cache.subscribe();
    let mut moved = true;
    loop {
        let now = sources.cache.clock().now();
        let mut frames = Vec::new();
        if moved {
            changes.mark_unchanged();
            let rows: Vec<FindingRow> = (sources.cache.findings().iter())
                .map(|found| FindingRow::of(found, now))
                .collect();
            frames = feed.shared().publisher.findings(rows);
        }
        let (worker, view) = status(&sources);
        frames.extend(feed.shared().publisher.status(worker, view, now));
        feed.send(frames);
        feed.beat_if_idle(now);
        tokio::select! {
            _ = tokio::time::sleep(feed.settings.coalesce) => {}
            _ = stop.changed() => return,
        }
        // A cache that is gone changes no more.
        moved = changes.has_changed().unwrap_or(false);
    }
}

/// The worker as `/metrics` reads it, and how current the view is.
fn status(sources: &Sources) -> (WorkerView, ViewHealth) {
    let health = sources.cache.health();
    let now = std::time::Instant::now();
    let status = sources.worker_now(&health, now);
    let worker = WorkerView::of(&status, *sources.leader.borrow(), &sources.recent.borrow());
    (worker, ViewHealth::of(&health, now))
}
