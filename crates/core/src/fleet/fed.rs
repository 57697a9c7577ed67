//! One cluster a screen reads through its in-cluster worker: the feed's findings, kept once
//! as the screen lists them, a wake-up when they or the worker's status change, and the
//! cluster's cache kept exactly as current as the feed says, so the header and the safety
//! guards read a fed cluster's freshness as they read a watch's.

use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::{Counts, FeedHandle, FeedState, FeedStatus, Resume, WorkerView};
use crate::clock::Clock;
use crate::cluster::{Cache, Listed};

/// What a screen shows of a fed cluster besides its rows, as of the feed's last change.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FedView {
    /// Where the rows last changed: a screen that sees it move takes them again.
    pub rows_at: Option<Resume>,
    pub counts: Counts,
    pub worker: WorkerView,
    pub status: FeedStatus,
}

/// A fed cluster: its feed, what the screen shows of it, and the task between them. Dropping
/// it stops both.
#[derive(Debug)]
pub struct FedCluster {
    feed: FeedHandle,
    view: watch::Receiver<FedView>,
    task: JoinHandle<()>,
}

impl FedCluster {
    /// Follow `feed` into `cache`'s health and a view of its findings.
    pub fn follow(feed: FeedHandle, cache: Cache) -> FedCluster {
        let (tx, view) = watch::channel(FedView::default());
        let task = tokio::spawn(follow(feed.subscribe(), cache, tx));
        FedCluster { feed, view, task }
    }

    pub fn address(&self) -> &super::WorkerAddress {
        self.feed.address()
    }

    pub fn view(&self) -> FedView {
        self.view.borrow().clone()
    }

    /// The feed's own rows, shared, read without holding a copy of its state (which would make
    /// its next frame copy them all).
    pub fn findings(&self) -> Vec<Listed> {
        self.feed.read(|state| state.view().findings().collect())
    }

    /// How many abnormal pods the worker has.
    pub fn len(&self) -> usize {
        self.feed.read(|state| state.view().len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn subscribe(&self) -> watch::Receiver<FedView> {
        self.view.clone()
    }
}

impl Drop for FedCluster {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn follow(mut feed: watch::Receiver<FeedState>, cache: Cache, view: watch::Sender<FedView>) {
    let clock: Clock = cache.clock();
    loop {
        let state = feed.borrow_and_update().clone();
        cache.set_source_health(&state.status().source_health(clock.instant()));
        // The screen wakes for what it shows: a heartbeat or a proof that changes none of it
        // must not make it take every cluster's rows again.
        view.send_if_modified(|shown| {
            let view = state.view();
            let mut moved = replace_if_new(&mut shown.rows_at, &view.rows_at());
            moved |= replace_if_new(&mut shown.counts, view.counts());
            moved |= replace_if_new(&mut shown.worker, view.worker());
            moved |= replace_if_new(&mut shown.status, state.status());
            moved
        });
        // Let go of the view before waiting: the feed changes it in place only while no one
        // else holds it, and a copy of 5,000 rows at every heartbeat is what this avoids.
        drop(state);
        if feed.changed().await.is_err() {
            return;
        }
    }
}

fn replace_if_new<T: Clone + PartialEq>(shown: &mut T, new: &T) -> bool {
    let differs = shown != new;
    if differs {
        *shown = new.clone();
    }
    differs
}
