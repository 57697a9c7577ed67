//! The real binary in `--demo`, driven through a pseudo-terminal: keys in, screen out (read
//! with a vt100 parser). The simulated cluster lives inside the process, so the effects of
//! actions are checked on the screen: deleted pods leave the table, the log says what was done.

use crate::support;

use std::time::{Duration, Instant};

use support::pty::Screen;

fn audit_log(screen: &Screen) -> String {
    screen.audit_log()
}

/// `safety.dryRun` in the config, and no `--dry-run` flag: the screen, its delete and the
/// session after a context switch all stay dry (they once followed the flag alone).
#[test]
fn dry_run_from_the_config_holds_in_the_tui_and_after_a_context_switch() {
    let mut screen = Screen::start_with(
        &["--demo", "--context", "demo-eu"],
        Some("safety:\n  dryRun: true\n"),
    );
    let text = screen.wait_for("the first sync", |t| {
        t.contains("● synced") && evicted_rows(t).len() >= 2
    });
    assert!(text.contains("DRY-RUN"), "{text}");
    for round in ["before", "after"] {
        let first = evicted_rows(&screen.text())[0].clone();
        screen.keys("d");
        screen.wait_text("Delete this pod?");
        screen.keys("y");
        let after = screen.wait_text(&format!("would delete pod shop/{first}"));
        assert!(
            evicted_rows(&after).contains(&first),
            "dry-run deletes nothing ({round} the switch): {after}"
        );
        if round == "before" {
            screen.keys("c");
            screen.wait_text("demo");
            screen.keys("\r");
            screen.wait_for("the new session", |t| {
                t.contains("switched to context demo") && t.contains("● synced")
            });
            screen.wait_for("its rows", |t| evicted_rows(t).len() >= 2);
        }
    }
    assert!(screen.text().contains("DRY-RUN"));
    let audit = audit_log(&screen);
    let dry_outcomes = audit
        .lines()
        .filter(|l| l.contains(r#""stage":"outcome""#) && l.contains(r#""outcome":"dryRun""#));
    assert_eq!(dry_outcomes.count(), 2, "{audit}");
    assert!(!audit.contains(r#""dryRun":false"#), "{audit}");
}

/// Log lines are collected when the screen draws, not by tui-logger's own thread: that thread
/// woke every 10 ms for the life of the process (0.6 % of a core on an idle cluster, in
/// `cargo bench --bench churn`). The log pane still shows lines (`demo_session_through_a_pty`).
#[test]
fn no_thread_wakes_on_a_timer_of_its_own() {
    let screen = Screen::start_with(&["--demo", "--context", "demo-eu"], None);
    screen.wait_for("the first sync", |t| t.contains("● synced"));
    let tasks = format!("/proc/{}/task", screen.child.id());
    let threads: Vec<String> = std::fs::read_dir(&tasks)
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim().to_string())
        .collect();
    assert!(!threads.is_empty(), "no threads under {tasks}");
    assert!(
        !threads.iter().any(|name| name.starts_with("tui-logger")),
        "{threads:?}"
    );
}

/// Pod names in the table rows of the evicted category, top to bottom.
pub fn evicted_rows(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.contains(" Evicted ") && l.contains(" for "))
        .filter_map(|l| {
            l.trim_start_matches(['│', ' ', '●'])
                .split_whitespace()
                .nth(1)
        })
        .map(String::from)
        .collect()
}

#[test]
fn demo_session_through_a_pty() {
    let mut screen = Screen::start();
    let text = screen.wait_for("the first sync", |t| {
        t.contains("● synced") && evicted_rows(t).len() >= 2
    });
    assert!(text.contains("ctx demo"), "{text}");
    assert!(text.contains("1:evicted"), "{text}");

    // Navigate: down and back up, then the details of the first pod, fetched from the API.
    screen.keys("j");
    screen.keys("k");
    screen.keys("\r");
    let details = screen.wait_text("Owner chain");
    assert!(details.contains("details (Esc back)"), "{details}");
    assert!(details.contains("Evicted"), "{details}");
    screen.keys("\x1b");
    screen.wait_text("by time in state");

    // Mark two pods and delete them, confirming a dialog that names both.
    let rows = evicted_rows(&screen.text());
    let (first, second) = (rows[0].clone(), rows[1].clone());
    screen.keys(" ");
    screen.keys(" ");
    screen.wait_text("2 marked");
    screen.keys("d");
    let dialog = screen.wait_text("Delete these 2 pods?");
    assert!(
        dialog.contains(&first) && dialog.contains(&second),
        "{dialog}"
    );
    screen.keys("y");
    let after = screen.wait_for("both deletions in the log and gone from the table", |t| {
        t.contains(&format!("deleted pod shop/{first}"))
            && t.contains(&format!("deleted pod shop/{second}"))
            && !evicted_rows(t).contains(&first)
            && !evicted_rows(t).contains(&second)
    });
    assert!(after.contains("deleted pod"), "{after}");

    // Auto-clean for the current rule (evicted): the header says so.
    screen.keys("a");
    screen.wait_text("rules: evicted");

    // The restart report pane.
    screen.keys("\x1b[C");
    screen.wait_text("Rules (chain order)");
    screen.keys("\x1b[C");
    screen.wait_text("Restart report");

    // Quit: the process ends and the terminal leaves the alternate screen.
    screen.keys("q");
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = screen.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the binary did not quit");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success(), "{status:?}");
    std::thread::sleep(Duration::from_millis(200));
    assert!(!screen.parser.lock().unwrap().screen().alternate_screen());
}

/// From 150 columns the table has a CAUSE column, and the details of a pull in back-off quote
/// the kubelet's Event its class rests on. The README's screenshot.
#[test]
fn a_wide_screen_shows_each_pods_cause_and_the_event_it_rests_on() {
    let mut screen = Screen::start_sized(&["--demo", "--context", "demo-eu"], None, (40, 160));
    screen.wait_for("the first sync", |t| t.contains("● synced"));
    screen.keys("3");
    let table = screen.wait_for("the image pulls, classed", |t| {
        t.contains("CAUSE") && t.contains("registryRateLimit") && t.contains("imageNotFound")
    });
    assert!(table.contains("registryUnreachable"), "{table}");
    if std::env::var_os("WRITE_SCREENSHOT").is_some() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/tui-demo.svg");
        std::fs::write(path, screen.svg()).unwrap();
    }
    // The rate-limited pull says only "Back-off" in its status: the details quote the Event.
    let row = table
        .lines()
        .position(|l| l.contains("registryRateLimit"))
        .expect("a row");
    let header = table
        .lines()
        .position(|l| l.contains("CAUSE"))
        .expect("the header");
    screen.keys(&"j".repeat(row - header - 1));
    screen.keys("\r");
    let details = screen.wait_text("cause: registryRateLimit");
    assert!(details.contains("Event Failed (×"), "{details}");
    assert!(details.contains("toomanyrequests"), "{details}");
    assert!(details.contains("next:"), "{details}");
}

/// `q` while a DELETE is in flight: the screen says it is finishing, waits (bounded by the
/// request deadline here, 3 s) and quits only once the action's outcome is in the audit log,
/// next to the intent written before the request. The process used to quit at once, leaving
/// the audit log empty.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quitting_waits_for_the_action_in_flight_and_its_audit_record() {
    let records = quit_while_a_delete_hangs("", |screen| {
        screen.keys("d");
        screen.wait_text("Delete this pod?");
        screen.keys("y");
    })
    .await;
    assert_eq!(records[1]["outcome"], "failed", "{records:?}");
}

/// An evicted pod whose DELETE hangs (3 s request deadline); `act` starts it from the screen.
/// `q` once the request is in: the screen says it is finishing, and quits once the outcome is
/// in the audit log next to the intent. Returns the two records.
async fn quit_while_a_delete_hangs(
    rules: &'static str,
    act: fn(&mut Screen),
) -> Vec<serde_json::Value> {
    use kube_sim::{SimCluster, SimServer};
    let sim = SimCluster::new();
    let evicted = support::pods::pod("gone-1").ns("shop").evicted().json();
    sim.create_pod(serde_json::from_value(evicted).unwrap());
    let server = SimServer::start(sim.clone()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    sim.faults()
        .hang(Some("delete"), "/api/v1/namespaces/shop/pods");
    let hung = sim.clone();
    let audit = tokio::task::spawn_blocking(move || {
        let kubeconfig = kubeconfig.to_string_lossy().into_owned();
        let config = format!("cluster:\n  requestTimeout: 3s\n{rules}");
        let mut screen = Screen::start_with(&["--kubeconfig", &kubeconfig], Some(&config));
        screen.wait_for("the pod", |t| {
            t.contains("● synced") && t.contains("gone-1")
        });
        act(&mut screen);
        let deadline = Instant::now() + Duration::from_secs(15);
        while hung.faults().hung_requests() == 0 {
            assert!(
                Instant::now() < deadline,
                "the DELETE never reached the server"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        screen.keys("q");
        screen.wait_text("finishing 1 action(s) in flight");
        let deadline = Instant::now() + Duration::from_secs(15);
        while screen.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "the binary did not quit");
            std::thread::sleep(Duration::from_millis(50));
        }
        audit_log(&screen)
    })
    .await
    .unwrap();
    let records: Vec<serde_json::Value> = audit
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2, "{audit}");
    assert_eq!(records[0]["stage"], "intent");
    assert_eq!(records[1]["stage"], "outcome");
    assert_eq!(records[1]["id"], records[0]["id"]);
    records
}

/// What auto does reaches the log pane, naming the cluster and the rule; in
/// dry-run as "would …". (Outcomes were logged under a target the pane filtered out.)
#[test]
fn automatic_actions_are_lines_in_the_log_pane() {
    let mut screen = Screen::start_with(&["--demo", "--context", "demo-eu", "--dry-run"], None);
    let text = screen.wait_for("the first sync", |t| {
        t.contains("● synced") && evicted_rows(t).len() >= 2
    });
    assert!(text.contains("DRY-RUN"), "{text}");
    // Auto for the evicted rule, then the master switch.
    screen.keys("a");
    screen.wait_text("rules: evicted");
    screen.keys("A");
    screen.wait_text("Switch auto-clean on?");
    screen.keys("y");
    screen.wait_text("demo-eu: auto evicted: would delete pod shop/");
}

/// Quitting waits for an automatic action in flight too (it waited for manual
/// ones only), and no worker starts another meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quitting_waits_for_an_automatic_action_in_flight() {
    let rules = "rules:\n  - {rule: evicted, auto: true, after: 0}\n";
    let records = quit_while_a_delete_hangs(rules, |screen| {
        screen.keys("A");
        screen.wait_text("Switch auto-clean on?");
        screen.keys("y");
    })
    .await;
    assert_eq!(
        records[0]["origin"],
        serde_json::json!({"by": "auto", "rule": "evicted"})
    );
}

/// Two clusters and an audit log that cannot be opened: the log pane says so once, and a
/// dialog says it before yes.
#[test]
fn an_unwritable_audit_log_is_said_once_and_up_front() {
    let config = "audit:\n  path: /proc/opc-no-such-dir/audit.jsonl\n";
    let mut screen = Screen::start_with(&["--demo"], Some(config));
    let text = screen.wait_for("both clusters and the audit error", |t| {
        t.contains("● 2/2 synced") && t.contains("cannot be opened")
    });
    let log_pane = text.split("Log (actions").nth(1).unwrap_or_default();
    assert_eq!(log_pane.matches("cannot be opened").count(), 1, "{text}");
    let header = text.lines().nth(1).unwrap_or_default();
    assert!(!header.contains("blocked"), "auto is off: {header}");
    screen.keys("d");
    screen.wait_text("unavailable: the audit log");
    screen.keys("\x1b");
    screen.keys("A");
    screen.wait_text("Switch auto-clean on?");
    screen.keys("y");
    screen.wait_text("blocked: demo-eu, demo-us: the audit log");
}

/// On the demo, `l` on a crash-looping pod shows its last run's lines, fetched through the
/// API's log endpoint.
#[test]
fn l_shows_a_crash_loops_last_run() {
    let mut screen = Screen::start();
    screen.wait_text("● synced");
    screen.keys("4");
    // The category shows before its rows: a crash loop is found once its pod is in.
    screen.wait_for("a crash-looping pod", |t| {
        t.contains("crashLoop —") && t.contains("CrashLoopBackOff")
    });
    screen.keys("l");
    let text = screen.wait_text("its previous run");
    assert!(text.contains("starting"), "{text}");
}
