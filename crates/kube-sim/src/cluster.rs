//! `SimCluster`: the shared in-memory cluster state behind the simulated API server.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use tokio::sync::watch;

use super::clock::SimClock;
use super::faults::FaultState;
use super::store::Store;
use super::{controllers, nodes, pods};

/// How the server answers a streaming list (`watch=true&sendInitialEvents=true`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StreamingLists {
    /// Initial events from the watch cache, then a bookmark annotated
    /// `k8s.io/initial-events-end: "true"`, then the watch goes on (WatchList enabled).
    #[default]
    Served,
    /// 422 Invalid, as a server with the WatchList feature gate off answers.
    Rejected,
    /// `sendInitialEvents` and `resourceVersionMatch` ignored: a plain watch, as a server or
    /// proxy that does not know them may serve it.
    Ignored,
}

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
    /// Creates in a namespace that does not exist answer 404, as a real server's admission
    /// does. Off by default: most tests create objects anywhere without making the namespace.
    pub namespaces_required: bool,
    /// Watch requests served so far (a client reconnecting in a hot loop shows here).
    pub watches_served: u64,
    /// Of those, the ones answered in protobuf frames.
    pub protobuf_watches_served: u64,
    /// Requests whose `Accept` asked for protobuf, of any verb.
    pub protobuf_asked: u64,
    /// Whether watches with `sendInitialEvents=true` are served (a 1.32+ server) or not.
    pub streaming_lists: StreamingLists,
    /// Where the watch cache is held back to (None: it follows every change at once).
    pub watch_cache_held: Option<u64>,
    /// How long a request for a version the watch cache has not reached yet waits for it
    /// before the 504 "Too large resource version" (kube-apiserver waits 3 s).
    pub too_large_wait: Duration,
    /// Lists read from etcd (no resourceVersion, or an exact one): what the cache spares etcd.
    pub etcd_lists: u64,
    /// Lists answered from the watch cache (`resourceVersion=0` or `NotOlderThan`).
    pub cached_lists: u64,
    /// What each container wrote (see `set_logs`).
    pub(crate) logs: BTreeMap<crate::logs::LogKey, String>,
    /// Endpoint addresses (pod IP and port) → where a test's backend for it listens.
    pub(crate) backends: BTreeMap<std::net::SocketAddr, std::net::SocketAddr>,
    next_node: usize,
    rand: u64,
    /// The server's wall clock: every timestamp it writes reads it.
    pub clock: SimClock,
}

impl State {
    fn new(clock: SimClock) -> Self {
        Self {
            clock,
            store: Store::new(),
            nodes: BTreeMap::new(),
            shaper: None,
            faults: FaultState::default(),
            bookmark_interval: Duration::from_secs(1),
            namespaces: BTreeSet::new(),
            namespaces_required: false,
            watches_served: 0,
            protobuf_watches_served: 0,
            protobuf_asked: 0,
            streaming_lists: StreamingLists::Served,
            watch_cache_held: None,
            too_large_wait: Duration::from_secs(3),
            etcd_lists: 0,
            cached_lists: 0,
            logs: BTreeMap::new(),
            backends: BTreeMap::new(),
            next_node: 0,
            rand: 0x9e37_79b9_7f4a_7c15,
        }
    }

    /// The version the watch cache has reached: lists at `resourceVersion=0` are answered
    /// there, and a request for a newer version waits for it.
    pub fn watch_cache_rv(&self) -> u64 {
        let current = self.store.rv();
        self.watch_cache_held
            .map_or(current, |held| held.min(current))
    }

    /// The next alive node, round robin (what the "scheduler" picks).
    pub fn pick_node(&mut self) -> Option<String> {
        let alive: Vec<&String> = self
            .nodes
            .iter()
            .filter(|(_, a)| **a)
            .map(|(n, _)| n)
            .collect();
        let node = alive
            .get(self.next_node.checked_rem(alive.len())?)?
            .to_string();
        self.next_node += 1;
        Some(node)
    }

    /// A random 5-character suffix from the alphabet Kubernetes uses for generated names.
    pub fn name_suffix(&mut self) -> String {
        (0..5)
            .map(|_| {
                self.rand ^= self.rand << 13;
                self.rand ^= self.rand >> 7;
                self.rand ^= self.rand << 17;
                crate::meta::name_char(self.rand)
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
    /// A cluster with three alive nodes and nothing else, on the system's clock.
    pub fn new() -> Self {
        Self::on(SimClock::default())
    }

    /// [`SimCluster::new`] on `clock`: a test on paused time passes the instant its own
    /// clock starts at, and the server's timestamps keep step with it.
    pub fn on(clock: SimClock) -> Self {
        let (wake, _) = watch::channel(0);
        let cluster = Self {
            inner: Arc::new(Inner {
                state: Mutex::new(State::new(clock)),
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

    /// The server's wall clock now.
    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.clock().now()
    }

    /// The clock the server stamps its objects with.
    pub fn clock(&self) -> SimClock {
        self.lock().clock
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
            let now = state.clock.now();
            pods::kubelet_pass(&mut state, now);
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

    /// How many of those were answered in protobuf frames.
    pub fn protobuf_watches_served(&self) -> u64 {
        self.read(|s| s.protobuf_watches_served)
    }

    /// How many requests asked for protobuf.
    pub fn protobuf_asked(&self) -> u64 {
        self.read(|s| s.protobuf_asked)
    }

    /// Serve streaming lists, refuse them, or ignore their parameters.
    pub fn set_streaming_lists(&self, mode: StreamingLists) {
        self.read(|s| s.streaming_lists = mode);
    }

    /// From now on, refuse creates in namespaces that do not exist (404 `namespaces "x" not
    /// found`), as a real API server does.
    pub fn require_namespaces(&self) {
        self.read(|s| s.namespaces_required = true);
    }

    /// Hold the watch cache at the current version (a lagging cache) or let it catch up: a
    /// list at `resourceVersion=0` answers from the held version, possibly stale, and a
    /// request `NotOlderThan` a newer version waits, then gets 504.
    pub fn hold_watch_cache(&self, held: bool) {
        self.mutate(|s| s.watch_cache_held = held.then(|| s.store.rv()));
    }

    /// How long a request for a version the watch cache has not reached waits (default 3 s).
    pub fn set_too_large_wait(&self, wait: Duration) {
        self.read(|s| s.too_large_wait = wait);
    }

    /// Lists read from etcd so far: quorum reads (no resourceVersion) and exact versions;
    /// a continuation is counted with its first page.
    pub fn etcd_lists(&self) -> u64 {
        self.read(|s| s.etcd_lists)
    }

    /// Lists served from the watch cache (`resourceVersion=0` or `NotOlderThan`) so far.
    pub fn cached_lists(&self) -> u64 {
        self.read(|s| s.cached_lists)
    }

    /// The current global resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.read(|s| s.store.rv())
    }
}
