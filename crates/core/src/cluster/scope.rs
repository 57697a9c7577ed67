//! What a list or watch covers.

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

/// RFC 1123 label: what namespaces and Service names are. A name the API server sent that is
/// not one was not written by a real server: it is used nowhere.
pub fn is_dns_label(text: &str) -> bool {
    let bytes = text.as_bytes();
    let edge = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    (1..=63).contains(&bytes.len())
        && edge(bytes.first())
        && edge(bytes.last())
        && (bytes.iter()).all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scope::All => f.write_str("all namespaces"),
            Scope::Namespace(ns) => write!(f, "namespace {ns}"),
        }
    }
}
