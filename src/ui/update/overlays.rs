//! A key pressed while an overlay floats above the screen.

use super::actions::why_unavailable;
use super::{say, status};
use crate::ui::confirm::{Confirmation, Offer};
use crate::ui::event::{Effect, Routed};
use crate::ui::keys::Command;
use crate::ui::state::{Overlay, State};
use opc_core::actions::ParkedList;
use opc_core::cluster::ClusterName;
use opc_core::config::{KeyBinding, KeyCode};
use opc_core::rules::Verb;
use opc_core::worker::WorkerCommand;

/// What a key in an overlay leaves: the overlay shown next, if any, and what to do. The
/// overlay is handed back by value, so no handler can lose it by forgetting to put it back.
pub(super) struct Next {
    overlay: Option<Overlay>,
    effects: Vec<Effect>,
}

impl Next {
    /// Show the next overlay; what is left to do.
    pub(super) fn apply(self, state: &mut State) -> Vec<Effect> {
        state.overlay = self.overlay;
        self.effects
    }

    fn stay(overlay: Overlay) -> Next {
        Next {
            overlay: Some(overlay),
            effects: Vec::new(),
        }
    }

    fn close() -> Next {
        Next::close_with(Vec::new())
    }

    fn close_with(effects: Vec<Effect>) -> Next {
        Next {
            overlay: None,
            effects,
        }
    }
}

pub(super) fn on_overlay_key(
    state: &mut State,
    overlay: Overlay,
    key: &KeyBinding,
    command: Option<Command>,
) -> Next {
    let yes = matches!(key.code, KeyCode::Enter | KeyCode::Char('y')) && !key.ctrl;
    let no = matches!(key.code, KeyCode::Esc | KeyCode::Char('n' | 'q'));
    match overlay {
        Overlay::Help if no || command == Some(Command::Help) => Next::close(),
        Overlay::Clusters if no || command == Some(Command::Clusters) => Next::close(),
        Overlay::Resolving(_) | Overlay::Checking(_) if no => Next::close(),
        Overlay::Confirm(dialog) if yes => on_yes(state, dialog),
        Overlay::Confirm(_) if no => {
            say(state, "cancelled");
            Next::close()
        }
        Overlay::Contexts { names, selected } => {
            on_contexts_key(state, names, selected, key, command, no)
        }
        Overlay::Parked { list, selected } => on_parked_key(state, list, selected, key, command),
        // Waiting, help and the clusters' list ignore other keys; a dialog waits for an answer.
        other @ (Overlay::Help
        | Overlay::Clusters
        | Overlay::Resolving(_)
        | Overlay::Checking(_)
        | Overlay::Confirm(_)) => Next::stay(other),
    }
}

/// Yes to a dialog: run what it offers, or ask the second time it asks for.
fn on_yes(state: &mut State, dialog: Confirmation) -> Next {
    match dialog.offer {
        Offer::Ready {
            actions, caution, ..
        } if caution.is_empty() => {
            say(state, format!("running {} action(s)…", actions.len()));
            Next::close_with(vec![Effect::Run(actions)])
        }
        Offer::Ready {
            actions, caution, ..
        } => {
            let second = Confirmation::ask_again(&dialog.title, caution, actions);
            Next::stay(Overlay::Confirm(second))
        }
        Offer::MasterOn => {
            say(state, "auto-clean master switch on");
            Next::close_with(vec![Effect::Worker(WorkerCommand::SetMasterAuto(true))])
        }
        Offer::Resume(Routed { cluster, item }) => {
            let (rule, scope) = item;
            let resumed = format!("auto-clean for {rule} resumed {scope} on {cluster}");
            say(state, resumed);
            let command = WorkerCommand::Resume { rule, scope };
            Next::close_with(vec![Effect::WorkerOf(Routed::new(&cluster, command))])
        }
        Offer::Unavailable(_) => Next::close(),
    }
}

fn on_contexts_key(
    state: &mut State,
    names: Vec<ClusterName>,
    selected: usize,
    key: &KeyBinding,
    command: Option<Command>,
    no: bool,
) -> Next {
    let n = names.len();
    let selected = match command {
        Some(Command::Up) => selected.saturating_sub(1),
        Some(Command::Down) => (selected + 1).min(n.saturating_sub(1)),
        _ if key.code == KeyCode::Enter || key.code == KeyCode::Char(' ') => {
            let Some(name) = names.get(selected).cloned() else {
                return Next::close();
            };
            if key.code == KeyCode::Enter {
                say(state, format!("connecting to {name}…"));
                return Next::close_with(vec![Effect::SwitchContext(name)]);
            }
            return Next::close_with(add_or_drop(state, name));
        }
        _ if no => return Next::close(),
        _ => selected,
    };
    Next::stay(Overlay::Contexts { names, selected })
}

fn on_parked_key(
    state: &mut State,
    list: Option<ParkedList>,
    selected: usize,
    key: &KeyBinding,
    command: Option<Command>,
) -> Next {
    let rows = list.as_ref().map_or(0, |l| l.rows.len());
    let selected = match command {
        Some(Command::Up) => selected.saturating_sub(1),
        Some(Command::Down) => (selected + 1).min(rows.saturating_sub(1)),
        Some(Command::Parked | Command::Back | Command::Quit) => return Next::close(),
        Some(Command::Undo) | Some(Command::Details) => {
            let Some(row) = list.as_ref().and_then(|l| l.rows.get(selected)) else {
                return Next::stay(Overlay::Parked { list, selected });
            };
            let workload = Routed::new(&row.cluster, row.workload.clone());
            let clusters = std::iter::once(&row.cluster);
            if let Some(why) = why_unavailable(state, Verb::UndoScale, clusters) {
                let dialog = Confirmation::unavailable("Restore the replicas?", why);
                return Next::stay(Overlay::Confirm(dialog));
            }
            let checking = format!("checking that {} is still at 0…", workload.item);
            return Next {
                overlay: Some(Overlay::Resolving(checking)),
                effects: vec![Effect::CheckUndo(workload)],
            };
        }
        _ if key.code == KeyCode::Esc => return Next::close(),
        _ => selected,
    };
    Next::stay(Overlay::Parked { list, selected })
}

/// Space in the context list: open a context, or close an open one (never the last).
fn add_or_drop(state: &mut State, name: ClusterName) -> Vec<Effect> {
    if !state.clusters.contains(&name) {
        say(state, format!("adding {name}…"));
        return vec![Effect::AddContext(name)];
    }
    if state.clusters.len() == 1 {
        let only = format!("{name} is the only context open: Enter switches to another");
        status(state, only, true);
        return Vec::new();
    }
    state.close_cluster(&name);
    say(state, format!("dropped context {name}"));
    vec![Effect::DropContext(name)]
}
