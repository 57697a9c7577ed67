//! What a screen reads of one worker-fed cluster: the findings as last read, and whether they
//! are current. Cheap to clone: the findings are shared, not copied.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{FeedError, FleetView};
use crate::cluster::ClusterName;

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
    /// The worker says its own view of the cluster is stale.
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

    /// The worker's findings, counts and status as last read.
    pub fn view(&self) -> &FleetView {
        &self.view
    }

    /// The view, shared: to keep without copying.
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
    pub(crate) fn heard(&mut self, now: Instant) {
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
    pub(crate) fn lost(&mut self, error: FeedError, proved: Option<Instant>, now: Instant) {
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

    pub fn is_live(&self) -> bool {
        matches!(self, FeedStatus::Live)
    }
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::*;
    use crate::fleet::{Epoch, Frame, Snapshot, ViewHealth, WorkerView};

    fn with_snapshot(view: ViewHealth) -> FeedState {
        let mut state = FeedState::new(ClusterName::default(), 10);
        let snapshot = Snapshot {
            epoch: Epoch(1),
            seq: 0,
            at: Utc::now(),
            findings: Vec::new(),
            counts: Default::default(),
            worker: WorkerView::default(),
            view,
        };
        let applied = state.view_mut().apply(Frame::Snapshot(snapshot));
        assert_eq!(applied, Ok(()));
        state
    }

    fn current() -> ViewHealth {
        ViewHealth {
            synced: true,
            ..ViewHealth::default()
        }
    }

    #[test]
    fn a_failure_before_any_snapshot_is_failing_and_after_one_is_stale_since_the_proof() {
        let now = Instant::now();
        let mut fresh = FeedState::new(ClusterName::default(), 10);
        fresh.lost(FeedError::Ended, None, now);
        assert_eq!(fresh.status(), &FeedStatus::Failing(FeedError::Ended));

        let mut state = with_snapshot(current());
        state.heard(now);
        assert!(state.status().is_live());
        let proved = now - Duration::from_secs(3);
        state.lost(FeedError::Ended, Some(proved), now);
        assert_eq!(
            state.status(),
            &FeedStatus::Stale {
                since: proved,
                why: StaleWhy::Lost(FeedError::Ended)
            }
        );
        // A later failure does not make it look stale for less long.
        state.lost(FeedError::Transport("reset".into()), Some(now), now);
        assert!(matches!(state.status(), FeedStatus::Stale { since, .. } if *since == proved));
        assert_eq!(
            state.status().error(),
            Some(&FeedError::Transport("reset".into()))
        );
    }

    #[test]
    fn the_workers_own_word_on_its_view_is_shown() {
        let now = Instant::now();
        let mut unsynced = with_snapshot(ViewHealth::default());
        unsynced.heard(now);
        assert!(matches!(
            unsynced.status(),
            FeedStatus::Stale {
                why: StaleWhy::WorkerNotSynced,
                ..
            }
        ));
        let mut stale = with_snapshot(ViewHealth {
            stale: true,
            age_seconds: Some(30),
            ..current()
        });
        stale.heard(now);
        let since = now.checked_sub(Duration::from_secs(30));
        assert!(matches!(
            stale.status(),
            FeedStatus::Stale { since: s, why: StaleWhy::WorkerStale } if Some(*s) == since
        ));
    }
}
