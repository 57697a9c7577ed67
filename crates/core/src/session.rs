//! One connected cluster, opened the same way by the TUI and `headless`: its pods watched
//! into a cache named after it, an executor under the one policy, and, when asked, its worker.

use std::sync::Arc;

use tokio::task::JoinHandle;

use crate::actions::{Audit, Executor};
use crate::cluster::{Cache, Cluster, Scope, WatchSettings, spawn_watches};
use crate::policy::Policy;
use crate::worker::{self, WorkerHandle, WorkerOptions};

pub struct ClusterSession {
    /// The context's name: on screen, in findings, in audit records.
    pub name: String,
    pub client: kube::Client,
    pub cache: Cache,
    pub executor: Arc<Executor>,
    /// Stopped when the session is dropped.
    watches: Vec<JoinHandle<()>>,
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
    ) -> ClusterSession {
        let cache = Cache::for_cluster(&cluster.name, policy.chain().to_vec());
        let watches = spawn_watches(&cluster.client, scopes, &cache, watch);
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
        }
    }

    /// This cluster's auto-clean worker, under the same policy.
    pub fn spawn_worker(&self, policy: &Policy, options: WorkerOptions) -> WorkerHandle {
        let options = WorkerOptions {
            cluster: self.name.clone(),
            ..options
        };
        worker::spawn(self.cache.clone(), self.executor.clone(), policy, options)
    }
}

impl Drop for ClusterSession {
    fn drop(&mut self) {
        for watch in &self.watches {
            watch.abort();
        }
    }
}
