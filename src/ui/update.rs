//! `update`: the only place the state changes. Pure: events in, effects out.

use std::sync::Arc;

use super::confirm::{Answer, Confirmation, Offer, PodVerb};
use super::event::{Effect, Event, Routed, Snapshot};
use super::keys::{Command, command_for};
use super::state::{
    BottomPane, DetailsContent, DetailsView, Forbidden, Overlay, State, StatusLine, View,
};
use crate::actions::{Action, Outcome, ParkedList, PodRef, Refusal, Verb};
use crate::cluster::Abnormal;
use crate::config::{KeyBinding, KeyCode};
use crate::rules::RuleKind;
use crate::worker::{Pause, WorkerCommand};

pub fn update(state: &mut State, event: Event) -> Vec<Effect> {
    let effects = dispatch(state, event);
    // Whatever opened a dialog, it says up front what the mode makes of a yes.
    if state.dry_run
        && let Some(Overlay::Confirm(dialog)) = &mut state.overlay
    {
        dialog.mark_dry_run();
    }
    effects
}

fn dispatch(state: &mut State, event: Event) -> Vec<Effect> {
    match event {
        Event::Key(key) => on_key(state, &key),
        Event::Tick { now, clusters } => {
            state.now = now;
            state.clusters = clusters;
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
        Event::Worker { cluster, status } => {
            state.workers.insert(cluster, status);
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
            let on_screen = state.clusters.iter().any(|c| c.name == pod.cluster);
            if on_screen && matches!(state.overlay, Some(Overlay::Resolving(_))) {
                let several = state.several_clusters();
                state.overlay = Some(Overlay::Confirm(match result {
                    Ok(checked) => Confirmation::for_scale(&pod, &checked, several),
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
            let first = state.clusters.first().map(|c| c.name.clone());
            let selected = names
                .iter()
                .position(|n| Some(n.as_str()) == first.as_deref())
                .unwrap_or(0);
            state.overlay = Some(Overlay::Contexts { names, selected });
            Vec::new()
        }
        Event::Contexts(Err(e))
        | Event::Switched(Err(e))
        | Event::Added(Err(e))
        | Event::Exported(Err(e)) => {
            status(state, &e.to_string(), true);
            Vec::new()
        }
        Event::Switched(Ok(name)) => {
            state.clusters = vec![super::event::ClusterLine::listing(&name)];
            state.workers.clear();
            state.marks.clear();
            state.scaled.clear();
            state.forbidden.clear();
            state.replace_findings(Vec::new(), true);
            state.view = View::Table;
            state.details = None;
            status(state, &format!("switched to context {name}"), false);
            Vec::new()
        }
        Event::Added(Ok(name)) => {
            if !state.clusters.iter().any(|c| *c.name == *name) {
                state
                    .clusters
                    .push(super::event::ClusterLine::listing(&name));
            }
            status(state, &format!("added context {name}"), false);
            // The screen's switches hold for every cluster, the one added now included.
            let cluster: std::sync::Arc<str> = name.as_str().into();
            let worker = state.worker();
            let mut switches: Vec<WorkerCommand> = worker
                .rules
                .iter()
                .filter(|(_, rule)| rule.auto)
                .map(|(rule, _)| WorkerCommand::SetAuto {
                    rule: *rule,
                    on: true,
                })
                .collect();
            if worker.master_auto {
                switches.push(WorkerCommand::SetMasterAuto(true));
            }
            switches
                .into_iter()
                .map(|command| Effect::WorkerOf(super::event::Routed::new(&cluster, command)))
                .collect()
        }
        Event::Parked(list) => {
            if let Some(Overlay::Parked { list: shown, .. }) = &mut state.overlay {
                *shown = Some(list);
            }
            Vec::new()
        }
        Event::UndoChecked { workload, result } => {
            if matches!(state.overlay, Some(Overlay::Resolving(_))) {
                let several = state.several_clusters();
                let dialog = Confirmation::for_parked_undo(&workload, result, several);
                state.overlay = Some(Overlay::Confirm(dialog));
            }
            Vec::new()
        }
        Event::Exported(Ok(path)) => {
            status(
                state,
                &format!("report written to {}", path.display()),
                false,
            );
            Vec::new()
        }
    }
}

fn on_snapshot(state: &mut State, snapshot: Snapshot) {
    state.total_pods = snapshot.total_pods;
    state.now = snapshot.at;
    state.clusters = snapshot.clusters;
    // A dropped cluster's worker no longer speaks for the screen.
    let open: Vec<_> = state.clusters.iter().map(|c| c.name.clone()).collect();
    state.workers.retain(|name, _| open.contains(name));
    state.replace_findings(snapshot.findings, snapshot.in_default_order);
}

/// Where `rule` is paused by the workload bound, on which cluster, and why: what `a` offers to
/// resume. The current row's cluster and namespace come first. A pause the share breaker made
/// lifts by itself.
fn paused_by_bound(state: &State, rule: RuleKind) -> Option<(Arc<str>, Pause)> {
    let current = state.selected_finding();
    let here = |cluster: &Arc<str>, pause: &Pause| {
        current.is_some_and(|f| f.cluster == *cluster && pause.scope.covers(&f.pod.namespace))
    };
    let all: Vec<(&Arc<str>, &Pause)> = state
        .workers
        .iter()
        .filter_map(|(cluster, status)| Some((cluster, status.rules.get(&rule)?)))
        .flat_map(|(cluster, r)| r.paused.iter().map(move |p| (cluster, p)))
        .filter(|(_, pause)| pause.resumable)
        .collect();
    all.iter()
        .find(|(cluster, pause)| here(cluster, pause))
        .or(all.first())
        .map(|(cluster, pause)| (Arc::clone(cluster), (*pause).clone()))
}

fn on_outcome(
    state: &mut State,
    action: &Routed<Action>,
    outcome: &Outcome,
    workload: Option<crate::actions::WorkloadRef>,
) {
    let mut text = outcome.line(&action.item);
    if state.several_clusters() {
        text = format!("{}: {text}", action.cluster);
    }
    match outcome {
        // A 403 will come again: the verb shows as unavailable on this cluster from now on.
        Outcome::Refused(refusal) if refusal.forbidden().is_some() => {
            let verb = action.item.verb();
            if state.forbidden_reason(&action.cluster, verb).is_none() {
                state.forbidden.push(Forbidden {
                    cluster: action.cluster.clone(),
                    verb,
                    why: refusal.to_string(),
                });
            }
        }
        Outcome::Done(_) => match (&action.item, workload) {
            (Action::ScaleToZero(_), Some(w)) => {
                state.scaled.push(Routed::new(&action.cluster, w));
            }
            (Action::UndoScale(w), _) => state
                .scaled
                .retain(|s| !(s.item == *w && s.cluster == action.cluster)),
            _ => {}
        },
        _ => {}
    }
    if let Some(pod) = action.item.pod() {
        state
            .marks
            .remove(&(action.cluster.clone(), pod.uid.clone()));
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
            Answer::Resume(routed) => {
                let (rule, scope) = routed.item;
                status(
                    state,
                    &format!(
                        "auto-clean for {rule} resumed {scope} on {}",
                        routed.cluster
                    ),
                    false,
                );
                let command = WorkerCommand::Resume { rule, scope };
                vec![Effect::WorkerOf(Routed::new(&routed.cluster, command))]
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
                _ if key.code == KeyCode::Enter || key.code == KeyCode::Char(' ') => {
                    let Some(name) = names.get(selected).cloned() else {
                        return Vec::new();
                    };
                    return if key.code == KeyCode::Enter {
                        status(state, &format!("connecting to {name}…"), false);
                        vec![Effect::SwitchContext(name)]
                    } else {
                        add_or_drop(state, name)
                    };
                }
                _ if no => return Vec::new(),
                _ => selected,
            };
            state.overlay = Some(Overlay::Contexts { names, selected });
            Vec::new()
        }
        Overlay::Parked { list, selected } => on_parked_key(state, list, selected, key, command),
        Overlay::Clusters if no || command == Some(Command::Clusters) => Vec::new(),
        Overlay::Clusters => {
            state.overlay = Some(Overlay::Clusters);
            Vec::new()
        }
    }
}

/// The parked list: move, undo the selected workload (after its cluster confirms it is still
/// at zero), close.
fn on_parked_key(
    state: &mut State,
    list: Option<ParkedList>,
    selected: usize,
    key: &KeyBinding,
    command: Option<Command>,
) -> Vec<Effect> {
    let rows = list.as_ref().map_or(0, |l| l.rows.len());
    let selected = match command {
        Some(Command::Up) => selected.saturating_sub(1),
        Some(Command::Down) => (selected + 1).min(rows.saturating_sub(1)),
        Some(Command::Parked | Command::Back | Command::Quit) => return Vec::new(),
        Some(Command::Undo) | Some(Command::Details) => {
            let Some(row) = list.as_ref().and_then(|l| l.rows.get(selected)) else {
                state.overlay = Some(Overlay::Parked { list, selected });
                return Vec::new();
            };
            let workload = Routed::new(&row.cluster.as_str().into(), row.workload.clone());
            let clusters = std::iter::once(row.cluster.as_str());
            if let Some(why) = why_unavailable(state, Verb::UndoScale, clusters) {
                let dialog = Confirmation::unavailable("Restore the replicas?", why);
                state.overlay = Some(Overlay::Confirm(dialog));
                return Vec::new();
            }
            state.overlay = Some(Overlay::Resolving(format!(
                "checking that {} is still at 0…",
                workload.item
            )));
            return vec![Effect::CheckUndo(workload)];
        }
        _ if key.code == KeyCode::Esc => return Vec::new(),
        _ => selected,
    };
    state.overlay = Some(Overlay::Parked { list, selected });
    Vec::new()
}

/// Space in the context list: open a context next to the others, or close an open one (never
/// the last).
fn add_or_drop(state: &mut State, name: String) -> Vec<Effect> {
    if !state.clusters.iter().any(|c| *c.name == *name) {
        status(state, &format!("adding {name}…"), false);
        return vec![Effect::AddContext(name)];
    }
    if state.clusters.len() == 1 {
        status(
            state,
            &format!("{name} is the only context open: Enter switches to another"),
            true,
        );
        return Vec::new();
    }
    state.clusters.retain(|c| *c.name != *name);
    state.workers.retain(|cluster, _| **cluster != *name);
    state.scaled.retain(|s| *s.cluster != *name);
    state.forbidden.retain(|f| *f.cluster != *name);
    let kept: Vec<_> = state
        .findings
        .iter()
        .filter(|a| *a.cluster != *name)
        .cloned()
        .collect();
    state.replace_findings(kept, false);
    if state.details.as_ref().is_some_and(|d| *d.cluster == *name) {
        state.view = View::Table;
        state.details = None;
    }
    status(state, &format!("dropped context {name}"), false);
    vec![Effect::DropContext(name)]
}

/// The details view of `a`'s pod, loading; what it loads is the caller's effect.
fn open_details(state: &mut State, a: &Abnormal) -> Routed<PodRef> {
    let pod = Routed::new(&a.cluster, PodRef::of(&a.pod));
    state.view = View::Details;
    state.details = Some(DetailsView {
        cluster: pod.cluster.clone(),
        pod: pod.item.clone(),
        content: DetailsContent::Loading,
        scroll: 0,
    });
    pod
}

fn on_details_key(state: &mut State, command: Command) -> Vec<Effect> {
    match command {
        Command::Back | Command::Details | Command::Logs => {
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
            // Marks belong to the view they were made in.
            let cleared = std::mem::take(&mut state.marks).len();
            if cleared > 0 {
                let marks = if cleared == 1 { "mark" } else { "marks" };
                status(state, &format!("{cleared} {marks} cleared"), false);
            }
        }
        Command::NextPane | Command::PrevPane => {
            state.bottom = state.bottom.step(command == Command::NextPane);
            // The report is rebuilt only while its pane shows: bring it up to date now.
            if state.bottom == BottomPane::Report {
                return vec![Effect::Refresh];
            }
        }
        Command::Sort | Command::ReverseSort => {
            if command == Command::Sort {
                state.sort = state.sort.next();
                state.sort_reversed = false;
            } else {
                state.sort_reversed = !state.sort_reversed;
            }
            state.resort();
            let (by, way) = (
                state.sort.label(),
                state.sort.direction(state.sort_reversed),
            );
            status(
                state,
                &format!("sorted by {by}, {way} (s: next column, S: reverse)"),
                false,
            );
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
            let Some(a) = state.selected_finding().cloned() else {
                return Vec::new();
            };
            return vec![Effect::FetchDetails(open_details(state, &a))];
        }
        Command::Logs => {
            let Some(a) = state.selected_finding().cloned() else {
                return Vec::new();
            };
            // A crash loop's current run has barely begun: the one that ended says why.
            let previous = a.finding.rule == crate::rules::RuleKind::CrashLoop;
            let container = a.finding.container.clone().or_else(|| {
                a.pod
                    .containers
                    .iter()
                    .find(|c| !c.init)
                    .map(|c| c.name.to_string())
            });
            return vec![Effect::FetchLogs {
                pod: open_details(state, &a),
                container,
                previous,
            }];
        }
        Command::Mark => {
            if let Some(mark) = state.selected_finding().map(super::state::mark_of) {
                if !state.marks.remove(&mark) {
                    state.marks.insert(mark);
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
        Command::Undo => return undo(state),
        Command::ToggleAuto => {
            let Some(rule) = state.current_kind() else {
                return Vec::new();
            };
            // A rule the workload bound paused is resumed per cluster, after a look at why.
            if let Some((cluster, pause)) = paused_by_bound(state, rule) {
                let confirmation = Confirmation::resume(&cluster, rule, &pause);
                state.overlay = Some(Overlay::Confirm(confirmation));
                return Vec::new();
            }
            let on = !state.worker().rules.get(&rule).is_some_and(|r| r.auto);
            status(
                state,
                &format!("auto-clean for {rule} {}", if on { "on" } else { "off" }),
                false,
            );
            return vec![Effect::Worker(WorkerCommand::SetAuto { rule, on })];
        }
        Command::MasterAuto => {
            let on = !state.worker().master_auto;
            status(
                state,
                &format!("auto-clean master switch {}", if on { "on" } else { "off" }),
                false,
            );
            return vec![Effect::Worker(WorkerCommand::SetMasterAuto(on))];
        }
        Command::SendReport if !state.report_sinks => {
            let export = state
                .keys
                .key("export_report")
                .map_or("the export key".to_string(), |k| k.to_string());
            status(
                state,
                &format!(
                    "no report sinks are configured (report.sinks); {export} writes the report \
                     to a file"
                ),
                true,
            );
        }
        Command::SendReport => {
            status(state, "sending the restart report…", false);
            return vec![Effect::Worker(WorkerCommand::SendReport)];
        }
        Command::ExportReport => return vec![Effect::ExportReport],
        Command::SwitchContext => return vec![Effect::ListContexts],
        Command::Clusters => state.overlay = Some(Overlay::Clusters),
        Command::Parked => {
            state.overlay = Some(Overlay::Parked {
                list: None,
                selected: 0,
            });
            return vec![Effect::ListParked];
        }
        Command::Refresh => {
            status(state, "refreshed from the caches", false);
            return vec![Effect::Refresh];
        }
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
            .filter(|a| *a.pod.uid == *d.pod.uid && a.cluster == d.cluster)
            .collect(),
        _ => state.targets(),
    }
}

/// Why `verb` cannot run on any of `clusters`: read-only mode, an audit log that cannot be
/// written, or a cluster's API that refused it before.
fn why_unavailable<'a>(
    state: &State,
    verb: Verb,
    mut clusters: impl Iterator<Item = &'a str>,
) -> Option<String> {
    if state.readonly {
        return Some(Refusal::Readonly.to_string());
    }
    if let Some(problem) = &state.audit_problem {
        return Some(Refusal::AuditBroken(problem.clone()).to_string());
    }
    clusters.find_map(|cluster| {
        let why = state.forbidden_reason(cluster, verb)?;
        Some(if state.several_clusters() {
            format!("the API of {cluster} refused this before: {why}")
        } else {
            format!("the API refused this before: {why}")
        })
    })
}

fn pod_action(state: &mut State, verb: PodVerb) -> Vec<Effect> {
    let title = match verb {
        PodVerb::Delete => "Delete",
        PodVerb::ForceDelete => "Force delete",
        PodVerb::Evict => "Evict",
        PodVerb::RemoveFinalizers => "Remove finalizers",
    };
    let targets = targets(state);
    let clusters = targets.iter().map(|a| &*a.cluster);
    let dialog = if let Some(why) = why_unavailable(state, verb.verb(), clusters) {
        Confirmation::unavailable(title, why)
    } else {
        if targets.is_empty() {
            Confirmation::unavailable(title, "no pod selected")
        } else {
            // The dialog waits for the owners' opt-out check before it asks.
            let dialog = Confirmation::for_pods(verb, &targets, state.several_clusters());
            let pods = targets
                .iter()
                .map(|a| Routed::new(&a.cluster, PodRef::of(&a.pod)))
                .collect();
            if matches!(dialog.offer, Offer::Ready { .. }) {
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
    let targets = targets(state);
    let clusters = targets.iter().map(|a| &*a.cluster);
    if let Some(why) = why_unavailable(state, Verb::ScaleToZero, clusters) {
        state.overlay = Some(Overlay::Confirm(Confirmation::unavailable(title, why)));
        return Vec::new();
    }
    let pod = match targets.as_slice() {
        [] => None,
        [one] => Some(Routed::new(&one.cluster, PodRef::of(&one.pod))),
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
    if let Some(deleting) = targets.first().filter(|a| a.pod.deletion.is_some()) {
        let why = format!(
            "{}/{} is already being deleted: its workload was scaled, or the pod is going",
            deleting.pod.namespace, deleting.pod.name
        );
        state.overlay = Some(Overlay::Confirm(Confirmation::unavailable(title, why)));
        return Vec::new();
    }
    state.overlay = Some(Overlay::Resolving(format!(
        "finding the workload of {}…",
        pod.item
    )));
    vec![Effect::ResolveWorkload(pod)]
}

/// Undo the last scale to zero of this screen, checked against its cluster first so the
/// dialog says what will be restored, as from the parked view.
fn undo(state: &mut State) -> Vec<Effect> {
    let title = "Restore the replicas?";
    let last = state.scaled.last().cloned();
    let clusters = last.iter().map(|w| &*w.cluster);
    let why = match (why_unavailable(state, Verb::UndoScale, clusters), &last) {
        (Some(why), _) => why,
        (None, Some(workload)) => {
            state.overlay = Some(Overlay::Resolving(format!(
                "checking that {} is still at 0…",
                workload.item
            )));
            return vec![Effect::CheckUndo(workload.clone())];
        }
        (None, None) => "nothing was scaled to 0 from this screen; P lists the parked \
                         workloads and undoes any of them"
            .to_string(),
    };
    state.overlay = Some(Overlay::Confirm(Confirmation::unavailable(title, why)));
    Vec::new()
}
