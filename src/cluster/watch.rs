//! List, then watch from the list's resourceVersion; never give up.
//!
//! Errors are logged and shown as staleness, never returned: the loop backs off, resumes from
//! the last resourceVersion it saw, and relists when the server says that version is gone.
//! A watch that stays open but says nothing (a frozen server, a load balancer that dropped
//! the stream) is only told apart from a quiet cluster by its silence: bookmarks are asked
//! for, and a watch silent past `silence` is dropped and replaced.
//!
//! Lists are served from the API server's watch cache, never as quorum reads from etcd unless
//! a version was refused: a streaming list (`sendInitialEvents`) where the server supports it,
//! whose stream then goes on as the watch; else pages at `resourceVersion=0` first and
//! `NotOlderThan` the last seen version on a relist (see [`ListFrom`]). Whether the server
//! supports streaming lists is learnt once per cluster and remembered.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use chrono::Utc;
use futures::StreamExt;
use kube::Client;
use kube::core::params::WatchParams;
use kube::core::{Request, WatchEvent};
use tokio::task::JoinHandle;

use super::backoff::Backoff;
use super::cache::DEFAULT_SILENCE;
use super::explain::explain;
use super::list::{ListFrom, list_scope};
use super::{Cache, Scope, WatchState};
use crate::pod::{Interner, PodRecord, WirePod};

#[derive(Debug, Clone)]
pub struct WatchSettings {
    pub page_size: u32,
    /// How long the server keeps one watch open before we reconnect.
    pub watch_timeout: Duration,
    /// A watch that sends no event and no bookmark for this long is dead: it is dropped and
    /// the scope counts as stale from then on.
    pub silence: Duration,
    pub min_backoff: Duration,
    pub max_backoff: Duration,
}

impl Default for WatchSettings {
    fn default() -> Self {
        WatchSettings {
            page_size: 500,
            watch_timeout: Duration::from_secs(290),
            silence: DEFAULT_SILENCE,
            min_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
        }
    }
}

pub(crate) const SILENCE_ENV: &str = "OPS_POD_CLEANER_WATCH_SILENCE";

/// A watch that ends this soon having said nothing was refused, not finished: back off.
const SHORT_WATCH: Duration = Duration::from_secs(1);

/// The annotation on the bookmark that ends a streaming list's initial events.
pub(crate) const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

/// Whether one cluster's API server serves streaming lists: unknown until it answers one.
/// Shared by every scope watched on that cluster, so it is learnt once.
#[derive(Clone, Default)]
struct Streaming(Arc<AtomicU8>);

// 0: not known yet.
const SUPPORTED: u8 = 1;
const UNSUPPORTED: u8 = 2;

impl Streaming {
    fn worth_trying(&self) -> bool {
        self.0.load(Ordering::Relaxed) != UNSUPPORTED
    }

    fn learnt(&self, supported: bool) {
        self.0.store(
            if supported { SUPPORTED } else { UNSUPPORTED },
            Ordering::Relaxed,
        );
    }
}

/// One task per scope, all feeding the same cache. The scopes share what is learnt about
/// the server (whether it serves streaming lists).
pub fn spawn_watches(
    client: &Client,
    scopes: &[Scope],
    cache: &Cache,
    settings: &WatchSettings,
) -> Vec<JoinHandle<()>> {
    let streaming = Streaming::default();
    scopes
        .iter()
        .map(|scope| {
            cache.register(scope, settings.silence);
            tokio::spawn(run_scope(
                client.clone(),
                scope.clone(),
                cache.clone(),
                settings.clone(),
                streaming.clone(),
            ))
        })
        .collect()
}

/// Why one watch connection ended.
enum Ended {
    /// Closed by the server (its timeout, or a refusal that says nothing): resume from the
    /// last version.
    Closed {
        said_something: bool,
        lived: Duration,
    },
    /// Nothing heard for longer than the silence bound: the connection is dead.
    Silent,
    /// The version is too old (410 Gone): relist.
    Expired,
    Failed(String),
    /// A streaming list was refused as an unknown request (400/422), or its initial events
    /// never ended with the marked bookmark: the server does not serve streaming lists.
    Unsupported(String),
    /// The server cannot serve the version asked for (410, or 504 "too large"): forget it.
    Refused(String),
}

/// A streaming list's initial events, gathered until the bookmark that ends them.
struct Initial {
    /// By UID: a server that ignored `sendInitialEvents` streams changes to the same pods
    /// until its first bookmark tells; each must replace, not pile up.
    pods: HashMap<Box<str>, PodRecord>,
    interner: Interner,
}

async fn run_scope(
    client: Client,
    scope: Scope,
    cache: Cache,
    settings: WatchSettings,
    streaming: Streaming,
) {
    let mut backoff = Backoff::new(settings.min_backoff, settings.max_backoff);
    let mut heard = Heard::new(&settings);
    // The last version seen (None before the first sync), and whether the server refused it.
    let mut seen: Option<String> = None;
    let mut refused = false;
    loop {
        let mut version = String::new();
        // What the streaming list's stream said once it had synced: the watch goes on there.
        let mut carried: Option<Ended> = None;
        if streaming.worth_trying() {
            let at = match (&seen, refused) {
                (Some(v), false) => v.clone(),
                (None, false) => "0".to_string(),
                // A consistent read: the server checks its cache is current first.
                (_, true) => String::new(),
            };
            version = at;
            let mut synced = false;
            let ended = watch_once(
                &client,
                &scope,
                &cache,
                &settings,
                &mut heard,
                &mut version,
                Some(&mut synced),
            )
            .await;
            if synced {
                streaming.learnt(true);
                carried = Some(ended);
            } else {
                match ended {
                    Ended::Unsupported(why) => {
                        tracing::info!(%scope, "no streaming lists ({why}); listing in pages");
                        streaming.learnt(false);
                    }
                    Ended::Refused(why) => {
                        tracing::info!(%scope, "version refused ({why}); reading the latest");
                        refused = true;
                    }
                    Ended::Expired => refused = true,
                    Ended::Failed(why) => {
                        // Making progress beats waiting: list in pages this time.
                        tracing::debug!(%scope, "the streaming list failed ({why}); paging");
                    }
                    Ended::Silent | Ended::Closed { .. } => {
                        tracing::debug!(%scope, "the streaming list ended unsynced; paging");
                    }
                }
            }
        }
        if carried.is_none() {
            let from = match (&seen, refused) {
                (_, true) => ListFrom::MostRecent,
                (None, false) => ListFrom::Any,
                (Some(v), false) => ListFrom::NotOlderThan(v.clone()),
            };
            let listed = match list_scope(&client, &scope, settings.page_size, &from).await {
                Ok(listed) => listed,
                Err(failed) => {
                    let error = failed.error.to_string();
                    if matches!(from, ListFrom::NotOlderThan(_))
                        && matches!(failed.code, Some(410 | 504))
                    {
                        // Not an outage: the server cannot serve that version (its data was
                        // restored from an older backup). Only the latest state can be had.
                        tracing::info!(%scope, "version refused ({error}); reading the latest");
                        refused = true;
                        continue;
                    }
                    tracing::warn!(%scope, "{error}");
                    mark_down(&cache, &scope, error);
                    backoff.wait().await;
                    continue;
                }
            };
            version = listed.resource_version;
            cache.replace_scope(&scope, listed.pods, Utc::now());
            heard.now(&cache, &scope);
            cache.update_health(&scope, |h| {
                h.synced = true;
                h.state = WatchState::Watching;
            });
        }
        refused = false;
        backoff.reset();
        loop {
            let ended = match carried.take() {
                Some(ended) => ended,
                None => {
                    watch_once(
                        &client,
                        &scope,
                        &cache,
                        &settings,
                        &mut heard,
                        &mut version,
                        None,
                    )
                    .await
                }
            };
            if !version.is_empty() {
                seen = Some(version.clone());
            }
            match ended {
                Ended::Closed {
                    said_something,
                    lived,
                } => {
                    if said_something || lived >= SHORT_WATCH {
                        backoff.reset();
                    } else {
                        // Closed as soon as opened: reconnecting at once would spin.
                        tracing::debug!(%scope, "the server closed the watch at once");
                        backoff.wait().await;
                    }
                }
                Ended::Silent => {
                    let error = format!(
                        "no event or bookmark for {}s; dropped the watch, reconnecting",
                        settings.silence.as_secs()
                    );
                    tracing::warn!(%scope, "{error}");
                    mark_down(&cache, &scope, error);
                    backoff.wait().await;
                }
                Ended::Expired | Ended::Refused(_) => {
                    tracing::info!(%scope, "resourceVersion {version} expired; relisting");
                    cache.update_health(&scope, |h| {
                        h.relists += 1;
                        h.state = WatchState::Relisting {
                            stale_from: h.stale_from(),
                        };
                    });
                    break;
                }
                Ended::Failed(error) | Ended::Unsupported(error) => {
                    tracing::warn!(%scope, "watch failed: {error}");
                    mark_down(&cache, &scope, error);
                    backoff.wait().await;
                }
            }
        }
    }
}

/// The scope is no longer fresh: from now, or from when its silence passed the bound if that
/// came first; an outage already under way keeps its start.
fn mark_down(cache: &Cache, scope: &Scope, error: String) {
    cache.update_health(scope, |h| {
        h.restarts += 1;
        let now = Instant::now();
        let since = h.stale_from().map_or(now, |from| from.min(now));
        h.state = WatchState::Reconnecting { since, error };
    });
}

/// When the server last said something on this scope. Kept here exactly (it times the
/// silence), and told to the cache at most every `every` so a busy watch takes no extra lock
/// per event.
struct Heard {
    at: Instant,
    told: Option<Instant>,
    every: Duration,
}

impl Heard {
    fn new(settings: &WatchSettings) -> Heard {
        Heard {
            at: Instant::now(),
            told: None,
            every: (settings.silence / 10).min(Duration::from_secs(1)),
        }
    }

    fn now(&mut self, cache: &Cache, scope: &Scope) {
        self.at = Instant::now();
        if self.told.is_none_or(|told| self.at >= told + self.every) {
            cache.heard(scope, self.at);
            self.told = Some(self.at);
        }
    }
}

/// One watch connection: a plain watch from `version`, or (with `synced`) a streaming list
/// at `version` whose initial events replace the scope when their closing bookmark comes,
/// setting `synced`, after which the same stream goes on as the watch.
async fn watch_once(
    client: &Client,
    scope: &Scope,
    cache: &Cache,
    settings: &WatchSettings,
    heard: &mut Heard,
    version: &mut String,
    mut synced: Option<&mut bool>,
) -> Ended {
    let listing = synced.is_some();
    let params = if listing {
        WatchParams::streaming_lists()
    } else {
        WatchParams::default()
    }
    .timeout(settings.watch_timeout.as_secs().clamp(1, u32::MAX as u64) as u32);
    // Bookmarks are what a quiet but healthy watch says; without them silence proves nothing.
    debug_assert!(params.bookmarks);
    let request = match Request::new(scope.pods_path()).watch(&params, version) {
        Ok(r) => r,
        Err(e) => return Ended::Failed(e.to_string()),
    };
    let opened = Instant::now();
    // Each connection gets the full bound to speak, even if the scope was silent before it.
    let deadline =
        |heard: &Heard| tokio::time::Instant::from_std(heard.at.max(opened) + settings.silence);
    let answer =
        tokio::time::timeout_at(deadline(heard), client.request_events::<WirePod>(request));
    let stream = match answer.await {
        Err(_) => return Ended::Silent,
        Ok(Ok(s)) => s,
        Ok(Err(kube::Error::Api(status))) if refusal(&status, listing).is_some() => {
            return refusal(&status, listing).unwrap_or(Ended::Expired);
        }
        Ok(Err(e)) => return Ended::Failed(explain(&e, "watch", "pods", scope)),
    };
    let mut stream = std::pin::pin!(stream);
    let mut said_something = false;
    let mut initial = listing.then(|| Initial {
        pods: HashMap::new(),
        interner: Interner::default(),
    });
    // While the initial events come the scope is not current yet: the silence bound still
    // applies to them, but nothing is told to the cache until the closing bookmark.
    let mut quiet_until_synced = Instant::now();
    loop {
        let at = if initial.is_some() {
            tokio::time::Instant::from_std(quiet_until_synced.max(opened) + settings.silence)
        } else {
            deadline(heard)
        };
        let item = match tokio::time::timeout_at(at, stream.next()).await {
            Err(_) => return Ended::Silent,
            Ok(None) => {
                return Ended::Closed {
                    said_something,
                    lived: opened.elapsed(),
                };
            }
            Ok(Some(item)) => item,
        };
        if let Some(gathering) = &mut initial {
            quiet_until_synced = Instant::now();
            match item {
                Ok(WatchEvent::Added(pod)) | Ok(WatchEvent::Modified(pod)) => {
                    let pod = pod.into_record(&mut gathering.interner);
                    gathering.pods.insert(pod.uid.clone(), pod);
                    continue;
                }
                Ok(WatchEvent::Deleted(pod)) => {
                    let uid = pod.metadata.uid;
                    gathering.pods.remove(&*uid);
                    continue;
                }
                Ok(WatchEvent::Bookmark(mark)) => {
                    let ended = mark
                        .metadata
                        .annotations
                        .get(INITIAL_EVENTS_END)
                        .is_some_and(|v| v == "true");
                    if !ended {
                        return Ended::Unsupported(
                            "the server ignored sendInitialEvents: a bookmark came before \
                             the end of the initial events"
                                .to_string(),
                        );
                    }
                    let gathered = initial
                        .take()
                        .map(|g| g.pods.into_values().collect())
                        .unwrap_or_default();
                    *version = mark.metadata.resource_version;
                    cache.replace_scope(scope, gathered, Utc::now());
                    if let Some(flag) = synced.as_deref_mut() {
                        *flag = true;
                    }
                    cache.update_health(scope, |h| h.synced = true);
                    // Falls through: the closing bookmark is the first word of the watch.
                }
                Ok(WatchEvent::Error(status)) => {
                    return refusal(&status, true).unwrap_or_else(|| {
                        Ended::Failed(format!("{} ({})", status.message, status.code))
                    });
                }
                Err(kube::Error::SerdeError(e)) => {
                    tracing::warn!(%scope, "skipping a listed pod that does not decode: {e}");
                    continue;
                }
                Err(kube::Error::Api(status)) if refusal(&status, true).is_some() => {
                    return refusal(&status, true).unwrap_or(Ended::Expired);
                }
                Err(e) => return Ended::Failed(explain(&e, "watch", "pods", scope)),
            }
        } else {
            match item {
                Ok(WatchEvent::Added(pod)) | Ok(WatchEvent::Modified(pod)) => {
                    *version = pod.metadata.resource_version.clone();
                    cache.upsert(pod, Utc::now());
                }
                Ok(WatchEvent::Deleted(pod)) => {
                    *version = pod.metadata.resource_version.clone();
                    cache.remove(&pod.metadata.uid);
                }
                Ok(WatchEvent::Bookmark(mark)) => *version = mark.metadata.resource_version,
                Ok(WatchEvent::Error(status)) if status.code == 410 => return Ended::Expired,
                Ok(WatchEvent::Error(status)) => {
                    return Ended::Failed(format!("{} ({})", status.message, status.code));
                }
                Err(kube::Error::SerdeError(e)) => {
                    tracing::warn!(%scope, "skipping a watch event that does not decode: {e}")
                }
                Err(kube::Error::Api(status)) if status.code == 410 => return Ended::Expired,
                Err(e) => return Ended::Failed(explain(&e, "watch", "pods", scope)),
            }
        }
        // Only an event or a bookmark says the cache is current (a 410 or an error does not).
        if !said_something {
            // The first one proves the connection; clear any reconnecting state.
            said_something = true;
            cache.update_health(scope, |h| {
                h.state = WatchState::Watching;
                h.heard = Some(Instant::now());
            });
        }
        heard.now(cache, scope);
    }
}

/// An error status that says something about the version or the request, not the server's
/// health: 410 (expired), 504 "too large" (not there yet), and for a streaming list 400/422
/// (a server that does not know the request).
fn refusal(status: &kube::core::Status, listing: bool) -> Option<Ended> {
    let said = || format!("{} ({})", status.message, status.code);
    match status.code {
        410 => Some(Ended::Expired),
        504 if status.message.contains("Too large resource version") => {
            Some(Ended::Refused(said()))
        }
        400 | 422 if listing => Some(Ended::Unsupported(said())),
        _ => None,
    }
}
