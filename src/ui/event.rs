//! What reaches the UI task, and what it asks the runtime to do.

use std::path::PathBuf;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::details::PodDetails;
use crate::Error;
use opc_core::actions::{
    Action, Inspection, OptOut, Outcome, ParkedList, PodRef, ReadError, ScalableWorkload, UndoPlan,
};
use opc_core::cluster::{ClusterName, Listed};
use opc_core::config::{KeyBinding, KeyCode, WireFormat};
use opc_core::fleet::{FeedStatus, WatchWhy, WorkerView};
use opc_core::report::RestartReport;
use opc_core::rules::RuleKind;
use opc_core::worker::{WorkerCommand, WorkerStatus};

/// Why an answer the screen asked a cluster for did not come.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unanswered {
    #[error("context {0} is no longer open")]
    Closed(ClusterName),
    #[error(transparent)]
    Read(#[from] ReadError),
}

/// The caches of every open cluster, read once per change.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// Every cluster's findings together; each names its cluster.
    pub findings: Vec<Listed>,
    pub total_pods: usize,
    /// Each open cluster and its watch, in the order they were opened.
    pub clusters: Vec<ClusterLine>,
    pub at: DateTime<Utc>,
    /// The findings come in the screen's default order, as one cluster's index hands them over.
    pub in_default_order: bool,
}

/// One open cluster as the header summarises it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterLine {
    pub name: ClusterName,
    pub watch: WatchLine,
    pub pods: usize,
    /// Nodes whose Ready condition is Unknown: their kubelet stopped reporting.
    pub nodes_not_reporting: usize,
    /// Why nodes cannot be watched (RBAC, say): causes then come from pods alone.
    pub nodes_unreadable: Option<String>,
    /// What the API server sends pods in, once it has sent some.
    pub wire: Option<WireFormat>,
    pub source: SourceLine,
}

/// Where a cluster's findings come from, as the header and the clusters dialog say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceLine {
    /// A watch of its pods from here, and why it is one.
    Watch(WatchWhy),
    /// Its in-cluster worker: only its abnormal pods are here, and its switches are its own.
    Worker {
        status: FeedStatus,
        worker: WorkerView,
    },
}

impl SourceLine {
    pub fn is_worker(&self) -> bool {
        matches!(self, SourceLine::Worker { .. })
    }
}

impl ClusterLine {
    /// A cluster just opened: listing, nothing known yet.
    pub fn listing(name: &ClusterName) -> ClusterLine {
        ClusterLine {
            name: name.clone(),
            watch: WatchLine::Listing,
            pods: 0,
            nodes_not_reporting: 0,
            nodes_unreadable: None,
            wire: None,
            source: SourceLine::Watch(WatchWhy::Chosen),
        }
    }
}

/// An action and the cluster it goes to, which acts with its own credentials and guards.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Routed<T> {
    pub cluster: ClusterName,
    pub item: T,
}

impl<T> Routed<T> {
    pub fn new(cluster: &ClusterName, item: T) -> Routed<T> {
        Routed {
            cluster: cluster.clone(),
            item,
        }
    }
}

#[derive(Debug, Clone)]
pub enum Event {
    Key(KeyBinding),
    /// About once a second: ages move on, "reconnecting for N s" counts, for every cluster.
    Tick {
        now: DateTime<Utc>,
        clusters: Vec<ClusterLine>,
    },
    /// Rows of the table that fit on screen, after a resize.
    Resize {
        table_height: usize,
    },
    Snapshot(Snapshot),
    Worker {
        cluster: ClusterName,
        status: WorkerStatus,
    },
    Report(RestartReport),
    Details {
        uid: String,
        result: Result<PodDetails, Unanswered>,
    },
    /// The workload scale-to-zero would touch, its replicas now, and any opt-out.
    Resolved {
        pod: Routed<PodRef>,
        result: Result<Inspection, Unanswered>,
    },
    OptOuts(Result<Checked, Unanswered>),
    Outcome {
        action: Routed<Action>,
        outcome: Outcome,
    },
    Contexts(Result<Vec<ClusterName>, Arc<Error>>),
    /// A context switch finished (the name) or failed.
    Switched(Result<ClusterName, Arc<Error>>),
    /// A context was added to the screen (the name), or could not be.
    Added(Result<ClusterName, Arc<Error>>),
    /// The parked workloads of every open cluster.
    Parked(ParkedList),
    /// What undo of a parked workload will do (checked against its cluster), or why it cannot.
    UndoChecked {
        workload: Routed<ScalableWorkload>,
        result: Result<UndoPlan, Outcome>,
    },
    /// The report was written to a file (the path), or could not be.
    Exported(Result<PathBuf, Arc<Error>>),
}

/// What the checks before a pod action found among its targets' owner chains and live state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Checked {
    pub opt_outs: Vec<OptOut>,
    /// Each target's category as read just now: none, it matches no rule.
    pub live: Vec<(PodRef, Option<RuleKind>)>,
}

/// Work for the runtime; `update` never does I/O itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    Quit,
    /// Confirmed actions, run one by one, each through its cluster's executor.
    Run(Vec<Routed<Action>>),
    FetchDetails(Routed<PodRef>),
    /// The last lines of a container: `previous` for the run before this one.
    FetchLogs {
        pod: Routed<PodRef>,
        container: Option<String>,
        previous: bool,
    },
    ResolveWorkload(Routed<PodRef>),
    /// Check the owner chains of a pod action's targets for opt-outs.
    CheckOptOuts(Vec<Routed<PodRef>>),
    /// To every open cluster's worker: auto switches hold for the screen, guards per cluster.
    Worker(WorkerCommand),
    WorkerOf(Routed<WorkerCommand>),
    ExportReport,
    ListContexts,
    /// Show this context alone.
    SwitchContext(ClusterName),
    /// Open this context next to the others.
    AddContext(ClusterName),
    /// Close this context; the others stay.
    DropContext(ClusterName),
    /// Read the parked workloads of every open cluster.
    ListParked,
    /// Check that a parked workload is still at zero and what undo restores.
    CheckUndo(Routed<ScalableWorkload>),
    /// Reclassify now instead of waiting for the next change.
    Refresh,
}

/// crossterm's key, as the config's key syntax names it; `None` for keys no binding can name.
pub(crate) fn key_from_crossterm(key: &crossterm::event::KeyEvent) -> Option<KeyBinding> {
    use crossterm::event::{KeyCode as K, KeyEventKind, KeyModifiers};
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    let code = match key.code {
        K::Char(c) if ctrl => KeyCode::Char(c.to_ascii_lowercase()),
        K::Char(c) => KeyCode::Char(c),
        K::Enter => KeyCode::Enter,
        K::Esc => KeyCode::Esc,
        K::Tab => KeyCode::Tab,
        K::BackTab => KeyCode::BackTab,
        K::Backspace => KeyCode::Backspace,
        K::Delete => KeyCode::Delete,
        K::Insert => KeyCode::Insert,
        K::Home => KeyCode::Home,
        K::End => KeyCode::End,
        K::PageUp => KeyCode::PageUp,
        K::PageDown => KeyCode::PageDown,
        K::Up => KeyCode::Up,
        K::Down => KeyCode::Down,
        K::Left => KeyCode::Left,
        K::Right => KeyCode::Right,
        K::F(n) => KeyCode::F(n),
        _ => return None,
    };
    Some(KeyBinding { code, ctrl, alt })
}

/// Where the watch stands, as the header says it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum WatchLine {
    #[default]
    Listing,
    Synced,
    /// Listing again after 410 Gone; `stale_secs` is how long the view has not been fresh.
    Relisting {
        stale_secs: Option<u64>,
    },
    Reconnecting {
        secs: u64,
        error: String,
    },
    /// This identity may not list or watch the pods; `check` is the `kubectl auth can-i`.
    Forbidden {
        what: String,
        check: String,
    },
}

impl WatchLine {
    /// How bad it is, for picking the worst of several clusters.
    pub(crate) fn severity(&self) -> u8 {
        match self {
            WatchLine::Synced => 0,
            WatchLine::Listing => 1,
            WatchLine::Relisting { stale_secs: None } => 2,
            WatchLine::Relisting { .. } => 3,
            WatchLine::Reconnecting { .. } => 4,
            WatchLine::Forbidden { .. } => 5,
        }
    }
}
