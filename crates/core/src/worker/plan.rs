//! Pure planning: findings, toggles and guard state in; actions and held-back reasons out.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::time::{Duration, Instant};

pub(crate) use super::guards::Guards;
use super::limits::Limited;
use super::pause::{Pause, Pauses};
use crate::actions::{Action, PodRef};
use crate::cluster::Abnormal;
use crate::config::SafetyConfig;
use crate::pod::workload_label;
use crate::rules::RuleKind;

/// Which rules may act on their own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Toggles {
    pub master: bool,
    pub rules: BTreeMap<RuleKind, bool>,
}

impl Toggles {
    pub(crate) fn allows(&self, rule: RuleKind) -> bool {
        self.master && self.rules.get(&rule).copied().unwrap_or(false)
    }
}

/// What the whole pass depends on: nothing acts unless all of it is fine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gate {
    pub readonly: bool,
    pub synced: bool,
    pub stale_for: Option<Duration>,
    /// Set while another replica holds the lease (or none is held yet).
    pub standby: Option<String>,
    /// Set while the audit log cannot be written: nothing acts unrecorded.
    pub audit: Option<String>,
}

/// Why an action was held back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hold {
    Protected(String),
    Ignored,
    Paused(Pause),
    ManualOnly,
    /// Acted on this target (or its workload) a moment ago.
    RecentlyActed,
    RateLimited(Limited),
    /// Refused before (opt-out up the chain, a bad rollout, finalizers...): waiting to retry.
    BackingOff(String),
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
            Hold::BackingOff(why) => write!(f, "refused before, retried later: {why}"),
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
    pub target: String,
    /// The pod's workload as the breaker counts it: `shop/Deployment/web`.
    pub(crate) workload: String,
    /// Whether the action can stop something that runs. Deleting a pod that already finished
    /// (Evicted, Failed) cannot, so it does not count against the workload bound.
    pub(crate) disruptive: bool,
    pub decision: Decision,
}

/// One pass: either blocked as a whole, or a decision per finding with an automatic action.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pass {
    pub blocked: Option<String>,
    pub planned: Vec<Planned>,
}

impl Pass {
    pub fn actions(&self) -> impl Iterator<Item = (RuleKind, &Action)> {
        self.planned.iter().filter_map(|p| match &p.decision {
            Decision::Run(action) => Some((p.rule, action)),
            Decision::Held(_) => None,
        })
    }
}

/// Why nothing may act at all right now, if so.
pub(crate) fn blocked(gate: &Gate, safety: &SafetyConfig) -> Option<String> {
    if gate.readonly {
        return Some("read-only mode: no actions".into());
    }
    if let Some(problem) = &gate.audit {
        return Some(format!(
            "{problem}: nothing acts until it can be written (or run with --no-audit)"
        ));
    }
    if !gate.synced {
        return Some("waiting for the first complete list of pods".into());
    }
    if let Some(stale) = gate.stale_for.filter(|s| *s > safety.max_stale) {
        return Some(format!(
            "watch stale for {}s: the view is not proved in sync with the API server (more than \
             safety.maxStale)",
            stale.as_secs()
        ));
    }
    gate.standby.clone()
}

/// Decide what the worker does with `findings` now. Oldest findings go first, so a rate
/// limit holds back the newest. No limit is spent here: [`Guards::admit`] spends it when a
/// request is about to be sent.
pub fn plan(
    findings: &[Abnormal],
    toggles: &Toggles,
    paused: &Pauses,
    gate: &Gate,
    guards: &mut Guards,
    now: Instant,
) -> Pass {
    if let Some(why) = blocked(gate, &guards.safety) {
        return Pass {
            blocked: Some(why),
            planned: Vec::new(),
        };
    }
    let mut ordered: Vec<&Abnormal> = findings
        .iter()
        .filter(|f| toggles.allows(f.finding.rule))
        .collect();
    ordered.sort_by(|a, b| (a.finding.since, &a.pod.uid).cmp(&(b.finding.since, &b.pod.uid)));
    // Many failing pods of one workload are one scale: only the first is planned to run.
    let mut claimed: HashSet<String> = HashSet::new();
    let planned = ordered
        .into_iter()
        .filter_map(|found| {
            let pod = PodRef::of(&found.pod);
            let action = Action::planned(found.finding.action, pod.clone())?;
            let workload = format!("{}/{}", found.pod.namespace, workload_label(&found.pod));
            let target = match action {
                Action::ScaleToZero(_) => workload.clone(),
                _ => pod.uid.clone(),
            };
            let finished = found.pod.phase.finished();
            let mut planned = Planned {
                rule: found.finding.rule,
                pod,
                target,
                workload,
                disruptive: !(finished && matches!(action, Action::Delete(_))),
                decision: Decision::Held(Hold::ManualOnly),
            };
            planned.decision = match hold(found, &action, paused, guards).or_else(|| {
                guards.waiting(&planned, now).or_else(|| {
                    (!claimed.insert(planned.target.clone())).then_some(Hold::RecentlyActed)
                })
            }) {
                Some(hold) => Decision::Held(hold),
                None => Decision::Run(action),
            };
            Some(planned)
        })
        .collect();
    Pass {
        blocked: None,
        planned,
    }
}

/// The holds that need nothing but the finding and the config.
fn hold(found: &Abnormal, action: &Action, paused: &Pauses, guards: &Guards) -> Option<Hold> {
    let namespace = &*found.pod.namespace;
    if guards.safety.is_protected(namespace) {
        Some(Hold::Protected(namespace.to_string()))
    } else if found.pod.ignored {
        Some(Hold::Ignored)
    } else if let Some(pause) = paused.holding(found.finding.rule, namespace) {
        Some(Hold::Paused(pause.clone()))
    } else if action.manual_only() {
        Some(Hold::ManualOnly)
    } else {
        None
    }
}
