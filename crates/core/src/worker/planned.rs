//! What the worker decided about one finding: run its action, or hold it back and why.

use std::fmt;

use super::limits::Limited;
use super::pause::{Pause, Place};
use crate::actions::{Action, Outcome, PodRef, Target};
use crate::cluster::Abnormal;
use crate::pod::{Phase, WorkloadId};
use crate::rules::{ActionKind, RuleKind};

/// Why an action was held back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hold {
    Protected(String),
    Ignored,
    Paused(Box<Pause>),
    ManualOnly,
    /// Acted on this target (or its workload) a moment ago.
    RecentlyActed,
    RateLimited(Limited),
    /// Refused before (opt-out up the chain, a bad rollout, finalizers...): waiting to retry.
    BackingOff(Box<Outcome>),
}

impl fmt::Display for Hold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Hold::Protected(ns) => {
                write!(f, "namespace {ns} is protected (safety.includeProtected)")
            }
            Hold::Ignored => write!(f, "the pod carries {}", crate::pod::IGNORE_ANNOTATION),
            Hold::Paused(pause) => fmt::Display::fmt(pause, f),
            Hold::ManualOnly => f.write_str("manual-only action"),
            Hold::RecentlyActed => f.write_str("acted on a moment ago; waiting for the watch"),
            Hold::RateLimited(limit) => fmt::Display::fmt(limit, f),
            Hold::BackingOff(why) => {
                write!(f, "refused before, retried later: {}", why.detail())
            }
        }
    }
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
    /// What cooldowns and backoff are kept by: the pod, or its workload for scale-to-zero.
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
