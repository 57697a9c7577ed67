//! Every pane and dialog drawn on a `TestBackend`, compared as text with `tests/snapshots/`.
//! `UPDATE_SNAPSHOTS=1 cargo test --test ui_snapshots` rewrites them after an intended change.

use crate::ui_support;
use opc_core::cluster::ClusterName;

use k8s_openapi::api::core::v1::Pod;
use opc_core::actions::{
    Inspection, PodReading, ReadError, Resolution, ScalableWorkload, WorkloadKind,
};
use opc_core::config::{KeyBinding, UiConfig};
use opc_core::policy::Flags;
use opc_core::report::{RestartReport, RestartRow, Terms, WorkloadGroup};
use opc_core::rules::RuleKind;
use opc_core::worker::{Blocked, RuleStatus, Standby};
use ops_pod_cleaner::ui::{Checked, Event, PodDetails, State, Switches, WatchLine, update};
use ui_support::{assert_snapshot, change_worker, now, on_demo, pulling_now, screen, state};

fn press(state: &mut State, keys: &str) {
    for k in keys.split_whitespace() {
        update(state, Event::Key(KeyBinding::parse(k).unwrap()));
    }
}

#[test]
fn main_screen_80x24() {
    let s = state();
    let text = screen(&s, 80, 24);
    assert!(text.contains("ctx demo"));
    assert!(text.contains("for 1h35m"));
    assert_snapshot("main_80x24", &text);
}

#[test]
fn main_screen_wide_with_marks_and_filter() {
    let mut s = state();
    press(&mut s, "Space / s h o p Enter");
    let text = screen(&s, 130, 30);
    assert!(text.contains("NODE"), "wide screens show node and owner");
    assert!(text.contains("1 marked"));
    assert!(text.contains("/shop"));
    assert_snapshot("main_130x30_marked_filtered", &text);
}

#[test]
fn header_shows_staleness_badges_and_paused_rules() {
    let mut s = state().with_switches(Switches {
        flags: Flags {
            readonly: true,
            dry_run: true,
            ..Flags::default()
        },
        ..Switches::default()
    });
    change_worker(&mut s, |w| w.master_auto = true);
    change_worker(&mut s, |w| {
        w.rules.insert(
            RuleKind::ImagePull,
            RuleStatus {
                auto: true,
                paused: vec![crate::support::pauses::burst_in(
                    "shop",
                    RuleKind::ImagePull,
                    12,
                    12,
                )],
                ..Default::default()
            },
        );
    });
    update(
        &mut s,
        Event::Tick {
            now: now(),
            clusters: vec![ui_support::demo_line(WatchLine::Reconnecting {
                secs: 42,
                error: "connection refused".into(),
            })],
        },
    );
    let text = screen(&s, 120, 24);
    assert!(text.contains("reconnecting for 42 s: connection refused"));
    assert!(text.contains("DRY-RUN"));
    assert!(text.contains("READONLY"));
    assert!(text.contains("imagePull PAUSED in shop: imagePull matches 12 of 12 pods in shop"));
    assert_snapshot("header_stale_badges", &text);
}

/// A first start elects a leader for each cluster; with auto off nothing waits on it, so the
/// header must not read like an error. With auto on the worker does wait, and says so.
#[test]
fn header_says_blocked_only_while_auto_is_on() {
    let mut s = state();
    change_worker(&mut s, |w| {
        w.blocked = Some(Blocked::Standby(Standby::WaitingForLease))
    });
    let auto_line = |s: &State| {
        screen(s, 120, 24)
            .lines()
            .nth(1)
            .unwrap_or_default()
            .to_string()
    };
    let off = auto_line(&s);
    assert!(off.starts_with("AUTO off"), "{off}");
    assert!(!off.contains("blocked") && !off.contains("Lease"), "{off}");
    change_worker(&mut s, |w| w.master_auto = true);
    let on = auto_line(&s);
    assert!(
        on.contains("blocked: waiting for the cluster's Lease"),
        "{on}"
    );
}

#[test]
fn rules_pane() {
    let mut s = state();
    change_worker(&mut s, |w| {
        w.rules.insert(
            RuleKind::Evicted,
            RuleStatus {
                auto: true,
                actions_taken: 7,
                failures: 1,
                paused: Vec::new(),
                ..RuleStatus::default()
            },
        );
    });
    change_worker(&mut s, |w| {
        w.rules.insert(
            RuleKind::ImagePull,
            RuleStatus {
                auto: true,
                held: 1,
                held_reason: Some(crate::support::pauses::bad_rollout(
                    "shop",
                    "recommender",
                    3,
                )),
                ..RuleStatus::default()
            },
        );
    });
    press(&mut s, "Right");
    let text = screen(&s, 80, 24);
    assert!(text.contains("Rules (chain order)"), "{text}");
    assert!(text.contains("evicted"));
    assert!(text.contains("HELD 1: bad rollout"), "{text}");
    assert_snapshot("rules_pane_80x24", &text);
}

#[test]
fn report_pane() {
    let mut s = state();
    change_worker(&mut s, |w| {
        w.last_report = Some("sent to 1 sink at 09:00".into())
    });
    update(
        &mut s,
        Event::Report(RestartReport {
            terms: Some(Terms {
                min_restarts: 3,
                reasons: vec!["OOMKilled".into(), "Error".into()],
                first: false,
            }),
            title: "restarts".into(),
            cluster: "demo".into(),
            generated: now(),
            groups: vec![WorkloadGroup {
                cluster: None,
                namespace: "payments".into(),
                workload: "Deployment/ledger-worker".into(),
                rows: vec![RestartRow {
                    pod: "ledger-worker-9d-x1".into(),
                    container: "app".into(),
                    restarts: 12,
                    since_previous: Some(3),
                    last_reason: Some("OOMKilled".into()),
                    exit_code: Some(137),
                    last_restart: Some(now() - chrono::Duration::minutes(4)),
                    node: Some("node-1".into()),
                }],
            }],
            clusters: Vec::new(),
        }),
    );
    press(&mut s, "h");
    let text = screen(&s, 80, 24);
    assert!(text.contains("Restart report"), "{text}");
    assert!(text.contains("restarts 12 (+3)  OOMKilled exit 137 4m00s ago"));
    // The pane says what "too often" means.
    assert!(
        text.contains("too often: at least 3 restarts, with reason OOMKilled or Error"),
        "{text}"
    );
    assert_snapshot("report_pane_80x24", &text);
}

#[test]
fn log_pane_is_the_default_lower_pane() {
    let s = state();
    let text = screen(&s, 80, 24);
    assert!(text.contains("Log (actions and warnings)"));
}

#[test]
fn details_pane() {
    let mut s = state();
    press(&mut s, "Enter");
    let loading = screen(&s, 80, 24);
    assert!(loading.contains("fetching the pod"));
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web-5f8-k2x8p", "namespace": "shop", "uid": "uid-shop-web-5f8-k2x8p",
                     "finalizers": ["example.com/hold"],
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                          "name": "web-5f8", "uid": "rs-1", "controller": true}]},
        "spec": {"nodeName": "node-1", "containers": [{"name": "app"}]},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "False", "reason": "ContainersNotReady"}],
            "containerStatuses": [{
                "name": "app", "image": "web:2", "imageID": "", "ready": false, "restartCount": 4,
                "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s"}},
                "lastState": {"terminated": {"reason": "Error", "exitCode": 2}}
            }]
        }
    }))
    .unwrap();
    let forbidden = |what: &str| ReadError::Failed {
        what: what.into(),
        why: "forbidden".into(),
    };
    let details = PodDetails::from_reading(&PodReading {
        pod,
        inspection: Err(forbidden("the owners of pod shop/web-5f8-k2x8p")),
        events: Err(forbidden("the Events of pod shop/web-5f8-k2x8p")),
        worker: None,
    });
    update(
        &mut s,
        Event::Details {
            uid: "uid-shop-web-5f8-k2x8p".into(),
            result: Ok(details),
        },
    );
    let text = screen(&s, 100, 40);
    assert!(text.contains("waiting: CrashLoopBackOff: back-off 5m0s"));
    assert!(text.contains("last terminated: Error exit code 2"));
    assert!(text.contains("example.com/hold"));
    assert_snapshot("details_100x40", &text);
    press(&mut s, "j j j j j j j j j j");
    assert_snapshot("details_80x24_scrolled", &screen(&s, 80, 24));
}

#[test]
fn help_overlay_lists_every_key() {
    let mut s = state();
    press(&mut s, "?");
    let text = screen(&s, 80, 24);
    for action in opc_core::config::UI_ACTIONS {
        let key = UiConfig::default().key(action.0).unwrap().to_string();
        assert!(text.contains(&key), "{} ({key}) is missing", action.0);
    }
    assert_snapshot("help_80x24", &text);
}

#[test]
fn confirm_delete_of_marked_rows() {
    let mut s = state();
    press(&mut s, "Space Space d");
    update(&mut s, Event::OptOuts(Ok(Checked::default())));
    let text = screen(&s, 80, 24);
    assert!(text.contains("Delete these 2 pods?"));
    assert_snapshot("confirm_delete_80x24", &text);
}

#[test]
fn confirm_scale_to_zero() {
    let mut s = state();
    press(&mut s, "3 z");
    let pod = s.selected_finding().unwrap().pod_ref();
    update(
        &mut s,
        Event::Resolved {
            pod: on_demo(pod),
            result: Ok(Inspection {
                live: Some(pulling_now()),
                opt_out: None,
                resolution: Resolution::Scalable(ScalableWorkload::new(
                    WorkloadKind::Deployment,
                    "shop",
                    "recommender",
                )),
                replicas: Some(2),
                available: Some(0),
            }),
        },
    );
    let text = screen(&s, 80, 24);
    assert!(text.contains("Deployment shop/recommender"));
    assert!(text.contains("replicas now: 2  →  0"));
    assert_snapshot("confirm_scale_80x24", &text);
}

#[test]
fn unavailable_action() {
    let mut s = state().with_switches(Switches {
        flags: Flags {
            readonly: true,
            ..Flags::default()
        },
        ..Switches::default()
    });
    press(&mut s, "D");
    let text = screen(&s, 80, 24);
    assert!(text.contains("unavailable: read-only mode"));
    assert_snapshot("unavailable_readonly_80x24", &text);
}

#[test]
fn context_picker() {
    let mut s = state();
    update(
        &mut s,
        Event::Contexts(Ok(vec![
            ClusterName::new("demo"),
            ClusterName::new("prod-eu"),
            ClusterName::new("prod-us"),
        ])),
    );
    let text = screen(&s, 80, 24);
    assert!(text.contains("* demo"));
    assert!(text.contains("prod-us"));
    assert_snapshot("contexts_80x24", &text);
}

#[test]
fn fifteen_thousand_rows_draw_only_the_window() {
    let mut s = state();
    ui_support::load_evicted(&mut s, 15_000);
    press(&mut s, "End");
    let started = std::time::Instant::now();
    let text = screen(&s, 80, 24);
    assert!(
        text.contains("pod-00000"),
        "the longest in state is last: {text}"
    );
    assert!(!text.contains("pod-14999"));
    // Not a benchmark; a frame that built 15,000 rows would take far longer than this.
    assert!(started.elapsed() < std::time::Duration::from_millis(500));
}

/// A screen without a snapshot fails instead of writing one and passing.
#[test]
#[should_panic(expected = "no snapshot")]
fn a_missing_snapshot_fails() {
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        // Writing snapshots on purpose: this check has nothing to say then.
        panic!("no snapshot check while UPDATE_SNAPSHOTS is set");
    }
    assert_snapshot("never-written", &screen(&state(), 80, 24));
}

/// At 80×24 the force-delete dialog, the longest, wraps: its key line still shows.
#[test]
fn the_longest_dialog_keeps_its_key_line_at_80x24() {
    let mut s = state();
    // redis-2 as a StatefulSet's pod with a volume claim: every warning a force delete has.
    ui_support::change_pods(&mut s, |pod| {
        if &*pod.name == "redis-2" {
            if let Some(owner) = pod.owner.as_mut() {
                owner.kind = "StatefulSet".into();
                owner.name = "redis".into();
            }
            pod.claims_volume = true;
        }
    });
    press(&mut s, "2 D");
    update(&mut s, Event::OptOuts(Ok(Checked::default())));
    let text = screen(&s, 80, 24);
    assert!(text.contains("Force delete"), "{text}");
    assert!(text.contains("n / Esc: cancel"), "{text}");
}

/// The image-pull row of a Deployment's pod with a long name: cut with an ellipsis, OWNER is
/// the Deployment, ACTION says what z would do.
#[test]
fn the_table_cuts_with_an_ellipsis_and_names_the_workload() {
    let mut s = state();
    ui_support::change_pods(&mut s, |pod| {
        if pod.name.starts_with("recommender") {
            pod.name = "recommender-7bb97dcc94-g292q-with-a-very-long-suffix".into();
            if let Some(owner) = pod.owner.as_mut() {
                owner.name = "recommender-7bb97dcc94".into();
            }
        }
    });
    press(&mut s, "3");
    let wide = screen(&s, 140, 40);
    assert!(wide.contains("Deployment/recommender"), "{wide}");
    assert!(!wide.contains("ReplicaSet/"), "{wide}");
    assert!(wide.contains("scaleToZero"), "{wide}");
    let narrow = screen(&s, 80, 24);
    assert!(narrow.contains("recommender-7bb97dc…"), "{narrow}");
    assert!(narrow.contains("scaleToZero"), "{narrow}");
}

/// A pod that names a Deployment as its direct owner (a forged reference) shows its scale as
/// unproven; a pod with an oversized field shows it is left alone.
#[test]
fn the_table_shows_a_forged_owner_and_a_malformed_pod_as_not_acted_on() {
    let mut s = state();
    ui_support::change_pods(&mut s, |pod| {
        if pod.name.starts_with("recommender")
            && let Some(owner) = pod.owner.as_mut()
        {
            owner.kind = "Deployment".into();
            owner.name = "checkout".into();
        }
        if pod.name.starts_with("ledger") {
            pod.malformed = true;
        }
    });
    press(&mut s, "3");
    let text = screen(&s, 140, 40);
    assert!(text.contains("unproven"), "{text}");
    assert!(!text.contains("scaleToZero"), "{text}");
    press(&mut s, "4");
    let text = screen(&s, 140, 40);
    assert!(text.contains("malformed"), "{text}");
}

/// A pod already deleting shows that, not an action; z on it says why not. A bare pod has
/// no workload to scale: no action shows.
#[test]
fn deleting_and_bare_pods_show_no_action_to_take() {
    let mut s = state();
    ui_support::change_pods(&mut s, |pod| {
        if pod.name.starts_with("recommender") {
            pod.deletion = Some(now());
        }
    });
    press(&mut s, "3");
    let text = screen(&s, 80, 24);
    assert!(text.contains("deleting"), "{text}");
    assert!(!text.contains("scaleToZero"), "{text}");
    press(&mut s, "z");
    let text = screen(&s, 80, 24);
    assert!(text.contains("already being deleted"), "{text}");

    let mut s = state();
    ui_support::change_pods(&mut s, |pod| pod.owner = None);
    press(&mut s, "3");
    let text = screen(&s, 80, 24);
    assert!(!text.contains("scaleToZero"), "{text}");
}

/// Before the first list is in, the table says so rather than "nothing abnormal here".
#[test]
fn the_table_says_it_is_listing_before_the_first_list() {
    let mut s = state();
    let mut listing = ui_support::demo_synced();
    for cluster in &mut listing {
        cluster.watch = WatchLine::Listing;
    }
    update(
        &mut s,
        Event::Snapshot(ops_pod_cleaner::ui::Snapshot {
            findings: Vec::new(),
            total_pods: 0,
            clusters: listing,
            at: now(),
            in_default_order: false,
        }),
    );
    let text = screen(&s, 80, 24);
    assert!(text.contains("listing pods"), "{text}");
    assert!(!text.contains("nothing abnormal here"), "{text}");
}

/// On a wide terminal the table has the cause's class; narrower, the details pane has it.
#[test]
fn a_wide_table_shows_each_pods_cause() {
    let mut s = state();
    press(&mut s, "4");
    let text = screen(&s, 160, 40);
    assert!(text.contains("CAUSE"), "{text}");
    assert!(text.contains("crashUnknown"), "{text}");
    assert!(!screen(&s, 120, 40).contains("CAUSE"));
}
