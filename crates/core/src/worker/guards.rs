//! Guard state that lives across passes: rate limits and cooldowns spent on requests sent,
//! per-target backoff after refusals, and the bound on distinct workloads per rule (an outage
//! spread thin). Pure: the clock is passed in; the history to restore comes from the audit log.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::limits::RateLimiter;
use super::pause::{Pause, Pauses};
use super::pause_cause::{Bound, PauseCause};
use super::planned::{Hold, Planned};
use crate::actions::{Outcome, PastAction, Refusal, Target, Unscalable};
use crate::config::{BreakerConfig, SafetyConfig};
use crate::place::{PauseScope, Place};
use crate::pod::WorkloadId;
use crate::rules::RuleKind;

/// After acting on a target, leave it alone this long: the watch needs a moment to show
/// the pod gone, and a workload scaled to zero keeps its failing pods while they terminate.
pub(crate) const COOLDOWN: Duration = Duration::from_secs(120);
/// A refused target waits this long before it is tried again, doubling up to [`MAX_BACKOFF`].
pub(crate) const FIRST_BACKOFF: Duration = Duration::from_secs(120);
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(3600);

#[derive(Debug, Clone)]
struct Backoff {
    rule: RuleKind,
    until: Instant,
    wait: Duration,
    reason: Outcome,
}

/// The workloads one rule acted on within the breaker's window, and its pauses once the bound
/// is reached (kept until the rule's matches clear or someone resumes it).
#[derive(Debug, Clone, Default)]
struct Spread {
    acted: VecDeque<Acted>,
    paused: Vec<Pause>,
}

#[derive(Debug, Clone)]
struct Acted {
    at: Instant,
    workload: WorkloadId,
    /// What its pod shared with other namespaces' (a registry, a node).
    shared: Option<PauseScope>,
}

#[derive(Debug, Clone)]
pub struct Guards {
    pub(crate) safety: SafetyConfig,
    limiter: RateLimiter,
    /// Everything sent within the longest window, for a successor to restore.
    sent: VecDeque<(Instant, PastAction)>,
    acted: HashMap<Target, Instant>,
    backoff: HashMap<Target, Backoff>,
    spread: BTreeMap<RuleKind, Spread>,
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
            sent: VecDeque::new(),
            acted: HashMap::new(),
            backoff: HashMap::new(),
            spread: BTreeMap::new(),
        }
    }

    pub(super) fn waiting(&mut self, planned: &Planned, now: Instant) -> Option<Hold> {
        self.acted
            .retain(|_, at| now.saturating_duration_since(*at) < COOLDOWN);
        if self.acted.contains_key(&planned.target) {
            return Some(Hold::RecentlyActed);
        }
        self.forget_old_refusals(now);
        let backoff = self.backoff.get(&planned.target)?;
        (backoff.until > now).then(|| Hold::BackingOff(Box::new(backoff.reason.clone())))
    }

    /// Right before a request is sent: the bound on distinct workloads, then a rate-limit slot.
    /// Nothing is spent when either refuses. `at` is `now` on the wall clock: what a later
    /// leader restores the action by.
    pub fn admit(
        &mut self,
        planned: &Planned,
        now: Instant,
        at: DateTime<Utc>,
    ) -> Result<(), Hold> {
        let breaker = &self.safety.breaker;
        let spread = self.spread.entry(planned.rule).or_default();
        let old = |at: Instant, window| now.saturating_duration_since(at) >= window;
        spread.acted.retain(|a| !old(a.at, breaker.window));
        if planned.disruptive {
            if let Some(pause) = spread
                .paused
                .iter()
                .find(|p| p.scope.covers(&planned.place))
            {
                return Err(Hold::Paused(Box::new(pause.clone())));
            }
            if let Some(pause) = over_bound(&spread.acted, planned, breaker) {
                spread.paused.push(pause.clone());
                return Err(Hold::Paused(Box::new(pause)));
            }
        }
        self.limiter
            .try_acquire(&planned.pod.namespace, now)
            .map_err(Hold::RateLimited)?;
        let workload = planned.disruptive.then(|| planned.workload.clone());
        if let Some(workload) = &workload {
            spread.acted.push_back(Acted {
                at: now,
                workload: workload.clone(),
                shared: planned.place.shared.clone(),
            });
        }
        let longest = self.longest_window();
        self.sent.retain(|(at, _)| !old(*at, longest));
        let past = PastAction {
            at,
            rule: planned.rule,
            namespace: planned.pod.namespace.clone(),
            target: planned.target.clone(),
            workload,
            shared: planned.place.shared.clone(),
        };
        self.sent.push_back((now, past));
        Ok(())
    }

    /// After a request: the cooldown, and a backoff when it did not succeed. Returns whether
    /// that is a refusal for a new reason (worth a log line).
    pub fn sent(&mut self, planned: &Planned, outcome: &Outcome, now: Instant) -> bool {
        self.acted.insert(planned.target.clone(), now);
        if outcome.succeeded() {
            self.backoff.remove(&planned.target);
            false
        } else {
            self.refused(planned, outcome, now)
        }
    }

    /// A target refused for a lasting reason waits, longer each time. Returns whether the
    /// reason is new (worth a log line).
    pub fn refused(&mut self, planned: &Planned, why: &Outcome, now: Instant) -> bool {
        self.forget_old_refusals(now);
        let previous = self.backoff.get(&planned.target);
        let new_reason = previous.is_none_or(|b| b.reason != *why);
        let wait = match previous {
            Some(b) if !new_reason => (b.wait * 2).min(MAX_BACKOFF),
            _ => FIRST_BACKOFF,
        };
        self.backoff.insert(
            planned.target.clone(),
            Backoff {
                rule: planned.rule,
                until: now + wait,
                wait,
                reason: why.clone(),
            },
        );
        new_reason
    }

    /// A refusal is remembered one more wait past its end, to double the next wait if the
    /// target is refused again for the same reason; a target that is gone (deleted, fixed)
    /// is never tried again, so its entry goes then instead of staying for good.
    fn forget_old_refusals(&mut self, now: Instant) {
        self.backoff.retain(|_, b| now < b.until + b.wait);
    }

    /// Per rule: how many targets wait after a refusal, and one of the reasons.
    pub(crate) fn backing_off(&self, now: Instant) -> BTreeMap<RuleKind, (u32, &Outcome)> {
        let mut held: BTreeMap<RuleKind, (u32, &Outcome)> = BTreeMap::new();
        for b in self.backoff.values().filter(|b| b.until > now) {
            let entry = held.entry(b.rule).or_insert((0, &b.reason));
            entry.0 += 1;
        }
        held
    }

    /// The workloads held because a scale to zero was refused as unproven, by rule.
    pub(crate) fn unproven(&self, now: Instant) -> BTreeMap<RuleKind, Vec<WorkloadId>> {
        let mut unproven: BTreeMap<RuleKind, Vec<WorkloadId>> = BTreeMap::new();
        for (target, b) in self.backoff.iter().filter(|(_, b)| b.until > now) {
            if let (
                Outcome::Refused(Refusal::Unscalable(Unscalable::Unproven(_))),
                Target::Workload(workload),
            ) = (&b.reason, target)
            {
                unproven.entry(b.rule).or_default().push(workload.clone());
            }
        }
        unproven
    }

    /// The pauses the workload bound made.
    pub fn spread_paused(&self) -> Pauses {
        self.spread
            .iter()
            .flat_map(|(rule, s)| s.paused.iter().map(|p| (*rule, p.clone())))
            .collect()
    }

    /// A pause with nothing left to act on in its scope is no longer an outage. `matching`
    /// holds each rule and place with a finding. Returns the pauses lifted.
    pub fn matches_cleared(
        &mut self,
        matching: &BTreeSet<(RuleKind, Place)>,
    ) -> Vec<(RuleKind, PauseScope)> {
        let mut resumed = Vec::new();
        for (rule, spread) in &mut self.spread {
            spread.paused.retain(|pause| {
                let still = matching
                    .iter()
                    .any(|(r, place)| r == rule && pause.scope.covers(place));
                if !still {
                    resumed.push((*rule, pause.scope.clone()));
                }
                still
            });
        }
        resumed
    }

    /// Someone looked and resumed the rule where it paused: it may act on `maxWorkloads` new
    /// workloads there again.
    pub fn resume(&mut self, rule: RuleKind, scope: &PauseScope) -> bool {
        let Some(spread) = self.spread.get_mut(&rule) else {
            return false;
        };
        let paused = spread.paused.len();
        spread.paused.retain(|p| p.scope != *scope);
        match scope {
            PauseScope::Namespace(ns) => spread.acted.retain(|a| *a.workload.namespace != **ns),
            shared => spread.acted.retain(|a| a.shared.as_ref() != Some(shared)),
        }
        spread.paused.len() < paused
    }

    /// What was sent within the longest window, oldest first: what a successor restores.
    pub(crate) fn recent(&self) -> Vec<PastAction> {
        self.sent.iter().map(|(_, past)| past.clone()).collect()
    }

    /// Rebuild limits, cooldowns and the workload window from what was sent before a restart
    /// (the audit log) or by the replica that led before (the Lease), so neither gives a fresh
    /// budget. An action already known (both sources name it) counts once.
    pub fn restore(&mut self, history: &[PastAction], wall: DateTime<Utc>, now: Instant) {
        let longest = self.longest_window();
        for past in history {
            let age = (wall - past.at).to_std().unwrap_or_default();
            if age >= longest || self.sent.iter().any(|(_, known)| same(known, past)) {
                continue;
            }
            let at = now.checked_sub(age).unwrap_or(now);
            if age < Duration::from_secs(60) {
                self.limiter.record(&past.namespace, at);
            }
            if age < COOLDOWN {
                let acted = self.acted.entry(past.target.clone()).or_insert(at);
                *acted = (*acted).max(at);
            }
            if age < self.safety.breaker.window
                && let Some(workload) = &past.workload
            {
                let spread = self.spread.entry(past.rule).or_default();
                spread.acted.push_back(Acted {
                    at,
                    workload: workload.clone(),
                    shared: past.shared.clone(),
                });
            }
            self.sent.push_back((at, past.clone()));
        }
        for spread in self.spread.values_mut() {
            spread.acted.make_contiguous().sort_by_key(|a| a.at);
        }
        self.sent.make_contiguous().sort_by_key(|(at, _)| *at);
    }

    fn longest_window(&self) -> Duration {
        self.safety
            .breaker
            .window
            .max(COOLDOWN)
            .max(Duration::from_secs(60))
    }
}

/// The same action seen from two sources (clocks of two replicas may differ a little).
fn same(a: &PastAction, b: &PastAction) -> bool {
    a.target == b.target && a.rule == b.rule && (a.at - b.at).num_milliseconds().abs() < 2000
}

/// Whether acting on `planned` goes past the bound on distinct workloads: more than
/// `maxWorkloads` in its namespace pauses the rule there; beyond a namespace, workloads count
/// only with others that share what `planned` shares (a registry, a node), a namespace once
/// (one tenant cannot spend the budget), and more than `maxWorkloads` namespaces pause the
/// rule for what they share, never for pods that share nothing with them.
fn over_bound(
    acted: &VecDeque<Acted>,
    planned: &Planned,
    breaker: &BreakerConfig,
) -> Option<Pause> {
    let bound = breaker.max_workloads as usize;
    let namespace = planned.pod.namespace.as_str();
    let (rule, window) = (planned.rule, breaker.window);
    let in_namespace: BTreeSet<&WorkloadId> = acted
        .iter()
        .filter(|a| &*a.workload.namespace == namespace)
        .map(|a| &a.workload)
        .collect();
    if !in_namespace.contains(&planned.workload) && in_namespace.len() >= bound {
        let bound = Bound::InNamespace {
            rule,
            next: planned.workload.clone(),
            acted: in_namespace.into_iter().cloned().collect(),
            window,
        };
        let scope = PauseScope::Namespace(namespace.to_string());
        return Some(Pause::new(scope, PauseCause::Workloads(bound)));
    }
    let shared = planned.place.shared.as_ref()?;
    // One workload per namespace, the first acted on, for the message.
    let mut first: BTreeMap<&str, &WorkloadId> = BTreeMap::new();
    for a in acted.iter().filter(|a| a.shared.as_ref() == Some(shared)) {
        first.entry(&a.workload.namespace).or_insert(&a.workload);
    }
    let namespaces = first.len() + 1;
    let spread_thin = !first.contains_key(namespace)
        && first.len() >= bound
        && namespaces >= breaker.shared_namespaces();
    spread_thin.then(|| {
        let bound = Bound::SpreadThin {
            rule,
            next: planned.workload.clone(),
            acted: first.into_values().cloned().collect(),
            window,
            shared: shared.clone(),
        };
        Pause::new(shared.clone(), PauseCause::Workloads(bound))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::PodRef;
    use crate::worker::planned::Decision;

    fn held_by_finalizers() -> Outcome {
        Outcome::Refused(crate::actions::Refusal::HeldByFinalizers {
            pod: PodRef {
                namespace: "shop".into(),
                name: "web-1".into(),
                uid: "u".into(),
            },
            finalizers: vec!["example.com/guard".into()],
        })
    }

    fn planned(target: &str) -> Planned {
        Planned {
            rule: RuleKind::Terminating,
            pod: PodRef {
                namespace: "shop".into(),
                name: target.into(),
                uid: target.into(),
            },
            target: Target::Pod(target.into()),
            workload: WorkloadId::new("shop", "Pod", target),
            place: Place {
                namespace: "shop".into(),
                shared: None,
            },
            disruptive: true,
            judged: crate::worker::Judged {
                rule: RuleKind::Terminating,
                action: crate::rules::ActionKind::ForceDelete,
                phase: crate::pod::Phase::Running,
            },
            decision: Decision::Held(Hold::RecentlyActed),
        }
    }

    #[test]
    fn refusals_of_targets_that_are_gone_are_forgotten() {
        let mut guards = Guards::new(SafetyConfig::default());
        let start = Instant::now();
        for i in 0..500 {
            guards.refused(&planned(&format!("pod-{i}")), &held_by_finalizers(), start);
        }
        assert_eq!(guards.backoff.len(), 500);
        // Refused again within its wait: the wait doubles, so the entry is kept.
        let again = start + FIRST_BACKOFF + Duration::from_secs(1);
        guards.refused(&planned("pod-0"), &held_by_finalizers(), again);
        assert_eq!(
            guards.backoff[&Target::Pod("pod-0".into())].wait,
            FIRST_BACKOFF * 2
        );
        // The others were never seen again: one wait past their end, they are gone.
        let later = start + FIRST_BACKOFF * 2 + Duration::from_secs(1);
        assert!(guards.waiting(&planned("pod-new"), later).is_none());
        assert_eq!(
            guards.backoff.keys().collect::<Vec<_>>(),
            [&Target::Pod("pod-0".into())]
        );
    }
}
