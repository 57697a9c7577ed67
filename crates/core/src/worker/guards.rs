//! Guard state that lives across passes: rate limits and cooldowns spent on requests sent,
//! per-target backoff after refusals, and the bound on distinct workloads per rule (an outage
//! spread thin). Pure: the clock is passed in; the history to restore comes from the audit log.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::limits::RateLimiter;
use super::plan::{Hold, Planned};
use crate::actions::{Outcome, PastAction};
use crate::config::SafetyConfig;
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
    reason: String,
}

/// The workloads one rule acted on within the breaker's window, and its pause once the bound
/// is reached (kept until the rule's matches clear or someone resumes it).
#[derive(Debug, Clone, Default)]
struct Spread {
    acted: VecDeque<(Instant, String)>,
    paused: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Guards {
    pub(crate) safety: SafetyConfig,
    limiter: RateLimiter,
    /// Everything sent within the longest window, for a successor to restore.
    sent: VecDeque<(Instant, PastAction)>,
    /// Targets acted on recently (pod UID, or the workload for scale-to-zero).
    acted: HashMap<String, Instant>,
    backoff: HashMap<String, Backoff>,
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

    /// Why `planned` must wait this pass, if it must.
    pub(super) fn waiting(&mut self, planned: &Planned, now: Instant) -> Option<Hold> {
        self.acted
            .retain(|_, at| now.saturating_duration_since(*at) < COOLDOWN);
        if self.acted.contains_key(&planned.target) {
            return Some(Hold::RecentlyActed);
        }
        self.forget_old_refusals(now);
        let backoff = self.backoff.get(&planned.target)?;
        (backoff.until > now).then(|| Hold::BackingOff(backoff.reason.clone()))
    }

    /// Right before a request is sent: the bound on distinct workloads, then a rate-limit slot.
    /// Nothing is spent when either refuses.
    pub fn admit(&mut self, planned: &Planned, now: Instant) -> Result<(), Hold> {
        let breaker = &self.safety.breaker;
        let spread = self.spread.entry(planned.rule).or_default();
        while let Some((at, _)) = spread.acted.front() {
            if now.saturating_duration_since(*at) < breaker.window {
                break;
            }
            spread.acted.pop_front();
        }
        if planned.disruptive {
            if let Some(why) = &spread.paused {
                return Err(Hold::Paused(why.clone()));
            }
            let seen: BTreeSet<&str> = spread.acted.iter().map(|(_, w)| w.as_str()).collect();
            let bound = breaker.max_workloads as usize;
            if !seen.contains(planned.workload.as_str()) && seen.len() >= bound {
                let why = spread_reason(planned, &seen, breaker.window);
                spread.paused = Some(why.clone());
                return Err(Hold::Paused(why));
            }
        }
        self.limiter
            .try_acquire(&planned.pod.namespace, now)
            .map_err(Hold::RateLimited)?;
        let workload = planned.disruptive.then(|| planned.workload.clone());
        if let Some(workload) = &workload {
            spread.acted.push_back((now, workload.clone()));
        }
        let longest = self.longest_window();
        while self
            .sent
            .front()
            .is_some_and(|(at, _)| now.saturating_duration_since(*at) >= longest)
        {
            self.sent.pop_front();
        }
        let past = PastAction {
            at: Utc::now(),
            rule: planned.rule,
            namespace: planned.pod.namespace.clone(),
            target: planned.target.clone(),
            workload,
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
            self.refused(planned, &outcome.detail(), now)
        }
    }

    /// A target refused for a lasting reason waits, longer each time. Returns whether the
    /// reason is new (worth a log line) rather than the same refusal again.
    pub fn refused(&mut self, planned: &Planned, why: &str, now: Instant) -> bool {
        self.forget_old_refusals(now);
        let previous = self.backoff.get(&planned.target);
        let new_reason = previous.is_none_or(|b| b.reason != why);
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
                reason: why.to_string(),
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
    pub(crate) fn backing_off(&self, now: Instant) -> BTreeMap<RuleKind, (u32, String)> {
        let mut held: BTreeMap<RuleKind, (u32, String)> = BTreeMap::new();
        for b in self.backoff.values().filter(|b| b.until > now) {
            let entry = held.entry(b.rule).or_insert((0, b.reason.clone()));
            entry.0 += 1;
        }
        held
    }

    /// Rules paused by the workload bound, with why.
    pub fn spread_paused(&self) -> BTreeMap<RuleKind, String> {
        self.spread
            .iter()
            .filter_map(|(rule, s)| s.paused.clone().map(|why| (*rule, why)))
            .collect()
    }

    /// A rule with nothing left to act on is no longer in an outage. Returns the rules resumed.
    pub fn matches_cleared(&mut self, matching: &BTreeSet<RuleKind>) -> Vec<RuleKind> {
        let mut resumed = Vec::new();
        for (rule, spread) in &mut self.spread {
            if !matching.contains(rule) && spread.paused.take().is_some() {
                resumed.push(*rule);
            }
        }
        resumed
    }

    /// Someone looked and resumed the rule: it may act on `maxWorkloads` new workloads again.
    pub fn resume(&mut self, rule: RuleKind) -> bool {
        self.spread
            .remove(&rule)
            .is_some_and(|s| s.paused.is_some())
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
                spread.acted.push_back((at, workload.clone()));
            }
            self.sent.push_back((at, past.clone()));
        }
        for spread in self.spread.values_mut() {
            spread.acted.make_contiguous().sort_by_key(|(at, _)| *at);
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

fn spread_reason(planned: &Planned, seen: &BTreeSet<&str>, window: Duration) -> String {
    let acted: Vec<&str> = seen.iter().copied().collect();
    format!(
        "{rule} would act on a {nth} workload ({next}) within {window} after {acted}: paused, \
         likely a cluster-wide cause (a registry or node outage) spread thin; resume it from \
         the TUI once understood (safety.breaker.maxWorkloads)",
        rule = planned.rule,
        nth = ordinal(acted.len() + 1),
        next = planned.workload,
        window = crate::config::format_duration(window),
        acted = acted.join(", "),
    )
}

fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::PodRef;
    use crate::worker::plan::Decision;

    fn planned(target: &str) -> Planned {
        Planned {
            rule: RuleKind::Terminating,
            pod: PodRef {
                namespace: "shop".into(),
                name: target.into(),
                uid: target.into(),
            },
            target: target.into(),
            workload: format!("shop/Pod/{target}"),
            disruptive: true,
            decision: Decision::Held(Hold::RecentlyActed),
        }
    }

    #[test]
    fn refusals_of_targets_that_are_gone_are_forgotten() {
        let mut guards = Guards::new(SafetyConfig::default());
        let start = Instant::now();
        for i in 0..500 {
            guards.refused(&planned(&format!("pod-{i}")), "held by finalizers", start);
        }
        assert_eq!(guards.backoff.len(), 500);
        // Refused again within its wait: the wait doubles, so the entry is kept.
        let again = start + FIRST_BACKOFF + Duration::from_secs(1);
        guards.refused(&planned("pod-0"), "held by finalizers", again);
        assert_eq!(guards.backoff["pod-0"].wait, FIRST_BACKOFF * 2);
        // The others were never seen again: one wait past their end, they are gone.
        let later = start + FIRST_BACKOFF * 2 + Duration::from_secs(1);
        assert!(guards.waiting(&planned("pod-new"), later).is_none());
        assert_eq!(guards.backoff.keys().collect::<Vec<_>>(), ["pod-0"]);
    }
}
