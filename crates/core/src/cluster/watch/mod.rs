//! List, then watch from the list's resourceVersion; never give up. One loop for every kind
//! watched (see [`kind`]; only the pods' freshness is a guard).
//!
//! Errors are logged and shown, never returned: the loop backs off, resumes from the last
//! resourceVersion it saw, and relists when the server says that version is gone. A watch
//! quiet for half the freshness bound is re-made to prove the view again, so a quiet cluster
//! (whose server may send no bookmark for minutes) stays fresh, and a frozen server or a stream
//! a load balancer dropped shows within the bound.
//!
//! The decisions are in [`step`] (pure); [`stream`] reads one connection, [`list_scope`] one
//! paged list. A list is a streaming one (`sendInitialEvents`, its stream then goes on as the
//! watch) where the server supports it, learnt once per cluster; else pages (see [`ListFrom`]).

mod read;
mod step;
mod stream;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::Client;
use tokio::task::JoinHandle;

use super::backoff::Backoff;
use super::health::DEFAULT_STALE_AFTER;
use super::kind::{Kind, Nodes, Pods};
use super::list::{ListFrom, list_scope};
use super::{Cache, Forbidden, Scope, ScopeHealth, WatchState};
use crate::config::WireFormat;
use crate::node::NodeState;
use step::{Attempt, Down, Ended, State, Then, step};

#[derive(Debug, Clone)]
pub struct WatchSettings {
    pub page_size: u32,
    /// How long the server keeps one watch open before we reconnect.
    pub watch_timeout: Duration,
    /// A view not proved current for this long is stale. A watch quiet for half of it is
    /// re-made to prove it; a request unanswered that long is given up.
    pub stale_after: Duration,
    pub min_backoff: Duration,
    pub max_backoff: Duration,
    /// What pods are asked for in: protobuf unless JSON is forced.
    pub wire: WireFormat,
}

impl Default for WatchSettings {
    fn default() -> Self {
        WatchSettings {
            page_size: 500,
            watch_timeout: Duration::from_secs(290),
            stale_after: DEFAULT_STALE_AFTER,
            min_backoff: Duration::from_millis(500),
            // Back within seconds of a server's return: a retry every few seconds per scope
            // costs a server nothing.
            max_backoff: Duration::from_secs(5),
            // The environment's choice where one is made, so a whole test run can force JSON.
            wire: super::negotiate::env_wire_format()
                .ok()
                .flatten()
                .unwrap_or_default(),
        }
    }
}

impl WatchSettings {
    fn quiet(&self) -> Duration {
        self.stale_after / 2
    }

    /// A re-made watch the server keeps open this long proves the view current: long enough
    /// for a refusal (410 comes right after the answer) or a proxy that closes at once to show.
    fn settle(&self) -> Duration {
        (self.stale_after / 8).min(Duration::from_secs(1))
    }

    /// How often a busy watch tells the cache it is current.
    fn tell_every(&self) -> Duration {
        (self.stale_after / 10).min(Duration::from_secs(1))
    }

    /// For a watch that is no guard (nodes, Events): re-made only about as often as a server
    /// ends a watch by itself, since nothing waits on its proof.
    pub(crate) fn quiet_kind(&self) -> WatchSettings {
        WatchSettings {
            stale_after: QUIET_KINDS,
            ..self.clone()
        }
    }
}

/// The freshness bound of a watch that is no guard: quiet for half of it (five minutes, about
/// when a server ends a watch by itself) and it is re-made.
pub(crate) const QUIET_KINDS: Duration = Duration::from_secs(600);

pub(crate) const STALE_AFTER_ENV: &str = "OPS_POD_CLEANER_WATCH_SILENCE";

/// Whether one cluster's API server is known not to serve streaming lists: learnt when it
/// refuses or ignores one. Shared by every scope watched on that cluster, so it is learnt once.
#[derive(Clone, Default)]
pub(crate) struct Streaming(Arc<AtomicBool>);

impl Streaming {
    fn worth_trying(&self) -> bool {
        !self.0.load(Ordering::Relaxed)
    }

    fn learnt(&self, supported: bool) {
        self.0.store(!supported, Ordering::Relaxed);
    }
}

/// One task per scope, all feeding the same cache and sharing what is learnt of the server.
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
            cache.register(scope, settings.stale_after);
            let kind = Pods(cache.clone());
            spawn_one(client, scope, kind, settings, streaming.clone())
        })
        .collect()
}

/// One scope of one kind, watched by its own task.
pub(crate) fn spawn_one<K: Kind>(
    client: &Client,
    scope: &Scope,
    kind: K,
    settings: &WatchSettings,
    streaming: Streaming,
) -> JoinHandle<()> {
    let scoped = Scoped {
        client: client.clone(),
        scope: scope.clone(),
        kind,
        settings: settings.clone(),
    };
    tokio::spawn(run_scope(scoped, streaming))
}

/// The cluster's nodes into `cache`, by the same loop as its pods. A cluster that forbids
/// reading them still works (causes from the pod alone), and says so.
pub fn spawn_node_watch(
    client: &Client,
    cache: &Cache,
    settings: &WatchSettings,
) -> JoinHandle<()> {
    let health = ScopeHealth::new(Scope::All, settings.stale_after);
    spawn_one(
        client,
        &Scope::All,
        Nodes {
            cache: cache.clone(),
            health: Mutex::new(health),
        },
        settings,
        Streaming::default(),
    )
}

/// Every node now (a most recent read), for a one-shot caller (`scan`).
pub async fn list_nodes(
    client: &Client,
    page_size: u32,
) -> Result<Vec<NodeState>, super::ListError> {
    list_scope::<Nodes>(
        client,
        &Scope::All,
        page_size,
        &ListFrom::MostRecent,
        WireFormat::Json,
    )
    .await
    .map(|listed| listed.items)
}

/// What one scope's loop works with.
struct Scoped<K> {
    client: Client,
    scope: Scope,
    kind: K,
    settings: WatchSettings,
}

impl<K: Kind> Scoped<K> {
    fn health(&self, mut change: impl FnMut(&mut ScopeHealth)) {
        self.kind.health(&self.scope, &mut change);
    }
}

async fn run_scope<K: Kind>(scoped: Scoped<K>, streaming: Streaming) {
    let scope = &scoped.scope;
    let mut backoff = Backoff::new(scoped.settings.min_backoff, scoped.settings.max_backoff);
    let mut state = State::List {
        from: ListFrom::Any,
        stream: streaming.worth_trying(),
    };
    // The last error logged: one that repeats each backoff is logged once.
    let mut said: Option<String> = None;
    loop {
        let attempt = match &state {
            State::List {
                from,
                stream: false,
            } => paged_list(&scoped, from).await,
            State::List { from, stream: true } => {
                stream::connection(&scoped, &from.version(), true).await
            }
            State::Watch { version } => stream::connection(&scoped, version, false).await,
        };
        if let Ended::Unsupported(why) = &attempt.ended {
            tracing::info!(%scope, "no streaming lists ({why}); listing in pages");
        }
        let next = step(state, attempt, streaming.worth_trying());
        if let Some(streams) = next.streams {
            streaming.learnt(streams);
        }
        state = next.state;
        if matches!(next.then, Then::Continue) {
            said = None;
        }
        match next.then {
            Then::Continue => backoff.reset(),
            Then::Retry => tracing::debug!(%scope, "retrying at once: {state:?}"),
            Then::Relist => {
                tracing::info!(%scope, "the watched version expired; relisting");
                scoped.health(|h| {
                    h.relists += 1;
                    h.state = WatchState::Relisting;
                });
            }
            Then::Backoff { down: None } => {
                tracing::debug!(%scope, "the server closed the watch at once");
                backoff.wait().await;
            }
            Then::Backoff { down: Some(down) } => {
                let (error, down_state) = match down {
                    Down::Failed(error) => (error.clone(), WatchState::Reconnecting { error }),
                    Down::Forbidden(forbidden) => {
                        (forbidden.explained(), WatchState::Forbidden(forbidden))
                    }
                };
                if said.as_ref() != Some(&error) {
                    tracing::warn!(%scope, "{error}");
                } else {
                    tracing::debug!(%scope, "{error}");
                }
                said = Some(error);
                scoped.health(|h| {
                    h.restarts += 1;
                    h.state = down_state.clone();
                });
                backoff.wait().await;
            }
        }
    }
}

/// A paged list of the whole scope, swapped into the store when complete.
async fn paged_list<K: Kind>(scoped: &Scoped<K>, from: &ListFrom) -> Attempt {
    let settings = &scoped.settings;
    match list_scope::<K>(
        &scoped.client,
        &scoped.scope,
        settings.page_size,
        from,
        settings.wire,
    )
    .await
    {
        Ok(listed) => {
            scoped.kind.replace(&scoped.scope, listed.items);
            let now = scoped.kind.clock().instant();
            scoped.health(|h| {
                h.format = listed.format.or(h.format);
                h.synced = true;
                h.state = WatchState::Watching;
                h.proved = Some(now);
            });
            Attempt {
                reached: Some(listed.resource_version),
                ended: Ended::Listed,
            }
        }
        Err(failed) => {
            let error = failed.to_string();
            let ended = match failed.status() {
                Some(status) if status.code == 403 => Ended::Forbidden(Forbidden {
                    verb: "list",
                    resource: K::RESOURCE,
                    scope: scoped.scope.clone(),
                    message: status.message.clone(),
                }),
                // Not an outage: the server cannot serve that version (its data was restored
                // from an older backup).
                Some(status)
                    if matches!(status.code, 410 | 504)
                        && matches!(from, ListFrom::NotOlderThan(_)) =>
                {
                    Ended::Refused(error)
                }
                _ => Ended::Failed(error),
            };
            Attempt {
                reached: None,
                ended,
            }
        }
    }
}
