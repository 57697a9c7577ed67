//! Cluster access: connecting, listing and watching pods into the live cache.

mod abnormal;
mod backoff;
mod cache;
mod connect;
mod connect_error;
mod deadline;
mod event_store;
mod events;
mod explain;
mod health;
mod index;
mod kind;
mod list;
mod listed;
mod name;
mod negotiate;
mod node_store;
mod scope;
mod split;
mod split_proto;
mod watch;

use std::time::Duration;

pub use abnormal::Abnormal;
pub(crate) use backoff::{Backoff, jitter};
pub use cache::{Cache, CacheReader, CachedEvents, CachedNodes};
pub use connect::{Cluster, ConnectOptions, connect};
pub use connect_error::{ConnectError, KubeconfigStep, Origin};
pub use deadline::{Deadlines, client_with_deadlines};
pub use event_store::EventStore;
pub use events::{list_pod_events, spawn_event_watches};
pub(crate) use explain::causes;
pub use explain::{explain, plain};
pub use health::{Forbidden, Health, ScopeHealth, SourceHealth, WatchState, can_i};
pub use index::Census;
pub use list::{ListError, ListProblem, RequestError, list_pods};
pub use listed::Listed;
pub use name::ClusterName;
pub use node_store::NodeStore;
pub use scope::{Scope, is_dns_label};
pub(crate) use watch::STALE_AFTER_ENV;
pub use watch::{WatchSettings, list_nodes, spawn_node_watch, spawn_watches};

/// The watch settings a command runs with: the config's freshness bound and wire format,
/// unless `$OPS_POD_CLEANER_WATCH_SILENCE` or `$OPS_POD_CLEANER_WIRE_FORMAT` overrides them.
pub fn watch_settings(
    config: &crate::config::ClusterConfig,
) -> Result<WatchSettings, crate::Usage> {
    Ok(WatchSettings {
        stale_after: env_duration(STALE_AFTER_ENV)?.unwrap_or(config.watch_silence),
        wire: negotiate::env_wire_format()?.unwrap_or(config.wire_format),
        ..WatchSettings::default()
    })
}

/// A Go-style duration (`10s`, `2m`) from the environment, if set; a bad one is a usage error
/// before anything starts.
pub(crate) fn env_duration(key: &'static str) -> Result<Option<Duration>, crate::Usage> {
    let Some(text) = std::env::var(key).ok().filter(|v| !v.trim().is_empty()) else {
        return Ok(None);
    };
    match crate::config::parse_duration(&text) {
        Ok(d) if !d.is_zero() => Ok(Some(d)),
        Ok(_) => Err(crate::Usage::ZeroDuration { key }),
        Err(why) => Err(crate::Usage::BadDuration {
            key,
            text,
            why: why.to_string(),
        }),
    }
}
