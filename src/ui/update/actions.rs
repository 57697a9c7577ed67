//! Opening the dialog of an action on pods or a workload: its targets, or why it cannot run.

use crate::ui::confirm::{Confirmation, Offer, PodVerb};
use crate::ui::event::{Effect, Routed};
use crate::ui::state::{Overlay, State};
use opc_core::actions::{PodRef, Refusal};
use opc_core::cluster::{ClusterName, Listed};
use opc_core::rules::Verb;

/// In the details view, actions apply to the pod shown; otherwise to marks or the cursor.
fn targets(state: &State) -> Vec<&Listed> {
    match &state.details {
        Some(d) => state
            .table
            .findings
            .iter()
            .filter(|a| a.uid() == d.pod.item.uid && *a.cluster() == d.pod.cluster)
            .collect(),
        None => state.targets(),
    }
}

/// Why `verb` cannot run on any of `clusters`, if it cannot.
pub(super) fn why_unavailable<'a>(
    state: &State,
    verb: Verb,
    mut clusters: impl Iterator<Item = &'a ClusterName>,
) -> Option<String> {
    if state.switches.flags.readonly {
        return Some(Refusal::Readonly.to_string());
    }
    if let Some(problem) = &state.switches.audit_problem {
        return Some(Refusal::AuditBroken(problem.clone()).to_string());
    }
    clusters.find_map(|cluster| {
        let why = state.clusters.forbidden_reason(cluster, verb)?;
        Some(if state.several_clusters() {
            format!("the API of {cluster} refused this before: {why}")
        } else {
            format!("the API refused this before: {why}")
        })
    })
}

pub(super) fn pod_action(state: &mut State, verb: PodVerb) -> Vec<Effect> {
    let title = match verb {
        PodVerb::Delete => "Delete",
        PodVerb::ForceDelete => "Force delete",
        PodVerb::Evict => "Evict",
        PodVerb::RemoveFinalizers => "Remove finalizers",
    };
    let targets = targets(state);
    let clusters = targets.iter().map(|a| a.cluster());
    let dialog = match why_unavailable(state, verb.verb(), clusters) {
        Some(why) => Confirmation::unavailable(title, why),
        None if targets.is_empty() => Confirmation::unavailable(title, "no pod selected"),
        None => {
            let dialog = Confirmation::for_pods(verb, &targets, state.several_clusters());
            let pods = targets
                .iter()
                .map(|a| Routed::new(a.cluster(), a.pod_ref()))
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

pub(super) fn scale_to_zero(state: &mut State) -> Vec<Effect> {
    match scale_target(state) {
        Ok(pod) => {
            let finding = format!("finding the workload of {}…", pod.item);
            state.overlay = Some(Overlay::Resolving(finding));
            vec![Effect::ResolveWorkload(pod)]
        }
        Err(why) => {
            let dialog = Confirmation::unavailable("Scale the workload to 0?", why);
            state.overlay = Some(Overlay::Confirm(dialog));
            Vec::new()
        }
    }
}

/// The one pod whose workload a scale to zero would change, or why there is none.
fn scale_target(state: &State) -> Result<Routed<PodRef>, String> {
    let targets = targets(state);
    let clusters = targets.iter().map(|a| a.cluster());
    if let Some(why) = why_unavailable(state, Verb::ScaleToZero, clusters) {
        return Err(why);
    }
    match targets.as_slice() {
        [] => Err("no pod selected".to_string()),
        [one] if one.deleting() => Err(format!(
            "{}/{} is already being deleted: its workload was scaled, or the pod is going",
            one.namespace(),
            one.name()
        )),
        [one] => Ok(Routed::new(one.cluster(), one.pod_ref())),
        _ => Err(
            "scale to zero works on one pod's workload at a time: unmark (Esc) and pick one"
                .to_string(),
        ),
    }
}

/// Undo the last scale to zero of this screen, checked against its cluster first.
pub(super) fn undo(state: &mut State) -> Vec<Effect> {
    let title = "Restore the replicas?";
    let last = state.clusters.last_scaled();
    let clusters = last.iter().map(|w| &w.cluster);
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
