//! What reaches the UI task, and what it asks the runtime to do.

use chrono::{DateTime, Utc};

use super::details::PodDetails;
use super::state::WatchLine;
use crate::actions::{Action, Inspection, OptOut, Outcome, PodRef, WorkloadRef};
use crate::cluster::Abnormal;
use crate::config::{KeyBinding, KeyCode};
use crate::report::RestartReport;
use crate::worker::{WorkerCommand, WorkerStatus};

/// The cache, classified once per change.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub findings: Vec<Abnormal>,
    pub total_pods: usize,
    pub watch: WatchLine,
    pub at: DateTime<Utc>,
}

#[derive(Debug, Clone)]
pub enum Event {
    Key(KeyBinding),
    /// About once a second: ages move on, "reconnecting for N s" counts.
    Tick {
        now: DateTime<Utc>,
        watch: WatchLine,
    },
    /// Rows of the table that fit on screen, after a resize.
    Resize {
        table_height: usize,
    },
    Snapshot(Snapshot),
    Worker(WorkerStatus),
    Report(RestartReport),
    Details {
        uid: String,
        result: Result<PodDetails, String>,
    },
    /// The workload scale-to-zero would touch, its replicas now, and any opt-out.
    Resolved {
        pod: PodRef,
        result: Result<Inspection, String>,
    },
    /// Where the opt-out annotation sits among the targets of a pod action.
    OptOuts(Result<Vec<OptOut>, String>),
    Outcome {
        action: Action,
        outcome: Outcome,
        /// The workload a scale-to-zero changed, when known.
        workload: Option<WorkloadRef>,
    },
    Contexts(Result<Vec<String>, String>),
    /// A context switch finished (the name) or failed.
    Switched(Result<String, String>),
    /// The report was written to a file (the path), or could not be.
    Exported(Result<String, String>),
}

/// Work for the runtime; `update` never does I/O itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    Quit,
    /// Confirmed actions, run one by one through the executor.
    Run(Vec<Action>),
    FetchDetails(PodRef),
    ResolveWorkload(PodRef),
    /// Check the owner chains of a pod action's targets for opt-outs.
    CheckOptOuts(Vec<PodRef>),
    Worker(WorkerCommand),
    ExportReport,
    ListContexts,
    SwitchContext(String),
    /// Reclassify now instead of waiting for the next change.
    Refresh,
}

/// crossterm's key, as the config's key syntax names it; `None` for keys no binding can name.
pub fn key_from_crossterm(key: &crossterm::event::KeyEvent) -> Option<KeyBinding> {
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
