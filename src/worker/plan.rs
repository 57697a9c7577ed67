//! Pure planning: findings, toggles and guard state in; actions and held-back reasons out.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::time::{Duration, Instant};

use super::limits::RateLimiter;
use crate::actions::{Action, PodRef};
use crate::cluster::Abnormal;
use crate::config::SafetyConfig;
use crate::rules::RuleKind;

/// After acting on a target, leave it alone this long: the watch needs a moment to show
/// the pod gone, and a workload scaled to zero keeps its failing pods while they terminate.
pub const COOLDOWN: Duration = Duration::from_secs(120);

/// Which rules may act on their own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Toggles {
    pub master: bool,
    pub rules: BTreeMap<RuleKind, bool>,
}

impl Toggles {
    pub fn allows(&self, rule: RuleKind) -> bool {
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
}

/// Guard state that lives across passes.
#[derive(Debug, Clone)]
pub struct Guards {
    pub safety: SafetyConfig,
    limiter: RateLimiter,
    /// Targets acted on recently (pod UID, or the workload for scale-to-zero).
    acted: HashMap<String, Instant>,
}

impl Guards {
    pub fn new(safety: SafetyConfig) -> Guards {
        let limiter = RateLimiter::new(
            safety.max_actions_per_minute,
            safety.max_actions_per_namespace_per_minute,
        );
        Guards {
            safety,
            limiter,
            acted: HashMap::new(),
        }
    }
}

/// Why an action was held back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hold {
    Protected(String),
    Ignored,
    Paused(String),
    ManualOnly,
    /// Acted on this target (or its workload) a moment ago.
    RecentlyActed,
    RateLimited(String),
}

impl fmt::Display for Hold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Hold::Protected(ns) => {
                write!(f, "namespace {ns} is protected (safety.includeProtected)")
            }
            Hold::Ignored => write!(f, "the pod carries {}", crate::pod::IGNORE_ANNOTATION),
            Hold::Paused(why) => f.write_str(why),
            Hold::ManualOnly => f.write_str("manual-only action"),
            Hold::RecentlyActed => f.write_str("acted on a moment ago; waiting for the watch"),
            Hold::RateLimited(why) => f.write_str(why),
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
    pub rule: RuleKind,
    pub pod: PodRef,
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
pub fn blocked(gate: &Gate, safety: &SafetyConfig) -> Option<String> {
    if gate.readonly {
        return Some("read-only mode: no actions".into());
    }
    if !gate.synced {
        return Some("waiting for the first complete list of pods".into());
    }
    if let Some(stale) = gate.stale_for.filter(|s| *s > safety.max_stale) {
        return Some(format!(
            "watch disconnected for {}s (more than safety.maxStale)",
            stale.as_secs()
        ));
    }
    gate.standby.clone()
}

/// Decide what the worker does with `findings` now. Oldest findings go first, so a rate
/// limit holds back the newest.
pub fn plan(
    findings: &[Abnormal],
    toggles: &Toggles,
    paused: &BTreeMap<RuleKind, String>,
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
    guards
        .acted
        .retain(|_, at| now.saturating_duration_since(*at) < COOLDOWN);
    let mut ordered: Vec<&Abnormal> = findings
        .iter()
        .filter(|f| toggles.allows(f.finding.rule))
        .collect();
    ordered.sort_by(|a, b| (a.finding.since, &a.pod.uid).cmp(&(b.finding.since, &b.pod.uid)));
    let planned = ordered
        .into_iter()
        .filter_map(|found| {
            let pod = PodRef::of(&found.pod);
            let action = Action::planned(found.finding.action, pod.clone())?;
            let decision = decide(found, action, paused, guards, now);
            Some(Planned {
                rule: found.finding.rule,
                pod,
                decision,
            })
        })
        .collect();
    Pass {
        blocked: None,
        planned,
    }
}

fn decide(
    found: &Abnormal,
    action: Action,
    paused: &BTreeMap<RuleKind, String>,
    guards: &mut Guards,
    now: Instant,
) -> Decision {
    let namespace = &*found.pod.namespace;
    let held = if guards.safety.is_protected(namespace) {
        Some(Hold::Protected(namespace.to_string()))
    } else if found.pod.ignored {
        Some(Hold::Ignored)
    } else if let Some(why) = paused.get(&found.finding.rule) {
        Some(Hold::Paused(why.clone()))
    } else if action.manual_only() {
        Some(Hold::ManualOnly)
    } else {
        None
    };
    if let Some(hold) = held {
        return Decision::Held(hold);
    }
    let target = target_key(found, &action);
    if guards.acted.contains_key(&target) {
        return Decision::Held(Hold::RecentlyActed);
    }
    if let Err(why) = guards.limiter.try_acquire(namespace, now) {
        return Decision::Held(Hold::RateLimited(why));
    }
    guards.acted.insert(target, now);
    Decision::Run(action)
}

/// Scaling acts on the workload: many failing pods of one Deployment are one action.
fn target_key(found: &Abnormal, action: &Action) -> String {
    match action {
        Action::ScaleToZero(_) => format!(
            "{}/{}",
            found.pod.namespace,
            crate::report::workload_label(&found.pod)
        ),
        _ => found.pod.uid.to_string(),
    }
}
