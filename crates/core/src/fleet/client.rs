//! Reading one cluster's worker through the API server's service proxy, for as long as the
//! screen shows it: one task per cluster, its state published on a watch channel.
//!
//! The task opens `/v1/watch` through the proxy with the engineer's own client, reads it as it
//! arrives (bounded by [`Limits`]), and folds its frames into a [`FleetView`]. A gap (missed
//! frames, a restarted worker) reconnects from where the view is; a failure keeps the findings
//! on show, marked stale, and reconnects after a jittered backoff. Every wait has a deadline: a
//! stream that says nothing (heartbeats included) for `silence` is dead.

use std::pin::pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{AsyncBufRead, AsyncBufReadExt};
use kube::Client;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::{FeedError, FleetView, Frame, Gap, Limits, LineReader, WorkerAddress};
use crate::clock::Clock;
use crate::cluster::{Backoff, ClusterName, SourceHealth};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedSettings {
    /// A stream with nothing for this long is dead, and an answer not come by then given up.
    pub silence: Duration,
    pub min_backoff: Duration,
    pub max_backoff: Duration,
    pub limits: Limits,
}

impl Default for FeedSettings {
    /// Silence at three heartbeats of `headless` (one every 5 s): a lost heartbeat or two is
    /// no outage, and a dead stream shows within the bound a direct watch has (20 s).
    fn default() -> FeedSettings {
        FeedSettings {
            silence: Duration::from_secs(15),
            min_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(5),
            limits: Limits::default(),
        }
    }
}

/// One cluster's feed: its state as it changes. Dropping it stops the task.
#[derive(Debug)]
pub struct FeedHandle {
    state: watch::Receiver<FeedState>,
    address: WorkerAddress,
    silence: Duration,
    task: JoinHandle<()>,
}

/// Start reading the worker at `address`, its rows listed as `cluster`'s.
pub fn spawn_feed(
    client: Client,
    cluster: ClusterName,
    address: WorkerAddress,
    settings: FeedSettings,
    clock: Clock,
) -> FeedHandle {
    let (state, reader) = watch::channel(FeedState::new(cluster, settings.limits.max_rows));
    let feed = Feed {
        client,
        address: address.clone(),
        settings,
        clock,
        state,
        proved: None,
    };
    FeedHandle {
        state: reader,
        address,
        silence: settings.silence,
        task: tokio::spawn(run(feed)),
    }
}

impl FeedHandle {
    pub fn address(&self) -> &WorkerAddress {
        &self.address
    }

    /// What `read` makes of the state now, without a copy of it.
    pub fn read<T>(&self, read: impl FnOnce(&FeedState) -> T) -> T {
        read(&self.state.borrow())
    }

    pub fn subscribe(&self) -> watch::Receiver<FeedState> {
        self.state.clone()
    }

    /// Wait for the first answer (findings, current or not) or failure; bounded, as an attempt is.
    pub async fn first_outcome(&self) -> Result<(), FeedError> {
        let mut state = self.state.clone();
        let within = self.silence * 2;
        let answered = state.wait_for(|s| !matches!(s.status(), FeedStatus::Connecting));
        match tokio::time::timeout(within, answered).await {
            Ok(Ok(state)) => match state.status() {
                FeedStatus::Failing(error) => Err(error.clone()),
                _ => Ok(()),
            },
            // The task is gone: it ends only when aborted.
            Ok(Err(_)) => Err(FeedError::Ended),
            Err(_) => Err(FeedError::Silent { after: within }),
        }
    }
}

impl Drop for FeedHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What a screen reads of one worker-fed cluster: the findings as last read, and whether they
/// are current. Cheap to clone: the findings are shared, not copied.
#[derive(Debug, Clone)]
pub struct FeedState {
    view: Arc<FleetView>,
    status: FeedStatus,
}

/// How current a worker-fed cluster's findings are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum FeedStatus {
    /// Nothing answered yet.
    #[default]
    Connecting,
    /// The stream is live and the worker's own view is current.
    Live,
    /// The findings on show have not been proved current since `since`.
    Stale { since: Instant, why: StaleWhy },
    /// No findings were ever read: why the last attempt failed. Retrying.
    Failing(FeedError),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StaleWhy {
    WorkerStale,
    /// The worker has not listed its cluster yet.
    WorkerNotSynced,
    /// The stream failed; reconnecting.
    Lost(FeedError),
}

impl FeedState {
    pub(crate) fn new(cluster: ClusterName, max_rows: usize) -> FeedState {
        FeedState {
            view: Arc::new(FleetView::new(cluster, max_rows)),
            status: FeedStatus::Connecting,
        }
    }

    pub fn view(&self) -> &FleetView {
        &self.view
    }

    pub fn shared_view(&self) -> Arc<FleetView> {
        Arc::clone(&self.view)
    }

    pub fn status(&self) -> &FeedStatus {
        &self.status
    }

    /// The view to change: copied only if a reader still holds the last one.
    pub(crate) fn view_mut(&mut self) -> &mut FleetView {
        Arc::make_mut(&mut self.view)
    }

    /// The status the view itself says, after a frame: live unless the worker says otherwise.
    fn heard(&mut self, now: Instant) {
        let health = self.view.view();
        self.status = if !health.synced {
            FeedStatus::Stale {
                since: self.stale_since(now),
                why: StaleWhy::WorkerNotSynced,
            }
        } else if health.stale {
            let age = health.age().unwrap_or(Duration::ZERO);
            FeedStatus::Stale {
                since: now.checked_sub(age).unwrap_or(now),
                why: StaleWhy::WorkerStale,
            }
        } else {
            FeedStatus::Live
        };
    }

    /// The stream failed; `proved` is when the findings were last proved current. Findings
    /// stay on show, stale from the earliest moment they were not current.
    fn lost(&mut self, error: FeedError, proved: Option<Instant>, now: Instant) {
        self.status = match self.view.resume() {
            None => FeedStatus::Failing(error),
            Some(_) => FeedStatus::Stale {
                since: self.stale_since(proved.unwrap_or(now)),
                why: StaleWhy::Lost(error),
            },
        };
    }

    fn stale_since(&self, at: Instant) -> Instant {
        match &self.status {
            FeedStatus::Stale { since, .. } => (*since).min(at),
            _ => at,
        }
    }
}

impl FeedStatus {
    /// Why the feed is not live, when it failed.
    pub fn error(&self) -> Option<&FeedError> {
        match self {
            FeedStatus::Failing(error)
            | FeedStatus::Stale {
                why: StaleWhy::Lost(error),
                ..
            } => Some(error),
            _ => None,
        }
    }

    /// How current a cache this feed stands for is, at `now`.
    pub fn source_health(&self, now: Instant) -> SourceHealth {
        match self {
            FeedStatus::Connecting
            | FeedStatus::Stale {
                why: StaleWhy::WorkerNotSynced,
                ..
            } => SourceHealth::default(),
            FeedStatus::Live => SourceHealth {
                synced: true,
                proved: Some(now),
                error: None,
            },
            FeedStatus::Stale { since, why } => SourceHealth {
                synced: true,
                proved: Some(*since),
                error: Some(match why {
                    StaleWhy::Lost(error) => error.to_string(),
                    _ => "the worker's own view of its cluster is stale".to_string(),
                }),
            },
            FeedStatus::Failing(error) => SourceHealth {
                error: Some(error.to_string()),
                ..SourceHealth::default()
            },
        }
    }
}

struct Feed {
    client: Client,
    address: WorkerAddress,
    settings: FeedSettings,
    clock: Clock,
    state: watch::Sender<FeedState>,
    /// When a frame last proved the findings current.
    proved: Option<Instant>,
}

/// How one connection ended, and whether it read anything first.
enum Ended {
    /// Frames were missed or the worker restarted: reconnect from where the view is, which
    /// brings what was missed or a new snapshot.
    Gap {
        read: bool,
    },
    /// The worker ended a stream that had spoken, as it does at the end of a stream's
    /// lifetime: no failure, the findings are as current as its last frame.
    Closed,
    Failed {
        error: FeedError,
        read: bool,
    },
}

/// Never returns: errors are shown and retried, never propagated. Every reconnection waits a
/// jittered backoff, the least after a connection that read something: a worker that sends
/// a gap at once, again and again, is not asked again and again at once.
async fn run(mut feed: Feed) {
    let settings = feed.settings;
    let mut backoff = Backoff::new(settings.min_backoff, settings.max_backoff);
    // The last failure logged: one that repeats every backoff is logged once.
    let mut said: Option<FeedError> = None;
    loop {
        let read = match feed.connection().await {
            Ended::Gap { read } => {
                tracing::debug!(address = %feed.address, "a gap in the worker's feed; resuming");
                read
            }
            Ended::Closed => {
                tracing::debug!(address = %feed.address, "the worker ended its feed; resuming");
                true
            }
            Ended::Failed { error, read } => {
                // No worker at all is how most clusters start: `auto` then watches, and the
                // clusters dialog says why; it is news only once a feed was read.
                let news = read || feed.proved.is_some() || !error.means_no_worker();
                if news && (read || said.as_ref() != Some(&error)) {
                    tracing::warn!(address = %feed.address, "{error}");
                } else {
                    tracing::debug!(address = %feed.address, "{error}");
                }
                let (now, proved) = (feed.clock.instant(), feed.proved);
                feed.state
                    .send_modify(|state| state.lost(error.clone(), proved, now));
                said = Some(error);
                read
            }
        };
        if read {
            backoff.reset();
        }
        backoff.wait().await;
    }
}

impl Feed {
    /// One request, read to its end: how it ended.
    async fn connection(&mut self) -> Ended {
        let silence = self.settings.silence;
        let failed = |error| Ended::Failed { error, read: false };
        let resume = self.state.borrow().view().resume();
        let path = self.address.watch_path(resume);
        let request = match http::Request::get(path).body(Vec::new()) {
            Ok(request) => request,
            Err(e) => return failed(FeedError::Transport(e.to_string())),
        };
        let body = match tokio::time::timeout(silence, self.client.request_stream(request)).await {
            Err(_) => return failed(FeedError::Silent { after: silence }),
            Ok(Err(e)) => return failed(FeedError::of(&e, &self.address)),
            Ok(Ok(body)) => body,
        };
        let mut body = pin!(body);
        let mut lines = LineReader::new(self.settings.limits);
        let mut read = false;
        loop {
            // Any bytes keep the stream alive: a large snapshot may take longer than the bound
            // to arrive whole. A trickle cannot hold it alive forever: a line is bounded.
            let error = match tokio::time::timeout(silence, body.as_mut().fill_buf()).await {
                Err(_) => FeedError::Silent { after: silence },
                Ok(Err(e)) => FeedError::Transport(crate::cluster::causes(&e)),
                Ok(Ok([])) if read => return Ended::Closed,
                // Ended before a word: a proxy or worker that closes at once is a failure.
                Ok(Ok([])) => FeedError::Ended,
                Ok(Ok(chunk)) => {
                    let decoded = lines.feed(chunk);
                    let taken = chunk.len();
                    AsyncBufRead::consume(body.as_mut(), taken);
                    match decoded {
                        Ok(frames) => match self.fold(frames) {
                            Ok(folded) => {
                                read |= folded;
                                continue;
                            }
                            Err(Gap::TooManyRows { max }) => FeedError::TooManyRows { max },
                            Err(_) => return Ended::Gap { read },
                        },
                        Err(e) => FeedError::Protocol(e),
                    }
                }
            };
            return Ended::Failed { error, read };
        }
    }

    /// Fold `frames` into the view and say how current it is; whether any was folded. Stops
    /// at a gap, keeping what came before it.
    fn fold(&mut self, frames: Vec<Frame>) -> Result<bool, Gap> {
        if frames.is_empty() {
            return Ok(false);
        }
        let now = self.clock.instant();
        let mut folded = false;
        let mut gap = None;
        // A snapshot's line, rows and the view they replace are megabytes, freed at once.
        let snapshot = frames.iter().any(|f| matches!(f, Frame::Snapshot(_)));
        self.state.send_modify(|state| {
            let view = state.view_mut();
            for frame in frames {
                if let Err(e) = view.apply(frame) {
                    gap = Some(e);
                    break;
                }
                folded = true;
            }
            if folded {
                state.heard(now);
            }
        });
        if folded {
            self.proved = Some(now);
        }
        if snapshot {
            crate::memory::burst_ended();
        }
        gap.map_or(Ok(folded), Err)
    }
}
