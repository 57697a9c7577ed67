//! Pods' Warning Events into the cache, for the causes a status does not tell (a pull in
//! back-off, a scheduler's verdict, a probe that kills).
//!
//! kube-runtime's `watcher` does the list, the watch and the relist with jittered backoff;
//! each Event is cut down to what a cause reads ([`pod_event`]) as it arrives, so only the
//! latest Event per pod and kind is kept. The pod view's freshness does not wait on these:
//! a cause from the status alone is still a cause, so their watch is not a guard.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use chrono::Utc;
use futures::{StreamExt, TryStreamExt};
use kube::api::ListParams;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, watcher};
use kube::{Api, Client};
use tokio::task::JoinHandle;

use super::index::Events;
use super::{Cache, Scope};
use crate::pod::{EventTarget, PodEvent, WireEvent, pod_event};

/// Only what a cause may read: a pod's Warnings (the server filters).
const SELECTOR: &str = "type=Warning,involvedObject.kind=Pod";

/// Events of pods the cache does not hold are kept this long, for a pod listed late.
const KEEP_ORPHANS: Duration = Duration::from_secs(10 * 60);

/// A watch that yields nothing this long is made again: the server ends every watch within
/// 290 s, so a stream silent longer than that is not a stream any more.
const SILENT: Duration = Duration::from_secs(330);

/// One task per scope, feeding `cache`.
pub fn spawn_event_watches(
    client: &Client,
    scopes: &[Scope],
    cache: &Cache,
) -> Vec<JoinHandle<()>> {
    scopes
        .iter()
        .map(|scope| {
            let api = events_api(client, scope);
            tokio::spawn(watch_events(api, scope.clone(), cache.clone()))
        })
        .collect()
}

async fn watch_events(api: Api<WireEvent>, scope: Scope, cache: Cache) {
    // A quorum read: API servers keep no watch cache for Events, so pages of it are honoured
    // (a list at version 0 from a cache could come in one body).
    let config = watcher::Config {
        list_semantic: watcher::ListSemantic::MostRecent,
        ..watcher::Config::default()
    }
    .fields(SELECTOR)
    .page_size(500)
    .timeout(290);
    let mut told = false;
    let mut pruned = Instant::now();
    loop {
        let mut stream = watcher(api.clone(), config.clone())
            .default_backoff()
            .boxed();
        let mut listed: Option<Vec<(EventTarget, PodEvent)>> = None;
        loop {
            let next = match tokio::time::timeout(SILENT, stream.try_next()).await {
                Err(_) => {
                    tracing::debug!(%scope, "the Event watch went silent; making it again");
                    break;
                }
                Ok(next) => next,
            };
            match next {
                Ok(Some(event)) => {
                    told = false;
                    take(event, &scope, &cache, &mut listed);
                }
                Ok(None) => break,
                Err(e) => {
                    // Said once per outage: without Events a cause rests on the status alone.
                    if !told {
                        tracing::warn!(%scope, "pods' Events cannot be read ({e}); causes come from the status alone");
                        told = true;
                    } else {
                        tracing::debug!(%scope, "Events: {e}");
                    }
                }
            }
            if pruned.elapsed() >= KEEP_ORPHANS / 2 {
                pruned = Instant::now();
                cache.prune_events(
                    Utc::now() - chrono::Duration::from_std(KEEP_ORPHANS).unwrap_or_default(),
                );
            }
        }
    }
}

fn take(
    event: watcher::Event<WireEvent>,
    scope: &Scope,
    cache: &Cache,
    listed: &mut Option<Vec<(EventTarget, PodEvent)>>,
) {
    let now = Utc::now();
    match event {
        watcher::Event::Init => *listed = Some(Vec::new()),
        watcher::Event::InitApply(e) => {
            if let (Some(all), Some(kept)) = (listed.as_mut(), pod_event(&e, now)) {
                all.push(kept);
            }
        }
        watcher::Event::InitDone => {
            let all = listed.take().unwrap_or_default();
            cache.replace_events(|ns| scope.covers(ns), all, now);
        }
        watcher::Event::Apply(e) => {
            if let Some((target, kept)) = pod_event(&e, now) {
                cache.record_event(target, kept, now);
            }
        }
        // Deleted (its TTL, or whoever wrote it): it no longer speaks for its pod.
        watcher::Event::Delete(e) => {
            if let Some((target, gone)) = pod_event(&e, now) {
                cache.forget_event(&target, &gone, now);
            }
        }
    }
}

/// Every Warning Event of `scope`'s pods that a cause reads, listed once (for `scan`), by pod
/// UID: the latest of each kind.
pub async fn list_pod_events(
    client: &Client,
    scope: &Scope,
) -> Result<HashMap<EventTarget, Events>, kube::Error> {
    let api = events_api(client, scope);
    let mut params = ListParams::default().fields(SELECTOR).limit(500);
    let mut latest: HashMap<EventTarget, Events> = HashMap::new();
    let now = Utc::now();
    loop {
        let page = api.list(&params).await?;
        for (target, event) in page.items.iter().filter_map(|e| pod_event(e, now)) {
            let known = latest.get(&target).map_or(&[][..], |e| e);
            if let Some(events) = merged(known, event) {
                latest.insert(target, events);
            }
        }
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(latest),
        }
    }
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
