//! Pure planning: findings, toggles and guard state in; actions and held-back reasons out.

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use super::blocked::{Blocked, Standby};
use super::guards::Guards;
use super::pause::Pauses;
use super::planned::{Decision, Hold, Judged, Planned};
use crate::actions::{Action, PodRef, Target};
use crate::cluster::Abnormal;
use crate::config::SafetyConfig;
use crate::place::Place;
use crate::pod::WorkloadId;
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
    pub standby: Option<Standby>,
    /// Set while the audit log cannot be written: nothing acts unrecorded.
    pub audit: Option<String>,
}

/// One pass: either blocked as a whole, or a decision per finding with an automatic action.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pass {
    pub blocked: Option<Blocked>,
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

pub(crate) fn blocked(gate: &Gate, safety: &SafetyConfig) -> Option<Blocked> {
    if gate.readonly {
        return Some(Blocked::Readonly);
    }
    if let Some(problem) = &gate.audit {
        return Some(Blocked::AuditLog(problem.clone()));
    }
    if !gate.synced {
        return Some(Blocked::NotSynced);
    }
    if let Some(stale) = gate.stale_for.filter(|s| *s > safety.max_stale) {
        return Some(Blocked::Stale { stale, cause: None });
    }
    gate.standby.clone().map(Blocked::Standby)
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
    let mut claimed: HashSet<Target> = HashSet::new();
    let planned = ordered
        .into_iter()
        .filter_map(|found| {
            let pod = PodRef::of(&found.pod);
            let action = Action::planned(found.finding.action, pod.clone())?;
            let workload = WorkloadId::of(&found.pod);
            let target = match action {
                Action::ScaleToZero(_) => Target::Workload(workload.clone()),
                _ => Target::Pod(pod.uid.clone()),
            };
            let finished = found.pod.phase.finished();
            let place = found.place();
            let mut planned = Planned {
                rule: found.finding.rule,
                pod,
                target,
                workload,
                disruptive: !(finished && matches!(action, Action::Delete(_))),
                place,
                judged: Judged::of(found),
                decision: Decision::Held(Hold::ManualOnly),
            };
            planned.decision =
                match hold(found, &action, paused, guards, &planned.place).or_else(|| {
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
fn hold(
    found: &Abnormal,
    action: &Action,
    paused: &Pauses,
    guards: &Guards,
    place: &Place,
) -> Option<Hold> {
    let namespace = &*found.pod.namespace;
    if guards.safety.is_protected(namespace) {
        Some(Hold::Protected(namespace.to_string()))
    } else if found.pod.ignored {
        Some(Hold::Ignored)
    } else if let Some(pause) = paused.holding(found.finding.rule, place) {
        Some(Hold::Paused(Box::new(pause.clone())))
    } else if action.manual_only() {
        Some(Hold::ManualOnly)
    } else {
        None
    }
}
