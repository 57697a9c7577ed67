//! One connected cluster, opened the same way by the TUI and `headless`: its pods, their
//! Events and its nodes watched into a cache named after it, an executor under the one
//! policy, and, when asked, its worker.

use std::sync::Arc;

use tokio::task::JoinHandle;

use crate::actions::{Audit, Executor};
use crate::clock::Clock;
use crate::cluster::{
    Cache, Cluster, ClusterName, Scope, WatchSettings, spawn_event_watches, spawn_node_watch,
    spawn_watches,
};
use crate::policy::Policy;
use crate::worker::{self, Standby, WorkerCommand, WorkerHandle, WorkerOptions};

pub struct ClusterSession {
    /// The context's name: on screen, in findings, in audit records.
    pub name: ClusterName,
    pub client: kube::Client,
    pub cache: Cache,
    pub executor: Arc<Executor>,
    /// Its watches and the cache's promotion: stopped when the session is dropped.
    watches: Vec<JoinHandle<()>>,
    /// Its worker's commands, to stand it by first when the session is dropped. Weak: the
    /// worker ends when its owner drops the handle, and this must not keep it alive.
    worker: std::sync::OnceLock<tokio::sync::mpsc::WeakSender<WorkerCommand>>,
}

impl ClusterSession {
    /// Watch `scopes` of `cluster`, and act on it under `policy`, writing to `audit` (shared
    /// by every cluster of a process, so record ids stay unique). Its findings, worker and
    /// freshness read time from `clock`.
    pub fn open(
        cluster: Cluster,
        scopes: &[Scope],
        watch: &WatchSettings,
        policy: &Policy,
        audit: Audit,
        clock: Clock,
    ) -> ClusterSession {
        let cache = Cache::for_cluster(&cluster.name, policy.chain().to_vec(), clock);
        let mut watches = spawn_watches(&cluster.client, scopes, &cache, watch);
        watches.extend(spawn_event_watches(&cluster.client, scopes, &cache, watch));
        watches.push(spawn_node_watch(&cluster.client, &cache, watch));
        watches.push(cache.spawn_promotion());
        let executor = Executor::new(
            cluster.client.clone(),
            cache.clone(),
            policy,
            &cluster.name,
            audit,
        );
        ClusterSession {
            name: cluster.name,
            client: cluster.client,
            cache,
            executor: Arc::new(executor),
            watches,
            worker: std::sync::OnceLock::new(),
        }
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
