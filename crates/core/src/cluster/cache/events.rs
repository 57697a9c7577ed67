//! The Events side of the cache: each pod's latest Warning Events, written by the Event
//! watches; a change finds the cause of its pod again.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use super::{Cache, holds};
use crate::cluster::event_store::{Events, merged};
use crate::pod::{EventTarget, PodEvent};

pub struct CachedEvents<'a> {
    pub(super) cache: &'a Cache,
}

impl CachedEvents<'_> {
    /// A pod's Warning Event arrived: it replaces an older one of its kind, and the pod's
    /// cause is found again (one event, one pod).
    pub fn record(&self, target: EventTarget, event: PodEvent, now: DateTime<Utc>) {
        self.cache.change(|store| {
            let known = store.events.get(&target).map_or(&[][..], |e| e);
            let Some(events) = merged(known, event) else {
                return false;
            };
            store.keep_events(target, events, now)
        });
    }

    /// A pod's Warning Event was deleted: if it is the one kept for its kind, it is dropped
    /// and the pod's cause found again.
    pub fn forget(&self, target: &EventTarget, gone: &PodEvent, now: DateTime<Utc>) {
        self.cache.change(|store| {
            let Some(known) = store.events.get(target) else {
                return false;
            };
            if !known
                .iter()
                .any(|e| e.kind == gone.kind && e.message == gone.message)
            {
                return false;
            }
            let left: Events = known
                .iter()
                .filter(|e| e.kind != gone.kind)
                .cloned()
                .collect();
            match left.is_empty() {
                true => store.events.remove(&target.namespace, &target.uid),
                false => store.events.insert(target.clone(), left, |_, _| true),
            }
            store.readmit(&target.uid, now)
        });
    }

    /// A complete list of the Warning Events `covers` admits (a namespace or all), in place of
    /// theirs; the causes of the pods whose Events changed are found again.
    pub fn replace(
        &self,
        covers: impl Fn(&str) -> bool,
        listed: Vec<(EventTarget, PodEvent)>,
        now: DateTime<Utc>,
    ) {
        self.cache.change(|store| {
            let mut fresh: HashMap<EventTarget, Events> = HashMap::new();
            for (target, event) in listed {
                let known = fresh.get(&target).map_or(&[][..], |e| e);
                if let Some(events) = merged(known, event) {
                    fresh.insert(target, events);
                }
            }
            let gone: Vec<EventTarget> = store
                .events
                .targets()
                .filter(|t| !fresh.contains_key(t) && covers(&t.namespace))
                .collect();
            let mut changed = false;
            for target in gone {
                store.events.remove(&target.namespace, &target.uid);
                changed |= store.readmit(&target.uid, now);
            }
            for (target, events) in fresh {
                if store.events.get(&target) != Some(&events) {
                    changed |= store.keep_events(target, events, now);
                }
            }
            changed
        });
    }

    /// Drop the Events of pods this cache does not hold that were last seen before
    /// `before`: a pod deleted before its Events came, or outside the watched scopes.
    pub fn prune(&self, before: DateTime<Utc>) {
        let mut guard = self.cache.write();
        let store = &mut *guard;
        let pods = &store.pods;
        store.events.retain(|namespace, uid, events| {
            holds(pods, namespace, uid)
                || events.iter().any(|e| e.last.is_some_and(|t| t >= before))
        });
    }

    /// How many pods have Events kept.
    pub fn pod_count(&self) -> usize {
        self.cache.read().events.len()
    }
}
