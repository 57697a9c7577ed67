//! What a list or watch covers.

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

    /// Where a core/v1 `resource` (pods, events) of this scope is listed; a cluster-wide one
    /// (nodes) under `All`.
    pub(crate) fn path(&self, resource: &str) -> String {
        match self {
            Scope::All => format!("/api/v1/{resource}"),
            Scope::Namespace(ns) => format!("/api/v1/namespaces/{ns}/{resource}"),
        }
    }

    pub(crate) fn covers(&self, namespace: &str) -> bool {
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
