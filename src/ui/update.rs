//! `update`: the only place the state changes. Pure: events in, effects out.

use super::confirm::{Answer, Confirmation, PodVerb};
use super::event::{Effect, Event, Snapshot};
use super::keys::{Command, command_for};
use super::state::{BottomPane, DetailsContent, DetailsView, Overlay, State, StatusLine, View};
use crate::actions::{Action, Outcome, PodRef};
use crate::config::{KeyBinding, KeyCode};
use crate::worker::WorkerCommand;

pub fn update(state: &mut State, event: Event) -> Vec<Effect> {
    match event {
        Event::Key(key) => on_key(state, &key),
        Event::Tick { now, watch } => {
            state.now = now;
            state.watch = watch;
            Vec::new()
        }
        Event::Resize { table_height } => {
            state.table_height = table_height.max(1);
            state.clamp();
            Vec::new()
        }
        Event::Snapshot(snapshot) => {
            on_snapshot(state, snapshot);
            Vec::new()
        }
        Event::Worker(status) => {
            state.worker = status;
            Vec::new()
        }
        Event::Report(report) => {
            state.report = Some(report);
            Vec::new()
        }
        Event::Details { uid, result } => {
            if let Some(details) = state.details.as_mut().filter(|d| d.pod.uid == uid) {
                details.content = match result {
                    Ok(d) => DetailsContent::Loaded(d),
                    Err(e) => DetailsContent::Failed(e),
                };
            }
            Vec::new()
        }
        Event::Resolved { pod, result } => {
            if matches!(state.overlay, Some(Overlay::Resolving(_))) {
                state.overlay = Some(Overlay::Confirm(match result {
                    Ok(checked) => Confirmation::for_scale(&pod, &checked),
                    Err(e) => Confirmation::unavailable(
                        "Scale the workload to 0?",
                        format!("cannot find the workload: {e}"),
                    ),
                }));
            }
            Vec::new()
        }
        Event::OptOuts(checked) => {
            if let Some(Overlay::Checking(dialog)) = state.overlay.take() {
                state.overlay = Some(Overlay::Confirm(dialog.with_opt_outs(checked)));
            }
            Vec::new()
        }
        Event::Outcome {
            action,
            outcome,
            workload,
        } => {
            on_outcome(state, &action, &outcome, workload);
            Vec::new()
        }
        Event::Contexts(Ok(names)) if names.is_empty() => {
            status(state, "no kubeconfig contexts to switch to", true);
            Vec::new()
        }
        Event::Contexts(Ok(names)) => {
            let selected = names.iter().position(|n| *n == state.context).unwrap_or(0);
            state.overlay = Some(Overlay::Contexts { names, selected });
            Vec::new()
        }
        Event::Contexts(Err(e)) | Event::Switched(Err(e)) | Event::Exported(Err(e)) => {
            status(state, &e, true);
            Vec::new()
        }
        Event::Switched(Ok(name)) => {
            state.context = name.clone();
            state.marks.clear();
            state.scaled.clear();
            state.forbidden.clear();
            state.replace_findings(Vec::new());
            state.view = View::Table;
            state.details = None;
            status(state, &format!("switched to context {name}"), false);
            Vec::new()
        }
        Event::Exported(Ok(path)) => {
            status(state, &format!("report written to {path}"), false);
            Vec::new()
        }
    }
}

fn on_snapshot(state: &mut State, snapshot: Snapshot) {
    state.total_pods = snapshot.total_pods;
    state.watch = snapshot.watch;
    state.now = snapshot.at;
    state.replace_findings(snapshot.findings);
}

fn on_outcome(
    state: &mut State,
    action: &Action,
    outcome: &Outcome,
    workload: Option<crate::actions::WorkloadRef>,
) {
    let text = outcome.line(action);
    match outcome {
        Outcome::Refused(why) if why.contains("403") || why.contains("forbidden") => {
            let verb = action.verb();
            if state.forbidden_reason(verb).is_none() {
                state.forbidden.push((verb, why.clone()));
            }
        }
        Outcome::Done(_) => match (action, workload) {
            (Action::ScaleToZero(_), Some(w)) => state.scaled.push(w),
            (Action::UndoScale(w), _) => state.scaled.retain(|s| s != w),
            _ => {}
        },
        _ => {}
    }
    if let Some(uid) = action.pod().map(|p| &p.uid) {
        state.marks.remove(uid);
    }
    status(state, &text, !outcome.succeeded());
}

fn status(state: &mut State, text: &str, error: bool) {
    state.status = Some(StatusLine {
        text: text.to_string(),
        error,
    });
}

fn on_key(state: &mut State, key: &KeyBinding) -> Vec<Effect> {
    if state.filtering {
        return on_filter_key(state, key);
    }
    let command = command_for(key, &state.keys);
    if let Some(overlay) = state.overlay.take() {
        return on_overlay_key(state, overlay, key, command);
    }
    let Some(command) = command else {
        return Vec::new();
    };
    if state.view == View::Details {
        return on_details_key(state, command);
    }
    on_command(state, command)
}

fn on_filter_key(state: &mut State, key: &KeyBinding) -> Vec<Effect> {
    match key.code {
        KeyCode::Esc => {
            state.filter.clear();
            state.filtering = false;
        }
        KeyCode::Enter => state.filtering = false,
        KeyCode::Backspace => {
            state.filter.pop();
        }
        KeyCode::Char(c) if !key.ctrl && !key.alt => state.filter.push(c),
        _ => return Vec::new(),
    }
    state.selected = 0;
    state.offset = 0;
    state.refilter(None);
    Vec::new()
}

fn on_overlay_key(
    state: &mut State,
    overlay: Overlay,
    key: &KeyBinding,
    command: Option<Command>,
) -> Vec<Effect> {
    let yes = matches!(key.code, KeyCode::Enter | KeyCode::Char('y')) && !key.ctrl;
    let no = matches!(key.code, KeyCode::Esc | KeyCode::Char('n' | 'q'));
    match overlay {
        Overlay::Help if no || command == Some(Command::Help) => Vec::new(),
        Overlay::Help => {
            state.overlay = Some(Overlay::Help);
            Vec::new()
        }
        Overlay::Resolving(_) | Overlay::Checking(_) if no => Vec::new(),
        waiting @ (Overlay::Resolving(_) | Overlay::Checking(_)) => {
            state.overlay = Some(waiting);
            Vec::new()
        }
        Overlay::Confirm(c) if yes => match c.confirm() {
            Answer::Run(actions) => {
                status(
                    state,
                    &format!("running {} action(s)…", actions.len()),
                    false,
                );
                vec![Effect::Run(actions)]
            }
            Answer::AskAgain(second) => {
                state.overlay = Some(Overlay::Confirm(second));
                Vec::new()
            }
            Answer::Nothing => Vec::new(),
        },
        Overlay::Confirm(_) if no => {
            status(state, "cancelled", false);
            Vec::new()
        }
        Overlay::Confirm(c) => {
            state.overlay = Some(Overlay::Confirm(c));
            Vec::new()
        }
        Overlay::Contexts { names, selected } => {
            let n = names.len();
            let selected = match command {
                Some(Command::Up) => selected.saturating_sub(1),
                Some(Command::Down) => (selected + 1).min(n.saturating_sub(1)),
                _ if key.code == KeyCode::Enter => {
                    let name = names[selected].clone();
                    status(state, &format!("connecting to {name}…"), false);
                    return vec![Effect::SwitchContext(name)];
                }
                _ if no => return Vec::new(),
                _ => selected,
            };
            state.overlay = Some(Overlay::Contexts { names, selected });
            Vec::new()
        }
    }
}

fn on_details_key(state: &mut State, command: Command) -> Vec<Effect> {
    match command {
        Command::Back | Command::Details => {
            state.view = View::Table;
            state.details = None;
            Vec::new()
        }
        Command::Up | Command::Down | Command::PageUp | Command::PageDown => {
            if let Some(d) = state.details.as_mut() {
                d.scroll = match command {
                    Command::Up => d.scroll.saturating_sub(1),
                    Command::Down => d.scroll.saturating_add(1),
                    Command::PageUp => d.scroll.saturating_sub(10),
                    _ => d.scroll.saturating_add(10),
                };
            }
            Vec::new()
        }
        Command::Quit | Command::Help => on_command(state, command),
        // Actions apply to the pod shown.
        other => on_command(state, other),
    }
}

fn on_command(state: &mut State, command: Command) -> Vec<Effect> {
    let page = state.table_height.max(1);
    match command {
        Command::Up => move_to(state, state.selected.saturating_sub(1)),
        Command::Down => move_to(state, state.selected + 1),
        Command::PageUp => move_to(state, state.selected.saturating_sub(page)),
        Command::PageDown => move_to(state, state.selected + page),
        Command::Top => move_to(state, 0),
        Command::Bottom => move_to(state, usize::MAX),
        Command::NextCategory | Command::PrevCategory | Command::Category(_) => {
            let n = state.chain.len().max(1);
            let to = match command {
                Command::NextCategory => (state.category + 1) % n,
                Command::PrevCategory => (state.category + n - 1) % n,
                Command::Category(i) if i < n => i,
                _ => return Vec::new(),
            };
            state.category = to;
            state.selected = 0;
            state.offset = 0;
            state.refilter(None);
        }
        Command::NextPane | Command::PrevPane => {
            state.bottom = state.bottom.step(command == Command::NextPane);
            // The report is rebuilt only while its pane shows: bring it up to date now.
            if state.bottom == BottomPane::Report {
                return vec![Effect::Refresh];
            }
        }
        Command::Sort => {
            state.sort = state.sort.next();
            state.resort();
            status(state, &format!("sorted by {}", state.sort.label()), false);
        }
        Command::Filter => state.filtering = true,
        Command::Back => {
            if !state.filter.is_empty() {
                state.filter.clear();
                state.refilter(None);
            } else if !state.marks.is_empty() {
                state.marks.clear();
            }
        }
        Command::Details => {
            let Some(a) = state.selected_finding() else {
                return Vec::new();
            };
            let pod = PodRef::of(&a.pod);
            state.view = View::Details;
            state.details = Some(DetailsView {
                pod: pod.clone(),
                content: DetailsContent::Loading,
                scroll: 0,
            });
            return vec![Effect::FetchDetails(pod)];
        }
        Command::Mark => {
            if let Some(uid) = state.selected_finding().map(|a| a.pod.uid.to_string()) {
                if !state.marks.remove(&uid) {
                    state.marks.insert(uid);
                }
                move_to(state, state.selected + 1);
            }
        }
        Command::Help => state.overlay = Some(Overlay::Help),
        Command::Quit => {
            state.quit = true;
            return vec![Effect::Quit];
        }
        Command::Delete => return pod_action(state, PodVerb::Delete),
        Command::ForceDelete => return pod_action(state, PodVerb::ForceDelete),
        Command::Evict => return pod_action(state, PodVerb::Evict),
        Command::RemoveFinalizers => return pod_action(state, PodVerb::RemoveFinalizers),
        Command::ScaleToZero => return scale_to_zero(state),
        Command::Undo => undo(state),
        Command::ToggleAuto => {
            let Some(rule) = state.current_kind() else {
                return Vec::new();
            };
            let on = !state.worker.rules.get(&rule).is_some_and(|r| r.auto);
            status(
                state,
                &format!("auto-clean for {rule} {}", if on { "on" } else { "off" }),
                false,
            );
            return vec![Effect::Worker(WorkerCommand::SetAuto { rule, on })];
        }
        Command::MasterAuto => {
            let on = !state.worker.master_auto;
            status(
                state,
                &format!("auto-clean master switch {}", if on { "on" } else { "off" }),
                false,
            );
            return vec![Effect::Worker(WorkerCommand::SetMasterAuto(on))];
        }
        Command::SendReport => {
            status(state, "sending the restart report…", false);
            return vec![Effect::Worker(WorkerCommand::SendReport)];
        }
        Command::ExportReport => return vec![Effect::ExportReport],
        Command::SwitchContext => return vec![Effect::ListContexts],
        Command::Refresh => return vec![Effect::Refresh],
        Command::Confirm => {}
    }
    Vec::new()
}

fn move_to(state: &mut State, row: usize) {
    state.selected = row.min(state.rows.len().saturating_sub(1));
    state.clamp();
}

/// In the details view, actions apply to the pod shown; otherwise to marks or the cursor.
fn targets(state: &State) -> Vec<&crate::cluster::Abnormal> {
    match (&state.view, &state.details) {
        (View::Details, Some(d)) => state
            .findings
            .iter()
            .filter(|a| *a.pod.uid == *d.pod.uid)
            .collect(),
        _ => state.targets(),
    }
}

fn readonly_or_forbidden(state: &State, verb: &str) -> Option<String> {
    if state.readonly {
        return Some("read-only mode (--readonly): no actions".to_string());
    }
    state
        .forbidden_reason(verb)
        .map(|why| format!("the API refused this before: {why}"))
}

fn pod_action(state: &mut State, verb: PodVerb) -> Vec<Effect> {
    let title = match verb {
        PodVerb::Delete => "Delete",
        PodVerb::ForceDelete => "Force delete",
        PodVerb::Evict => "Evict",
        PodVerb::RemoveFinalizers => "Remove finalizers",
    };
    let dialog = if let Some(why) = readonly_or_forbidden(state, verb.verb()) {
        Confirmation::unavailable(title, why)
    } else {
        let targets = targets(state);
        if targets.is_empty() {
            Confirmation::unavailable(title, "no pod selected")
        } else {
            // The dialog waits for the owners' opt-out check before it asks.
            let dialog = Confirmation::for_pods(verb, &targets);
            let pods = targets.iter().map(|a| PodRef::of(&a.pod)).collect();
            if dialog.pending.is_some() {
                state.overlay = Some(Overlay::Checking(dialog));
                return vec![Effect::CheckOptOuts(pods)];
            }
            dialog
        }
    };
    state.overlay = Some(Overlay::Confirm(dialog));
    Vec::new()
}

fn scale_to_zero(state: &mut State) -> Vec<Effect> {
    let title = "Scale the workload to 0?";
    if let Some(why) = readonly_or_forbidden(state, "scaleToZero") {
        state.overlay = Some(Overlay::Confirm(Confirmation::unavailable(title, why)));
        return Vec::new();
    }
    let targets = targets(state);
    let pod = match targets.as_slice() {
        [] => None,
        [one] => Some(PodRef::of(&one.pod)),
        _ => {
            state.overlay = Some(Overlay::Confirm(Confirmation::unavailable(
                title,
                "scale to zero works on one pod's workload at a time: unmark (Esc) and pick one",
            )));
            return Vec::new();
        }
    };
    let Some(pod) = pod else {
        state.overlay = Some(Overlay::Confirm(Confirmation::unavailable(
            title,
            "no pod selected",
        )));
        return Vec::new();
    };
    state.overlay = Some(Overlay::Resolving(format!(
        "finding the workload of {pod}…"
    )));
    vec![Effect::ResolveWorkload(pod)]
}

fn undo(state: &mut State) {
    let title = "Restore the replicas?";
    let dialog = if let Some(why) = readonly_or_forbidden(state, "undoScale") {
        Confirmation::unavailable(title, why)
    } else if let Some(workload) = state.scaled.last() {
        Confirmation::for_undo(workload)
    } else {
        Confirmation::unavailable(
            title,
            "nothing was scaled to 0 from this screen; restore others with \
             kubectl scale (the old count is in ConfigMap ops-pod-cleaner-parked)",
        )
    };
    state.overlay = Some(Overlay::Confirm(dialog));
}
