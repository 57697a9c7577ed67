//! WATCH: a chunked stream of events replayed from the change history, as newline-delimited
//! JSON or, for a pod watch that asked for it, length-prefixed protobuf frames.

use std::io;
use std::time::Duration;

use bytes::Bytes;
use futures::SinkExt;
use futures::channel::mpsc;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::time::Instant;

use super::cluster::SimCluster;
use super::meta;
use super::query::Selection;
use super::reply::Body;
use super::resources::Res;
use super::status::ApiError;
use super::store::{Change, EventType};
use crate::json::Fields;

/// Real servers pick 30–60 min when the client gives no timeout.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);
/// Upper bound between checks that the client is still there.
const POLL: Duration = Duration::from_millis(500);

pub struct WatchSpec {
    pub res: Res,
    pub namespace: Option<String>,
    pub selection: Selection,
    /// None: start with synthetic ADDED events for the current state.
    pub after: Option<u64>,
    pub bookmarks: bool,
    pub send_initial_events: bool,
    pub timeout: Option<Duration>,
    /// Frames of protobuf instead of lines of JSON.
    pub protobuf: bool,
}

/// Where events go, and in which format.
struct Tx {
    sink: mpsc::Sender<Result<Frame<Bytes>, io::Error>>,
    protobuf: bool,
}

/// Start streaming; the returned body ends at the timeout, on shutdown, or when a fault cuts it.
pub fn start(cluster: SimCluster, spec: WatchSpec, shutdown: watch::Receiver<bool>) -> Body {
    let (sink, rx) = mpsc::channel(64);
    let tx = Tx {
        sink,
        protobuf: spec.protobuf,
    };
    tokio::spawn(async move {
        if run(cluster, spec, tx, shutdown).await.is_err() {
            tracing::debug!("watch client went away");
        }
    });
    StreamBody::new(rx).boxed()
}

/// Sent when the client went away.
struct Gone;

async fn send(tx: &mut Tx, event: &Value) -> Result<(), Gone> {
    if tx.protobuf {
        let kind = event["type"].as_str().unwrap_or_default();
        let frame = crate::proto::watch_frame(kind, &event["object"]);
        return tx
            .sink
            .send(Ok(Frame::data(Bytes::from(frame))))
            .await
            .map_err(|_| Gone);
    }
    // The API server writes "type" before "object"; a client that meets the object first must
    // buffer it whole before it knows what to decode it as.
    let mut line = br#"{"type":"#.to_vec();
    let _ = serde_json::to_writer(&mut line, &event["type"]);
    line.extend_from_slice(br#","object":"#);
    let _ = serde_json::to_writer(&mut line, &event["object"]);
    line.extend_from_slice(b"}\n");
    tx.sink
        .send(Ok(Frame::data(Bytes::from(line))))
        .await
        .map_err(|_| Gone)
}

async fn send_expired(tx: &mut Tx, message: String) -> Result<(), Gone> {
    let status = ApiError::expired(message).to_status();
    send(tx, &json!({ "type": "ERROR", "object": status })).await
}

async fn run(
    cluster: SimCluster,
    spec: WatchSpec,
    mut tx: Tx,
    mut shutdown: watch::Receiver<bool>,
) -> Result<(), Gone> {
    let deadline = Instant::now() + spec.timeout.unwrap_or(DEFAULT_TIMEOUT);
    let (id, interval, drop_gen, expire, close_at_once, compacted) = cluster.read(|s| {
        s.watches_served += 1;
        s.protobuf_watches_served += u64::from(spec.protobuf);
        let expire = s.faults.expire_watches > 0;
        s.faults.expire_watches = s.faults.expire_watches.saturating_sub(1);
        (
            s.watches_served,
            s.bookmark_interval,
            s.faults.watch_drop_gen,
            expire,
            s.faults.close_watches,
            s.store.compacted_rv(),
        )
    });
    if close_at_once {
        return Ok(());
    }
    if expire {
        let rv = spec.after.unwrap_or(0);
        return send_expired(
            &mut tx,
            format!("too old resource version: {rv} ({compacted})"),
        )
        .await;
    }
    let mut wake = cluster.subscribe();
    wake.borrow_and_update();
    let mut cursor = match spec.after {
        Some(rv) => rv,
        None => send_initial(&cluster, &spec, &mut tx).await?,
    };
    let mut next_bookmark = Instant::now() + interval;
    loop {
        wake.borrow_and_update();
        let (batch, rv, stalled, silent, generation, compacted) = cluster.read(|s| {
            let (stalled, silent) = (s.faults.watch_stalled, id <= s.faults.silent_through);
            let batch = if stalled || silent {
                Some(Vec::new())
            } else {
                s.store.changes_after(cursor)
            };
            (
                batch,
                s.store.rv(),
                stalled,
                silent,
                s.faults.watch_drop_gen,
                s.store.compacted_rv(),
            )
        });
        if generation != drop_gen {
            // An error frame makes hyper abort the connection, like a network cut.
            let _ = tx
                .sink
                .send(Err(io::Error::other("watch dropped by fault injection")))
                .await;
            return Ok(());
        }
        if !stalled && !silent {
            let Some(changes) = batch else {
                return send_expired(
                    &mut tx,
                    format!("too old resource version: {cursor} ({compacted})"),
                )
                .await;
            };
            for change in &changes {
                if let Some(event) = to_event(&spec, change) {
                    send(&mut tx, &event).await?;
                }
            }
            // Never move back: a client may ask for a version from the future.
            cursor = cursor.max(rv);
            if spec.bookmarks && Instant::now() >= next_bookmark {
                send(&mut tx, &bookmark(spec.res, cursor, false)).await?;
                next_bookmark = Instant::now() + interval;
            }
        }
        let now = Instant::now();
        // A silent watch does not even close at its timeout: a frozen server closes nothing.
        if (now >= deadline && !silent) || *shutdown.borrow() {
            return Ok(());
        }
        let mut until = now + POLL;
        if !silent {
            until = until.min(deadline);
            if spec.bookmarks {
                until = until.min(next_bookmark);
            }
        }
        tokio::select! {
            _ = wake.changed() => {}
            _ = tokio::time::sleep_until(until) => {}
            _ = shutdown.changed() => return Ok(()),
        }
        if tx.sink.is_closed() {
            return Err(Gone);
        }
    }
}

/// Synthetic ADDED events for what exists now; returns the version they reflect.
async fn send_initial(cluster: &SimCluster, spec: &WatchSpec, tx: &mut Tx) -> Result<u64, Gone> {
    let (objects, rv) = cluster.read(|s| {
        let objects: Vec<Value> = s
            .store
            .iter(spec.res)
            .filter(|o| in_scope(spec, o))
            .filter(|o| spec.selection.matches(o))
            .cloned()
            .collect();
        (objects, s.store.rv())
    });
    for obj in objects {
        send(tx, &json!({ "type": "ADDED", "object": obj })).await?;
    }
    if spec.send_initial_events && spec.bookmarks {
        send(tx, &bookmark(spec.res, rv, true)).await?;
    }
    Ok(rv)
}

fn in_scope(spec: &WatchSpec, obj: &Value) -> bool {
    spec.namespace
        .as_deref()
        .is_none_or(|ns| meta::namespace(obj) == ns)
}

/// The event a watcher with selectors sees: objects leaving the selection look DELETED,
/// objects entering it look ADDED.
fn to_event(spec: &WatchSpec, change: &Change) -> Option<Value> {
    if change.res != spec.res || !in_scope(spec, &change.object) {
        return None;
    }
    let now_in = spec.selection.matches(&change.object);
    let was_in = change
        .prev
        .as_deref()
        .is_some_and(|p| spec.selection.matches(p));
    let kind = match change.kind {
        EventType::Added if now_in => EventType::Added,
        EventType::Modified if now_in && was_in => EventType::Modified,
        EventType::Modified if now_in => EventType::Added,
        EventType::Modified if was_in => EventType::Deleted,
        EventType::Deleted if now_in => EventType::Deleted,
        _ => return None,
    };
    Some(json!({ "type": kind.as_str(), "object": *change.object }))
}

fn bookmark(res: Res, rv: u64, initial_end: bool) -> Value {
    let mut metadata = json!({ "resourceVersion": rv.to_string() });
    if initial_end {
        metadata.set(
            "annotations",
            json!({ "k8s.io/initial-events-end": "true" }),
        );
    }
    json!({
        "type": "BOOKMARK",
        "object": { "kind": res.kind(), "apiVersion": res.api_version(), "metadata": metadata },
    })
}
