//! `SimCluster`: the shared in-memory cluster state behind the simulated API server.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use tokio::sync::watch;

use super::faults::FaultState;
use super::store::Store;
use super::{controllers, nodes, pods};

/// Decides the status of pods the simulated kubelet starts.
pub type PodShaper = Arc<dyn Fn(&mut Pod) + Send + Sync>;

/// Everything behind the lock.
pub struct State {
    pub store: Store,
    /// Node name → alive (its kubelet runs and finishes graceful deletions).
    pub nodes: BTreeMap<String, bool>,
    pub shaper: Option<PodShaper>,
    pub faults: FaultState,
    pub bookmark_interval: Duration,
    /// Namespaces created through the API (others exist implicitly while they hold objects).
    pub namespaces: BTreeSet<String>,
    /// Watch requests served so far (a client reconnecting in a hot loop shows here).
    pub watches_served: u64,
    next_node: usize,
    rand: u64,
}

impl State {
    fn new() -> Self {
        Self {
            store: Store::new(),
            nodes: BTreeMap::new(),
            shaper: None,
            faults: FaultState::default(),
            bookmark_interval: Duration::from_secs(1),
            namespaces: BTreeSet::new(),
            watches_served: 0,
            next_node: 0,
            rand: 0x9e37_79b9_7f4a_7c15,
        }
    }

    /// The next alive node, round robin (what the "scheduler" picks).
    pub fn pick_node(&mut self) -> Option<String> {
        let alive: Vec<&String> = self
            .nodes
            .iter()
            .filter(|(_, a)| **a)
            .map(|(n, _)| n)
            .collect();
        if alive.is_empty() {
            return None;
        }
        let node = alive[self.next_node % alive.len()].clone();
        self.next_node += 1;
        Some(node)
    }

    /// A random 5-character suffix from the alphabet Kubernetes uses for generated names.
    pub fn name_suffix(&mut self) -> String {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        (0..5)
            .map(|_| {
                self.rand ^= self.rand << 13;
                self.rand ^= self.rand >> 7;
                self.rand ^= self.rand << 17;
                ALPHABET[(self.rand % ALPHABET.len() as u64) as usize] as char
            })
            .collect()
    }
}

struct Inner {
    state: Mutex<State>,
    /// Bumped after every mutation so watches wake up.
    wake: watch::Sender<u64>,
}

/// The simulated cluster. Cheap to clone; all clones share one state.
#[derive(Clone)]
pub struct SimCluster {
    inner: Arc<Inner>,
}

/// Nodes every new cluster starts with.
pub const DEFAULT_NODES: [&str; 3] = ["sim-node-1", "sim-node-2", "sim-node-3"];

impl Default for SimCluster {
    fn default() -> Self {
        Self::new()
    }
}

impl SimCluster {
    /// A cluster with three alive nodes and nothing else.
    pub fn new() -> Self {
        let (wake, _) = watch::channel(0);
        let cluster = Self {
            inner: Arc::new(Inner {
                state: Mutex::new(State::new()),
                wake,
            }),
        };
        cluster.mutate(|s| {
            for node in DEFAULT_NODES {
                nodes::add_node(s, node);
            }
        });
        cluster
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere must not take the whole simulated server down with it.
        self.inner.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Read the state without waking watchers.
    pub(crate) fn read<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        f(&mut self.lock())
    }

    /// Change the state, run the controllers, then wake watchers.
    pub(crate) fn mutate<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        let out = {
            let mut state = self.lock();
            let out = f(&mut state);
            controllers::reconcile(&mut state);
            out
        };
        self.inner.wake.send_modify(|n| *n += 1);
        out
    }

    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.wake.subscribe()
    }

    /// One pass of the simulated kubelets: finish graceful deletions whose grace expired.
    /// The server runs this every 100 ms; tests without a server may call it directly.
    pub fn tick(&self) {
        let changed = {
            let mut state = self.lock();
            let before = state.store.rv();
            pods::kubelet_pass(&mut state, chrono::Utc::now());
            let changed = state.store.rv() != before;
            if changed {
                controllers::reconcile(&mut state);
            }
            changed
        };
        // Wake watchers only for real changes: this runs ten times a second.
        if changed {
            self.inner.wake.send_modify(|n| *n += 1);
        }
    }

    /// Mark a node alive or lost. A lost node's kubelet no longer finishes deletions.
    pub fn set_node_alive(&self, node: &str, alive: bool) {
        self.mutate(|s| nodes::set_alive(s, node, alive));
    }

    /// Let scenarios decide the status of pods the kubelet starts (after the default
    /// Running/Ready status is applied), e.g. to make a bad image stay in ImagePullBackOff.
    pub fn set_pod_shaper(&self, shaper: impl Fn(&mut Pod) + Send + Sync + 'static) {
        self.read(|s| s.shaper = Some(Arc::new(shaper)));
    }

    /// How often watches with `allowWatchBookmarks=true` get a BOOKMARK.
    pub fn set_bookmark_interval(&self, every: Duration) {
        self.read(|s| s.bookmark_interval = every.max(Duration::from_millis(10)));
    }

    /// How many changes are kept for watch replay and consistent paging (default 10,000).
    pub fn set_history_limit(&self, changes: usize) {
        self.read(|s| s.store.set_history_limit(changes));
    }

    /// Drop all change history now: every older resourceVersion becomes 410 Expired.
    pub fn compact(&self) {
        self.mutate(|s| s.store.compact());
    }

    /// How many watch requests the server has answered so far.
    pub fn watches_served(&self) -> u64 {
        self.read(|s| s.watches_served)
    }

    /// The current global resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.read(|s| s.store.rv())
    }
}
