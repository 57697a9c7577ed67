//! One connected cluster, opened the same way by the TUI and `headless`: its pods, their
//! Events and its nodes watched into a cache named after it, an executor under the one
//! policy, and, when asked, its worker. A screen may instead read a cluster through its
//! in-cluster worker: then no watch fills the cache, which holds only the pods read live to
//! act on, and is exactly as current as the worker's feed.

use std::sync::Arc;

use tokio::task::JoinHandle;

use crate::actions::{Audit, Executor};
use crate::clock::Clock;
use crate::cluster::{
    Cache, Cluster, ClusterName, Scope, WatchSettings, spawn_event_watches, spawn_node_watch,
    spawn_watches,
};
use crate::config::Source;
use crate::fleet::{
    FedCluster, FeedHandle, FeedSettings, WatchWhy, WorkerAddress, decide, reconsider, spawn_feed,
};
use crate::policy::Policy;
use crate::worker::{self, Standby, WorkerCommand, WorkerHandle, WorkerOptions};

/// Where a session's findings come from.
#[derive(Debug)]
pub enum Feed {
    /// A watch of its pods from here, and why it is one.
    Watched(WatchWhy),
    /// Its in-cluster worker, through the API server's service proxy.
    WorkerFed(FedCluster),
}

/// Where a screen reads a cluster's findings from, and how its worker is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceChoice {
    pub source: Source,
    pub address: WorkerAddress,
    pub settings: FeedSettings,
}

impl SourceChoice {
    /// `source`, with the worker where `assets/deploy` runs it.
    pub fn of(source: Source) -> SourceChoice {
        SourceChoice {
            source,
            address: WorkerAddress::default(),
            settings: FeedSettings::default(),
        }
    }
}

pub struct ClusterSession {
    /// The context's name: on screen, in findings, in audit records.
    pub name: ClusterName,
    pub client: kube::Client,
    pub cache: Cache,
    pub executor: Arc<Executor>,
    pub feed: Feed,
    /// The source it was opened as: what decides again while its worker is read.
    pub source: Source,
    /// Its watches and the cache's promotion: stopped when the session is dropped.
    watches: Vec<JoinHandle<()>>,
    /// Its worker's commands, to stand it by first when the session is dropped. Weak: the
    /// worker ends when its owner drops the handle, and this must not keep it alive.
    worker: std::sync::OnceLock<tokio::sync::mpsc::WeakSender<WorkerCommand>>,
}

impl ClusterSession {
    /// Watch `scopes` of `cluster`, and act on it under `policy`, writing to `audit` (shared
    /// by every cluster of a process, so record ids stay unique).
    pub fn open(
        cluster: Cluster,
        scopes: &[Scope],
        watch: &WatchSettings,
        policy: &Policy,
        audit: Audit,
        clock: Clock,
    ) -> ClusterSession {
        let cache = Cache::for_cluster(cluster.name.clone(), policy.chain().to_vec(), clock);
        let mut watches = spawn_watches(&cluster.client, scopes, &cache, watch);
        watches.extend(spawn_event_watches(&cluster.client, scopes, &cache, watch));
        watches.push(spawn_node_watch(&cluster.client, &cache, watch));
        watches.push(cache.spawn_promotion());
        let executor = executor(&cluster, &cache, policy, audit);
        ClusterSession::with(cluster, cache, executor, watches)
    }

    fn with(
        cluster: Cluster,
        cache: Cache,
        executor: Executor,
        watches: Vec<JoinHandle<()>>,
    ) -> ClusterSession {
        ClusterSession {
            name: cluster.name,
            client: cluster.client,
            cache,
            executor: Arc::new(executor),
            feed: Feed::Watched(WatchWhy::Chosen),
            source: Source::Watch,
            watches,
            worker: std::sync::OnceLock::new(),
        }
    }

    /// Open `cluster` as `choice` says: watched, or through its worker. `auto` asks the
    /// worker first and watches when there is none to read (no Service, no ready endpoint, no
    /// permission), saying why; a worker that exists but hiccups stays the source, shown
    /// stale or failing until it answers. The first answer is bounded by the feed's silence.
    pub async fn open_as(
        cluster: Cluster,
        choice: &SourceChoice,
        scopes: &[Scope],
        watch: &WatchSettings,
        policy: &Policy,
        audit: Audit,
        clock: Clock,
    ) -> ClusterSession {
        let mut session = match choice.source {
            Source::Watch => ClusterSession::open(cluster, scopes, watch, policy, audit, clock),
            source => {
                let client = cluster.client.clone();
                let name = cluster.name.clone();
                let address = choice.address.clone();
                let feed = spawn_feed(client, name, address, choice.settings, clock);
                // `worker` reads it whatever it answers first: only `auto` waits to choose.
                let watch_why = match source {
                    Source::Worker => None,
                    _ => decide(source, &feed.first_outcome().await),
                };
                match watch_why {
                    None => ClusterSession::open_fed(cluster, feed, policy, audit, clock),
                    Some(why) => ClusterSession::open(cluster, scopes, watch, policy, audit, clock)
                        .watched_because(why),
                }
            }
        };
        session.source = choice.source;
        session
    }

    /// This watched session, a watch because `why`: its worker could not be read, or no longer can.
    pub fn watched_because(mut self, why: WatchWhy) -> ClusterSession {
        self.feed = Feed::Watched(why);
        self
    }

    /// Why this session, read through its worker, is to be watched instead: it was opened
    /// `auto`, and the worker's findings have outgrown the feed since.
    pub fn watch_instead(&self) -> Option<WatchWhy> {
        match &self.feed {
            Feed::WorkerFed(fed) => reconsider(self.source, &fed.view().status),
            Feed::Watched(_) => None,
        }
    }

    /// Read `cluster` through its worker's `feed`, and act on it under `policy` as on a
    /// watched one: each pod acted on is read live first, and the cache's freshness is the
    /// feed's, which the guards read.
    pub fn open_fed(
        cluster: Cluster,
        feed: FeedHandle,
        policy: &Policy,
        audit: Audit,
        clock: Clock,
    ) -> ClusterSession {
        let cache = Cache::for_cluster(cluster.name.clone(), policy.chain().to_vec(), clock);
        let executor = executor(&cluster, &cache, policy, audit).fed_by(feed.address().clone());
        let mut session = ClusterSession::with(cluster, cache.clone(), executor, Vec::new());
        session.feed = Feed::WorkerFed(FedCluster::follow(feed, cache));
        session
    }

    /// Whether its findings come from its in-cluster worker: then its cache holds only the
    /// pods read live to act on.
    pub fn is_fed(&self) -> bool {
        matches!(self.feed, Feed::WorkerFed(_))
    }

    /// This cluster's auto-clean worker, under the same policy. Dropping the session stands
    /// it by before its watches stop.
    pub fn spawn_worker(&self, policy: &Policy, options: WorkerOptions) -> WorkerHandle {
        let options = WorkerOptions {
            cluster: self.name.clone(),
            ..options
        };
        let handle = worker::spawn(self.cache.clone(), self.executor.clone(), policy, options);
        // One worker per session: a second would be a bug, and is not stood by.
        let _ = self.worker.set(handle.commands.downgrade());
        handle
    }
}

impl Drop for ClusterSession {
    /// The worker first: once the watches stop, what it sees is no longer the cluster. An
    /// action already sent finishes.
    fn drop(&mut self) {
        if let Some(worker) = self.worker.get().and_then(|w| w.upgrade()) {
            let _ = worker.try_send(WorkerCommand::SetStandby(Some(Standby::Closed)));
        }
        for watch in &self.watches {
            watch.abort();
        }
    }
}

/// The cluster's one write path, under `policy`, on `cache`.
fn executor(cluster: &Cluster, cache: &Cache, policy: &Policy, audit: Audit) -> Executor {
    Executor::new(
        cluster.client.clone(),
        cache.clone(),
        policy,
        cluster.name.clone(),
        audit,
    )
}
