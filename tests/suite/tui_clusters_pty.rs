//! Several clusters on one screen, through the real binary in a pseudo-terminal: the two demo
//! clusters merged, routed and parked; and two simulated servers of which one goes down.

use crate::support;

use std::time::Duration;

use kube_sim::{SimCluster, SimServer};
use support::pty::Screen;

/// Table rows (lines with a pod and its age) that name `cluster`.
fn rows_of(text: &str, cluster: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.contains(" for ") && l.contains(&format!(" {cluster} ")))
        .map(String::from)
        .collect()
}

/// The pod name on a table row (the third column), as far as the column shows it.
/// The pod's name on a row, or as much of it as the column shows (without its `…`).
fn pod_on(row: &str) -> String {
    row.trim_start_matches(['│', ' ', '●'])
        .split_whitespace()
        .nth(2)
        .unwrap_or_default()
        .trim_end_matches('…')
        .to_string()
}

/// The seconds in the header's "flaky down N s", or 0 before it says so.
fn down_for(text: &str) -> u64 {
    let header = text.lines().next().unwrap_or_default();
    header
        .split("flaky down ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// `--demo` opens demo-eu and demo-us on one screen. Counts add up, rows name their cluster,
/// the filter takes a cluster's name, a delete on a demo-us pod reaches demo-us only, and a
/// workload scaled to zero there shows in the parked view, whose undo restores it.
#[test]
fn the_two_demo_clusters_on_one_screen() {
    let mut screen = Screen::start_with(&["--demo"], None);
    screen.wait_for("both clusters synced", |t| {
        t.contains("2 clusters") && t.contains("● 2/2 synced")
    });
    // Image pull errors: demo-eu's recommender and demo-us's broken images.
    screen.keys("3");
    let merged = screen.wait_for("image pull rows of both clusters", |t| {
        !rows_of(t, "demo-eu").is_empty() && !rows_of(t, "demo-us").is_empty()
    });
    assert!(merged.contains("CLUSTER"), "{merged}");
    let shown = rows_of(&merged, "demo-eu").len() + rows_of(&merged, "demo-us").len();
    assert!(
        merged.contains(&format!("imagePull — {shown} pods")),
        "the category counts both clusters' rows ({shown}): {merged}"
    );
    if std::env::var_os("WRITE_SCREENSHOT").is_some() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/tui-clusters.svg");
        std::fs::write(path, screen.svg()).unwrap();
    }

    screen.keys("/demo-us imagepull\r");
    let filtered = screen.wait_for("only demo-us rows", |t| {
        rows_of(t, "demo-eu").is_empty() && !rows_of(t, "demo-us").is_empty()
    });
    let target = pod_on(&rows_of(&filtered, "demo-us")[0]);

    screen.keys("d");
    let dialog = screen.wait_text("Delete this pod?");
    assert!(dialog.contains("demo-us  "), "{dialog}");
    screen.keys("y");
    screen.wait_text("demo-us: deleted pod");
    let audit = screen.audit_log();
    let records: Vec<&str> = audit.lines().collect();
    assert_eq!(records.len(), 2, "an intent and its outcome: {audit}");
    for record in &records {
        assert!(record.contains(r#""cluster":"demo-us""#), "{record}");
        assert!(record.contains(&target), "{record}");
    }

    // Scale the owner of a demo-us image pull pod to zero, then find it parked. The deleted pod
    // stays on its row, deleting, for its grace period, under the cursor: once the screen shows
    // it so, step to the next row, whose owner can be scaled (without waiting, the key raced
    // the snapshot that marks the pod).
    screen.wait_for("the deleted pod shown deleting", |t| {
        rows_of(t, "demo-us").iter().any(|r| r.contains("deleting"))
    });
    screen.keys("j");
    screen.keys("z");
    screen.wait_text("Scale the workload to 0?");
    screen.keys("y");
    // A workload that opted out or still serves asks a second time.
    if screen.text().contains("anyway?") {
        screen.keys("y");
    }
    let scaled = screen.wait_text("to 0 (undo restores");
    assert!(scaled.contains("demo-us: scaled"), "{scaled}");
    screen.keys("P");
    // The title shows at once; the rows once the records are read.
    let parked = screen.wait_for("the parked rows", |t| t.contains("WORKLOAD"));
    assert!(parked.contains("demo-us"), "{parked}");
    assert!(
        parked.contains("auto") || parked.contains("manual"),
        "{parked}"
    );
    screen.keys("u");
    let undo = screen.wait_text("Restore the replicas?");
    assert!(undo.contains("from 0 to"), "{undo}");
    screen.keys("y");
    screen.wait_text("demo-us: restored");
    screen.keys("P");
    screen.wait_text("nothing is parked");
}

/// Two simulated API servers, `live` and `flaky`, each with one evicted pod (`live-1`,
/// `flaky-1`), behind one kubeconfig with a context each; `shape` prepares `flaky` first.
struct TwoServers {
    live: SimCluster,
    flaky: SimCluster,
    _servers: (SimServer, SimServer),
    dir: tempfile::TempDir,
}

impl TwoServers {
    async fn start(shape: impl Fn(&SimCluster)) -> TwoServers {
        let (live, flaky) = (SimCluster::new(), SimCluster::new());
        for (sim, name) in [(&live, "live-1"), (&flaky, "flaky-1")] {
            // Bookmarks every 100 ms: two seconds of silence can only mean a dead server.
            sim.set_bookmark_interval(Duration::from_millis(100));
            let pod = support::pods::pod(name).ns("shop").evicted().json();
            sim.create_pod(serde_json::from_value(pod).unwrap());
        }
        shape(&flaky);
        let servers = (
            SimServer::start(live.clone()).await.unwrap(),
            SimServer::start(flaky.clone()).await.unwrap(),
        );
        let dir = tempfile::tempdir().unwrap();
        let text = support::contexts::kubeconfig(&[("live", &servers.0), ("flaky", &servers.1)]);
        std::fs::write(dir.path().join("kubeconfig"), text).unwrap();
        TwoServers {
            live,
            flaky,
            _servers: servers,
            dir,
        }
    }

    /// The screen on both contexts, with a two-second silence bound and request deadline.
    fn screen(&self) -> Screen {
        let path = self.dir.path().join("kubeconfig");
        let path = path.to_string_lossy();
        let args = [
            "--kubeconfig",
            &path,
            "--context",
            "live",
            "--context",
            "flaky",
        ];
        let config = "cluster:\n  watchSilence: 2s\n  requestTimeout: 2s\n";
        Screen::start_with(&args, Some(config))
    }

    /// A new pod on `live` shows on `screen` (the live cluster's changes still arrive); then
    /// the Clusters overlay, as shown.
    fn live_pod_then_clusters(&self, screen: &mut Screen) -> String {
        let pod = support::pods::pod("live-2").ns("shop").evicted().json();
        self.live.create_pod(serde_json::from_value(pod).unwrap());
        screen.wait_text("live-2");
        screen.keys("C");
        screen.wait_text("Clusters (C or Esc closes)")
    }
}

/// Two API servers behind one kubeconfig; one freezes (its watch falls silent, every request
/// hangs). The header says which, the other cluster's changes keep arriving, and the frozen
/// one comes back when it thaws.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_cluster_going_down_leaves_the_other_live() {
    let two = TwoServers::start(|_| {}).await;
    tokio::task::spawn_blocking(move || {
        let mut screen = two.screen();
        screen.wait_for("both clusters and their pods", |t| {
            t.contains("● 2/2 synced") && t.contains("live-1") && t.contains("flaky-1")
        });

        two.flaky.faults().freeze(true);
        let down = screen.wait_for("the frozen cluster named in the header", |t| {
            t.lines()
                .next()
                .is_some_and(|h| h.contains("1/2 synced") && h.contains("flaky"))
        });
        assert!(down.contains("flaky-1"), "its last known pods stay: {down}");
        // The header counts on while nothing else changes (it once froze at the first count).
        let first = down_for(&down);
        screen.wait_for("the count to move on", |t| down_for(t) > first);

        let detail = two.live_pod_then_clusters(&mut screen);
        assert!(
            detail.contains("live") && detail.contains("● synced"),
            "{detail}"
        );
        screen.keys("\x1b");

        two.flaky.faults().freeze(false);
        screen.wait_for("the thawed cluster back", |t| t.contains("● 2/2 synced"));
    })
    .await
    .unwrap();
}

/// A cluster whose credentials may not list pods: the header names it, the detail says why,
/// and the other cluster's pods show and change as usual.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forbidden_cluster_leaves_the_other_live() {
    let two = TwoServers::start(|flaky| flaky.faults().deny("*", "pods", None)).await;
    tokio::task::spawn_blocking(move || {
        let mut screen = two.screen();
        let text = screen.wait_for("the live cluster's pod, the other one named", |t| {
            t.contains("live-1")
                && t.lines()
                    .next()
                    .is_some_and(|h| h.contains("1/2 synced") && h.contains("flaky"))
        });
        assert!(!text.contains("flaky-1"), "{text}");
        let detail = two.live_pod_then_clusters(&mut screen);
        assert!(
            detail.contains("403") || detail.contains("forbidden"),
            "{detail}"
        );
    })
    .await
    .unwrap();
}

/// `c` then Space adds a context while the screen runs, and drops one: the merged rows follow.
#[test]
fn contexts_are_added_and_dropped_while_running() {
    let mut screen = Screen::start();
    screen.wait_for("demo-eu alone", |t| {
        t.contains("ctx demo-eu") && t.contains("● synced")
    });
    screen.keys("c");
    screen.wait_text("Contexts (* open)");
    screen.keys("j");
    screen.keys(" ");
    screen.wait_for("demo-us added", |t| {
        t.contains("2 clusters") && t.contains("● 2/2 synced")
    });
    screen.keys("3");
    screen.wait_for("rows of both", |t| {
        !rows_of(t, "demo-eu").is_empty() && !rows_of(t, "demo-us").is_empty()
    });
    screen.keys("c");
    screen.wait_text("Contexts (* open)");
    screen.keys(" ");
    let after = screen.wait_for("demo-eu dropped", |t| t.contains("ctx demo-us"));
    assert!(after.contains("dropped context demo-eu"), "{after}");
}

/// One delete in each demo cluster from one confirmation: the two clusters' records go to the
/// one audit log through one writer, so every record's id is its own (each cluster's session
/// once opened the file itself and numbered from 0, so two actions in the same millisecond
/// shared an id, and one session's rotation cut the other's intent from its outcome).
#[test]
fn both_clusters_write_the_one_audit_log_with_ids_of_one_sequence() {
    let mut screen = Screen::start_with(&["--demo"], None);
    screen.keys("3");
    screen.wait_for("image pull rows of both clusters", |t| {
        !rows_of(t, "demo-eu").is_empty() && !rows_of(t, "demo-us").is_empty()
    });
    screen.keys("/demo-us\r");
    screen.wait_for("only demo-us rows", |t| rows_of(t, "demo-eu").is_empty());
    screen.keys(" ");
    screen.keys("\x1b");
    screen.keys("/demo-eu imagepull\r");
    screen.wait_for("only demo-eu rows", |t| rows_of(t, "demo-us").is_empty());
    screen.keys(" ");
    screen.keys("\x1b");
    screen.wait_text("2 marked");
    screen.keys("d");
    screen.wait_text("Delete these 2 pods?");
    screen.keys("y");
    screen.wait_for("both deletes", |t| {
        t.contains("demo-us: deleted pod") && t.contains("demo-eu: deleted pod")
    });
    let audit = screen.audit_log();
    let records: Vec<serde_json::Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 4, "{audit}");
    // An id is time-process-sequence: the sequence alone must tell the two actions apart.
    let sequence = |r: &serde_json::Value| {
        let id = r["id"].as_str().unwrap().to_string();
        id.rsplit('-').next().unwrap().to_string()
    };
    let intents: Vec<String> = records
        .iter()
        .filter(|r| r["stage"] == "intent")
        .map(sequence)
        .collect();
    assert_eq!(intents.len(), 2, "{audit}");
    assert_ne!(intents[0], intents[1], "{audit}");
}
