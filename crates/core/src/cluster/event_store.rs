//! The pods' latest Warning Events, by namespace and then pod uid: an Event counts only for a
//! pod of its own namespace, whatever uid a tenant writes into it.

use std::collections::HashMap;
use std::sync::Arc;

use crate::pod::{EventTarget, PodEvent, PodRecord};

/// A pod's latest Warning Events that a cause reads, shared with the findings that rest on
/// them.
pub(crate) type Events = Arc<[PodEvent]>;

#[derive(Debug, Default)]
pub struct EventStore {
    by_namespace: HashMap<Box<str>, HashMap<Box<str>, Events>>,
}

impl EventStore {
    /// The Events about `pod`, written in its own namespace.
    pub fn of(&self, pod: &PodRecord) -> Option<&Events> {
        self.by_namespace.get(&*pod.namespace)?.get(&*pod.uid)
    }

    pub(crate) fn get(&self, target: &EventTarget) -> Option<&Events> {
        self.by_namespace.get(&target.namespace)?.get(&target.uid)
    }

    pub(crate) fn insert(&mut self, target: EventTarget, events: Events) {
        self.by_namespace
            .entry(target.namespace)
            .or_default()
            .insert(target.uid, events);
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
                .map(|e| {
                    if e.kind == event.kind {
                        event.clone()
                    } else {
                        e.clone()
                    }
                })
                .collect(),
        ),
        None => Some(known.iter().cloned().chain([event]).collect()),
    }
}
