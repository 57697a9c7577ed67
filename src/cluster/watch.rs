//! List, then watch from the list's resourceVersion; never give up.
//!
//! Errors are logged and shown as staleness, never returned: the loop backs off, resumes from
//! the last resourceVersion it saw, and relists when the server says that version is gone.

use std::time::{Duration, Instant};

use chrono::Utc;
use futures::StreamExt;
use kube::Client;
use kube::core::params::WatchParams;
use kube::core::{Request, WatchEvent};
use tokio::task::JoinHandle;

use super::{Cache, Scope, WatchState, list_pods};
use crate::pod::WirePod;

#[derive(Debug, Clone)]
pub struct WatchSettings {
    pub page_size: u32,
    /// How long the server keeps one watch open before we reconnect.
    pub watch_timeout: Duration,
    pub min_backoff: Duration,
    pub max_backoff: Duration,
}

impl Default for WatchSettings {
    fn default() -> Self {
        WatchSettings {
            page_size: 500,
            watch_timeout: Duration::from_secs(290),
            min_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
        }
    }
}

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
            cache.register(scope);
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
    /// Timed out or closed by the server: resume from the last version.
    Closed,
    /// The version is too old (410 Gone): relist.
    Expired,
    Failed(String),
}

pub async fn watch_scope(client: Client, scope: Scope, cache: Cache, settings: WatchSettings) {
    let mut backoff = Backoff::new(&settings);
    loop {
        let listed = match list_pods(&client, &scope, settings.page_size).await {
            Ok(listed) => listed,
            Err(e) => {
                let error = format!("list failed: {e}");
                tracing::warn!(%scope, "{error}");
                mark_down(&cache, &scope, error);
                backoff.wait().await;
                continue;
            }
        };
        let mut version = listed.resource_version;
        cache.replace_scope(&scope, listed.pods, Utc::now());
        cache.update_health(&scope, |h| {
            h.synced = true;
            h.state = WatchState::Watching;
        });
        backoff.reset();
        loop {
            match watch_once(&client, &scope, &cache, &settings, &mut version).await {
                Ended::Closed => backoff.reset(),
                Ended::Expired => {
                    tracing::info!(%scope, "resourceVersion {version} expired; relisting");
                    cache.update_health(&scope, |h| h.relists += 1);
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

fn mark_down(cache: &Cache, scope: &Scope, error: String) {
    cache.update_health(scope, |h| {
        h.restarts += 1;
        let since = match &h.state {
            WatchState::Reconnecting { since, .. } => *since,
            _ => Instant::now(),
        };
        h.state = WatchState::Reconnecting { since, error };
    });
}

async fn watch_once(
    client: &Client,
    scope: &Scope,
    cache: &Cache,
    settings: &WatchSettings,
    version: &mut String,
) -> Ended {
    let params = WatchParams::default()
        .timeout(settings.watch_timeout.as_secs().clamp(1, u32::MAX as u64) as u32);
    let request = match Request::new(scope.pods_path()).watch(&params, version) {
        Ok(r) => r,
        Err(e) => return Ended::Failed(e.to_string()),
    };
    let stream = match client.request_events::<WirePod>(request).await {
        Ok(s) => s,
        Err(kube::Error::Api(status)) if status.code == 410 => return Ended::Expired,
        Err(e) => return Ended::Failed(e.to_string()),
    };
    let mut stream = std::pin::pin!(stream);
    let mut connected = false;
    while let Some(item) = stream.next().await {
        if !connected {
            // The first event proves the connection; clear any reconnecting state.
            connected = true;
            cache.update_health(scope, |h| h.state = WatchState::Watching);
        }
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
            Err(e) => return Ended::Failed(e.to_string()),
        }
    }
    Ended::Closed
}

/// Exponential backoff between attempts, reset by success.
struct Backoff {
    next: Duration,
    min: Duration,
    max: Duration,
}

impl Backoff {
    fn new(settings: &WatchSettings) -> Backoff {
        Backoff {
            next: settings.min_backoff,
            min: settings.min_backoff,
            max: settings.max_backoff,
        }
    }

    fn reset(&mut self) {
        self.next = self.min;
    }

    async fn wait(&mut self) {
        tokio::time::sleep(self.next).await;
        self.next = (self.next * 2).min(self.max);
    }
}
