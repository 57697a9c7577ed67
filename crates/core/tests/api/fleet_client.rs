//! A worker-fed cluster's status as its feed reads a worker that answers as it is told to:
//! failing until findings were read, then stale from when they were last proved current, and
//! stale too when the worker says its own view is.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use http_body_util::StreamBody;
use hyper::body::Frame as BodyFrame;
use opc_core::clock::Clock;
use opc_core::cluster::ClusterName;
use opc_core::fleet::{
    Epoch, FeedError, FeedHandle, FeedSettings, FeedState, FeedStatus, Frame, Publisher, StaleWhy,
    ViewHealth, WorkerAddress, spawn_feed,
};

use crate::fleet::line;

/// What a worker answers one request with: the pieces of its body as they come.
pub(crate) type Body = BoxStream<'static, Result<BodyFrame<Bytes>, std::io::Error>>;

/// A body of `lines`, then its end.
pub(crate) fn lines(lines: Vec<Vec<u8>>) -> Body {
    futures::stream::iter(
        lines
            .into_iter()
            .map(|l| Ok(BodyFrame::data(Bytes::from(l)))),
    )
    .boxed()
}

/// A worker whose answers to one request after another are `bodies`, each with 200; it never
/// answers a request after the last.
pub(crate) fn worker(bodies: Vec<Body>) -> kube::Client {
    let bodies = Arc::new(Mutex::new(VecDeque::from(bodies)));
    let service = tower::service_fn(move |_: http::Request<kube::client::Body>| {
        let body = bodies.lock().unwrap().pop_front();
        async move {
            match body {
                Some(body) => Ok::<_, Infallible>(http::Response::new(StreamBody::new(body))),
                None => std::future::pending().await,
            }
        }
    });
    kube::Client::new(service, "default")
}

/// A snapshot of no findings whose worker says `view` of its own.
pub(crate) fn snapshot(view: ViewHealth) -> Vec<u8> {
    let mut snapshot = Publisher::new(Epoch(1), chrono::Utc::now()).snapshot();
    snapshot.view = view;
    line(&Frame::Snapshot(snapshot))
}

/// The feed of a worker answering with `bodies`, each reconnection a few seconds later.
pub(crate) fn feed(bodies: Vec<Body>) -> FeedHandle {
    let settings = FeedSettings {
        min_backoff: Duration::from_secs(3),
        max_backoff: Duration::from_secs(3),
        ..FeedSettings::default()
    };
    let address = WorkerAddress::default();
    spawn_feed(
        worker(bodies),
        ClusterName::default(),
        address,
        settings,
        Clock::real(),
    )
}

/// The feed's next status that `is` accepts.
async fn status(feed: &FeedHandle, is: impl Fn(&FeedStatus) -> bool) -> FeedStatus {
    let mut state = feed.subscribe();
    let seen = state.wait_for(|s: &FeedState| is(s.status())).await;
    seen.unwrap().status().clone()
}

fn current() -> ViewHealth {
    ViewHealth {
        synced: true,
        ..ViewHealth::default()
    }
}

#[tokio::test(start_paused = true)]
async fn a_failure_before_any_snapshot_is_failing_and_after_one_is_stale_since_the_proof() {
    let fresh = feed(vec![lines(Vec::new())]);
    assert_eq!(fresh.first_outcome().await, Err(FeedError::Ended));
    assert_eq!(
        fresh.read(|s| s.status().clone()),
        FeedStatus::Failing(FeedError::Ended)
    );

    // The third answer proves the stream again, but not the worker's view, then fails.
    let heartbeat =
        line(&Publisher::new(Epoch(1), chrono::Utc::now()).heartbeat(chrono::Utc::now()));
    let reset = futures::stream::iter([
        Ok(BodyFrame::data(Bytes::from(heartbeat))),
        Err(std::io::Error::other("reset")),
    ]);
    let state = feed(vec![
        lines(vec![snapshot(current())]),
        lines(Vec::new()),
        reset.boxed(),
    ]);
    assert_eq!(
        status(&state, |s| *s == FeedStatus::Live).await,
        FeedStatus::Live
    );
    let proved = Clock::real().instant();
    let lost = status(&state, |s| matches!(s, FeedStatus::Stale { .. })).await;
    assert_eq!(
        lost,
        FeedStatus::Stale {
            since: proved,
            why: StaleWhy::Lost(FeedError::Ended)
        }
    );
    assert!(
        Clock::real().instant() > proved,
        "it failed later than it was proved"
    );
    // A later failure does not make it look stale for less long.
    let later = status(&state, |s| {
        matches!(s.error(), Some(FeedError::Transport(_)))
    })
    .await;
    assert!(matches!(later, FeedStatus::Stale { since, .. } if since == proved));
    // The body's error, as the client reads it.
    let reset = FeedError::Transport("ServiceError: reset".into());
    assert_eq!(later.error(), Some(&reset));
}

#[tokio::test(start_paused = true)]
async fn the_workers_own_word_on_its_view_is_shown() {
    let unsynced = feed(vec![lines(vec![snapshot(ViewHealth::default())])]);
    assert!(matches!(
        status(&unsynced, |s| *s != FeedStatus::Connecting).await,
        FeedStatus::Stale {
            why: StaleWhy::WorkerNotSynced,
            ..
        }
    ));
    let stale = feed(vec![lines(vec![snapshot(ViewHealth {
        stale: true,
        age_seconds: Some(30),
        ..current()
    })])]);
    let told = status(&stale, |s| *s != FeedStatus::Connecting).await;
    let since = Clock::real().instant().checked_sub(Duration::from_secs(30));
    assert!(matches!(
        told,
        FeedStatus::Stale { since: s, why: StaleWhy::WorkerStale } if Some(s) == since
    ));
}
