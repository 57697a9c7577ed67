//! `update`: the only place the state changes. Pure: events in, effects out.

use std::sync::Arc;

use super::confirm::{Answer, Confirmation, Offer, PodVerb};
use super::event::{Effect, Event, Routed, Snapshot};
use super::keys::{Command, command_for};
use super::state::{BottomPane, DetailsContent, DetailsView, Overlay, State, StatusLine, View};
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
        Event::Added(Ok(name)) => on_added(state, &name),
        answer @ (Event::Resolved { .. }
        | Event::OptOuts(_)
        | Event::Parked(_)
        | Event::UndoChecked { .. }) => {
            let shown = state.overlay.take();
            state.overlay = answered(state, shown, answer);
            Vec::new()
        }
        other => {
            observe(state, other);
            Vec::new()
        }
    }
}

/// What the runtime reports and the screen only takes in: time, caches, workers, results.
fn observe(state: &mut State, event: Event) {
    match event {
        Event::Tick { now, clusters } => {
            state.now = now;
            state.sync_clusters(clusters);
        }
        Event::Resize { table_height } => {
            state.table_height = table_height.max(1);
            state.clamp();
        }
        Event::Snapshot(snapshot) => on_snapshot(state, snapshot),
        Event::Worker { cluster, status } => state.clusters.set_worker(&cluster, status),
        Event::Report(report) => state.report = Some(report),
        Event::Details { uid, result } => {
            if let Some(details) = state.details.as_mut().filter(|d| d.pod.uid == uid) {
                details.content = match result {
                    Ok(d) => DetailsContent::Loaded(d),
                    Err(e) => DetailsContent::Failed(e),
                };
            }
        }
        Event::Outcome {
            action,
            outcome,
            workload,
        } => on_outcome(state, &action, &outcome, workload),
        Event::Contexts(Ok(names)) => show_contexts(state, names),
        Event::Switched(Ok(name)) => on_switched(state, &name),
        Event::Exported(Ok(path)) => {
            let written = format!("report written to {}", path.display());
            status(state, &written, false);
        }
        Event::Contexts(Err(e))
        | Event::Switched(Err(e))
        | Event::Added(Err(e))
        | Event::Exported(Err(e)) => status(state, &e.to_string(), true),
        // They change the overlay or answer with effects: `dispatch` has them.
        Event::Key(_)
        | Event::Added(Ok(_))
        | Event::Resolved { .. }
        | Event::OptOuts(_)
        | Event::Parked(_)
        | Event::UndoChecked { .. } => {}
    }
}

/// An answer the screen waited for, given the overlay shown: the overlay to show next. An
/// answer for an overlay no longer shown (cancelled, or another opened since) leaves the shown
/// one as it is.
fn answered(state: &mut State, shown: Option<Overlay>, answer: Event) -> Option<Overlay> {
    let several = state.several_clusters();
    match (shown, answer) {
        (Some(Overlay::Resolving(_)), Event::Resolved { pod, result })
            if state.clusters.contains(&pod.cluster) =>
        {
            Some(Overlay::Confirm(match result {
                Ok(checked) => Confirmation::for_scale(&pod, &checked, several),
                Err(e) => Confirmation::unavailable(
                    "Scale the workload to 0?",
                    format!("cannot find the workload: {e}"),
                ),
            }))
        }
        (Some(Overlay::Resolving(_)), Event::UndoChecked { workload, result }) => Some(
            Overlay::Confirm(Confirmation::for_parked_undo(&workload, result, several)),
        ),
        (Some(Overlay::Checking(dialog)), Event::OptOuts(checked)) => {
            Some(Overlay::Confirm(dialog.with_opt_outs(checked)))
        }
        (Some(Overlay::Parked { selected, .. }), Event::Parked(list)) => Some(Overlay::Parked {
            list: Some(list),
            selected,
        }),
        (shown, _) => shown,
    }
}

/// The kubeconfig's contexts, to pick from; the first open one is selected.
fn show_contexts(state: &mut State, names: Vec<String>) {
    if names.is_empty() {
        status(state, "no kubeconfig contexts to switch to", true);
        return;
    }
    let first = state.clusters.lines().next().map(|c| c.name.clone());
    let selected = names
        .iter()
        .position(|n| Some(n.as_str()) == first.as_deref())
        .unwrap_or(0);
    state.overlay = Some(Overlay::Contexts { names, selected });
}

/// The screen shows `name` alone, from scratch.
fn on_switched(state: &mut State, name: &str) {
    state.clusters.only(name);
    state.replace_findings(Vec::new(), true);
    state.view = View::Table;
    state.details = None;
    status(state, &format!("switched to context {name}"), false);
}

/// `name` opened next to the others. The screen's switches hold for every cluster, the one
/// added now included: its worker is told them.
fn on_added(state: &mut State, name: &str) -> Vec<Effect> {
    state.clusters.open(name);
    status(state, &format!("added context {name}"), false);
    let cluster: Arc<str> = name.into();
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
        .map(|command| Effect::WorkerOf(Routed::new(&cluster, command)))
        .collect()
}

fn on_snapshot(state: &mut State, snapshot: Snapshot) {
    state.total_pods = snapshot.total_pods;
    state.now = snapshot.at;
    state.sync_clusters(snapshot.clusters);
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
    let workers = state.clusters.workers();
    let all: Vec<(&Arc<str>, &Pause)> = workers
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
            state
                .clusters
                .forbid(&action.cluster, verb, refusal.to_string());
        }
        Outcome::Done(_) => match (&action.item, workload) {
            (Action::ScaleToZero(_), Some(w)) => state.clusters.scaled(&action.cluster, w),
            (Action::UndoScale(w), _) => state.clusters.restored(&action.cluster, w),
            _ => {}
        },
        _ => {}
    }
    if let Some(pod) = action.item.pod() {
        state.clusters.unmark(&action.cluster, &pod.uid);
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
        let next = on_overlay_key(state, overlay, key, command);
        state.overlay = next.overlay;
        return next.effects;
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

/// What a key in an overlay leaves: the overlay shown next, if any, and what to do. The
/// overlay is handed back by value, so no handler can lose it by forgetting to put it back.
struct Next {
    overlay: Option<Overlay>,
    effects: Vec<Effect>,
}

impl Next {
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

fn on_overlay_key(
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
            status(state, "cancelled", false);
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
    match dialog.confirm() {
        Answer::Run(actions) => {
            status(
                state,
                &format!("running {} action(s)…", actions.len()),
                false,
            );
            Next::close_with(vec![Effect::Run(actions)])
        }
        Answer::AskAgain(second) => Next::stay(Overlay::Confirm(second)),
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
            Next::close_with(vec![Effect::WorkerOf(Routed::new(
                &routed.cluster,
                command,
            ))])
        }
        Answer::Nothing => Next::close(),
    }
}

/// The context list: move; Enter shows the selected context alone, space adds or drops it.
fn on_contexts_key(
    state: &mut State,
    names: Vec<String>,
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
                status(state, &format!("connecting to {name}…"), false);
                return Next::close_with(vec![Effect::SwitchContext(name)]);
            }
            return Next::close_with(add_or_drop(state, name));
        }
        _ if no => return Next::close(),
        _ => selected,
    };
    Next::stay(Overlay::Contexts { names, selected })
}

/// The parked list: move, undo the selected workload (after its cluster confirms it is still
/// at zero), close.
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
            let workload = Routed::new(&row.cluster.as_str().into(), row.workload.clone());
            let clusters = std::iter::once(row.cluster.as_str());
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

/// Space in the context list: open a context next to the others, or close an open one (never
/// the last).
fn add_or_drop(state: &mut State, name: String) -> Vec<Effect> {
    if !state.clusters.contains(&name) {
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
    state.close_cluster(&name);
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
            let cleared = state.clusters.clear_marks();
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
            } else {
                state.clusters.clear_marks();
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
            if let Some(found) = state
                .rows
                .get(state.selected)
                .and_then(|&i| state.findings.get(i))
            {
                state.clusters.toggle_mark(found);
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
    let last = state.clusters.last_scaled();
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
