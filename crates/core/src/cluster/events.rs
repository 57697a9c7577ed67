//! Pods' Warning Events into the cache, for the causes a status does not tell (a pull in
//! back-off, a scheduler's verdict, a probe that kills).
//!
//! Anyone who may create an Event in a namespace writes all of it, up to ~1.5 MB: so a list is
//! read item by item as its bytes arrive ([`list_items`]), never a page at a time, and each
//! Event, listed or watched, is decoded straight into the few capped fields a cause reads
//! ([`WireEvent`], [`pod_event`]). Only the latest Event per pod and kind is kept. The pod
//! view's freshness does not wait on these: a cause from the status alone is still a cause, so
//! their watch is not a guard.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use futures::TryStreamExt;
use kube::api::{WatchEvent, WatchParams};
use kube::{Api, Client};
use tokio::task::JoinHandle;

use super::backoff::Backoff;
use super::event_store::EventStore;
use super::index::Events;
use super::list::list_items;
use super::{Cache, Scope};
use crate::pod::{EventTarget, PodEvent, WireEvent, pod_event};

/// Only what a cause may read: a pod's Warnings (the server filters).
const SELECTOR: &str = "type=Warning,involvedObject.kind=Pod";

/// Events per list page. API servers keep no watch cache for Events, so lists are quorum
/// reads, and pages of them are honoured.
const PAGE: u32 = 500;

/// Events of pods the cache does not hold are kept this long, for a pod listed late.
const KEEP_ORPHANS: Duration = Duration::from_secs(10 * 60);

/// A watch that yields nothing this long is made again: the server ends every watch within
/// 290 s, so a stream silent longer than that is not a stream any more.
const SILENT: Duration = Duration::from_secs(330);
const WATCH_TIMEOUT: u32 = 290;

/// One task per scope, feeding `cache`.
pub fn spawn_event_watches(
    client: &Client,
    scopes: &[Scope],
    cache: &Cache,
) -> Vec<JoinHandle<()>> {
    scopes
        .iter()
        .map(|scope| {
            let watch = EventWatch {
                client: client.clone(),
                api: events_api(client, scope),
                scope: scope.clone(),
                cache: cache.clone(),
            };
            tokio::spawn(watch.run())
        })
        .collect()
}

struct EventWatch {
    client: Client,
    api: Api<WireEvent>,
    scope: Scope,
    cache: Cache,
}

impl EventWatch {
    /// List, then watch from the list's version until the watch is lost; then list again.
    /// Failures wait a jittered, growing pause; nothing here ends the task.
    async fn run(self) {
        let mut backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(60));
        let mut told = false;
        let mut pruned = self.cache.clock().instant();
        loop {
            let version = match self.list().await {
                Ok(version) => version,
                Err(why) => {
                    // Said once per outage: without Events a cause rests on the status alone.
                    if !told {
                        tracing::warn!(scope = %self.scope, "pods' Events cannot be read ({why}); causes come from the status alone");
                        told = true;
                    } else {
                        tracing::debug!(scope = %self.scope, "Events: {why}");
                    }
                    backoff.wait().await;
                    continue;
                }
            };
            told = false;
            backoff.reset();
            self.watch_from(version, &mut backoff, &mut pruned).await;
        }
    }

    /// Every Event of the scope now, in place of what the cache held; the version to watch from.
    async fn list(&self) -> crate::Result<String> {
        let now = self.cache.clock().now();
        let (listed, version) = list_events(&self.client, &self.scope, now).await?;
        let scope = &self.scope;
        self.cache
            .replace_events(|ns| scope.covers(ns), listed, now);
        Ok(version)
    }

    /// Watch from `version` until the server says it is too old (410) or a new watch cannot be
    /// made; an ended or silent watch is made again from the last version seen.
    async fn watch_from(&self, mut version: String, backoff: &mut Backoff, pruned: &mut Instant) {
        let params = WatchParams::default()
            .fields(SELECTOR)
            .timeout(WATCH_TIMEOUT);
        loop {
            let stream = match self.api.watch(&params, &version).await {
                Ok(stream) => stream,
                Err(e) => {
                    tracing::debug!(scope = %self.scope, "the Event watch failed ({e}); listing again");
                    backoff.wait().await;
                    return;
                }
            };
            futures::pin_mut!(stream);
            loop {
                let next = match tokio::time::timeout(SILENT, stream.try_next()).await {
                    Err(_) => {
                        tracing::debug!(scope = %self.scope, "the Event watch went silent; making it again");
                        break;
                    }
                    Ok(next) => next,
                };
                let now = self.cache.clock().now();
                match next {
                    Ok(Some(WatchEvent::Added(e) | WatchEvent::Modified(e))) => {
                        version = e.metadata.resource_version.clone().unwrap_or(version);
                        if let Some((target, kept)) = pod_event(&e, now) {
                            self.cache.record_event(target, kept, now);
                        }
                    }
                    // Deleted (its TTL, or whoever wrote it): it no longer speaks for its pod.
                    Ok(Some(WatchEvent::Deleted(e))) => {
                        version = e.metadata.resource_version.clone().unwrap_or(version);
                        if let Some((target, gone)) = pod_event(&e, now) {
                            self.cache.forget_event(&target, &gone, now);
                        }
                    }
                    Ok(Some(WatchEvent::Bookmark(mark))) => {
                        version = mark.metadata.resource_version;
                    }
                    // 410: the version is gone from the server's history; anything else, the
                    // same: a fresh list is the only way to know what was missed.
                    Ok(Some(WatchEvent::Error(status))) => {
                        tracing::debug!(scope = %self.scope, "the Event watch ended: {}", status.message);
                        backoff.wait().await;
                        return;
                    }
                    Ok(None) => break,
                    Err(e) => {
                        tracing::debug!(scope = %self.scope, "the Event watch broke ({e})");
                        backoff.wait().await;
                        break;
                    }
                }
                backoff.reset();
                let instant = self.cache.clock().instant();
                if instant.saturating_duration_since(*pruned) >= KEEP_ORPHANS / 2 {
                    *pruned = instant;
                    let keep = chrono::Duration::from_std(KEEP_ORPHANS).unwrap_or_default();
                    self.cache.prune_events(now - keep);
                }
            }
        }
    }
}

/// Every Warning Event of `scope`'s pods that a cause reads, decoded one at a time as the list
/// streams in, and the list's version.
async fn list_events(
    client: &Client,
    scope: &Scope,
    now: DateTime<Utc>,
) -> crate::Result<(Vec<(EventTarget, PodEvent)>, String)> {
    let mut listed = Vec::new();
    let mut on_item = |item: &[u8]| match serde_json::from_slice::<WireEvent>(item) {
        Ok(event) => listed.extend(pod_event(&event, now)),
        Err(e) => tracing::debug!("an Event that does not decode is skipped: {e}"),
    };
    let version = list_items(client, scope, "events", (SELECTOR, PAGE), &mut on_item)
        .await
        .map_err(|f| f.error)?;
    Ok((listed, version))
}

/// Every Warning Event of `scope`'s pods that a cause reads, listed once (for `scan`), by pod:
/// the latest of each kind, as read at `now`.
pub async fn list_pod_events(
    client: &Client,
    scope: &Scope,
    now: DateTime<Utc>,
) -> crate::Result<EventStore> {
    let (listed, _) = list_events(client, scope, now).await?;
    let mut latest = EventStore::default();
    for (target, event) in listed {
        let known = latest.get(&target).map_or(&[][..], |e| e);
        if let Some(events) = merged(known, event) {
            latest.insert(target, events);
        }
    }
    Ok(latest)
}

fn events_api(client: &Client, scope: &Scope) -> Api<WireEvent> {
    match scope {
        Scope::All => Api::all(client.clone()),
        Scope::Namespace(ns) => Api::namespaced(client.clone(), ns),
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
