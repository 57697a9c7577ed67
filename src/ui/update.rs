//! `update`: the only place the state changes. Pure: events in, effects out.

mod actions;
mod commands;
mod overlays;

use super::confirm::Confirmation;
use super::event::{Effect, Event, Routed};
use super::state::{DetailsContent, Overlay, State, StatusLine};
use commands::on_key;
use opc_core::actions::{Action, Outcome};
use opc_core::cluster::ClusterName;
use opc_core::worker::WorkerCommand;

pub fn update(state: &mut State, event: Event) -> Vec<Effect> {
    let effects = dispatch(state, event);
    // Whatever opened a dialog, it says up front what the mode makes of a yes.
    if state.switches.flags.dry_run
        && let Some(Overlay::Confirm(dialog)) = &mut state.overlay
    {
        dialog.mark_dry_run();
    }
    effects
}

fn dispatch(state: &mut State, event: Event) -> Vec<Effect> {
    match event {
        Event::Key(key) => return on_key(state, &key),
        Event::Added(Ok(name)) => return on_added(state, &name),
        answer @ (Event::Resolved { .. }
        | Event::OptOuts(_)
        | Event::Parked(_)
        | Event::UndoChecked { .. }) => {
            let shown = state.overlay.take();
            state.overlay = answered(state, shown, answer);
        }
        // What the runtime reports and the screen only takes in: time, caches, workers, results.
        Event::Tick { now, clusters } => {
            state.now = now;
            state.sync_clusters(clusters);
        }
        Event::Resize { table_height } => {
            state.table.height = table_height.max(1);
            state.clamp();
        }
        Event::Snapshot(snapshot) => {
            state.total_pods = snapshot.total_pods;
            state.now = snapshot.at;
            state.sync_clusters(snapshot.clusters);
            state.replace_findings(snapshot.findings, snapshot.in_default_order);
        }
        Event::Worker { cluster, status } => state.clusters.set_worker(&cluster, status),
        Event::Report(report) => state.report = Some(report),
        Event::Details { uid, result } => {
            if let Some(details) = state.details.as_mut().filter(|d| d.pod.item.uid == uid) {
                details.content = match result {
                    Ok(d) => DetailsContent::Loaded(d),
                    Err(e) => DetailsContent::Failed(e),
                };
            }
        }
        Event::Outcome { action, outcome } => on_outcome(state, &action, &outcome),
        Event::Contexts(Ok(names)) if names.is_empty() => {
            status(state, "no kubeconfig contexts to switch to", true);
        }
        Event::Contexts(Ok(names)) => {
            let first = state.clusters.lines().next().map(|c| c.name.clone());
            let selected = names
                .iter()
                .position(|n| Some(n) == first.as_ref())
                .unwrap_or(0);
            state.overlay = Some(Overlay::Contexts { names, selected });
        }
        // The screen shows `name` alone, from scratch.
        Event::Switched(Ok(name)) => {
            state.clusters.only(&name);
            state.replace_findings(Vec::new(), true);
            state.details = None;
            say(state, format!("switched to context {name}"));
        }
        Event::Exported(Ok(path)) => say(state, format!("report written to {}", path.display())),
        Event::Contexts(Err(e))
        | Event::Switched(Err(e))
        | Event::Added(Err(e))
        | Event::Exported(Err(e)) => status(state, e.to_string(), true),
    }
    Vec::new()
}

/// An answer the screen waited for, given the overlay shown: the overlay to show next. An
/// answer for an overlay no longer shown leaves the shown one as it is.
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
            let row = |pod: &opc_core::actions::PodRef| {
                state
                    .table
                    .findings
                    .iter()
                    .find(|a| a.uid() == pod.uid)
                    .map(|a| a.rule())
            };
            Some(Overlay::Confirm(dialog.with_opt_outs(checked, row)))
        }
        (Some(Overlay::Parked { selected, .. }), Event::Parked(list)) => Some(Overlay::Parked {
            list: Some(list),
            selected,
        }),
        (shown, _) => shown,
    }
}

/// `name` opened next to the others: the screen's switches hold for its worker too.
fn on_added(state: &mut State, name: &ClusterName) -> Vec<Effect> {
    state.clusters.open(name);
    say(state, format!("added context {name}"));
    let worker = state.worker();
    let auto = worker
        .rules
        .iter()
        .filter(|(_, rule)| rule.auto)
        .map(|(rule, _)| WorkerCommand::SetAuto {
            rule: *rule,
            on: true,
        });
    let master = worker
        .master_auto
        .then_some(WorkerCommand::SetMasterAuto(true));
    auto.chain(master)
        .map(|command| Effect::WorkerOf(Routed::new(name, command)))
        .collect()
}

fn on_outcome(state: &mut State, action: &Routed<Action>, outcome: &Outcome) {
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
        Outcome::Done(_) => match (&action.item, outcome.workload()) {
            (Action::ScaleToZero(_), Some(w)) => state.clusters.scaled(&action.cluster, w.clone()),
            (Action::UndoScale(w), _) => state.clusters.restored(&action.cluster, w),
            _ => {}
        },
        _ => {}
    }
    if let Some(pod) = action.item.pod() {
        state.clusters.unmark(&action.cluster, &pod.uid);
    }
    status(state, text, !outcome.succeeded());
}

fn status(state: &mut State, text: impl Into<String>, error: bool) {
    state.status = Some(StatusLine {
        text: text.into(),
        error,
    });
}

fn say(state: &mut State, text: impl Into<String>) {
    status(state, text, false);
}
