use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Utc};
use tokio::sync::{mpsc, watch};
use tokio::time::{Duration, MissedTickBehavior};

use super::blocked::Standby;
use super::dry_run_done::DryRunDone;
use super::guards::{COOLDOWN, Guards};
use super::pause::Pauses;
use super::plan::{Gate, Toggles, plan};
use super::planned::{Decision, Hold, Planned};
use super::{Counters, HeldReason, WorkerCommand, WorkerOptions, WorkerStatus, breaker};
use crate::actions::{ACTION_LOG, Action, Executor, Origin, Outcome, PastAction, before};
use crate::clock::Clock;
use crate::cluster::{Abnormal, Cache, Census, ClusterName};
use crate::config::CronSchedule;
use crate::place::{PauseScope, Place};
use crate::policy::Policy;
use crate::report::{DeliverySummary, Reporter};
use crate::rules::{RuleKind, RuleSpec};

pub(super) struct Worker {
    cache: Cache,
    /// The cache's: what the findings were classified at is what the guards count in.
    clock: Clock,
    executor: Arc<Executor>,
    chain: Vec<RuleSpec>,
    guards: Guards,
    toggles: Toggles,
    /// Rules the share breaker tripped in the last pass, where they tripped.
    tripped: Pauses,
    /// Everything paused now: tripped, or stopped by the workload bound.
    paused: Pauses,
    /// In a dry run, what would have been changed: planned as gone, as live mode finds it.
    dry_run_done: DryRunDone,
    readonly: bool,
    standby: Option<Standby>,
    tick: Duration,
    reporter: Option<Arc<Reporter>>,
    schedule: Option<CronSchedule>,
    cluster: ClusterName,
    counters: Arc<Counters>,
    pub(super) status: WorkerStatus,
    acting_until: Option<watch::Receiver<Option<Instant>>>,
    recent: watch::Sender<Vec<PastAction>>,
    /// Where the report delivery under way, run in a task of its own, says how it went (a
    /// dead sink must not stop auto-clean while its retries run).
    delivering: Option<mpsc::Receiver<DeliverySummary>>,
}

/// An action is not started with less of the lease left than this.
const LEASE_MARGIN: Duration = Duration::from_millis(500);

impl Worker {
    pub fn new(
        cache: Cache,
        executor: Arc<Executor>,
        policy: &Policy,
        options: WorkerOptions,
        recent: watch::Sender<Vec<PastAction>>,
    ) -> Worker {
        let toggles = Toggles {
            master: options.master_auto,
            rules: policy.chain().iter().map(|r| (r.kind, r.auto)).collect(),
        };
        let schedule = options.reporter.as_ref().and(options.report_schedule);
        let mut guards = Guards::new(policy.safety().clone());
        // What was sent before a restart still counts against the limits and cooldowns.
        let longest = policy.safety().breaker.window.max(COOLDOWN);
        let clock = cache.clock();
        let (now, instant) = (clock.now(), clock.instant());
        guards.restore(&executor.recent_actions(longest), now, instant);
        guards.restore(&options.inherited, now, instant);
        recent.send_replace(guards.recent());
        let mut worker = Worker {
            cache,
            clock,
            executor,
            chain: policy.chain().to_vec(),
            guards,
            toggles,
            tripped: Pauses::default(),
            paused: Pauses::default(),
            dry_run_done: DryRunDone::default(),
            readonly: policy.readonly(),
            standby: options.standby,
            tick: options.tick,
            reporter: options.reporter,
            schedule,
            cluster: options.cluster,
            counters: options.counters,
            status: WorkerStatus {
                dry_run: policy.dry_run(),
                ..WorkerStatus::default()
            },
            acting_until: options.acting_until,
            recent,
            delivering: None,
        };
        worker.update_paused();
        worker.refresh_status();
        worker
    }

    pub async fn run(
        mut self,
        mut commands: mpsc::Receiver<WorkerCommand>,
        status: watch::Sender<WorkerStatus>,
    ) {
        let mut tick = tokio::time::interval(self.tick);
        tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        // Between passes, keep "blocked" true to the watch (synced, stale) as it changes.
        let mut cache_changes = self.cache.subscribe();
        // Kept across turns of the loop: a report that fell due while a pass ran is sent
        // when the pass ends, not skipped for the next slot.
        let mut next_report = None;
        loop {
            // Only the replica that acts sends scheduled reports: two replicas, one report.
            next_report = match self.standby {
                Some(_) => None,
                None => next_report.or_else(|| self.next_report(self.clock.now())),
            };
            tokio::select! {
                Ok(()) = cache_changes.changed() => {
                    // The gate opening (the first sync, the watch fresh again) is worth a
                    // pass now, not at the next tick.
                    let was_blocked = self.status.blocked.is_some();
                    self.refresh_status();
                    if was_blocked && self.status.blocked.is_none() {
                        self.pass(&mut commands, &status).await;
                    }
                }
                command = commands.recv() => match command {
                    Some(command) => {
                        if self.apply(command) {
                            self.pass(&mut commands, &status).await;
                        }
                    }
                    None => break,
                },
                _ = tick.tick() => self.pass(&mut commands, &status).await,
                _ = self.clock.sleep(wait_for(&self.clock, next_report)), if next_report.is_some() => {
                    next_report = None;
                    self.send_report();
                }
                Some(summary) = next_delivery(&mut self.delivering) => self.delivered(summary),
            }
            self.publish(&status);
        }
        tracing::info!("auto-clean worker stopped");
    }

    fn next_report(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.schedule.as_ref()?.schedule().after(&now).next()
    }

    /// Returns whether the command asks for a pass now.
    fn apply(&mut self, command: WorkerCommand) -> bool {
        match command {
            WorkerCommand::SetAuto { rule, on } => {
                self.toggles.rules.insert(rule, on);
                tracing::info!("auto-clean for {rule}: {}", on_off(on));
            }
            WorkerCommand::SetMasterAuto(on) => {
                self.toggles.master = on;
                tracing::info!("auto-clean (master): {}", on_off(on));
            }
            WorkerCommand::SetStandby(why) => self.standby = why,
            WorkerCommand::Restore(history) => self.restore(&history),
            WorkerCommand::Resume { rule, scope } => {
                self.resume(rule, &scope);
                return true;
            }
            WorkerCommand::RunNow => return true,
            WorkerCommand::SendReport => self.send_report(),
        }
        self.refresh_status();
        false
    }

    /// Applies the commands that arrive mid-pass and change what it may do (a lost lease must
    /// stop the next action); the others wait for the pass to end. No wildcard: a new command
    /// must choose.
    fn drain(&mut self, commands: &mut mpsc::Receiver<WorkerCommand>) -> Vec<WorkerCommand> {
        let mut later = Vec::new();
        while let Ok(command) = commands.try_recv() {
            match command {
                WorkerCommand::SetStandby(_)
                | WorkerCommand::SetMasterAuto(_)
                | WorkerCommand::SetAuto { .. }
                | WorkerCommand::Restore(_) => {
                    self.apply(command);
                }
                WorkerCommand::Resume { .. }
                | WorkerCommand::RunNow
                | WorkerCommand::SendReport => later.push(command),
            }
        }
        self.refresh_status();
        later
    }

    /// Limits and cooldowns carried over from the replica that led before.
    fn restore(&mut self, history: &[PastAction]) {
        tracing::info!(
            "restored {} recent actions from the previous leader",
            history.len()
        );
        self.guards
            .restore(history, self.clock.now(), self.clock.instant());
        self.recent.send_replace(self.guards.recent());
    }

    /// A person resumed, where it paused, a rule the workload bound paused on this cluster.
    fn resume(&mut self, rule: RuleKind, scope: &PauseScope) {
        if self.guards.resume(rule, scope) {
            tracing::info!(
                target: ACTION_LOG,
                "{}: auto {rule} resumed by hand {scope}",
                self.cluster
            );
            self.update_paused();
        }
    }

    async fn pass(
        &mut self,
        commands: &mut mpsc::Receiver<WorkerCommand>,
        status: &watch::Sender<WorkerStatus>,
    ) {
        let now = self.clock.now();
        let findings = self.actionable(now);
        let pass = plan(
            &findings,
            &self.toggles,
            &self.paused,
            &self.gate(),
            &mut self.guards,
            self.clock.instant(),
        );
        self.status.blocked = pass.blocked.clone();
        self.status.last_pass = Some(now);
        self.publish(status);
        let deferred = self.run_planned(pass.planned, commands, status).await;
        self.status.passes += 1;
        self.refresh_status();
        // A RunNow that came in during this pass is answered by it.
        for command in deferred {
            self.apply(command);
        }
    }

    /// The findings of the rules that may act, with the breaker's pauses brought up to them.
    fn actionable(&mut self, now: DateTime<Utc>) -> Vec<Abnormal> {
        // Classifying every pod is the worker's whole idle cost at 150,000 pods: skip it when no
        // rule may act, keep only the findings of rules that may, and take the census only when
        // one of those could trip the breaker.
        let any_auto = self.chain.iter().any(|rule| self.toggles.allows(rule.kind));
        let toggles = &self.toggles;
        let findings = if any_auto {
            self.cache.findings_of(|rule| toggles.allows(rule))
        } else {
            Vec::new()
        };
        // What a dry run already did is gone to live mode: neither planned again nor counted
        // by the breaker, so the limits reach the next candidates as they would live.
        self.dry_run_done
            .forget_moved(&findings, |rule| toggles.allows(rule));
        let findings = self.dry_run_done.outstanding(findings);
        let census = if breaker::needs_census(&findings, &self.guards.safety.breaker) {
            self.cache.census()
        } else {
            Census::default()
        };
        let matching: BTreeSet<(RuleKind, Place)> = findings
            .iter()
            .map(|f| (f.finding.rule, f.place()))
            .collect();
        for (rule, scope) in self.guards.matches_cleared(&matching) {
            tracing::info!(
                target: ACTION_LOG,
                "{}: auto {rule} resumes {scope}: nothing matches there any more",
                self.cluster
            );
        }
        self.tripped = breaker::trips(&findings, &census, &self.guards.safety.breaker, now);
        self.update_paused();
        findings
    }

    /// One action at a time, re-reading the toggles and the gate before each; returns the
    /// commands that must wait for the pass to end.
    async fn run_planned(
        &mut self,
        planned: Vec<Planned>,
        commands: &mut mpsc::Receiver<WorkerCommand>,
        status: &watch::Sender<WorkerStatus>,
    ) -> Vec<WorkerCommand> {
        let mut deferred = Vec::new();
        for planned in planned {
            let action = match &planned.decision {
                Decision::Run(action) => action.clone(),
                Decision::Held(hold) => {
                    held_back(&planned, hold);
                    continue;
                }
            };
            deferred.extend(self.drain(commands));
            if !self.toggles.allows(planned.rule) || self.gate_closed() {
                continue;
            }
            self.act(&planned, action, status).await;
            self.status.last_progress = Some(self.clock.now());
            self.publish(status);
        }
        deferred
    }

    /// Check, take a slot, send. Limits are spent only on requests that go out.
    async fn act(
        &mut self,
        planned: &Planned,
        action: Action,
        status: &watch::Sender<WorkerStatus>,
    ) {
        let origin = Origin::Auto(planned.rule);
        // The checks and the request both end where the lease does as known now: an instant,
        // not a span restarted after the checks (their reads may retry for a while).
        let until = match self.lease_until() {
            Ok(until) => until,
            Err(why) => return held_back(planned, why),
        };
        let Some(prepared) = before(until, self.executor.prepare(&action, origin)).await else {
            return held_back(planned, "the lease ends before the checks did");
        };
        let prepared = match prepared {
            Ok(prepared) => prepared,
            Err(outcome) => return self.not_sent(planned, &outcome),
        };
        if until.is_some_and(|until| self.lease_short(until)) {
            return held_back(planned, "too little of the lease is left");
        }
        match self
            .guards
            .admit(planned, self.clock.instant(), self.clock.now())
        {
            Ok(()) => {}
            Err(Hold::Paused(_)) => return self.update_paused(),
            Err(hold) => return held_back(planned, hold),
        }
        self.recent.send_replace(self.guards.recent());
        self.status.acting = true;
        self.publish(status);
        let outcome = self.executor.send_within(prepared, until).await;
        self.status.acting = false;
        let new_reason = self.guards.sent(planned, &outcome, self.clock.instant());
        if let Outcome::DryRun(_) = outcome {
            self.dry_run_done.record(planned);
        }
        self.count(planned.rule, &outcome);
        if matches!(outcome, Outcome::Refused(_)) && !outcome.failed() {
            if new_reason {
                self.say_held(planned, &outcome);
            }
            return;
        }
        outcome.log(&self.cluster, origin, &action);
    }

    /// A target held back for a lasting reason: one line per new reason.
    fn say_held(&self, planned: &Planned, why: &Outcome) {
        tracing::warn!(
            target: ACTION_LOG,
            "{}: auto {} holds {}: {}",
            self.cluster,
            planned.rule,
            planned.pod,
            why.detail()
        );
    }

    /// Until when an action may run: the end of the lease as last renewed, when there is one.
    fn lease_until(&self) -> Result<Option<Instant>, &'static str> {
        let Some(until) = &self.acting_until else {
            return Ok(None);
        };
        match *until.borrow() {
            Some(until) if !self.lease_short(until) => Ok(Some(until)),
            _ => Err("too little of the lease is left to start an action"),
        }
    }

    fn lease_short(&self, until: Instant) -> bool {
        until.saturating_duration_since(self.clock.instant()) < LEASE_MARGIN
    }

    /// Refused before anything was sent: wait before trying again; say so once per reason.
    fn not_sent(&mut self, planned: &Planned, outcome: &Outcome) {
        match outcome {
            Outcome::Refused(_) | Outcome::Failed(_) => {
                if self.guards.refused(planned, outcome, self.clock.instant()) {
                    self.say_held(planned, outcome);
                }
            }
            other => {
                tracing::debug!(rule = %planned.rule, "nothing to do on {}: {other}", planned.pod)
            }
        }
    }

    fn gate(&self) -> Gate {
        let health = self.cache.health();
        Gate {
            readonly: self.readonly,
            synced: health.synced(),
            stale_for: health.stale_for(self.clock.instant()),
            standby: self.standby.clone(),
            audit: self.executor.audit_problem(),
        }
    }

    fn gate_closed(&self) -> bool {
        super::plan::blocked(&self.gate(), &self.guards.safety).is_some()
    }

    fn count(&mut self, rule: RuleKind, outcome: &Outcome) {
        self.counters.count_action(rule, outcome.label());
        let entry = self.status.rules.entry(rule).or_default();
        if outcome.succeeded() {
            entry.actions_taken += 1;
        } else if outcome.failed() {
            entry.failures += 1;
        }
    }

    /// Log only changes: a rule pausing is a warning, resuming is news.
    fn update_paused(&mut self) {
        let mut paused = self.tripped.clone();
        for (rule, pause) in self.guards.spread_paused().iter() {
            paused.add(rule, pause.clone());
        }
        for (rule, pause) in paused.iter() {
            let known = self.paused.of(rule).contains(pause);
            if !known && self.toggles.allows(rule) {
                tracing::warn!(target: ACTION_LOG, "{}: auto {rule} {pause}", self.cluster);
            }
        }
        for (rule, pause) in self.paused.iter() {
            if !paused.of(rule).iter().any(|p| p.scope == pause.scope) {
                tracing::info!(
                    target: ACTION_LOG,
                    "{}: auto {rule} resumes {}: the mass failure is over",
                    self.cluster,
                    pause.scope
                );
            }
        }
        self.paused = paused;
        self.refresh_status();
    }

    fn refresh_status(&mut self) {
        self.status.master_auto = self.toggles.master;
        let held = self.guards.backing_off(self.clock.instant());
        let mut unproven = self.guards.unproven(self.clock.instant());
        for spec in &self.chain {
            let entry = self.status.rules.entry(spec.kind).or_default();
            entry.auto = self.toggles.rules.get(&spec.kind).copied().unwrap_or(false);
            entry.paused = self.paused.of(spec.kind).to_vec();
            let (count, why) = held.get(&spec.kind).copied().unzip();
            entry.held = count.unwrap_or(0);
            entry.held_reason = why.map(|outcome| HeldReason {
                outcome: outcome.clone(),
                cluster: None,
            });
            entry.unproven = unproven.remove(&spec.kind).unwrap_or_default();
        }
        self.status.blocked = super::plan::blocked(&self.gate(), &self.guards.safety);
    }

    /// Start delivering the report in a task of its own; one at a time.
    fn send_report(&mut self) {
        let Some(reporter) = self.reporter.clone() else {
            self.status.last_report = Some("no report sinks are configured (report.sinks)".into());
            return;
        };
        if self.delivering.is_some() {
            self.status.last_report =
                Some("the previous report is still being delivered; this one is skipped".into());
            return;
        }
        let (tx, rx) = mpsc::channel(1);
        self.delivering = Some(rx);
        let (cache, cluster, now) = (self.cache.clone(), self.cluster.clone(), self.clock.now());
        tokio::spawn(async move {
            let pods = reporter.candidates(&cache);
            let _ = tx.send(reporter.send(&pods, &cluster, now).await).await;
        });
    }

    fn delivered(&mut self, summary: DeliverySummary) {
        self.delivering = None;
        for delivery in &summary.deliveries {
            self.counters
                .count_delivery(&delivery.sink, delivery.result.label());
        }
        self.status.last_report = Some(summary.describe());
    }

    fn publish(&self, status: &watch::Sender<WorkerStatus>) {
        status.send_if_modified(|current| {
            let changed = *current != self.status;
            if changed {
                *current = self.status.clone();
            }
            changed
        });
    }
}

fn held_back(planned: &Planned, why: impl std::fmt::Display) {
    tracing::debug!(rule = %planned.rule, "held back on {}: {why}", planned.pod);
}

fn on_off(on: bool) -> &'static str {
    if on { "on" } else { "off" }
}

/// The outcome of the delivery under way, if one is; never, if none is.
async fn next_delivery(
    delivering: &mut Option<mpsc::Receiver<DeliverySummary>>,
) -> Option<DeliverySummary> {
    match delivering {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

fn wait_for(clock: &Clock, at: Option<DateTime<Utc>>) -> Duration {
    at.map_or(Duration::ZERO, |at| clock.until(at))
}
