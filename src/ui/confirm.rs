//! Confirmations: a destructive action is first a value on screen naming its exact targets;
//! only `confirm` turns it into actions the executor runs.

use super::event::{Checked, Routed};
use opc_core::actions::{
    Action, Inspection, OUT_OF_SERVICE, Outcome, PodRef, Resolution, ScalableWorkload, UndoPlan,
};
use opc_core::cluster::{ClusterName, Listed};
use opc_core::place::PauseScope;
use opc_core::rules::{ActionKind, RuleKind, Verb};
use opc_core::worker::Pause;

/// Targets listed by name before "and N more".
const LISTED: usize = 8;

/// How a caution about an opt-out, or one that could not be checked, begins.
const OPT_OUT_CAUTION: &str = "opted out";
const UNCHECKED_CAUTION: &str = "the owners' opt-out could not be checked";
const SECOND_CONFIRMATION: &str = "(a second confirmation follows)";

/// For a force delete: a pod of which two copies must never run, on a node, may still run
/// there if the node is only unreachable; its controller starts a second copy at once.
fn second_copy(found: &Listed) -> Option<String> {
    let node = found.node().filter(|_| found.must_run_once())?;
    let why = if found.watched().is_some_and(|a| a.pod.claims_volume) {
        "holds a volume claim that may be ReadWriteOnce"
    } else {
        "is a StatefulSet's"
    };
    Some(format!(
        "{}/{} {why}: if node {node} is only unreachable, the pod may still run there, and a \
         force delete lets a second copy start at once. First confirm the node is gone \
         (`kubectl get node {node}`; deleted, or tainted {OUT_OF_SERVICE})",
        found.namespace(),
        found.name()
    ))
}

/// What a scale to zero promises; true only when it runs.
const PARKED_PROMISE: &str =
    "the count is recorded (ConfigMap ops-pod-cleaner-parked); undo restores it";

/// The first line of every dialog in dry-run.
pub(crate) const DRY_RUN_NOTE: &str =
    "dry run: nothing in the cluster changes; the audit log records what would be done";

/// A dialog: what, on what exactly, and what a yes does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirmation {
    pub title: String,
    pub lines: Vec<String>,
    pub offer: Offer,
}

/// Either the actions a yes runs, or why there are none: never both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Offer {
    Ready {
        actions: Vec<Routed<Action>>,
        /// Targets that opted out (or whose opt-out could not be checked): a first yes leads
        /// to a second, explicit dialog instead of running.
        caution: Vec<String>,
        /// In dry-run: a yes records what would be done and changes nothing.
        dry_run: bool,
    },
    /// The action cannot run, and why; the dialog only informs.
    Unavailable(String),
    /// Resume a rule the workload bound paused, on one cluster and in one scope only.
    Resume(Routed<(RuleKind, PauseScope)>),
    /// Switch auto-clean's master switch on, on every open cluster.
    MasterOn,
}

impl Offer {
    /// What a yes runs, asking nothing more.
    fn ready(actions: Vec<Routed<Action>>) -> Offer {
        Offer::Ready {
            actions,
            caution: Vec::new(),
            dry_run: false,
        }
    }
}

impl Confirmation {
    /// The dialog as dry-run shows it: said first, without promises only a real run keeps. Once.
    pub(crate) fn mark_dry_run(&mut self) {
        if let Offer::Ready { dry_run, .. } = &mut self.offer
            && !*dry_run
        {
            *dry_run = true;
            self.lines.retain(|l| l != PARKED_PROMISE);
            self.lines.insert(0, DRY_RUN_NOTE.to_string());
        }
    }

    /// The second dialog after a yes to `title` that met a `caution`: its yes runs `actions`.
    pub(crate) fn ask_again(
        title: &str,
        caution: Vec<String>,
        actions: Vec<Routed<Action>>,
    ) -> Confirmation {
        let opted_out = caution
            .iter()
            .any(|c| c.starts_with(OPT_OUT_CAUTION) || c.starts_with(UNCHECKED_CAUTION));
        let mut lines = caution;
        lines.push(String::new());
        if opted_out {
            lines.push("ops-pod-cleaner was asked to leave these alone.".to_string());
        }
        lines.push("Press y again to act anyway, n to cancel.".to_string());
        let what = title.trim_end_matches('?');
        let opted = if opted_out { "Opted out: " } else { "" };
        Confirmation {
            title: format!("{opted}{what} anyway?"),
            lines,
            offer: Offer::ready(actions),
        }
    }

    /// What the checks found: opt-outs (an error counts as a possible one) are cautions, and
    /// targets not what their row (`row`) says as read just now are left out, saying why.
    pub(crate) fn with_opt_outs(
        mut self,
        checked: Result<Checked, super::event::Unanswered>,
        row: impl Fn(&PodRef) -> Option<RuleKind>,
    ) -> Confirmation {
        let Offer::Ready {
            caution, actions, ..
        } = &mut self.offer
        else {
            return self;
        };
        let added: Vec<String> = match checked {
            Ok(checked) => {
                let moved: Vec<(&PodRef, String)> = checked
                    .live
                    .iter()
                    .filter_map(|(pod, now)| match (now, row(pod)) {
                        (None, _) => {
                            Some((pod, format!("{pod}, as read just now, matches no rule")))
                        }
                        (Some(now), Some(was)) if *now != was => Some((
                            pod,
                            format!("{pod} is {now} as read just now, not {was} as its row says"),
                        )),
                        _ => None,
                    })
                    .collect();
                actions.retain(|a| {
                    !a.item
                        .pod()
                        .is_some_and(|p| moved.iter().any(|(m, _)| *m == p))
                });
                let said: Vec<String> = moved.into_iter().map(|(_, why)| why).collect();
                if actions.is_empty() && !said.is_empty() {
                    return Confirmation::unavailable(&self.title, said.join("; "));
                }
                self.lines
                    .extend(said.iter().map(|why| format!("left out: {why}")));
                checked
                    .opt_outs
                    .iter()
                    .map(|o| format!("{OPT_OUT_CAUTION}: {o}"))
                    .collect()
            }
            Err(e) => vec![format!("{UNCHECKED_CAUTION}: {e}")],
        };
        let first = caution.is_empty();
        caution.extend(added.iter().cloned());
        self.lines.extend(added);
        if first && !caution.is_empty() {
            self.lines.push(SECOND_CONFIRMATION.to_string());
        }
        self
    }

    /// The master switch on: what it will act on now, rule by rule, before it may.
    pub(crate) fn master_on(
        rules: &[(RuleKind, ActionKind, usize)],
        dry_run: bool,
    ) -> Confirmation {
        let mut lines: Vec<String> = rules
            .iter()
            .map(|(rule, action, pods)| {
                let plural = if *pods == 1 { "" } else { "s" };
                format!("{rule}: {action} on its own, {pods} pod{plural} now")
            })
            .collect();
        if lines.is_empty() {
            lines
                .push("no rule is switched on: nothing acts until one is (a on a category)".into());
        }
        lines.push(String::new());
        lines.push(if dry_run {
            "dry-run: it records what it would do and changes nothing".to_string()
        } else {
            "on every open cluster, within the guards (rate limits, breaker, opt-outs)".to_string()
        });
        Confirmation {
            title: "Switch auto-clean on?".to_string(),
            lines,
            offer: Offer::MasterOn,
        }
    }

    /// Resume `rule` on `cluster` where the workload bound paused it, in that scope only.
    pub(crate) fn resume(cluster: &ClusterName, rule: RuleKind, pause: &Pause) -> Confirmation {
        let scope = &pause.scope;
        let reach = format!("{scope} on {cluster} only");
        Confirmation {
            title: format!("Resume auto-clean for {rule} {scope} on {cluster}?"),
            lines: vec![
                format!("{rule} {pause} (on {cluster})"),
                String::new(),
                "It paused itself: look at the cause first (a registry, a node). A yes lets it act"
                    .to_string(),
                format!("{reach}, on as many new workloads as safety.breaker.maxWorkloads."),
            ],
            offer: Offer::Resume(Routed::new(cluster, (rule, scope.clone()))),
        }
    }

    pub(crate) fn unavailable(title: &str, why: impl Into<String>) -> Confirmation {
        Confirmation {
            title: title.to_string(),
            lines: Vec::new(),
            offer: Offer::Unavailable(why.into()),
        }
    }

    /// A pod action on `targets`; with `several` clusters open, each line names the cluster.
    pub(crate) fn for_pods(verb: PodVerb, targets: &[&Listed], several: bool) -> Confirmation {
        let title = match targets.len() {
            1 => format!("{} this pod?", verb.title()),
            n => format!("{} these {n} pods?", verb.title()),
        };
        if verb == PodVerb::RemoveFinalizers
            && let Some(none) = targets.iter().find(|a| a.finalizers().is_empty())
        {
            let why = format!("{}/{} has no finalizers", none.namespace(), none.name());
            return Confirmation::unavailable(&title, why);
        }
        // A grace-0 delete of a pod its finalizers hold only marks it deleting: it stays.
        if verb == PodVerb::ForceDelete
            && let Some(held) = targets.iter().find(|a| !a.finalizers().is_empty())
        {
            let why = format!(
                "{}/{} is held by finalizers ({}): a force delete leaves it there; F removes the \
                 finalizers",
                held.namespace(),
                held.name(),
                held.finalizers().join(", ")
            );
            return Confirmation::unavailable(&title, why);
        }
        let mut lines: Vec<String> = targets
            .iter()
            .take(LISTED)
            .map(|a| {
                let mut line = format!("{}/{}  ({})", a.namespace(), a.name(), a.reason());
                if several {
                    line = format!("{}  {line}", a.cluster());
                }
                let finalizers = a.finalizers();
                if !finalizers.is_empty() && verb != PodVerb::Delete {
                    line.push_str(&format!("  finalizers: {}", finalizers.join(", ")));
                }
                line
            })
            .collect();
        if targets.len() > LISTED {
            lines.push(format!("… and {} more", targets.len() - LISTED));
        }
        lines.push(verb.note().to_string());
        let caution: Vec<String> = targets
            .iter()
            .filter(|_| verb == PodVerb::ForceDelete)
            .filter_map(|a| second_copy(a))
            .collect();
        if !caution.is_empty() {
            lines.extend(caution.iter().cloned());
            lines.push(SECOND_CONFIRMATION.to_string());
        }
        let actions = targets
            .iter()
            .map(|a| Routed::new(a.cluster(), verb.action(a.pod_ref())));
        Confirmation {
            title,
            lines,
            offer: Offer::Ready {
                actions: actions.collect(),
                caution,
                dry_run: false,
            },
        }
    }

    /// Scale-to-zero names the workload, its replicas now, and how many still serve.
    pub(crate) fn for_scale(
        pod: &Routed<PodRef>,
        checked: &Inspection,
        several: bool,
    ) -> Confirmation {
        let title = "Scale the workload to 0?";
        let workload = match &checked.resolution {
            Resolution::Unscalable(why) => {
                return Confirmation::unavailable(title, why.to_string());
            }
            Resolution::Scalable(_) if checked.replicas == Some(0) => {
                return Confirmation::unavailable(title, "the workload is already at 0 replicas");
            }
            Resolution::Scalable(workload) => workload,
        };
        let Some(live) = &checked.live else {
            let why = format!(
                "{}, as read just now, matches no rule: nothing to scale for",
                pod.item
            );
            return Confirmation::unavailable(title, why);
        };
        let replicas = (checked.replicas).map_or("unknown".to_string(), |r| r.to_string());
        let mut lines = vec![
            in_cluster(&pod.cluster, workload, several),
            format!("replicas now: {replicas}  →  0"),
        ];
        if let Some(n) = checked.available.filter(|&n| n > 0) {
            lines.push(format!(
                "{n} available replica{} will stop (a bad rollout? consider kubectl rollout undo)",
                if n == 1 { "" } else { "s" }
            ));
        }
        lines.push(format!("because of {}", pod.item));
        lines.push(format!("read just now: {} {}", live.rule, live.reason));
        lines.push(PARKED_PROMISE.to_string());
        let dialog = Confirmation {
            title: title.to_string(),
            lines,
            offer: Offer::ready(vec![Routed::new(
                &pod.cluster,
                Action::ScaleToZero(pod.item.clone()),
            )]),
        };
        let checked = Checked {
            opt_outs: checked.opt_out.iter().cloned().collect(),
            ..Checked::default()
        };
        dialog.with_opt_outs(Ok(checked), |_| None)
    }

    /// Undo of a parked workload, once its cluster confirmed it is at zero.
    pub(crate) fn for_parked_undo(
        workload: &Routed<ScalableWorkload>,
        plan: Result<UndoPlan, Outcome>,
        several: bool,
    ) -> Confirmation {
        let title = "Restore the replicas?";
        match plan {
            Err(outcome) => Confirmation::unavailable(
                title,
                outcome.line(&Action::UndoScale(workload.item.clone())),
            ),
            Ok(plan) => Confirmation {
                title: title.to_string(),
                lines: vec![
                    in_cluster(&workload.cluster, &workload.item, several),
                    plan.to_string(),
                ],
                offer: Offer::ready(vec![Routed::new(
                    &workload.cluster,
                    Action::UndoScale(workload.item.clone()),
                )]),
            },
        }
    }
}

/// A workload, named with its cluster when several are open.
fn in_cluster(cluster: &ClusterName, workload: &ScalableWorkload, several: bool) -> String {
    if several {
        format!("{workload} in {cluster}")
    } else {
        format!("{workload}")
    }
}

/// The pod actions that take marked rows: a subset of [`Verb`], with the dialog's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PodVerb {
    Delete,
    ForceDelete,
    Evict,
    RemoveFinalizers,
}

impl PodVerb {
    pub(crate) fn action(self, pod: PodRef) -> Action {
        match self {
            PodVerb::Delete => Action::Delete(pod),
            PodVerb::ForceDelete => Action::ForceDelete(pod),
            PodVerb::Evict => Action::Evict(pod),
            PodVerb::RemoveFinalizers => Action::RemoveFinalizers(pod),
        }
    }

    pub(crate) fn verb(self) -> Verb {
        match self {
            PodVerb::Delete => Verb::Delete,
            PodVerb::ForceDelete => Verb::ForceDelete,
            PodVerb::Evict => Verb::Evict,
            PodVerb::RemoveFinalizers => Verb::RemoveFinalizers,
        }
    }

    fn title(self) -> &'static str {
        match self {
            PodVerb::Delete => "Delete",
            PodVerb::ForceDelete => "Force delete (grace 0)",
            PodVerb::Evict => "Evict",
            PodVerb::RemoveFinalizers => "Remove the finalizers of",
        }
    }

    fn note(self) -> &'static str {
        match self {
            PodVerb::Delete => {
                "each delete carries the pod's UID: a new pod of the same name is safe"
            }
            PodVerb::ForceDelete => {
                "the kubelet is not asked; pods held by finalizers stay until those are removed (F)"
            }
            PodVerb::Evict => "through the Eviction API: a PodDisruptionBudget may refuse it",
            PodVerb::RemoveFinalizers => {
                "whatever the finalizers guard (volumes, external resources) is not cleaned up"
            }
        }
    }
}
