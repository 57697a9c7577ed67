//! Cluster access: connecting, listing and watching pods into the live cache.

mod backoff;
mod cache;
mod connect;
mod deadline;
mod explain;
mod index;
mod list;
mod watch;

use std::time::Duration;

pub use backoff::{Backoff, jitter};
pub use cache::{Abnormal, Cache, DEFAULT_SILENCE, Health, ScopeHealth, WatchState};
pub use connect::{Cluster, ConnectOptions, connect};
pub use deadline::{
    CONNECT_TIMEOUT_ENV, Deadlines, REQUEST_TIMEOUT_ENV, TimedOut, client_with_deadlines,
};
pub use explain::{causes, explain};
pub use index::Census;
pub use list::{ListFrom, ListedPods, decode_page, list_pods, list_pods_from};
pub use watch::{INITIAL_EVENTS_END, SILENCE_ENV, WatchSettings, spawn_watches, watch_scope};

/// What a list or watch covers: the whole cluster or one namespace.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Scope {
    All,
    Namespace(String),
}

impl Scope {
    /// From `-n` flags: none means the whole cluster.
    pub fn from_namespaces(namespaces: &[String]) -> Vec<Scope> {
        if namespaces.is_empty() {
            vec![Scope::All]
        } else {
            namespaces
                .iter()
                .map(|n| Scope::Namespace(n.clone()))
                .collect()
        }
    }

    pub fn pods_path(&self) -> String {
        match self {
            Scope::All => "/api/v1/pods".to_string(),
            Scope::Namespace(ns) => format!("/api/v1/namespaces/{ns}/pods"),
        }
    }

    pub fn covers(&self, namespace: &str) -> bool {
        match self {
            Scope::All => true,
            Scope::Namespace(ns) => ns == namespace,
        }
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scope::All => f.write_str("all namespaces"),
            Scope::Namespace(ns) => write!(f, "namespace {ns}"),
        }
    }
}

/// A Go-style duration (`10s`, `2m`) from the environment, if set; a bad one is a usage error
/// before anything starts.
/// The watch settings a command runs with: the config's silence bound, unless
/// `$OPS_POD_CLEANER_WATCH_SILENCE` overrides it.
pub fn watch_settings(config: &crate::config::ClusterConfig) -> crate::Result<WatchSettings> {
    Ok(WatchSettings {
        silence: env_duration(SILENCE_ENV)?.unwrap_or(config.watch_silence),
        ..WatchSettings::default()
    })
}

pub(crate) fn env_duration(key: &str) -> crate::Result<Option<Duration>> {
    let Some(text) = std::env::var(key).ok().filter(|v| !v.trim().is_empty()) else {
        return Ok(None);
    };
    match crate::config::parse_duration(&text) {
        Ok(d) if !d.is_zero() => Ok(Some(d)),
        Ok(_) => Err(crate::Error::Usage(format!("${key} must be longer than 0"))),
        Err(why) => Err(crate::Error::Usage(format!(
            "${key}={text:?} is not a duration like 10s or 2m ({why})"
        ))),
    }
}
