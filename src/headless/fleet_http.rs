//! `/v1/` over HTTP: the index, the snapshot, and the watch as a chunked stream of lines.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use super::fleet::Feed;
use opc_core::fleet::{Epoch, OVER_BOUND, Resume};

pub(crate) type Body = UnsyncBoxBody<Bytes, Infallible>;

/// What `/v1/` answers, and whether it is a stream (which outlives a plain connection).
pub(crate) enum Answer {
    Whole(u16, &'static str, Bytes),
    Stream(Body),
}

const INDEX: &str = "ops-pod-cleaner worker findings, as JSON:\n\
    /v1/snapshot  the abnormal pods, counts per category, the worker's status and how current its view is\n\
    /v1/watch?since=SEQ&epoch=E  a snapshot (or the frames after SEQ), then every change as JSON lines, and a heartbeat when idle\n\
    /v1/findings/UID  one pod's row now, or null\n\
    /v1/report  the restart report as it stands\n";

/// JSON lines: one frame each.
pub(crate) const NDJSON: &str = "application/x-ndjson";

/// The answer to `path` under `/v1`, or None for a path that is not one of them.
pub(crate) fn answer(feed: &Arc<Feed>, path: &str, query: Option<&str>) -> Option<Answer> {
    match path {
        "/v1" | "/v1/" => Some(text(200, INDEX.as_bytes())),
        "/v1/snapshot" => Some(within_bound(feed, feed.snapshot()).map_or_else(|over| over, json)),
        "/v1/watch" => Some(watch(feed.clone(), resume_of(query))),
        "/v1/report" => Some(match feed.restarts() {
            Some(report) => json(report),
            None => text(404, b"this worker builds no restart report\n"),
        }),
        _ => {
            let uid = path.strip_prefix("/v1/findings/")?;
            Some(json(feed.finding(uid)))
        }
    }
}

fn json(body: Bytes) -> Answer {
    Answer::Whole(200, "application/json", body)
}

fn text(code: u16, body: &'static [u8]) -> Answer {
    Answer::Whole(code, "text/plain", Bytes::from_static(body))
}

/// `since=SEQ&epoch=E`; anything else (absent, partial, not numbers) starts from a snapshot.
fn resume_of(query: Option<&str>) -> Option<Resume> {
    let (mut seq, mut epoch) = (None, None);
    for pair in query?.split('&') {
        match pair.split_once('=') {
            Some(("since", n)) => seq = n.parse().ok(),
            Some(("epoch", e)) => epoch = e.parse().ok().map(Epoch),
            _ => {}
        }
    }
    Some(Resume {
        seq: seq?,
        epoch: epoch?,
    })
}

/// A stream's place: lines to send, the queue it reads, and when it ends.
struct Watching {
    feed: Arc<Feed>,
    queued: VecDeque<Bytes>,
    lines: broadcast::Receiver<Bytes>,
    ends: tokio::time::Instant,
}

/// `line`, or the 413 a client reads as "more than the feed carries" (`source: auto` then
/// watches the cluster directly). The worker says so in its log, once until it fits again.
fn within_bound(feed: &Feed, line: Bytes) -> Result<Bytes, Answer> {
    let (max, said) = (feed.settings().max_line, &feed.over_bound_said);
    if line.len() <= max {
        said.store(false, Ordering::Relaxed);
        return Ok(line);
    }
    let message = format!(
        "the findings are {} bytes as one snapshot, over the feed's bound of {max}: \
         watch this cluster directly (source: watch or auto)",
        line.len()
    );
    if !said.swap(true, Ordering::Relaxed) {
        tracing::warn!("/v1 refuses its snapshot: {message}");
    }
    let status = serde_json::json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Failure", "reason": OVER_BOUND, "code": 413, "message": message});
    Err(Answer::Whole(
        413,
        "application/json",
        Bytes::from(status.to_string()),
    ))
}

fn watch(feed: Arc<Feed>, resume: Option<Resume>) -> Answer {
    let (first, lines) = feed.open(resume);
    let mut queued = VecDeque::new();
    for line in first {
        match within_bound(&feed, line) {
            Ok(line) => queued.push_back(line),
            Err(over) => return over,
        }
    }
    let ends = tokio::time::Instant::now() + feed.settings().stream_lifetime;
    let watching = Watching {
        feed,
        queued,
        lines,
        ends,
    };
    let lines = futures::stream::unfold(watching, next_line);
    Answer::Stream(StreamBody::new(lines).boxed_unsync())
}

/// The next line for a stream. One that lagged past its queue starts again from a snapshot,
/// rather than missing frames silently; one past its lifetime ends (the client resumes).
async fn next_line(
    mut w: Watching,
) -> Option<(Result<hyper::body::Frame<Bytes>, Infallible>, Watching)> {
    loop {
        if let Some(line) = w.queued.pop_front() {
            return Some((Ok(hyper::body::Frame::data(line)), w));
        }
        let received = tokio::select! {
            received = w.lines.recv() => received,
            _ = tokio::time::sleep_until(w.ends) => return None,
        };
        match received {
            Ok(line) => w.queued.push_back(line),
            Err(RecvError::Lagged(missed)) => {
                tracing::debug!("a watch fell {missed} frames behind: sending a snapshot");
                let (first, lines) = w.feed.open(None);
                // A snapshot over the bound ends the stream: the client's next watch hears why.
                if first
                    .iter()
                    .any(|line| line.len() > w.feed.settings().max_line)
                {
                    return None;
                }
                w.queued = first.into();
                w.lines = lines;
            }
            Err(RecvError::Closed) => return None,
        }
    }
}

/// A whole answer as the same body type as a stream.
pub(crate) fn whole(body: impl Into<Bytes>) -> Body {
    Full::new(body.into()).boxed_unsync()
}
