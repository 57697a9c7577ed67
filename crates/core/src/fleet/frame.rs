//! What a worker serves under `/v1/`: a snapshot, and the frames of its watch stream.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::row::{FindingRow, PodKey};
use crate::actions::PastAction;
use crate::cluster::Health;
use crate::rules::RuleKind;
use crate::worker::{BlockedKind, WorkerStatus};

/// Which run of a worker a sequence number belongs to: a worker that restarted counts from
/// zero again, so a number it gave before means nothing now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Epoch(pub u64);

impl Epoch {
    /// A new epoch for this process: its start time and id, so two runs never share one.
    /// Within 53 bits, so a JSON reader that keeps numbers as doubles (jq, a browser) reads
    /// it exactly: milliseconds (41 bits until the year 2039) and the process id's low 12.
    pub fn fresh() -> Epoch {
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let pid = u64::from(std::process::id()) & 0xfff;
        Epoch(((millis << 12) | pid) & ((1 << 53) - 1))
    }
}

/// Abnormal pods per category.
pub type Counts = BTreeMap<RuleKind, usize>;

/// One line of the watch stream. Every frame carries the sequence number it brings the view
/// to; a delta's is one more than the frame before it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Frame {
    /// The whole state: what a client starts from, or starts again from.
    Snapshot(Snapshot),
    /// A pod turned abnormal, or its finding changed.
    Upsert {
        seq: u64,
        row: FindingRow,
    },
    /// A pod is no longer abnormal (healthy again, or gone).
    Remove {
        seq: u64,
        pod: PodKey,
    },
    Counts {
        seq: u64,
        counts: Counts,
    },
    Worker {
        seq: u64,
        worker: WorkerView,
    },
    /// The stream is live, the view is at `seq`, and how current the worker's own view is.
    /// Changes nothing, so it does not move `seq`.
    #[serde(rename_all = "camelCase")]
    Heartbeat {
        epoch: Epoch,
        seq: u64,
        at: DateTime<Utc>,
        view: ViewHealth,
    },
}

impl Frame {
    pub fn seq(&self) -> u64 {
        match self {
            Frame::Snapshot(s) => s.seq,
            Frame::Upsert { seq, .. }
            | Frame::Remove { seq, .. }
            | Frame::Counts { seq, .. }
            | Frame::Worker { seq, .. }
            | Frame::Heartbeat { seq, .. } => *seq,
        }
    }
}

/// Everything a worker serves at one sequence number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    pub epoch: Epoch,
    pub seq: u64,
    /// The server's time when it was taken.
    pub at: DateTime<Utc>,
    /// In the screen's default order (chain position, time in state, namespace, name).
    pub findings: Vec<FindingRow>,
    pub counts: Counts,
    pub worker: WorkerView,
    pub view: ViewHealth,
}

/// The worker, as a screen shows it for a cluster it does not watch itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkerView {
    /// This replica holds the Lease and acts.
    pub leading: bool,
    pub master_auto: bool,
    pub dry_run: bool,
    pub blocked: Option<BlockedView>,
    pub paused: Vec<PausedRule>,
    /// The automatic actions sent lately, newest first, at most [`LAST_ACTIONS`].
    pub last_actions: Vec<PastAction>,
    pub last_pass: Option<DateTime<Utc>>,
}

/// How many recent actions a worker's status carries.
pub const LAST_ACTIONS: usize = 20;

impl WorkerView {
    pub fn of(status: &WorkerStatus, leading: bool, recent: &[PastAction]) -> WorkerView {
        let mut last_actions: Vec<PastAction> = recent.to_vec();
        last_actions.sort_by_key(|a| std::cmp::Reverse(a.at));
        last_actions.truncate(LAST_ACTIONS);
        WorkerView {
            leading,
            master_auto: status.master_auto,
            dry_run: status.dry_run,
            blocked: status.blocked.as_ref().map(|blocked| BlockedView {
                kind: blocked.into(),
                why: blocked.to_string(),
            }),
            paused: status
                .rules
                .iter()
                .flat_map(|(rule, r)| {
                    r.paused.iter().map(|pause| PausedRule {
                        rule: *rule,
                        why: pause.to_string(),
                        resumable: pause.resumable(),
                    })
                })
                .collect(),
            last_actions,
            last_pass: status.last_pass,
        }
    }
}

/// Why no action can run, by kind, in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockedView {
    pub kind: BlockedKind,
    pub why: String,
}

/// A rule paused by the mass-failure breaker, and where and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PausedRule {
    pub rule: RuleKind,
    pub why: String,
    /// Only a person lifts it.
    pub resumable: bool,
}

/// How current the worker's own view of its cluster is: a screen shows a cluster whose
/// worker is stale as stale, whatever the stream says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ViewHealth {
    /// The first complete list of pods is in.
    pub synced: bool,
    /// The view has not been proved current within its bound.
    pub stale: bool,
    /// Seconds since the view was last proved current; none before the first list.
    pub age_seconds: Option<u64>,
    /// The watch's last error, while it has one.
    pub error: Option<String>,
}

impl ViewHealth {
    pub fn of(health: &Health, now: Instant) -> ViewHealth {
        ViewHealth {
            synced: health.synced(),
            stale: health.stale_for(now).is_some(),
            age_seconds: health.age(now).map(|age| age.as_secs()),
            error: health.last_error(),
        }
    }

    /// The same but for the age, which moves every second.
    pub fn same_state(&self, other: &ViewHealth) -> bool {
        (self.synced, self.stale, &self.error) == (other.synced, other.stale, &other.error)
    }

    pub fn age(&self) -> Option<Duration> {
        self.age_seconds.map(Duration::from_secs)
    }
}
