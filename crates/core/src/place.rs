//! Where a failing pod is, as the breaker's pauses see it: its namespace, and what it shares
//! with pods of other namespaces that could explain a burst there. A pause reaches no further
//! than that, so a tenant's namespaces cannot hold pods that share nothing with theirs.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::rules::RuleKind;

/// How far a pause reaches.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, strum::IntoStaticStr,
)]
#[serde(rename_all = "camelCase")]
#[strum(serialize_all = "lowercase")]
pub enum PauseScope {
    /// Pods of one namespace.
    Namespace(String),
    /// Pods pulling their failing image from one registry host, in any namespace.
    Registry(String),
    /// Pods on one node, in any namespace.
    Node(String),
}

impl PauseScope {
    /// Whether a pod at `place` is held by a pause of this scope.
    pub fn covers(&self, place: &Place) -> bool {
        match self {
            PauseScope::Namespace(ns) => *ns == place.namespace,
            shared => place.shared.as_ref() == Some(shared),
        }
    }

    /// One word for the kind of scope, for `/metrics`.
    pub fn kind(&self) -> &'static str {
        self.into()
    }
}

impl fmt::Display for PauseScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PauseScope::Namespace(ns) => write!(f, "in {ns}"),
            PauseScope::Registry(host) => write!(f, "for images from {host}"),
            PauseScope::Node(node) => write!(f, "on node {node}"),
        }
    }
}

/// Where a matching pod is, as pauses see it: its namespace, and what it shares across
/// namespaces (the registry of the image it cannot pull, the node an evicted or stuck pod is on).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Place {
    pub namespace: String,
    pub shared: Option<PauseScope>,
}

impl Place {
    pub fn at(rule: RuleKind, namespace: &str, node: Option<&str>, message: Option<&str>) -> Place {
        let shared = match rule {
            RuleKind::ImagePull => message
                .and_then(pulled_image)
                .map(|image| PauseScope::Registry(registry_host(image).to_string())),
            _ if node_bound(rule) => node.map(|node| PauseScope::Node(node.to_string())),
            _ => None,
        };
        Place {
            namespace: namespace.to_string(),
            shared,
        }
    }
}

/// Rules whose matches a node produces (its pressure, its loss): evicted pods, pods stuck
/// Terminating, pods whose node is lost.
pub fn node_bound(rule: RuleKind) -> bool {
    matches!(
        rule,
        RuleKind::Evicted | RuleKind::Terminating | RuleKind::Unknown
    )
}

/// The image a kubelet's pull message names: it quotes it first in every form
/// (`Back-off pulling image "web:1"`, `failed to pull and unpack image "docker.io/…"`,
/// `Container image "web:1" is not present with pull policy of Never`).
fn pulled_image(message: &str) -> Option<&str> {
    let (_, rest) = message.split_once('"')?;
    let (image, _) = rest.split_once('"')?;
    (!image.is_empty() && !image.contains(char::is_whitespace)).then_some(image)
}

/// The registry host of an image reference, as the runtime resolves it: the first part when it
/// looks like a host (a dot, a port, or `localhost`), else Docker Hub.
pub fn registry_host(image: &str) -> &str {
    match image.split_once('/') {
        Some((first, _)) if first.contains(['.', ':']) || first == "localhost" => first,
        _ => "docker.io",
    }
}
