//! Pods' Warning Events into the cache, for the causes a status does not tell (a pull in
//! back-off, a scheduler's verdict, a probe that kills).
//!
//! Anyone who may create an Event in a namespace writes all of it, up to ~1.5 MB: so a list is read
//! item by item as its bytes arrive, and each Event is decoded straight into the few capped fields
//! a cause reads ([`WireEvent`], [`pod_event`]). Only the latest Event per pod and kind is kept.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use kube::Client;
use tokio::task::JoinHandle;

use super::event_store::{EventStore, merged};
use super::kind::Kind;
use super::list::{ListFrom, list_scope};
use super::watch::{QUIET_KINDS, Streaming, spawn_one};
use super::{Cache, Scope, ScopeHealth, WatchSettings, WatchState};
use crate::clock::Clock;
use crate::config::WireFormat;
use crate::pod::{WireEvent, field_text, pod_event};

/// Only what a cause may read: a pod's Warnings (the server filters).
const SELECTOR: &str = "type=Warning,involvedObject.kind=Pod";

/// Events per list page. API servers keep no watch cache for Events, so lists are quorum
/// reads, and pages of them are honoured.
const PAGE: u32 = 500;

/// Events of pods the cache does not hold are kept this long, for a pod listed late.
const KEEP_ORPHANS: Duration = Duration::from_secs(10 * 60);

/// One task per scope, feeding `cache`, by the same loop as the pods. Their watch is not a
/// guard, so it proves itself only as often as the server ends a watch.
pub fn spawn_event_watches(
    client: &Client,
    scopes: &[Scope],
    cache: &Cache,
    settings: &WatchSettings,
) -> Vec<JoinHandle<()>> {
    let settings = settings.quiet_kind();
    scopes
        .iter()
        .map(|scope| {
            let health = ScopeHealth::new(scope.clone(), QUIET_KINDS);
            let kind = PodEvents {
                cache: cache.clone(),
                health: Mutex::new(health),
                pruned: Mutex::new(cache.clock().instant()),
            };
            spawn_one(client, scope, kind, &settings, Streaming::default())
        })
        .collect()
}

struct PodEvents {
    cache: Cache,
    /// Its watch's health is its own: without Events a cause rests on the status alone.
    health: Mutex<ScopeHealth>,
    pruned: Mutex<Instant>,
}

/// A listed Event is kept as its capped fields, made into what a cause reads at the store's time.
impl Kind for PodEvents {
    type Wire = WireEvent;
    type Record = WireEvent;
    type Decoder = ();
    const RESOURCE: &'static str = "events";
    const SELECTOR: &'static str = SELECTOR;

    fn record(wire: WireEvent, _: &mut ()) -> WireEvent {
        wire
    }
    fn wire_key(wire: &WireEvent) -> &str {
        field_text(&wire.metadata.uid).unwrap_or_default()
    }
    fn wire_version(wire: &WireEvent) -> &str {
        field_text(&wire.metadata.resource_version).unwrap_or_default()
    }
    fn replace(&self, scope: &Scope, records: Vec<WireEvent>) {
        let now = self.cache.clock().now();
        let listed = records
            .iter()
            .filter_map(|wire| pod_event(wire, now))
            .collect();
        self.cache
            .events()
            .replace(|ns| scope.covers(ns), listed, now);
    }
    fn upsert(&self, wire: WireEvent) {
        let now = self.cache.clock().now();
        if let Some((target, kept)) = pod_event(&wire, now) {
            self.cache.events().record(target, kept, now);
        }
        self.prune();
    }
    /// Deleted (its TTL, or whoever wrote it): it no longer speaks for its pod.
    fn remove(&self, wire: WireEvent) {
        let now = self.cache.clock().now();
        if let Some((target, gone)) = pod_event(&wire, now) {
            self.cache.events().forget(&target, &gone, now);
        }
    }
    fn health(&self, scope: &Scope, change: &mut dyn FnMut(&mut ScopeHealth)) {
        let mut health = self.health.lock().unwrap_or_else(|e| e.into_inner());
        let was_down = matches!(health.state, WatchState::Reconnecting { .. });
        change(&mut health);
        // Said once per outage: without Events a cause rests on the status alone.
        if let (WatchState::Reconnecting { error }, false) = (&health.state, was_down) {
            tracing::warn!(%scope, "pods' Events cannot be read ({error}); causes come from the status alone");
        }
    }
    fn clock(&self) -> Clock {
        self.cache.clock()
    }
}

impl PodEvents {
    /// Now and then, drop the Events of pods the cache does not hold.
    fn prune(&self) {
        let mut pruned = self.pruned.lock().unwrap_or_else(|e| e.into_inner());
        let clock = self.cache.clock();
        if clock.instant().saturating_duration_since(*pruned) >= KEEP_ORPHANS / 2 {
            *pruned = clock.instant();
            let keep = chrono::Duration::from_std(KEEP_ORPHANS).unwrap_or_default();
            self.cache.events().prune(clock.now() - keep);
        }
    }
}

/// Every Warning Event of `scope`'s pods that a cause reads, listed once (for `scan`, a most
/// recent read), by pod: the latest of each kind, as read at `now`.
pub async fn list_pod_events(
    client: &Client,
    scope: &Scope,
    now: DateTime<Utc>,
) -> Result<EventStore, super::ListError> {
    let listed =
        list_scope::<PodEvents>(client, scope, PAGE, &ListFrom::MostRecent, WireFormat::Json)
            .await?;
    let mut latest = EventStore::default();
    for (target, event) in listed.items.iter().filter_map(|wire| pod_event(wire, now)) {
        let known = latest.get(&target).map_or(&[][..], |e| e);
        // One list, bounded by the API server's answer: every pod counts as held.
        if let Some(events) = merged(known, event) {
            latest.insert(target, events, |_, _| true);
        }
    }
    Ok(latest)
}
