//! Key handling on the pure state: `update(&mut State, Event) -> Vec<Effect>`.

use crate::ui_support;

use opc_core::actions::{
    Action, Change, Denied, Inspection, OptOut, Outcome, PodRef, ReadError, RecordedIn, Refusal,
    Resolution, ScalableWorkload, UndoPlan, Unscalable, WorkloadKind,
};
use opc_core::cluster::ClusterName;
use opc_core::config::{Config, KeyBinding};
use opc_core::policy::Flags;
use opc_core::rules::RuleKind;
use opc_core::worker::WorkerCommand;
use ops_pod_cleaner::ui::{Checked, Effect, Event, State, Switches, Unanswered, update};
use ui_support::{change_worker, now, on_demo, pulling_now, screen, seen, state};

fn press(state: &mut State, keys: &str) -> Vec<Effect> {
    keys.split_whitespace()
        .flat_map(|k| update(state, Event::Key(KeyBinding::parse(k).unwrap())))
        .collect()
}

/// The evicted pods of the fixture, longest in their state first.
const THREE: [&str; 3] = ["web-5f8-k2x8p", "web-5f8-q7m4t", "api-7c9-zz1"];

/// The drawn row under the cursor names `pod`.
fn assert_selected(s: &State, pod: &str) {
    let row = seen(s).selected().expect("a row under the cursor");
    assert!(row.contains(pod), "{pod} in {row}");
}

/// Title, lines, and the reason when the dialog offers nothing to run.
fn confirm_lines(state: &State) -> (String, Vec<String>, Option<String>) {
    let seen = seen(state);
    let Some(dialog) = seen.dialog() else {
        panic!("expected a confirmation, found:\n{}", seen.all());
    };
    (dialog.title, dialog.lines, dialog.unavailable)
}

#[test]
fn moves_with_arrows_and_jk_and_stays_in_the_table() {
    let mut s = state();
    assert_eq!(seen(&s).listed(), 3, "three evicted pods");
    press(&mut s, "j Down j j j");
    assert_selected(&s, "api-7c9-zz1");
    press(&mut s, "k Up");
    assert_selected(&s, "web-5f8-k2x8p");
    press(&mut s, "End");
    assert_selected(&s, "api-7c9-zz1");
}

#[test]
fn sorted_longest_in_state_first() {
    let s = state();
    assert_eq!(seen(&s).names(&THREE), THREE);
}

#[test]
fn tab_and_digits_switch_category() {
    let mut s = state();
    press(&mut s, "Tab");
    assert_eq!(s.current_kind(), Some(RuleKind::Terminating));
    assert_eq!(seen(&s).listed(), 1);
    press(&mut s, "BackTab BackTab");
    assert_eq!(s.current_kind(), Some(RuleKind::Unknown));
    press(&mut s, "3");
    assert_eq!(s.current_kind(), Some(RuleKind::ImagePull));
}

#[test]
fn filter_narrows_and_esc_clears() {
    let mut s = state();
    press(&mut s, "/ p a y");
    assert!(
        screen(&s, 120, 30).contains("/pay▏"),
        "the table's title shows the filter typed"
    );
    // Every category's rows that match: the current category's, and one of another.
    let paying = seen(&s).listed();
    assert!(paying >= 1);
    // While typing, keys are text: `q` does not quit.
    assert!(press(&mut s, "q").is_empty());
    assert!(seen(&s).table_title().contains("/payq▏"));
    assert_eq!(seen(&s).listed(), 0);
    press(&mut s, "Backspace Enter");
    let title = screen(&s, 120, 30);
    assert!(
        title.contains("/pay ") && !title.contains("/pay▏"),
        "typing is over"
    );
    assert_eq!(seen(&s).listed(), paying);
    press(&mut s, "Esc");
    assert_eq!(seen(&s).listed(), 3);
}

#[test]
fn marked_rows_are_confirmed_by_name_then_run() {
    let mut s = state();
    press(&mut s, "Space Space");
    assert_eq!(s.marked_count(), 2);
    let pod = |name: &str| PodRef {
        namespace: "shop".into(),
        name: name.into(),
        uid: format!("uid-shop-{name}"),
    };
    assert_eq!(
        press(&mut s, "d"),
        [Effect::CheckOptOuts(vec![
            on_demo(pod("web-5f8-k2x8p")),
            on_demo(pod("web-5f8-q7m4t"))
        ])],
        "nothing runs before yes; the owners are checked for opt-outs first"
    );
    assert!(seen(&s).checking());
    assert!(press(&mut s, "y").is_empty(), "no yes before the check");
    update(&mut s, Event::OptOuts(Ok(Checked::default())));
    let (title, lines, unavailable) = confirm_lines(&s);
    assert_eq!(title, "Delete these 2 pods?");
    assert!(lines[0].starts_with("shop/web-5f8-k2x8p"));
    assert!(lines[1].starts_with("shop/web-5f8-q7m4t"));
    assert_eq!(unavailable, None);
    let effects = press(&mut s, "y");
    assert_eq!(
        effects,
        [Effect::Run(vec![
            on_demo(Action::Delete(pod("web-5f8-k2x8p"))),
            on_demo(Action::Delete(pod("web-5f8-q7m4t"))),
        ])]
    );
    assert!(seen(&s).nothing_over_the_table());
}

#[test]
fn an_opt_out_up_the_owner_chain_is_named_and_asks_twice() {
    let mut s = state();
    let target = s.selected_finding().unwrap().pod_ref();
    press(&mut s, "d");
    update(
        &mut s,
        Event::OptOuts(Ok(Checked {
            opt_outs: vec![OptOut::Owner {
                kind: "Deployment".into(),
                namespace: "shop".into(),
                name: "web".into(),
            }],
            live: Vec::new(),
        })),
    );
    let (_, lines, _) = confirm_lines(&s);
    assert!(
        lines.contains(&"opted out: Deployment shop/web carries ops-pod-cleaner.io/ignore".into()),
        "{lines:?}"
    );
    assert!(press(&mut s, "y").is_empty(), "a first yes only asks again");
    let (title, lines, _) = confirm_lines(&s);
    assert_eq!(title, "Opted out: Delete this pod anyway?");
    assert!(
        lines.iter().any(|l| l.contains("Press y again")),
        "{lines:?}"
    );
    assert_eq!(
        press(&mut s, "y"),
        [Effect::Run(vec![on_demo(Action::Delete(target))])]
    );
}

#[test]
fn an_unchecked_opt_out_is_treated_as_one() {
    let mut s = state();
    press(&mut s, "d");
    update(
        &mut s,
        Event::OptOuts(Err(Unanswered::Read(ReadError::Failed {
            what: "the owners of pod shop/web-1".into(),
            why: "replicasets is forbidden".into(),
        }))),
    );
    assert!(press(&mut s, "y").is_empty(), "asks again");
    let (title, _, _) = confirm_lines(&s);
    assert!(title.starts_with("Opted out:"), "{title}");
    press(&mut s, "n");
    assert!(seen(&s).nothing_over_the_table());
}

#[test]
fn no_or_esc_cancels_without_effects() {
    let mut s = state();
    press(&mut s, "D");
    assert!(press(&mut s, "n").is_empty());
    assert!(seen(&s).nothing_over_the_table());
    press(&mut s, "D");
    assert!(press(&mut s, "Esc").is_empty());
    assert!(seen(&s).nothing_over_the_table());
}

#[test]
fn readonly_shows_the_action_as_unavailable() {
    let mut s = state().with_switches(Switches {
        flags: Flags {
            readonly: true,
            ..Flags::default()
        },
        ..Switches::default()
    });
    press(&mut s, "d");
    let (_, _, unavailable) = confirm_lines(&s);
    assert!(unavailable.unwrap().contains("--readonly"));
    assert!(press(&mut s, "y").is_empty(), "yes does nothing");
}

/// The selected pod's delete comes back refused.
fn delete_refused(s: &mut State, refusal: Refusal) {
    let target = s.selected_finding().unwrap().pod_ref();
    update(
        s,
        Event::Outcome {
            action: on_demo(Action::Delete(target)),
            outcome: Outcome::Refused(refusal),
        },
    );
}

#[test]
fn a_403_makes_the_verb_unavailable_with_the_reason() {
    let mut s = state();
    let denied = Denied {
        verb: "delete",
        resource: "pods",
        namespace: "shop".into(),
        message: "403 forbidden: cannot delete pods in shop".into(),
        context: None,
    };
    delete_refused(&mut s, Refusal::Forbidden(denied));
    assert!(seen(&s).status().1, "an error");
    press(&mut s, "d");
    let (_, _, unavailable) = confirm_lines(&s);
    assert!(unavailable.unwrap().contains("cannot delete pods"));
}

#[test]
fn a_refusal_that_is_no_403_leaves_the_verb_available() {
    let mut s = state();
    // The words alone mean nothing: only the variant marks a verb as refused.
    delete_refused(
        &mut s,
        Refusal::Unscalable(Unscalable::Unknown {
            api_version: "x/v1".into(),
            kind: "403".into(),
            name: "forbidden".into(),
        }),
    );
    assert!(seen(&s).status().1, "an error");
    press(&mut s, "d");
    assert!(seen(&s).checking(), "delete is still offered");
    press(&mut s, "d");
    assert!(seen(&s).checking());
}

#[test]
fn scale_to_zero_names_the_workload_and_its_replicas() {
    let mut s = state();
    press(&mut s, "3");
    let effects = press(&mut s, "z");
    let pod = s.selected_finding().unwrap().pod_ref();
    assert_eq!(effects, [Effect::ResolveWorkload(on_demo(pod.clone()))]);
    assert!(seen(&s).waiting().is_some() && !seen(&s).checking());
    let workload = ScalableWorkload::new(WorkloadKind::Deployment, "shop", "recommender");
    update(
        &mut s,
        Event::Resolved {
            pod: on_demo(pod.clone()),
            result: Ok(Inspection {
                live: Some(pulling_now()),
                opt_out: None,
                resolution: Resolution::Scalable(workload.clone()),
                replicas: Some(2),
                available: Some(2),
            }),
        },
    );
    let (_, lines, _) = confirm_lines(&s);
    assert_eq!(lines[0], "Deployment shop/recommender");
    assert_eq!(lines[1], "replicas now: 2  →  0");
    assert_eq!(
        lines[2],
        "2 available replicas will stop (a bad rollout? consider kubectl rollout undo)"
    );
    assert_eq!(
        press(&mut s, "Enter"),
        [Effect::Run(vec![on_demo(Action::ScaleToZero(pod.clone()))])]
    );
    // Done: undo offers exactly that workload.
    update(
        &mut s,
        Event::Outcome {
            action: on_demo(Action::ScaleToZero(pod)),
            outcome: Outcome::Done(Change::Scaled {
                workload: workload.clone(),
                from: 2,
                annotation: None,
            }),
        },
    );
    // Undo is checked against the cluster first, so its dialog says what comes back.
    assert_eq!(
        press(&mut s, "u"),
        [Effect::CheckUndo(on_demo(workload.clone()))]
    );
    update(
        &mut s,
        Event::UndoChecked {
            workload: on_demo(workload.clone()),
            result: Ok(UndoPlan {
                workload: workload.clone(),
                restores: 2,
                recorded_in: RecordedIn::ConfigMap,
                record: None,
            }),
        },
    );
    let (_, lines, _) = confirm_lines(&s);
    assert!(lines.iter().any(|l| l.contains("from 0 to 2")), "{lines:?}");
    assert_eq!(
        press(&mut s, "y"),
        [Effect::Run(vec![on_demo(Action::UndoScale(workload))])]
    );
}

#[test]
fn nothing_to_scale_says_why() {
    let mut s = state();
    let pod = s.selected_finding().unwrap().pod_ref();
    press(&mut s, "z");
    update(
        &mut s,
        Event::Resolved {
            pod: on_demo(pod),
            result: Ok(Inspection {
                live: Some(pulling_now()),
                opt_out: None,
                resolution: Resolution::Unscalable(Unscalable::Job { name: "x".into() }),
                replicas: None,
                available: None,
            }),
        },
    );
    let (_, _, unavailable) = confirm_lines(&s);
    assert!(unavailable.unwrap().contains("Job x"));
    press(&mut s, "Esc u");
    let (_, _, unavailable) = confirm_lines(&s);
    assert!(unavailable.unwrap().contains("nothing was scaled"));
}

#[test]
fn remove_finalizers_only_for_pods_that_have_some() {
    let mut s = state();
    press(&mut s, "F");
    let (_, _, unavailable) = confirm_lines(&s);
    assert!(unavailable.unwrap().contains("has no finalizers"));
}

#[test]
fn auto_toggles_go_to_the_worker_for_the_current_rule() {
    let mut s = state();
    press(&mut s, "3");
    assert_eq!(
        press(&mut s, "a"),
        [Effect::Worker(WorkerCommand::SetAuto {
            rule: RuleKind::ImagePull,
            on: true
        })]
    );
    // With the master switch off, the rule's switch alone does nothing yet: say so.
    let (line, _) = seen(&s).status();
    assert!(
        line.contains("the master switch is off: A switches it on"),
        "{line}"
    );
    change_worker(&mut s, |w| w.master_auto = true);
    press(&mut s, "a");
    let (line, _) = seen(&s).status();
    assert!(!line.contains("master switch"), "{line}");
    change_worker(&mut s, |w| w.master_auto = false);
    // The master switch says what it will act on, and asks once.
    assert_eq!(press(&mut s, "A"), []);
    let (title, lines, _) = confirm_lines(&s);
    assert_eq!(title, "Switch auto-clean on?");
    // The worker has not echoed the rule's switch yet: no rule is on in its status.
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("no rule is switched on")),
        "{lines:?}"
    );
    assert_eq!(
        press(&mut s, "y"),
        [Effect::Worker(WorkerCommand::SetMasterAuto(true))]
    );
    s = s.with_switches(Switches {
        report_sinks: true,
        ..Switches::default()
    });
    assert_eq!(
        press(&mut s, "r"),
        [Effect::Worker(WorkerCommand::SendReport)]
    );
    assert_eq!(press(&mut s, "e"), [Effect::ExportReport]);
}

/// `r` with no sink configured says so at once, and names the key that writes a file;
/// ctrl-r says what it did.
#[test]
fn keys_without_a_visible_effect_still_answer() {
    let mut s = state();
    assert!(press(&mut s, "r").is_empty());
    let (line, error) = seen(&s).status();
    assert!(error && line.contains("no report sinks"), "{line}");
    assert!(line.contains("e writes the report"), "{line}");
    assert_eq!(press(&mut s, "ctrl-r"), [Effect::Refresh]);
    assert!(seen(&s).status().0.contains("refreshed"));
}

/// `u` with nothing scaled from this screen points at the parked view.
#[test]
fn undo_with_nothing_to_undo_points_at_the_parked_view() {
    let mut s = state();
    assert!(press(&mut s, "u").is_empty());
    let (_, _, unavailable) = confirm_lines(&s);
    let why = unavailable.expect("nothing to undo");
    assert!(why.contains("P lists the parked workloads"), "{why}");
    assert!(!why.contains("kubectl scale"), "{why}");
}

#[test]
fn enter_fetches_details_and_esc_returns() {
    let mut s = state();
    let effects = press(&mut s, "Enter");
    let pod = s.selected_finding().unwrap().pod_ref();
    assert_eq!(effects, [Effect::FetchDetails(on_demo(pod))]);
    assert!(seen(&s).details());
    press(&mut s, "Esc");
    assert!(!seen(&s).details());
}

#[test]
fn switch_context_lists_then_connects() {
    let mut s = state();
    assert_eq!(press(&mut s, "c"), [Effect::ListContexts]);
    update(
        &mut s,
        Event::Contexts(Ok(vec![
            ClusterName::new("demo"),
            ClusterName::new("prod-eu"),
        ])),
    );
    assert_eq!(
        press(&mut s, "j Enter"),
        [Effect::SwitchContext(ClusterName::new("prod-eu"))]
    );
}

#[test]
fn quit_and_help() {
    let mut s = state();
    press(&mut s, "?");
    assert!(seen(&s).all().contains(" Keys (Esc closes) "));
    assert!(press(&mut s, "q").is_empty(), "q closes the help first");
    assert_eq!(press(&mut s, "q"), [Effect::Quit]);
}

#[test]
fn keys_come_from_the_config() {
    let config =
        Config::from_yaml("ui:\n  keys:\n    delete: x\n    quit: Q\n", "test.yaml").unwrap();
    let mut s = ui_support::state_with_keys(config.ui);
    press(&mut s, "x");
    assert!(seen(&s).checking());
    press(&mut s, "Esc");
    assert!(press(&mut s, "q").is_empty());
    assert_eq!(press(&mut s, "Q"), [Effect::Quit]);
}

#[test]
fn fifteen_thousand_rows_keep_the_cursor_in_view() {
    let mut s = state();
    ui_support::load_evicted(&mut s, 15_000);
    assert_eq!(seen(&s).listed(), 15_000);
    press(&mut s, "End");
    let last = seen(&s);
    let selected = last.selected().expect("the cursor is drawn");
    assert!(
        selected.contains("pod-00000"),
        "the newest, last: {selected}"
    );
    assert_eq!(
        last.rows().last(),
        Some(&selected),
        "at the bottom of the table"
    );
    press(&mut s, "PageUp");
    assert!(seen(&s).selected().is_some(), "the cursor is still drawn");
}

#[test]
fn the_cursor_follows_its_pod_when_a_snapshot_reorders_the_findings() {
    let mut s = state();
    press(&mut s, "j");
    let before = s.selected_finding().unwrap().uid().to_string();
    let mut reordered = ui_support::findings();
    reordered.reverse();
    update(
        &mut s,
        Event::Snapshot(ops_pod_cleaner::ui::Snapshot {
            findings: reordered.into_iter().map(Into::into).collect(),
            total_pods: 27,
            clusters: ui_support::demo_synced(),
            at: now(),
            in_default_order: false,
        }),
    );
    assert_eq!(s.selected_finding().unwrap().uid(), before);
}

/// `D` on a StatefulSet's pod says that a second copy could start if its node is
/// only unreachable, and asks twice.
#[test]
fn force_deleting_a_statefulset_pod_warns_of_a_second_copy_and_asks_twice() {
    let mut s = state();
    let mut found = s.selected_finding().unwrap().watched().unwrap().clone();
    let pod = std::sync::Arc::make_mut(&mut found.pod);
    if let Some(owner) = pod.owner.as_mut() {
        owner.kind = std::sync::Arc::from("StatefulSet");
        owner.name = "db".into();
    }
    pod.name = "db-0".into();
    pod.uid = "uid-db-0".into();
    let target = PodRef::of(&found.pod);
    ui_support::replace(&mut s, vec![found]);
    press(&mut s, "D");
    update(&mut s, Event::OptOuts(Ok(Checked::default())));
    let (_, lines, _) = confirm_lines(&s);
    let warning = lines
        .iter()
        .find(|l| l.contains("a second copy"))
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert!(warning.contains("is a StatefulSet's"), "{warning}");
    assert!(
        warning.contains("node.kubernetes.io/out-of-service"),
        "{warning}"
    );
    assert!(press(&mut s, "y").is_empty(), "a first yes only asks again");
    let (title, _, _) = confirm_lines(&s);
    assert_eq!(title, "Force delete (grace 0) this pod anyway?");
    assert_eq!(
        press(&mut s, "y"),
        [Effect::Run(vec![on_demo(Action::ForceDelete(target))])]
    );
}

/// A cluster added to the screen gets the switches the screen has on now.
#[test]
fn a_cluster_added_later_gets_the_current_auto_switches() {
    use ops_pod_cleaner::ui::Routed;
    let mut s = state();
    change_worker(&mut s, |w| w.master_auto = true);
    change_worker(&mut s, |w| {
        if let Some(rule) = w.rules.get_mut(&RuleKind::Evicted) {
            rule.auto = true;
        }
    });
    let effects = update(&mut s, Event::Added(Ok(ClusterName::new("demo-us"))));
    let us: ClusterName = ClusterName::new("demo-us");
    assert_eq!(
        effects,
        [
            Effect::WorkerOf(Routed::new(
                &us,
                WorkerCommand::SetAuto {
                    rule: RuleKind::Evicted,
                    on: true
                }
            )),
            Effect::WorkerOf(Routed::new(&us, WorkerCommand::SetMasterAuto(true))),
        ]
    );
}

/// `a` on a rule the workload bound paused resumes it on the cluster where it
/// paused, after a dialog that names the cluster and why; never on every open cluster.
/// Paused in one namespace, the dialog and the command name that namespace.
#[test]
fn resuming_a_paused_rule_names_and_acts_on_its_cluster_and_namespace_only() {
    use opc_core::place::PauseScope;
    use opc_core::worker::{RuleStatus, WorkerStatus};
    use ops_pod_cleaner::ui::Routed;
    let mut s = state();
    let shop = PauseScope::Namespace("shop".into());
    let status = |paused: bool| WorkerStatus {
        rules: [(
            RuleKind::ImagePull,
            RuleStatus {
                auto: true,
                paused: paused
                    .then(|| {
                        crate::support::pauses::fourth_workload_in("shop", RuleKind::ImagePull)
                    })
                    .into_iter()
                    .collect(),
                ..RuleStatus::default()
            },
        )]
        .into_iter()
        .collect(),
        ..WorkerStatus::default()
    };
    for (cluster, paused) in [("demo-eu", false), ("demo-us", true)] {
        update(&mut s, Event::Added(Ok(ClusterName::new(cluster))));
        update(
            &mut s,
            Event::Worker {
                cluster: ClusterName::new(cluster),
                status: status(paused),
            },
        );
    }
    press(&mut s, "3");
    assert_eq!(s.current_kind(), Some(RuleKind::ImagePull));
    press(&mut s, "a");
    let (title, lines, _) = confirm_lines(&s);
    assert_eq!(title, "Resume auto-clean for imagePull in shop on demo-us?");
    assert!(lines[0].contains("paused in shop: "), "{lines:?}");
    assert!(lines[0].contains("4th workload"), "{lines:?}");
    let us: ClusterName = ClusterName::new("demo-us");
    let resume = WorkerCommand::Resume {
        rule: RuleKind::ImagePull,
        scope: shop.clone(),
    };
    assert_eq!(
        press(&mut s, "y"),
        [Effect::WorkerOf(Routed::new(&us, resume))]
    );
    let (line, _) = seen(&s).status();
    assert!(line.contains("resumed in shop on demo-us"), "{line}");
}

/// `1` Space marks an evicted pod; `2` shows the terminating ones. A delete there acts on the
/// pod under the cursor, never on the mark the screen no longer shows: marks belong to the
/// view they were made in, and changing it clears them (as k9s does), saying so.
#[test]
fn marks_are_cleared_when_the_category_changes() {
    let mut s = state();
    press(&mut s, "1 Space");
    assert_eq!(s.marked_count(), 1);
    press(&mut s, "2");
    assert_eq!(s.marked_count(), 0);
    assert!(seen(&s).status().0.contains("1 mark cleared"));
    let redis = PodRef {
        namespace: "data".into(),
        name: "redis-2".into(),
        uid: "uid-data-redis-2".into(),
    };
    assert_eq!(
        press(&mut s, "d"),
        [Effect::CheckOptOuts(vec![on_demo(redis)])],
        "only the pod on screen"
    );
}

/// A filter that hides a marked pod: the dialog names and acts on the marked pods on screen.
#[test]
fn a_marked_pod_the_filter_hides_is_not_acted_on() {
    let mut s = state();
    press(&mut s, "Space Space");
    press(&mut s, "/ q 7 m Enter");
    assert_eq!(seen(&s).listed(), 1);
    let shown = PodRef {
        namespace: "shop".into(),
        name: "web-5f8-q7m4t".into(),
        uid: "uid-shop-web-5f8-q7m4t".into(),
    };
    assert_eq!(
        press(&mut s, "d"),
        [Effect::CheckOptOuts(vec![on_demo(shown)])]
    );
}

/// A pod its finalizers hold cannot go by a force delete: `D` says so and points at `F`.
#[test]
fn force_delete_of_a_pod_held_by_finalizers_points_at_f() {
    let mut s = state();
    ui_support::change_pods(&mut s, |pod| {
        if &*pod.name == "redis-2" {
            pod.finalizers = Box::new(["example.com/backup-in-progress".into()]);
        }
    });
    assert!(
        press(&mut s, "2 D").is_empty(),
        "nothing to check: nothing can run"
    );
    let (_, _, unavailable) = confirm_lines(&s);
    let why = unavailable.expect("unavailable up front");
    assert!(
        why.contains("held by finalizers (example.com/backup-in-progress)"),
        "{why}"
    );
    assert!(why.contains("F removes"), "{why}");
}

/// In dry-run the scale dialog says so first, and promises no record and no undo: nothing
/// is scaled, so nothing is recorded to restore.
#[test]
fn a_dry_run_dialog_says_so_before_yes() {
    let mut s = state().with_switches(Switches {
        flags: Flags {
            dry_run: true,
            ..Flags::default()
        },
        ..Switches::default()
    });
    press(&mut s, "3 z");
    let pod = s.selected_finding().unwrap().pod_ref();
    let workload = ScalableWorkload::new(WorkloadKind::Deployment, "shop", "recommender");
    update(
        &mut s,
        Event::Resolved {
            pod: on_demo(pod),
            result: Ok(Inspection {
                live: Some(pulling_now()),
                opt_out: None,
                resolution: Resolution::Scalable(workload),
                replicas: Some(2),
                available: Some(0),
            }),
        },
    );
    let (_, lines, unavailable) = confirm_lines(&s);
    assert_eq!(unavailable, None);
    assert!(
        lines[0].starts_with("dry run: nothing in the cluster changes"),
        "{lines:?}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("undo restores")),
        "{lines:?}"
    );
    let dialog = seen(&s).dialog().expect("a dialog");
    assert!(
        dialog.keys.contains("record what would be done"),
        "{dialog:?}"
    );
}

/// An audit log that cannot be written stops every action: the dialog says so before yes,
/// as read-only mode does, instead of offering "do it" and refusing after.
#[test]
fn an_unwritable_audit_log_makes_actions_unavailable_up_front() {
    let mut s = state().with_switches(Switches {
        audit_problem: Some("the audit log /var/log/opc.jsonl cannot be opened (disk full)".into()),
        ..Switches::default()
    });
    assert!(
        press(&mut s, "d").is_empty(),
        "nothing to check: nothing can run"
    );
    let (_, _, unavailable) = confirm_lines(&s);
    let why = unavailable.expect("unavailable up front");
    assert!(why.contains("cannot be opened (disk full)"), "{why}");
    assert!(why.contains("--no-audit"), "{why}");
    press(&mut s, "Esc 3");
    assert!(press(&mut s, "z").is_empty());
    assert!(confirm_lines(&s).2.is_some());
}

/// `s` names the column and the direction; `S` runs it the other way.
#[test]
fn sort_says_its_column_and_direction_and_reverses() {
    let mut s = state();
    let names = |s: &State| seen(s).names(&THREE);
    assert_eq!(
        names(&s),
        ["web-5f8-k2x8p", "web-5f8-q7m4t", "api-7c9-zz1"],
        "longest in its state first"
    );
    press(&mut s, "S");
    assert_eq!(names(&s), ["api-7c9-zz1", "web-5f8-q7m4t", "web-5f8-k2x8p"]);
    let (line, _) = seen(&s).status();
    assert!(line.contains("time in state, newest first"), "{line}");
    press(&mut s, "s");
    let (line, _) = seen(&s).status();
    assert!(line.contains("namespace, a→z"), "{line}");
}

/// `l` on a crash loop asks for its container's previous run: the current one has barely
/// begun, the one that ended says why.
#[test]
fn l_shows_the_logs_of_a_crash_loops_previous_run() {
    let mut s = state();
    press(&mut s, "4");
    let pod = s.selected_finding().unwrap().pod_ref();
    assert_eq!(
        press(&mut s, "l"),
        [Effect::FetchLogs {
            pod: on_demo(pod),
            container: Some("app".into()),
            previous: true,
        }]
    );
    assert!(seen(&s).details());
    assert!(press(&mut s, "l").is_empty(), "l again goes back");
    assert!(!seen(&s).details());
}

/// The owners' opt-out check answers after its dialog was cancelled and help opened: the
/// answer is for a dialog no longer shown, and help stays.
#[test]
fn a_late_opt_out_answer_leaves_the_overlay_shown() {
    let mut s = state();
    press(&mut s, "d");
    assert!(seen(&s).checking());
    press(&mut s, "Esc ?");
    assert!(seen(&s).all().contains(" Keys (Esc closes) "));
    update(&mut s, Event::OptOuts(Ok(Checked::default())));
    assert!(seen(&s).all().contains(" Keys (Esc closes) "));
}

/// A row is a claim (a watch that lags, a worker's word): the dialog goes by the pod read just
/// now, and leaves out a target that is not what its row says, naming what it is.
#[test]
fn a_target_that_read_just_now_is_not_its_row_is_left_out() {
    let mut s = state();
    press(&mut s, "Space Space");
    let pod = |name: &str| PodRef {
        namespace: "shop".into(),
        name: name.into(),
        uid: format!("uid-shop-{name}"),
    };
    press(&mut s, "d");
    let checked = Checked {
        opt_outs: Vec::new(),
        live: vec![
            (pod("web-5f8-k2x8p"), Some(RuleKind::Evicted)),
            (pod("web-5f8-q7m4t"), Some(RuleKind::CrashLoop)),
        ],
    };
    update(&mut s, Event::OptOuts(Ok(checked)));
    let (_, lines, unavailable) = confirm_lines(&s);
    assert_eq!(unavailable, None);
    assert!(
        lines.iter().any(|l| l
            == "left out: pod shop/web-5f8-q7m4t is crashLoop as read just now, not evicted as its row says"),
        "{lines:?}"
    );
    assert_eq!(
        press(&mut s, "y"),
        [Effect::Run(vec![on_demo(Action::Delete(pod(
            "web-5f8-k2x8p"
        )))])]
    );
    // Every target moved: nothing to offer, and why.
    let mut s = state();
    press(&mut s, "d");
    let healthy = Checked {
        opt_outs: Vec::new(),
        live: vec![(pod("web-5f8-k2x8p"), None)],
    };
    update(&mut s, Event::OptOuts(Ok(healthy)));
    let (_, _, unavailable) = confirm_lines(&s);
    assert!(
        unavailable.is_some_and(|why| why.contains("as read just now, matches no rule")),
        "{:?}",
        confirm_lines(&s)
    );
}

/// Once the worker refused to scale a row's workload as unproven, the row says so in place of
/// the action it would not run.
#[test]
fn a_row_whose_scale_the_worker_refused_as_unproven_says_so() {
    let mut s = state();
    press(&mut s, "3");
    let row = s.selected_finding().unwrap().clone();
    assert!(screen(&s, 80, 24).contains("scaleToZero"));
    let workload = row.workload();
    change_worker(&mut s, |w| {
        w.rules.entry(RuleKind::ImagePull).or_default().unproven = vec![workload.clone()];
    });
    let shown = screen(&s, 80, 24);
    assert!(!shown.contains("scaleToZero"), "{shown}");
    assert!(shown.contains("unproven"), "{shown}");
}
