//! Cluster access: connecting, listing and watching pods into the live cache.

mod cache;
mod connect;
mod list;
mod watch;

pub use cache::{Abnormal, Cache, Health, ScopeHealth, WatchState};
pub use connect::{Cluster, ConnectOptions, connect};
pub use list::{ListedPods, decode_page, list_pods};
pub use watch::{WatchSettings, spawn_watches, watch_scope};

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
