//! The pods' latest Warning Events, by namespace and then pod uid: an Event counts only for a
//! pod of its own namespace, whatever uid a tenant writes into it. Events about pods the cache
//! does not hold (yet) are kept up to a bound per namespace: a tenant writing Events about a
//! fresh uid each cannot grow the store past it.

use std::collections::HashMap;
use std::sync::Arc;

use crate::pod::{EventTarget, PodEvent, PodRecord};

/// A pod's latest Warning Events that a cause reads, shared with the findings that rest on them.
pub(crate) type Events = Arc<[PodEvent]>;

/// How many pods of one namespace may have Events kept: past it, a pod the cache does not
/// hold (an orphan) has its Events dropped, and a pod it holds takes an orphan's place.
pub(crate) const PODS_PER_NAMESPACE: usize = 1_000;

#[derive(Debug, Default)]
pub struct EventStore {
    by_namespace: HashMap<Box<str>, HashMap<Box<str>, Events>>,
    dropped: u64,
}

impl EventStore {
    /// The Events about `pod`, written in its own namespace.
    pub fn of(&self, pod: &PodRecord) -> Option<&Events> {
        self.by_namespace.get(&*pod.namespace)?.get(&*pod.uid)
    }

    pub(crate) fn get(&self, target: &EventTarget) -> Option<&Events> {
        self.by_namespace.get(&target.namespace)?.get(&target.uid)
    }

    /// Keep `events` for `target`, within the bound of its namespace; `held(namespace, uid)`
    /// tells the pods the cache holds.
    pub(crate) fn insert(
        &mut self,
        target: EventTarget,
        events: Events,
        held: impl Fn(&str, &str) -> bool,
    ) {
        let namespace = target.namespace;
        let pods = self.by_namespace.entry(namespace.clone()).or_default();
        let held = |uid: &str| held(&namespace, uid);
        if pods.len() >= PODS_PER_NAMESPACE && !pods.contains_key(&target.uid) {
            if !held(&target.uid) {
                self.dropped += 1;
                return;
            }
            if let Some(orphan) = pods.keys().find(|uid| !held(uid)).cloned() {
                pods.remove(&orphan);
                self.dropped += 1;
            }
        }
        pods.insert(target.uid, events);
    }

    /// Orphans' Events dropped at the bound of their namespace, since the start.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }

    pub(crate) fn remove(&mut self, namespace: &str, uid: &str) {
        if let Some(pods) = self.by_namespace.get_mut(namespace) {
            pods.remove(uid);
            if pods.is_empty() {
                self.by_namespace.remove(namespace);
            }
        }
    }

    /// Keep the Events for which `keep(namespace, uid, events)` holds.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&str, &str, &Events) -> bool) {
        self.by_namespace.retain(|namespace, pods| {
            pods.retain(|uid, events| keep(namespace, uid, events));
            !pods.is_empty()
        });
    }

    /// Every pod with Events kept, as (namespace, uid).
    pub(crate) fn targets(&self) -> impl Iterator<Item = EventTarget> + '_ {
        self.by_namespace.iter().flat_map(|(namespace, pods)| {
            pods.keys().map(|uid| EventTarget {
                namespace: namespace.clone(),
                uid: uid.clone(),
            })
        })
    }

    /// Take in `other`'s Events (another scope's), in place of any for the same pods.
    pub fn extend(&mut self, other: EventStore) {
        for (namespace, pods) in other.by_namespace {
            self.by_namespace.entry(namespace).or_default().extend(pods);
        }
        self.dropped += other.dropped;
    }

    pub(crate) fn len(&self) -> usize {
        self.by_namespace.values().map(HashMap::len).sum()
    }
}

/// `known` with `event` in place of the one of its kind, unless that one is newer; None when
/// nothing changes.
pub(crate) fn merged(known: &[PodEvent], event: PodEvent) -> Option<Events> {
    match known.iter().find(|e| e.kind == event.kind) {
        Some(same) if *same == event || same.last > event.last => None,
        Some(_) => Some(
            known
                .iter()
                .map(|e| if e.kind == event.kind { &event } else { e })
                .cloned()
                .collect(),
        ),
        None => Some(known.iter().cloned().chain([event]).collect()),
    }
}
