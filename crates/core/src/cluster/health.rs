//! How current each scope's view is. The view is as fresh as the last proof that it is in
//! sync with a live server: a complete list, a watch event or bookmark, or a watch re-made
//! from the current version that the server keeps open. Its age is counted from that proof.

use std::time::{Duration, Instant};

use super::Scope;
use crate::config::WireFormat;

/// How old a view may be and still count as fresh. A quiet watch is re-made after half of it
/// to prove it is still in sync, so a healthy quiet cluster never comes near it.
pub(crate) const DEFAULT_STALE_AFTER: Duration = Duration::from_secs(20);

/// Where one scope's watch stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchState {
    /// Listing, before the first complete view.
    Listing,
    Watching,
    /// Listing again after 410 Gone; the last known state stays on show meanwhile.
    Relisting,
    /// The last attempt failed; retrying after a backoff.
    Reconnecting {
        error: String,
    },
    /// The API server refused this identity the list or watch (403): nothing of the scope
    /// can be seen, which is never "nothing abnormal". Retried: a grant needs no restart.
    Forbidden(Forbidden),
}

/// A list or watch this identity may not make.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("forbidden: this identity may not {verb} {resource} in {scope} ({message})")]
pub struct Forbidden {
    pub verb: &'static str,
    pub resource: &'static str,
    pub scope: Scope,
    /// The API server's words.
    pub message: String,
}

impl Forbidden {
    /// The `kubectl auth can-i` that checks the same identity for the same request.
    pub fn can_i(&self, context: Option<&str>) -> String {
        can_i(self.verb, self.resource, &self.scope, context)
    }

    /// What was refused, and the command that checks it: how a log or a health line says it.
    pub fn explained(&self) -> String {
        format!("{self}; check with `{}`", self.can_i(None))
    }
}

/// `kubectl auth can-i VERB RESOURCE [--subresource=SUB] SCOPE [--context CONTEXT]`: the
/// command that checks what a request needs, for the identity that made it. A subresource is
/// a flag of its own (`deployments/scale` would read as the Deployment named `scale`).
pub fn can_i(verb: &str, resource: &str, scope: &Scope, context: Option<&str>) -> String {
    let scope = match scope {
        Scope::All => "-A".to_string(),
        Scope::Namespace(ns) => format!("-n {ns}"),
    };
    let resource = match resource.split_once('/') {
        Some((resource, sub)) => format!("{resource} --subresource={sub}"),
        None => resource.to_string(),
    };
    let context = context
        .map(|c| format!(" --context {c}"))
        .unwrap_or_default();
    format!("kubectl auth can-i {verb} {resource} {scope}{context}")
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeHealth {
    pub scope: Scope,
    pub state: WatchState,
    /// A complete list has been loaded at least once.
    pub synced: bool,
    pub restarts: u64,
    pub relists: u64,
    /// The last proof that this scope's view was in sync with a live server.
    pub proved: Option<Instant>,
    pub(crate) stale_after: Duration,
    /// The format the API server last answered a list or a watch in; None before one.
    pub format: Option<WireFormat>,
}

impl ScopeHealth {
    pub fn new(scope: Scope, stale_after: Duration) -> ScopeHealth {
        ScopeHealth {
            scope,
            state: WatchState::Listing,
            synced: false,
            restarts: 0,
            relists: 0,
            proved: None,
            stale_after,
            format: None,
        }
    }

    /// How long ago the view was last proved current; None before the first list (nothing
    /// acts before it anyway).
    pub(crate) fn age(&self, now: Instant) -> Option<Duration> {
        self.proved.map(|at| now.saturating_duration_since(at))
    }

    /// The view's age once it is past the bound; None while fresh.
    pub(crate) fn stale_for(&self, now: Instant) -> Option<Duration> {
        self.age(now).filter(|age| *age > self.stale_after)
    }
}

/// How current a cache that no watch fills is, as its source says: a cluster read through its
/// in-cluster worker, say. The header and the safety guards read it as they read a watch's.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SourceHealth {
    /// The source has sent its first complete view.
    pub synced: bool,
    /// When the source last proved its view current; none before the first proof.
    pub proved: Option<Instant>,
    /// Why the source cannot be read now, while it cannot.
    pub error: Option<String>,
}

impl SourceHealth {
    /// The one scope such a cache has, standing as this says.
    pub(crate) fn apply(&self, scope: &mut ScopeHealth) {
        scope.synced = self.synced;
        scope.proved = self.proved;
        scope.state = match (&self.error, self.synced) {
            (Some(error), _) => WatchState::Reconnecting {
                error: error.clone(),
            },
            (None, true) => WatchState::Watching,
            (None, false) => WatchState::Listing,
        };
    }
}

/// All scopes together, as the header and the safety guards see them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Health {
    pub scopes: Vec<ScopeHealth>,
}

impl Health {
    /// What pods come in: JSON if any scope's come so (the fallback is what to notice),
    /// None before any answer.
    pub fn wire_format(&self) -> Option<WireFormat> {
        let formats = self.scopes.iter().filter_map(|s| s.format);
        formats.reduce(|a, b| if b == WireFormat::Json { b } else { a })
    }

    pub fn synced(&self) -> bool {
        !self.scopes.is_empty() && self.scopes.iter().all(|s| s.synced)
    }

    /// The age of the stalest view, once past its bound; None while every scope is fresh.
    /// `safety.maxStale` is compared with this age: no action on a view older than that.
    pub fn stale_for(&self, now: Instant) -> Option<Duration> {
        self.scopes.iter().filter_map(|s| s.stale_for(now)).max()
    }

    /// The age of the oldest view, fresh or not.
    pub fn age(&self, now: Instant) -> Option<Duration> {
        self.scopes.iter().filter_map(|s| s.age(now)).max()
    }

    /// Some scope is listing again after 410 Gone.
    pub fn relisting(&self) -> bool {
        self.scopes
            .iter()
            .any(|s| matches!(s.state, WatchState::Relisting))
    }

    /// A scope this identity may not list or watch, if any.
    pub fn forbidden(&self) -> Option<&Forbidden> {
        self.scopes.iter().find_map(|s| match &s.state {
            WatchState::Forbidden(forbidden) => Some(forbidden),
            _ => None,
        })
    }

    /// Why some scope is down: a refused list or watch first (it lasts until someone grants
    /// it), then the last failure.
    pub fn last_error(&self) -> Option<String> {
        if let Some(forbidden) = self.forbidden() {
            return Some(forbidden.explained());
        }
        self.scopes.iter().find_map(|s| match &s.state {
            WatchState::Reconnecting { error } => Some(error.clone()),
            _ => None,
        })
    }
}
