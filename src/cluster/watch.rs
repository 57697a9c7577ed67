//! List, then watch from the list's resourceVersion; never give up.
//!
//! Errors are logged and shown as staleness, never returned: the loop backs off, resumes from
//! the last resourceVersion it saw, and relists when the server says that version is gone.
//! A watch that stays open but says nothing (a frozen server, a load balancer that dropped
//! the stream) is only told apart from a quiet cluster by its silence: bookmarks are asked
//! for, and a watch silent past `silence` is dropped and replaced.

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
use super::{Cache, Scope, WatchState, list_pods};
use crate::pod::WirePod;

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

impl WatchSettings {
    /// The defaults, with the silence bound from `$OPS_POD_CLEANER_WATCH_SILENCE` when set
    /// (a Go-style duration: `90s`, `2m`).
    pub fn from_env() -> crate::Result<WatchSettings> {
        let mut settings = WatchSettings::default();
        if let Some(silence) = super::env_duration(SILENCE_ENV)? {
            settings.silence = silence;
        }
        Ok(settings)
    }
}

pub const SILENCE_ENV: &str = "OPS_POD_CLEANER_WATCH_SILENCE";

/// A watch that ends this soon having said nothing was refused, not finished: back off.
const SHORT_WATCH: Duration = Duration::from_secs(1);

/// One task per scope, all feeding the same cache.
pub fn spawn_watches(
    client: &Client,
    scopes: &[Scope],
    cache: &Cache,
    settings: &WatchSettings,
) -> Vec<JoinHandle<()>> {
    scopes
        .iter()
        .map(|scope| {
            cache.register(scope, settings.silence);
            tokio::spawn(watch_scope(
                client.clone(),
                scope.clone(),
                cache.clone(),
                settings.clone(),
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
}

pub async fn watch_scope(client: Client, scope: Scope, cache: Cache, settings: WatchSettings) {
    let mut backoff = Backoff::new(settings.min_backoff, settings.max_backoff);
    let mut heard = Heard::new(&settings);
    loop {
        let listed = match list_pods(&client, &scope, settings.page_size).await {
            Ok(listed) => listed,
            Err(e) => {
                let error = e.to_string();
                tracing::warn!(%scope, "{error}");
                mark_down(&cache, &scope, error);
                backoff.wait().await;
                continue;
            }
        };
        let mut version = listed.resource_version;
        cache.replace_scope(&scope, listed.pods, Utc::now());
        heard.now(&cache, &scope);
        cache.update_health(&scope, |h| {
            h.synced = true;
            h.state = WatchState::Watching;
        });
        backoff.reset();
        loop {
            let ended = watch_once(&client, &scope, &cache, &settings, &mut heard, &mut version);
            match ended.await {
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
                Ended::Expired => {
                    tracing::info!(%scope, "resourceVersion {version} expired; relisting");
                    cache.update_health(&scope, |h| {
                        h.relists += 1;
                        h.state = WatchState::Relisting {
                            stale_from: h.stale_from(),
                        };
                    });
                    break;
                }
                Ended::Failed(error) => {
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

async fn watch_once(
    client: &Client,
    scope: &Scope,
    cache: &Cache,
    settings: &WatchSettings,
    heard: &mut Heard,
    version: &mut String,
) -> Ended {
    let params = WatchParams::default()
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
        Ok(Err(kube::Error::Api(status))) if status.code == 410 => return Ended::Expired,
        Ok(Err(e)) => return Ended::Failed(explain(&e, "watch", "pods", scope)),
    };
    let mut stream = std::pin::pin!(stream);
    let mut said_something = false;
    loop {
        let item = match tokio::time::timeout_at(deadline(heard), stream.next()).await {
            Err(_) => return Ended::Silent,
            Ok(None) => {
                return Ended::Closed {
                    said_something,
                    lived: opened.elapsed(),
                };
            }
            Ok(Some(item)) => item,
        };
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
