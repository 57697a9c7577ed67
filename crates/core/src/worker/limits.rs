//! Actions per minute, globally and per namespace: a sliding window with the clock passed in.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

const WINDOW: Duration = Duration::from_secs(60);

#[derive(Debug, Clone)]
pub(crate) struct RateLimiter {
    global: u32,
    per_namespace: u32,
    /// When each recent action was let through, and in which namespace; oldest first.
    recent: VecDeque<(Instant, String)>,
}

impl RateLimiter {
    pub(crate) fn new(global: u32, per_namespace: u32) -> RateLimiter {
        RateLimiter {
            global,
            per_namespace,
            recent: VecDeque::new(),
        }
    }

    /// An action sent at `at` (before a restart, or by another replica) holds its slot.
    pub(crate) fn record(&mut self, namespace: &str, at: Instant) {
        let position = self.recent.partition_point(|(t, _)| *t <= at);
        self.recent.insert(position, (at, namespace.to_string()));
    }

    /// Take one slot for an action in `namespace`, or say which limit is reached.
    pub(crate) fn try_acquire(&mut self, namespace: &str, now: Instant) -> Result<(), Limited> {
        self.recent
            .retain(|(at, _)| now.saturating_duration_since(*at) < WINDOW);
        if self.recent.len() >= self.global as usize {
            return Err(Limited::Cluster {
                per_minute: self.global,
            });
        }
        let in_namespace = self.recent.iter().filter(|(_, ns)| ns == namespace).count();
        if in_namespace >= self.per_namespace as usize {
            return Err(Limited::Namespace {
                namespace: namespace.to_string(),
                per_minute: self.per_namespace,
            });
        }
        self.recent.push_back((now, namespace.to_string()));
        Ok(())
    }
}

/// The rate limit an action would go past.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Limited {
    #[error(
        "rate limit: {per_minute} actions in the last minute across the cluster (maxActionsPerMinute)"
    )]
    Cluster { per_minute: u32 },
    #[error(
        "rate limit: {per_minute} actions in the last minute in {namespace} (maxActionsPerNamespacePerMinute)"
    )]
    Namespace { namespace: String, per_minute: u32 },
}
