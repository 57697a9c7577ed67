//! A key pressed on the table or the details view: moving, sorting, filtering, opening a
//! pod, and the switches.

use super::actions::{pod_action, scale_to_zero, undo};
use super::overlays::on_overlay_key;
use super::{say, status};
use crate::ui::confirm::Confirmation;
use crate::ui::event::{Effect, Routed};
use crate::ui::keys::{Command, command_for};
use crate::ui::state::{BottomPane, DetailsContent, DetailsView, Overlay, State};
use opc_core::actions::PodRef;
use opc_core::cluster::{ClusterName, Listed};
use opc_core::config::{KeyBinding, KeyCode};
use opc_core::place::Place;
use opc_core::rules::{ActionKind, RuleKind};
use opc_core::worker::{Pause, WorkerCommand};

pub(super) fn on_key(state: &mut State, key: &KeyBinding) -> Vec<Effect> {
    if state.table.filtering {
        return on_filter_key(state, key);
    }
    let command = command_for(key, &state.keys);
    if let Some(overlay) = state.overlay.take() {
        return on_overlay_key(state, overlay, key, command).apply(state);
    }
    let Some(command) = command else {
        return Vec::new();
    };
    if state.details.is_some() {
        return on_details_key(state, command);
    }
    on_command(state, command)
}

fn on_filter_key(state: &mut State, key: &KeyBinding) -> Vec<Effect> {
    match key.code {
        KeyCode::Esc => {
            state.table.filter.clear();
            state.table.filtering = false;
        }
        KeyCode::Enter => state.table.filtering = false,
        KeyCode::Backspace => {
            state.table.filter.pop();
        }
        KeyCode::Char(c) if !key.ctrl && !key.alt => state.table.filter.push(c),
        _ => return Vec::new(),
    }
    state.table.selected = 0;
    state.table.offset = 0;
    state.refilter(None);
    Vec::new()
}

fn on_details_key(state: &mut State, command: Command) -> Vec<Effect> {
    match command {
        Command::Back | Command::Details | Command::Logs => {
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
        _ => on_command(state, command),
    }
}

fn on_command(state: &mut State, command: Command) -> Vec<Effect> {
    match command {
        Command::Up
        | Command::Down
        | Command::PageUp
        | Command::PageDown
        | Command::Top
        | Command::Bottom => move_cursor(state, command),
        Command::NextCategory | Command::PrevCategory | Command::Category(_) => {
            change_category(state, command);
        }
        Command::NextPane | Command::PrevPane => {
            state.bottom = state.bottom.step(command == Command::NextPane);
            // The report is rebuilt only while its pane shows: bring it up to date now.
            if state.bottom == BottomPane::Report {
                return vec![Effect::Refresh];
            }
        }
        Command::Sort | Command::ReverseSort => change_sort(state, command),
        Command::Filter => state.table.filtering = true,
        Command::Back => {
            if !state.table.filter.is_empty() {
                state.table.filter.clear();
                state.refilter(None);
            } else {
                state.clusters.clear_marks();
            }
        }
        Command::Details | Command::Logs => return show_pod(state, command),
        Command::Mark => toggle_mark(state),
        Command::Pod(verb) => return pod_action(state, verb),
        Command::ScaleToZero => return scale_to_zero(state),
        Command::Undo => return undo(state),
        Command::ToggleAuto => return toggle_auto(state),
        Command::MasterAuto => return master_auto(state),
        Command::SendReport => return send_report(state),
        Command::Help => state.overlay = Some(Overlay::Help),
        Command::Clusters => state.overlay = Some(Overlay::Clusters),
        Command::Parked => {
            state.overlay = Some(Overlay::Parked {
                list: None,
                selected: 0,
            });
            return vec![Effect::ListParked];
        }
        Command::Quit => {
            state.quit = true;
            return vec![Effect::Quit];
        }
        Command::ExportReport => return vec![Effect::ExportReport],
        Command::SwitchContext => return vec![Effect::ListContexts],
        Command::Refresh => {
            say(state, "refreshed from the caches");
            return vec![Effect::Refresh];
        }
    }
    Vec::new()
}

fn move_cursor(state: &mut State, command: Command) {
    let page = state.table.height.max(1);
    let row = match command {
        Command::Up => state.table.selected.saturating_sub(1),
        Command::Down => state.table.selected + 1,
        Command::PageUp => state.table.selected.saturating_sub(page),
        Command::PageDown => state.table.selected + page,
        Command::Top => 0,
        _ => usize::MAX,
    };
    move_to(state, row);
}

/// Show the next, previous or a numbered category, from its top; marks belong to the view
/// they were made in, so they go, saying so.
fn change_category(state: &mut State, command: Command) {
    let n = state.chain.len().max(1);
    let to = match command {
        Command::NextCategory => (state.table.category + 1) % n,
        Command::PrevCategory => (state.table.category + n - 1) % n,
        Command::Category(i) if i < n => i,
        _ => return,
    };
    state.table.category = to;
    state.table.selected = 0;
    state.table.offset = 0;
    state.refilter(None);
    let cleared = state.clusters.clear_marks();
    if cleared > 0 {
        let marks = if cleared == 1 { "mark" } else { "marks" };
        say(state, format!("{cleared} {marks} cleared"));
    }
}

/// The next sort column (`s`), or the same column the other way (`S`).
fn change_sort(state: &mut State, command: Command) {
    if command == Command::Sort {
        state.table.sort = state.table.sort.next();
        state.table.sort_reversed = false;
    } else {
        state.table.sort_reversed = !state.table.sort_reversed;
    }
    state.resort();
    let by = state.table.sort.label();
    let way = state.table.sort.direction(state.table.sort_reversed);
    let sorted = format!("sorted by {by}, {way} (s: next column, S: reverse)");
    say(state, sorted);
}

fn show_pod(state: &mut State, command: Command) -> Vec<Effect> {
    let Some(a) = state.selected_finding().cloned() else {
        return Vec::new();
    };
    if command == Command::Details {
        return vec![Effect::FetchDetails(open_details(state, &a))];
    }
    // A crash loop's current run has barely begun: the one that ended says why.
    let previous = a.rule() == RuleKind::CrashLoop;
    let container = a.container().map(String::from).or_else(|| {
        let pod = &a.watched()?.pod;
        pod.containers
            .iter()
            .find(|c| !c.init)
            .map(|c| c.name.to_string())
    });
    vec![Effect::FetchLogs {
        pod: open_details(state, &a),
        container,
        previous,
    }]
}

/// Mark the selected pod, or unmark it, and move on.
fn toggle_mark(state: &mut State) {
    if let Some(found) = state.selected_finding().cloned() {
        state.clusters.toggle_mark(&found);
        move_to(state, state.table.selected + 1);
    }
}

/// Where `rule` is paused by the workload bound, for `a` to resume, the current row's place
/// first. A pause the share breaker made lifts by itself.
fn paused_by_bound(state: &State, rule: RuleKind) -> Option<(ClusterName, Pause)> {
    let current = state.selected_finding();
    let here = |cluster: &ClusterName, pause: &Pause| {
        current.is_some_and(|f| {
            let place = Place::at(f.rule(), f.namespace(), f.node(), f.message());
            f.cluster() == cluster && pause.scope.covers(&place)
        })
    };
    let workers = state.clusters.workers();
    let all: Vec<(&ClusterName, &Pause)> = workers
        .iter()
        .filter_map(|(cluster, status)| Some((cluster, status.rules.get(&rule)?)))
        .flat_map(|(cluster, r)| r.paused.iter().map(move |p| (cluster, p)))
        .filter(|(_, pause)| pause.resumable())
        .collect();
    all.iter()
        .find(|(cluster, pause)| here(cluster, pause))
        .or(all.first())
        .map(|(cluster, pause)| ((*cluster).clone(), (*pause).clone()))
}

/// Auto-clean of the category's rule on or off on every cluster; a paused rule is resumed.
fn toggle_auto(state: &mut State) -> Vec<Effect> {
    let Some(rule) = state.current_kind() else {
        return Vec::new();
    };
    if let Some((cluster, pause)) = paused_by_bound(state, rule) {
        let confirmation = Confirmation::resume(&cluster, rule, &pause);
        state.overlay = Some(Overlay::Confirm(confirmation));
        return Vec::new();
    }
    let on = !state.worker().rules.get(&rule).is_some_and(|r| r.auto);
    // A rule switched on under a master switch that is off does nothing yet: say so.
    let idle = if on && !state.worker().master_auto {
        " (the master switch is off: A switches it on)"
    } else {
        ""
    };
    let switched = if on { "on" } else { "off" };
    say(state, format!("auto-clean for {rule} {switched}{idle}"));
    vec![Effect::Worker(WorkerCommand::SetAuto { rule, on })]
}

/// Off at once; on only after a dialog that says what it will act on (two keys deleted six
/// pods of the demo before).
fn master_auto(state: &mut State) -> Vec<Effect> {
    if state.worker().master_auto {
        say(state, "auto-clean master switch off");
        return vec![Effect::Worker(WorkerCommand::SetMasterAuto(false))];
    }
    let worker = state.worker();
    let count = |i: usize| state.table.counts.get(i).copied().unwrap_or(0);
    let rules: Vec<(RuleKind, ActionKind, usize)> = (state.chain.iter().enumerate())
        .filter(|(_, r)| worker.rules.get(&r.kind).is_some_and(|s| s.auto))
        .map(|(i, r)| (r.kind, r.action, count(i)))
        .collect();
    let dialog = Confirmation::master_on(&rules, state.switches.flags.dry_run);
    state.overlay = Some(Overlay::Confirm(dialog));
    Vec::new()
}

/// Send the restart report to the configured sinks; with none, say where else it can go.
fn send_report(state: &mut State) -> Vec<Effect> {
    if !state.switches.report_sinks {
        let export = state
            .keys
            .key("export_report")
            .map_or("the export key".to_string(), |k| k.to_string());
        let nowhere = format!(
            "no report sinks are configured (report.sinks); {export} writes the report to a file"
        );
        status(state, nowhere, true);
        return Vec::new();
    }
    say(state, "sending the restart report…");
    vec![Effect::Worker(WorkerCommand::SendReport)]
}

fn move_to(state: &mut State, row: usize) {
    state.table.selected = row.min(state.table.rows.len().saturating_sub(1));
    state.clamp();
}

/// The details view of `a`'s pod, loading; what it loads is the caller's effect.
fn open_details(state: &mut State, a: &Listed) -> Routed<PodRef> {
    let pod = Routed::new(a.cluster(), a.pod_ref());
    state.details = Some(DetailsView {
        pod: pod.clone(),
        content: DetailsContent::Loading,
        scroll: 0,
    });
    pod
}
