//! How the auto-clean worker is steered and how it reports, one type per channel direction.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use tokio::sync::{mpsc, watch};

use super::blocked::{Blocked, Standby};
use super::pause::Pause;
use crate::actions::{Outcome, PastAction};
use crate::cluster::ClusterName;
use crate::place::PauseScope;
use crate::rules::RuleKind;

/// Commands to the worker, from the TUI (keys) or the headless mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkerCommand {
    /// Switch auto-clean for one rule.
    SetAuto { rule: RuleKind, on: bool },
    /// The master switch: nothing runs automatically while it is off.
    SetMasterAuto(bool),
    /// Someone looked at a rule the workload bound paused, on this cluster and in this scope:
    /// it may act there again.
    Resume { rule: RuleKind, scope: PauseScope },
    /// Run a pass now instead of waiting for the next tick.
    RunNow,
    /// Build the restart report and deliver it to the sinks now.
    SendReport,
    /// Hold every action with this reason (another replica leads), or resume with `None`.
    SetStandby(Option<Standby>),
    /// What the replica that led before sent recently: its limits and cooldowns carry over.
    Restore(Vec<PastAction>),
}

/// What one rule's auto-clean is doing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleStatus {
    pub auto: bool,
    /// Actions that succeeded (done, already gone, or dry-run) since start.
    pub actions_taken: u64,
    pub failures: u64,
    /// Where and why this rule is paused (the mass-failure breaker); loud in the UI.
    pub paused: Vec<Pause>,
    /// Targets refused for a lasting reason (an opt-out, a bad rollout...), waiting to retry.
    pub held: u32,
    /// One of their refusals, for the rules pane and `--once`.
    pub held_reason: Option<HeldReason>,
    /// Workloads a scale to zero was refused for because their pods are no evidence against
    /// them (an unproven chain, a foreign image): their rows say `unproven`.
    pub unproven: Vec<crate::pod::WorkloadId>,
}

/// Why targets of a rule are held: one refusal, and the cluster it came from where several
/// clusters' statuses show as one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldReason {
    pub outcome: Outcome,
    pub cluster: Option<ClusterName>,
}

impl std::fmt::Display for HeldReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(cluster) = &self.cluster {
            write!(f, "{cluster}: ")?;
        }
        f.write_str(&self.outcome.detail())
    }
}

/// What the worker is doing, for the header and the rules pane. Sent on every change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkerStatus {
    pub master_auto: bool,
    pub dry_run: bool,
    pub rules: BTreeMap<RuleKind, RuleStatus>,
    pub blocked: Option<Blocked>,
    pub last_pass: Option<DateTime<Utc>>,
    /// The last time the loop finished an action: a long pass is progress, not a stall.
    pub last_progress: Option<DateTime<Utc>>,
    /// Passes completed, their actions included.
    pub passes: u64,
    /// The last report delivery, e.g. "sent to 2 sinks at 09:00" or "spooled: slack answered 503".
    pub last_report: Option<String>,
    /// An automatic action under way (sent, its outcome not yet recorded): what a quitting
    /// screen waits for.
    pub acting: bool,
}

/// The UI's side of a running worker.
#[derive(Debug, Clone)]
pub struct WorkerHandle {
    pub commands: mpsc::Sender<WorkerCommand>,
    pub status: watch::Receiver<WorkerStatus>,
    /// The automatic actions sent within the guards' longest window, for the Lease.
    pub recent: watch::Receiver<Vec<PastAction>>,
}
