//! `classify`: the first rule of the chain that matches claims the pod.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::{ActionKind, RuleKind, RuleSpec};
use crate::pod::{ContainerRecord, ContainerState, Phase, PodRecord};

/// Why a pod is abnormal, since when, and what its rule plans for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: RuleKind,
    /// Short cause: `Evicted`, `ImagePullBackOff`, `OOMKilled`, `Unschedulable`...
    pub reason: Arc<str>,
    pub message: Option<Arc<str>>,
    /// The container the reason belongs to, when it is a container's.
    pub container: Option<Arc<str>>,
    /// Best evidence of when the pod entered this state.
    pub since: DateTime<Utc>,
    pub action: ActionKind,
}

impl Finding {
    pub fn time_in_state(&self, now: DateTime<Utc>) -> chrono::Duration {
        now - self.since
    }
}

/// What a rule saw, before the chain turns it into a `Finding`.
struct Evidence {
    reason: String,
    message: Option<String>,
    container: Option<String>,
    since: DateTime<Utc>,
}

pub fn classify(pod: &PodRecord, chain: &[RuleSpec], now: DateTime<Utc>) -> Option<Finding> {
    chain
        .iter()
        .filter(|rule| rule.enabled && rule.namespaces.admits(&pod.namespace))
        .find_map(|rule| {
            let seen = evidence(rule, pod, now)?;
            held_long_enough(rule, &seen, now).then_some(Finding {
                rule: rule.kind,
                reason: seen.reason.into(),
                message: seen.message.map(Into::into),
                container: seen.container.map(Into::into),
                since: seen.since,
                action: rule.action,
            })
        })
}

/// The earliest moment after `now` at which `classify` could answer differently for this pod
/// without the pod itself changing: a rule ahead of the one that claims it (or any rule, when
/// none does) whose evidence is there but not yet held for its `after`. A cache that keeps
/// findings indexed re-classifies the pod then, and not before.
pub(crate) fn next_change(
    pod: &PodRecord,
    chain: &[RuleSpec],
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    let mut earliest: Option<DateTime<Utc>> = None;
    for rule in chain
        .iter()
        .filter(|rule| rule.enabled && rule.namespaces.admits(&pod.namespace))
    {
        let Some(seen) = evidence(rule, pod, now) else {
            continue;
        };
        if held_long_enough(rule, &seen, now) {
            // This rule claims the pod; the rules after it never will.
            break;
        }
        let after = chrono::Duration::from_std(rule.after).unwrap_or(chrono::Duration::MAX);
        let due = seen
            .since
            .checked_add_signed(after)
            .unwrap_or(DateTime::<Utc>::MAX_UTC);
        earliest = Some(earliest.map_or(due, |e| e.min(due)));
    }
    earliest
}

fn held_long_enough(rule: &RuleSpec, seen: &Evidence, now: DateTime<Utc>) -> bool {
    let mut held = now - seen.since;
    // Clock skew must not hide a state; but a deletionTimestamp in the future is a pod
    // still inside its grace period, which is normal.
    if rule.kind != RuleKind::Terminating {
        held = held.max(chrono::Duration::zero());
    }
    held.to_std().is_ok_and(|held| held >= rule.after)
}

fn evidence(rule: &RuleSpec, pod: &PodRecord, now: DateTime<Utc>) -> Option<Evidence> {
    match rule.kind {
        RuleKind::Evicted => evicted(pod, now),
        RuleKind::Terminating => terminating(pod),
        RuleKind::ImagePull | RuleKind::ConfigError => waiting(pod, &rule.reasons, now),
        RuleKind::CrashLoop => crash_loop(pod, rule, now),
        RuleKind::Starting => starting(pod, now),
        RuleKind::Pending => pending(pod, now),
        RuleKind::Failed => failed(pod, now),
        RuleKind::Unknown => unknown(pod, now),
    }
}

fn evicted(pod: &PodRecord, now: DateTime<Utc>) -> Option<Evidence> {
    (pod.phase == Phase::Failed && pod.reason.as_deref() == Some("Evicted"))
        .then(|| pod_level("Evicted".into(), pod, phase_since(pod, now)))
}

fn terminating(pod: &PodRecord) -> Option<Evidence> {
    let since = pod.deletion?;
    let message =
        (!pod.finalizers.is_empty()).then(|| format!("finalizers: {}", pod.finalizers.join(", ")));
    Some(Evidence {
        reason: "Terminating".into(),
        message,
        container: None,
        since,
    })
}

fn waiting(pod: &PodRecord, reasons: &[String], now: DateTime<Utc>) -> Option<Evidence> {
    let c = pod.waiting_in(reasons)?;
    let ContainerState::Waiting { reason, message } = &c.state else {
        return None;
    };
    Some(Evidence {
        reason: as_kubectl_says(c, reason),
        message: message.as_deref().map(Into::into),
        container: Some(c.name.to_string()),
        since: waiting_since(pod, now),
    })
}

/// A container's reason as kubectl's STATUS column says it: an init container's behind
/// `Init:`, never less specific.
fn as_kubectl_says(c: &ContainerRecord, reason: &str) -> String {
    if c.init {
        format!("Init:{reason}")
    } else {
        reason.to_string()
    }
}

/// How a container ended, as kubectl says it: its reason, else `ExitCode:N`.
fn ended_as(t: &crate::pod::Termination) -> String {
    t.reason
        .as_deref()
        .filter(|r| !r.is_empty())
        .map_or_else(|| format!("ExitCode:{}", t.exit_code), String::from)
}

fn crash_loop(pod: &PodRecord, rule: &RuleSpec, now: DateTime<Utc>) -> Option<Evidence> {
    // At least one restart: a `Completed` init container alone is not a crash loop.
    if pod.total_restarts() < rule.restarts.max(1) {
        return None;
    }
    let listed = |r: &str| rule.reasons.iter().any(|x| x == r);
    // The container that is crash-looping now wins over one that merely restarted once.
    let mut restarting: Vec<&ContainerRecord> =
        pod.containers.iter().filter(|c| c.restarts > 0).collect();
    restarting.sort_by_key(|c| {
        (
            c.waiting_reason().is_none_or(|r| !listed(r)),
            std::cmp::Reverse(c.restarts),
        )
    });
    restarting.into_iter().find_map(|c| {
        let (reason, message) = crash_reason(c, &listed)?;
        Some(Evidence {
            reason: as_kubectl_says(c, &reason),
            message,
            container: Some(c.name.to_string()),
            since: waiting_since(pod, now),
        })
    })
}

/// The listed reason a restarting container shows: its waiting reason, else how it last ended.
fn crash_reason(
    c: &ContainerRecord,
    listed: &dyn Fn(&str) -> bool,
) -> Option<(String, Option<String>)> {
    if let Some(waiting) = c.waiting_reason().filter(|r| listed(r)) {
        let last = c.last_termination.as_ref().map(|t| {
            format!(
                "last exit code {} ({})",
                t.exit_code,
                t.reason.as_deref().unwrap_or("no reason")
            )
        });
        return Some((waiting.to_string(), last));
    }
    let ended = c.last_end()?;
    let reason = ended.reason.as_deref().filter(|r| listed(r))?;
    Some((
        reason.to_string(),
        Some(format!("exit code {}", ended.exit_code)),
    ))
}

/// What a container waits for while the kubelet is still bringing it up.
pub(crate) const ON_THE_WAY: [&str; 2] = ["ContainerCreating", "PodInitializing"];

/// Scheduled and not up: an init container still running or being made (`Init:N/M`, as
/// kubectl counts the ones done), a container still being made or waiting for the init
/// containers, or running but not Ready. A container that failed is another rule's.
fn starting(pod: &PodRecord, now: DateTime<Utc>) -> Option<Evidence> {
    // A lost node's pods are `unknown`'s: nothing on the node is starting.
    if pod.node.is_none() || pod.deletion.is_some() || pod.reason.as_deref() == Some("NodeLost") {
        return None;
    }
    let on_the_way =
        |c: &&ContainerRecord| c.waiting_reason().is_some_and(|r| ON_THE_WAY.contains(&r));
    let evidence = |reason: String, c: Option<&ContainerRecord>, since| Evidence {
        reason,
        message: c.and_then(|c| match &c.state {
            ContainerState::Waiting { message, .. } => message.as_deref().map(Into::into),
            _ => None,
        }),
        container: c.map(|c| c.name.to_string()),
        since,
    };
    match pod.phase {
        Phase::Pending => {
            let inits: Vec<&ContainerRecord> = pod.containers.iter().filter(|c| c.init).collect();
            let done = |c: &&&ContainerRecord| matches!(&c.state, ContainerState::Terminated(t) if t.exit_code == 0);
            if let Some(init) = inits.iter().find(|c| !done(c)) {
                let under_way = matches!(
                    init.state,
                    ContainerState::Running { .. } | ContainerState::None
                ) || on_the_way(init);
                let finished = inits.iter().filter(done).count();
                let reason = format!("Init:{finished}/{}", inits.len());
                return under_way.then(|| evidence(reason, Some(init), waiting_since(pod, now)));
            }
            let c = pod.containers.iter().filter(|c| !c.init).find(on_the_way)?;
            let reason = c.waiting_reason().unwrap_or_default().to_string();
            Some(evidence(reason, Some(c), waiting_since(pod, now)))
        }
        Phase::Running if pod.not_ready => {
            let since = last_change(pod).unwrap_or(now);
            Some(evidence("NotReady".into(), None, since))
        }
        _ => None,
    }
}

fn pending(pod: &PodRecord, now: DateTime<Utc>) -> Option<Evidence> {
    if pod.phase != Phase::Pending {
        return None;
    }
    let unscheduled = pod.unscheduled.as_ref()?;
    let reason = unscheduled
        .reason
        .as_deref()
        .unwrap_or("Unscheduled")
        .to_string();
    let since = unscheduled.since.or(pod.created).unwrap_or(now);
    Some(pod_level(reason, pod, since))
}

fn failed(pod: &PodRecord, now: DateTime<Utc>) -> Option<Evidence> {
    if pod.phase != Phase::Failed {
        return None;
    }
    let from_container = || {
        pod.containers.iter().find_map(|c| match &c.state {
            ContainerState::Terminated(t) if t.exit_code != 0 => {
                Some(as_kubectl_says(c, &ended_as(t)))
            }
            _ => None,
        })
    };
    let reason = pod
        .reason
        .clone()
        .map(String::from)
        .or_else(from_container)
        .unwrap_or_else(|| "Failed".to_string());
    Some(pod_level(reason, pod, phase_since(pod, now)))
}

fn unknown(pod: &PodRecord, now: DateTime<Utc>) -> Option<Evidence> {
    let lost = pod.reason.as_deref() == Some("NodeLost");
    (pod.phase == Phase::Unknown || lost).then(|| {
        pod_level(
            if lost { "NodeLost" } else { "Unknown" }.into(),
            pod,
            phase_since(pod, now),
        )
    })
}

fn pod_level(reason: String, pod: &PodRecord, since: DateTime<Utc>) -> Evidence {
    Evidence {
        reason,
        message: pod.message.as_deref().map(Into::into),
        container: None,
        since,
    }
}

fn last_change(pod: &PodRecord) -> Option<DateTime<Utc>> {
    pod.ready_changed.or(pod.started).or(pod.created)
}

/// When a container started waiting: [`last_change`], refined by the moment this process saw
/// the waiting begin.
fn waiting_since(pod: &PodRecord, now: DateTime<Utc>) -> DateTime<Utc> {
    let evidence = last_change(pod).unwrap_or(now);
    pod.reason_seen.map_or(evidence, |seen| seen.max(evidence))
}

/// When a pod reached a terminal or lost phase: its last container ending, else [`last_change`].
fn phase_since(pod: &PodRecord, now: DateTime<Utc>) -> DateTime<Utc> {
    let ended = pod
        .containers
        .iter()
        .filter_map(|c| match &c.state {
            ContainerState::Terminated(t) => t.finished,
            _ => None,
        })
        .max();
    ended.or_else(|| last_change(pod)).unwrap_or(now)
}
