//! The live cache: written by the watch tasks, read by the UI, the worker and `scan`. Three
//! stores behind one index of findings: the pods (here), their Warning Events ([`events`]) and
//! the nodes ([`nodes`]). A change to any of them classifies again only the pods it touches.

use std::collections::{BTreeMap, HashMap};
use std::ops::Deref;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard, Weak};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::Scope;
use super::abnormal::Abnormal;
use super::event_store::{EventStore, Events};
use super::health::{DEFAULT_STALE_AFTER, Health, ScopeHealth, SourceHealth};
use super::index::{Census, Index};
use super::listed::Listed;
use super::name::ClusterName;
use super::node_store::NodeStore;
use crate::clock::Clock;
use crate::pod::{EventTarget, Interner, PodRecord, WirePod};
use crate::rules::{CauseClass, RuleKind, RuleSpec, default_chain};

mod events;
mod nodes;

pub use events::CachedEvents;
pub use nodes::CachedNodes;

#[derive(Default)]
struct Store {
    pods: HashMap<Box<str>, Arc<PodRecord>>,
    /// Each pod's latest Warning Events a cause reads, by namespace and pod UID. They may
    /// come before their pod, so a pod unknown here keeps them until `events().prune`.
    events: EventStore,
    nodes: NodeStore,
    interner: Interner,
    index: Index,
}

struct Inner {
    store: RwLock<Store>,
    /// What the findings are classified at, and when the rules that mature with time do.
    clock: Clock,
    health: RwLock<Health>,
    /// Bumped on every change so readers redraw only when something happened.
    changes: watch::Sender<u64>,
}

/// A cheap handle on the shared cache. It reads as its [`CacheReader`] does, and writes.
#[derive(Clone)]
pub struct Cache {
    reader: CacheReader,
}

impl Deref for Cache {
    type Target = CacheReader;

    fn deref(&self) -> &CacheReader {
        &self.reader
    }
}

impl Default for Cache {
    fn default() -> Self {
        Cache::new()
    }
}

impl Cache {
    /// A cache that keeps findings under the built-in chain, on the system's clock.
    pub fn new() -> Cache {
        Cache::for_cluster(ClusterName::default(), default_chain(), Clock::real())
    }

    /// A cache of one cluster's pods, classified under `chain` at `clock`'s time: its
    /// findings name the cluster.
    pub fn for_cluster(cluster: ClusterName, chain: Vec<RuleSpec>, clock: Clock) -> Cache {
        let store = Store {
            index: Index::new(cluster, chain),
            ..Store::default()
        };
        let inner = Inner {
            store: RwLock::new(store),
            clock,
            health: RwLock::new(Health { scopes: Vec::new() }),
            changes: watch::Sender::new(0),
        };
        Cache {
            reader: CacheReader {
                inner: Arc::new(inner),
            },
        }
    }

    /// Replace the rule chain (the configuration changed): every pod is classified afresh.
    pub fn set_chain(&self, chain: Vec<RuleSpec>) {
        let now = self.inner.clock.now();
        self.change(|store| {
            store.index = Index::new(store.index.cluster.clone(), chain);
            for pod in store.pods.values() {
                store.index.admit(pod, (&store.events, &store.nodes), now);
            }
            true
        });
    }

    pub fn chain(&self) -> Vec<RuleSpec> {
        self.read().index.chain.clone()
    }

    pub fn get(&self, uid: &str) -> Option<PodRecord> {
        self.read().pods.get(uid).map(|pod| PodRecord::clone(pod))
    }

    /// Every abnormal pod as of the last promotion, in the screen's default order: shared with
    /// the index, not copied. Reads only; the promotion task keeps the index up to the clock.
    pub fn listed(&self) -> Vec<Listed> {
        let store = self.read();
        let found = store.index.findings();
        found
            .map(|found| Listed::Watched(Arc::clone(found)))
            .collect()
    }

    pub fn reader(&self) -> CacheReader {
        self.reader.clone()
    }

    /// The pods that could be healthy, per namespace and workload, kept as pods change.
    pub(crate) fn census(&self) -> Census {
        self.read().index.census.clone()
    }

    /// Bring the index up to the clock's time, waking readers when a finding changed. A write:
    /// the promotion task's ([`Cache::spawn_promotion`]), never a reader's.
    pub fn promote(&self) -> bool {
        let now = self.inner.clock.now();
        self.change(|store| {
            store
                .index
                .promote(&store.pods, (&store.events, &store.nodes), now)
        })
    }

    /// Promote as time passes, so that a rule maturing wakes readers without a reader or a
    /// screen tick asking. The task ends with the cache.
    pub fn spawn_promotion(&self) -> JoinHandle<()> {
        let cache = Arc::downgrade(&self.inner);
        let changes = self.subscribe();
        tokio::spawn(promote_as_time_passes(cache, changes))
    }

    /// Fold over every cached pod under the read lock, without cloning them all.
    pub fn fold<T>(&self, init: T, mut f: impl FnMut(T, &PodRecord) -> T) -> T {
        self.read().pods.values().fold(init, |acc, pod| f(acc, pod))
    }

    // Writers: the watch tasks.

    pub(crate) fn register(&self, scope: &Scope, stale_after: Duration) {
        self.update_health(scope, |h| h.stale_after = stale_after);
    }

    /// The view of `scope` was proved current at `at`: not a change readers redraw for.
    pub(crate) fn proved(&self, scope: &Scope, at: Instant) {
        let mut health = self.inner.health.write().unwrap_or_else(|e| e.into_inner());
        if let Some(h) = health.scopes.iter_mut().find(|s| &s.scope == scope) {
            h.proved = Some(at);
        }
    }

    /// For a cache no watch fills: its one scope is as current as its source says. A new
    /// proof alone (every heartbeat) wakes nobody, as a watch's does not.
    pub fn set_source_health(&self, source: &SourceHealth) {
        let unproved = |scopes: &[ScopeHealth]| -> Vec<ScopeHealth> {
            let unproved = |s: &ScopeHealth| ScopeHealth {
                proved: None,
                ..s.clone()
            };
            scopes.iter().map(unproved).collect()
        };
        let changed = {
            let mut health = self.inner.health.write().unwrap_or_else(|e| e.into_inner());
            if health.scopes.is_empty() {
                health
                    .scopes
                    .push(ScopeHealth::new(Scope::All, DEFAULT_STALE_AFTER));
            }
            let before = unproved(&health.scopes);
            health.scopes.iter_mut().for_each(|s| source.apply(s));
            unproved(&health.scopes) != before
        };
        if changed {
            self.bump();
        }
    }

    /// Readers wake only when it changed: a watch that opens again in the state it was in
    /// (every quiet period) is news to nobody.
    pub(crate) fn update_health(&self, scope: &Scope, change: impl FnOnce(&mut ScopeHealth)) {
        let changed = {
            let mut health = self.inner.health.write().unwrap_or_else(|e| e.into_inner());
            match health.scopes.iter_mut().find(|s| &s.scope == scope) {
                Some(known) => {
                    let before = known.clone();
                    change(known);
                    *known != before
                }
                None => {
                    let mut new = ScopeHealth::new(scope.clone(), DEFAULT_STALE_AFTER);
                    change(&mut new);
                    health.scopes.push(new);
                    true
                }
            }
        };
        if changed {
            self.bump();
        }
    }

    /// Swap in a complete list for one scope, keeping what was observed of pods that stay.
    pub fn replace_scope(&self, scope: &Scope, pods: Vec<PodRecord>, now: DateTime<Utc>) {
        self.change(|store| {
            // Moved out, not copied: a 150,000-pod relist must not clone every record.
            let previous: HashMap<Box<str>, Arc<PodRecord>> = store
                .pods
                .extract_if(|_, pod| scope.covers(&pod.namespace))
                .collect();
            for pod in previous.values() {
                store.index.forget(pod);
            }
            for mut pod in pods {
                pod.observe_transition(previous.get(&pod.uid).map(|p| &**p), now);
                store.insert(pod, now);
            }
            // The Events of pods that went go with them.
            for (uid, pod) in &previous {
                if !store.pods.contains_key(uid) {
                    store.events.remove(&pod.namespace, uid);
                }
            }
            true
        });
    }

    pub fn upsert(&self, wire: WirePod, now: DateTime<Utc>) {
        self.change(|store| {
            let mut pod = wire.into_record(&mut store.interner);
            let previous = store.pods.get(&pod.uid);
            pod.observe_transition(previous.map(|p| &**p), now);
            if previous.is_some_and(|p| **p == pod) {
                // Only what the record leaves out changed (annotations, resourceVersion): no
                // reader can see a difference, so none is woken.
                return false;
            }
            if let Some(previous) = previous {
                store.index.forget(previous);
            }
            store.insert(pod, now);
            true
        });
    }

    pub fn remove(&self, uid: &str) {
        self.change(|store| {
            let removed = store.pods.remove(uid);
            if let Some(pod) = &removed {
                store.index.forget(pod);
                store.events.remove(&pod.namespace, uid);
            }
            removed.is_some()
        });
    }

    pub fn events(&self) -> CachedEvents<'_> {
        CachedEvents { cache: self }
    }

    pub fn nodes(&self) -> CachedNodes<'_> {
        CachedNodes { cache: self }
    }

    /// Readers are woken only when `change` says it changed something they can see.
    fn change(&self, change: impl FnOnce(&mut Store) -> bool) -> bool {
        let changed = change(&mut self.write());
        if changed {
            self.bump();
        }
        changed
    }

    fn bump(&self) {
        self.inner.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    fn write(&self) -> RwLockWriteGuard<'_, Store> {
        self.inner.store.write().unwrap_or_else(|e| e.into_inner())
    }
}

/// A handle on the cache that can only read it: what `/metrics` holds, so a scrape never takes
/// the write lock. There is no way from here to a write guard or a `Cache`.
#[derive(Clone)]
pub struct CacheReader {
    inner: Arc<Inner>,
}

impl CacheReader {
    pub fn len(&self) -> usize {
        self.read().pods.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn health(&self) -> Health {
        self.inner
            .health
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// How many nodes stopped reporting (their Ready condition is Unknown).
    pub fn nodes_not_reporting(&self) -> usize {
        self.read().nodes.not_reporting()
    }

    /// Events about pods this cache does not hold, dropped at the bound of their namespace.
    pub fn events_dropped(&self) -> u64 {
        self.read().events.dropped()
    }

    /// Wakes when the cache changes.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.changes.subscribe()
    }

    /// The clock the cache classifies at: the one its writers and readers share.
    pub fn clock(&self) -> Clock {
        self.inner.clock
    }

    /// Every abnormal pod, in the screen's default order. Promotes nothing: that would write.
    pub fn findings(&self) -> Vec<Abnormal> {
        self.findings_of(|_| true)
    }

    /// The abnormal pods claimed by the rules `wanted` admits: the whole chain still decides
    /// which rule claims a pod, and only the wanted findings are copied out.
    pub fn findings_of(&self, wanted: impl Fn(RuleKind) -> bool) -> Vec<Abnormal> {
        let store = self.read();
        store
            .index
            .findings()
            .filter(|found| wanted(found.finding.rule))
            .map(|found| Abnormal::clone(found))
            .collect()
    }

    /// Abnormal pods by category and cause now. Reads the index, counting the rules matured
    /// since it was last promoted without promoting them.
    pub fn cause_counts(&self) -> BTreeMap<(RuleKind, CauseClass), usize> {
        let now = self.inner.clock.now();
        let store = self.read();
        let stores = (&store.events, &store.nodes);
        store.index.cause_counts_at(&store.pods, stores, now)
    }

    fn read(&self) -> RwLockReadGuard<'_, Store> {
        // A panic elsewhere must not take the cache down with it.
        self.inner.store.read().unwrap_or_else(|e| e.into_inner())
    }
}

impl Store {
    /// Keep `pod` (its previous version forgotten by the index first) and classify it.
    fn insert(&mut self, pod: PodRecord, now: DateTime<Utc>) {
        let pod = Arc::new(pod);
        self.index.admit(&pod, (&self.events, &self.nodes), now);
        self.pods.insert(pod.uid.clone(), pod);
    }

    /// Keep a pod's Warning Events within the bound of its namespace, where a pod held here
    /// counts as held, and find its cause again; whether a reader could see it.
    fn keep_events(&mut self, target: EventTarget, events: Events, now: DateTime<Utc>) -> bool {
        let uid = target.uid.clone();
        let pods = &self.pods;
        self.events
            .insert(target, events, |ns, uid| holds(pods, ns, uid));
        self.readmit(&uid, now)
    }

    fn readmit_on(&mut self, node: &str, now: DateTime<Utc>) {
        for uid in self.index.abnormal_on(node) {
            self.readmit(&uid, now);
        }
    }

    /// Find the cause of a pod whose Events changed; whether a reader could see it.
    fn readmit(&mut self, uid: &str, now: DateTime<Utc>) -> bool {
        let Some(pod) = self.pods.get(uid) else {
            return false;
        };
        self.index.forget(pod);
        self.index.admit(pod, (&self.events, &self.nodes), now);
        self.index.is_abnormal(uid)
    }
}

/// Wakes readers when a rule matures, however quiet the cluster is. The sleep is never longer
/// than `RECHECK`, so a wall clock that jumps is caught up with; a change (it may bring a due
/// time nearer) costs a look under the read lock, and the write lock is taken only when due.
async fn promote_as_time_passes(cache: Weak<Inner>, mut changes: watch::Receiver<u64>) {
    const RECHECK: Duration = Duration::from_secs(30);
    loop {
        let Some(inner) = cache.upgrade() else {
            return;
        };
        let cache = Cache {
            reader: CacheReader { inner },
        };
        let clock = cache.clock();
        let next = cache.read().index.next_due();
        if next.is_some_and(|due| due <= clock.now()) {
            cache.promote();
            continue;
        }
        // Not held while asleep: the cache ends when its last owner lets go of it.
        drop(cache);
        let pause = next.map_or(RECHECK, |due| clock.until(due).min(RECHECK));
        changes.mark_unchanged();
        tokio::select! {
            _ = clock.sleep(pause) => {}
            changed = changes.changed() => if changed.is_err() { return },
        }
    }
}

fn holds(pods: &HashMap<Box<str>, Arc<PodRecord>>, namespace: &str, uid: &str) -> bool {
    pods.get(uid).is_some_and(|p| &*p.namespace == namespace)
}
