//! The auto-clean worker: plans from the live cache and the per-rule toggles, enforces the
//! safety guards, and runs actions through the executor.
//!
//! The decisions are pure ([`plan`], [`breaker::trips`], the `RateLimiter`); the loop in `run.rs`
//! only gathers their inputs, runs what they decide and publishes [`WorkerStatus`].

mod blocked;
pub mod breaker;
mod control;
mod counters;
mod dry_run_done;
mod guards;
mod limits;
mod pause;
mod pause_cause;
mod plan;
mod planned;
mod run;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};

pub use blocked::{Blocked, BlockedKind, Standby};
pub use control::{HeldReason, RuleStatus, WorkerCommand, WorkerHandle, WorkerStatus};
pub use counters::Counters;
pub use dry_run_done::DryRunDone;
pub use guards::Guards;
pub use limits::Limited;
pub use pause::{Pause, Pauses};
pub use pause_cause::{Bound, Burst, Group, PauseCause, Reach, SilentNode};
pub use plan::{Gate, Pass, Toggles, plan};
pub use planned::{Decision, Hold, Judged, Planned};

use crate::actions::Executor;
use crate::cluster::{Cache, ClusterName};
use crate::config::CronSchedule;
use crate::policy::Policy;
use crate::report::Reporter;

/// How one mode runs the worker; what it may do comes from the [`Policy`].
pub struct WorkerOptions {
    /// The master switch at start (off by default: nothing acts on its own until asked).
    pub master_auto: bool,
    pub tick: Duration,
    pub cluster: ClusterName,
    /// Hold all actions until told otherwise (leader election), with the reason shown.
    pub standby: Option<Standby>,
    /// Builds and delivers the restart report on `SendReport`, and on `report_schedule`.
    pub reporter: Option<Arc<Reporter>>,
    pub report_schedule: Option<CronSchedule>,
    pub counters: Arc<Counters>,
    /// Under a Lease: acting is allowed until this instant (`None`: not now). Each action is
    /// cut off there, so a replica that lost its lease never overlaps its successor.
    pub acting_until: Option<watch::Receiver<Option<std::time::Instant>>>,
    /// What the replica that led before sent recently (from the Lease), restored at start.
    pub inherited: Vec<crate::actions::PastAction>,
}

impl Default for WorkerOptions {
    fn default() -> Self {
        WorkerOptions {
            master_auto: false,
            tick: Duration::from_secs(10),
            cluster: ClusterName::default(),
            standby: None,
            reporter: None,
            report_schedule: None,
            counters: Arc::default(),
            acting_until: None,
            inherited: Vec::new(),
        }
    }
}

/// Start the worker on the current runtime. It stops when every command sender is dropped;
/// the status channel then closes, which is how a caller waits for the last action to finish.
pub fn spawn(
    cache: Cache,
    executor: Arc<Executor>,
    policy: &Policy,
    options: WorkerOptions,
) -> WorkerHandle {
    let (commands, rx) = mpsc::channel(32);
    let (recent_tx, recent) = watch::channel(Vec::new());
    let worker = run::Worker::new(cache, executor, policy, options, recent_tx);
    let (status_tx, status) = watch::channel(worker.status.clone());
    tokio::spawn(worker.run(rx, status_tx));
    WorkerHandle {
        commands,
        status,
        recent,
    }
}
