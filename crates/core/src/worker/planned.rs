//! What the worker decided about one finding: run its action, or hold it back and why.

use super::limits::Limited;
use super::pause::Pause;
use crate::actions::{Action, Outcome, PodRef, Target};
use crate::cluster::Abnormal;
use crate::place::Place;
use crate::pod::{IGNORE_ANNOTATION, Phase, WorkloadId};
use crate::rules::{ActionKind, RuleKind};

/// Why an action was held back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Hold {
    #[error("namespace {0} is protected (safety.includeProtected)")]
    Protected(String),
    #[error("the pod carries {IGNORE_ANNOTATION}")]
    Ignored,
    #[error("{0}")]
    Paused(Box<Pause>),
    #[error("manual-only action")]
    ManualOnly,
    #[error("acted on a moment ago; waiting for the watch")]
    RecentlyActed,
    #[error("{0}")]
    RateLimited(Limited),
    /// Refused before (opt-out up the chain, a bad rollout, finalizers...): waiting to retry.
    #[error("refused before, retried later: {}", .0.detail())]
    BackingOff(Box<Outcome>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Run(Action),
    Held(Hold),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub(crate) rule: RuleKind,
    pub pod: PodRef,
    pub target: Target,
    /// The pod's workload as the breaker counts it.
    pub(crate) workload: WorkloadId,
    /// Where the pod is, for the pauses that may hold it.
    pub(crate) place: Place,
    /// Whether the action can stop something that runs. Deleting a pod that already finished
    /// (Evicted, Failed) cannot, so it does not count against the workload bound.
    pub(crate) disruptive: bool,
    /// The state the pod was found in, which a dry run remembers it acted on.
    pub(crate) judged: Judged,
    pub decision: Decision,
}

/// The state a pod was judged in: its rule, the action that rule planned, and its phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Judged {
    pub(crate) rule: RuleKind,
    pub(crate) action: ActionKind,
    pub(crate) phase: Phase,
}

impl Judged {
    pub fn of(found: &Abnormal) -> Judged {
        Judged {
            rule: found.finding.rule,
            action: found.finding.action,
            phase: found.pod.phase,
        }
    }
}
