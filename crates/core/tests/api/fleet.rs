use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use kube::core::Status;
use opc_core::cluster::{Cache, ClusterName};
use opc_core::config::{BadSource, Source};
use opc_core::fleet::{
    Counts, DecodeError, Epoch, FeedError, FeedStatus, FindingRow, FleetView, Frame, Gap, Held,
    Limits, LineReader, Publisher, Resume, Ring, StaleWhy, ViewHealth, WatchWhy, WorkerAddress,
    WorkerView, decide, decode_line, reconsider, uid_segment,
};
use opc_core::rules::{ActionKind, Cause, CauseClass, RuleKind};

fn t0() -> DateTime<Utc> {
    "2026-11-20T09:00:00Z".parse().unwrap_or_default()
}

/// A finding of `uid` in `category`, in state for `secs` seconds.
fn row(uid: &str, category: RuleKind, secs: i64) -> FindingRow {
    FindingRow {
        cluster: ClusterName::new("east"),
        namespace: "shop".into(),
        name: format!("pod-{uid}"),
        uid: uid.into(),
        category,
        reason: "ImagePullBackOff".into(),
        message: None,
        container: Some("app".into()),
        since: t0(),
        for_seconds: secs,
        restarts: 0,
        node: None,
        owner: None,
        action: ActionKind::Delete,
        held: None,
        cause: Cause {
            class: CauseClass::ImageNotFound,
            detail: "no such image".into(),
            evidence: Vec::new(),
            next: "fix the image".into(),
        },
    }
}

fn kinds(frames: &[Frame]) -> Vec<(&'static str, u64)> {
    frames
        .iter()
        .map(|f| {
            let kind = match f {
                Frame::Snapshot(_) => "snapshot",
                Frame::Upsert { .. } => "upsert",
                Frame::Remove { .. } => "remove",
                Frame::Counts { .. } => "counts",
                Frame::Worker { .. } => "worker",
                Frame::Heartbeat { .. } => "heartbeat",
            };
            (kind, f.seq())
        })
        .collect()
}

#[test]
fn a_publication_says_only_what_changed_each_at_the_next_number() {
    let mut publisher = Publisher::new(Epoch(7), t0());
    let first = publisher.findings(vec![
        row("a", RuleKind::ImagePull, 10),
        row("b", RuleKind::CrashLoop, 10),
    ]);
    assert_eq!(kinds(&first), [("upsert", 1), ("upsert", 2), ("counts", 3)]);
    // Only the time in state moved: nothing to say.
    let quiet = publisher.findings(vec![
        row("a", RuleKind::ImagePull, 11),
        row("b", RuleKind::CrashLoop, 11),
    ]);
    assert_eq!(kinds(&quiet), []);
    let mut changed = row("a", RuleKind::ImagePull, 12);
    changed.restarts = 3;
    let next = publisher.findings(vec![changed]);
    assert_eq!(kinds(&next), [("remove", 4), ("upsert", 5), ("counts", 6)]);
    assert!(matches!(&next[0], Frame::Remove { pod, .. } if pod.uid == "b"));
    let worker = WorkerView {
        leading: true,
        ..WorkerView::default()
    };
    let stale = ViewHealth {
        synced: true,
        stale: true,
        age_seconds: Some(40),
        error: None,
    };
    let mut last = publisher.findings(vec![row("a", RuleKind::ImagePull, 13)]);
    last.extend(publisher.status(worker, stale, t0()));
    assert_eq!(
        kinds(&last),
        [("upsert", 7), ("worker", 8), ("heartbeat", 8)],
        "a has its restarts back; the stale view is said at once"
    );
}

/// What a client folds from the frames is what the server would send as a snapshot.
#[test]
fn a_view_folded_from_frames_equals_the_snapshot() {
    let mut publisher = Publisher::new(Epoch(1), t0());
    let mut view = FleetView::new(ClusterName::default(), 100);
    view.apply(Frame::Snapshot(publisher.snapshot())).unwrap();
    let steps = [
        vec![
            row("a", RuleKind::ImagePull, 1),
            row("b", RuleKind::Pending, 1),
        ],
        vec![
            row("b", RuleKind::Pending, 2),
            row("c", RuleKind::Evicted, 2),
        ],
        vec![row("c", RuleKind::Failed, 3)],
    ];
    for findings in steps {
        for frame in publisher.findings(findings) {
            view.apply(frame).unwrap();
        }
    }
    let snapshot = publisher.snapshot();
    let mut uids: Vec<String> = view.findings().map(|a| a.uid().to_string()).collect();
    uids.sort_unstable();
    assert_eq!(uids, ["c"]);
    let listed = view.findings().next().map(|a| (a.rule(), a.since()));
    let served = snapshot.findings.first().map(|r| (r.category, r.since));
    assert_eq!(listed, served);
    assert_eq!(view.counts(), &snapshot.counts);
    assert_eq!(view.resume().map(|r| r.seq), Some(snapshot.seq));
}

#[test]
fn a_skipped_number_or_another_epoch_is_a_gap_and_changes_nothing() {
    let mut publisher = Publisher::new(Epoch(1), t0());
    let mut view = FleetView::new(ClusterName::default(), 100);
    let frames = publisher.findings(vec![row("a", RuleKind::ImagePull, 1)]);
    assert_eq!(view.apply(frames[0].clone()), Err(Gap::NoSnapshot));
    let mut view = FleetView::new(ClusterName::default(), 100);
    view.apply(Frame::Snapshot(Publisher::new(Epoch(1), t0()).snapshot()))
        .unwrap();
    assert_eq!(
        view.apply(frames[1].clone()),
        Err(Gap::Missed {
            expected: 1,
            got: 2
        })
    );
    assert!(view.is_empty(), "nothing applied past a gap");
    let restarted = Publisher::new(Epoch(2), t0());
    assert_eq!(
        view.apply(restarted.heartbeat(t0())),
        Err(Gap::Epoch {
            known: Epoch(1),
            got: Epoch(2)
        })
    );
    let ahead = publisher.heartbeat(t0());
    assert_eq!(
        view.apply(ahead),
        Err(Gap::Missed {
            expected: 0,
            got: 2
        }),
        "a heartbeat ahead of the view says frames were missed"
    );
    // A snapshot starts again, whatever came before.
    view.apply(Frame::Snapshot(publisher.snapshot())).unwrap();
    assert_eq!(view.len(), 1);
    assert_eq!(
        view.resume(),
        Some(Resume {
            epoch: Epoch(1),
            seq: 2
        })
    );
}

#[test]
fn a_view_holds_no_more_rows_than_its_bound() {
    let mut publisher = Publisher::new(Epoch(1), t0());
    let mut view = FleetView::new(ClusterName::default(), 2);
    view.apply(Frame::Snapshot(publisher.snapshot())).unwrap();
    let frames = publisher.findings(vec![
        row("a", RuleKind::ImagePull, 1),
        row("b", RuleKind::ImagePull, 1),
        row("c", RuleKind::ImagePull, 1),
    ]);
    let results: Vec<_> = frames.into_iter().map(|f| view.apply(f)).collect();
    assert_eq!(results[2], Err(Gap::TooManyRows { max: 2 }));
    assert_eq!(view.len(), 2);
    assert_eq!(
        FleetView::new(ClusterName::default(), 2).apply(Frame::Snapshot(publisher.snapshot())),
        Err(Gap::TooManyRows { max: 2 })
    );
}

#[test]
fn the_ring_gives_exactly_what_was_missed_or_nothing() {
    let mut ring = Ring::new(3);
    for seq in 1..=5 {
        ring.push(seq, seq);
    }
    assert_eq!(ring.after(2, 5), Some(vec![3, 4, 5]));
    assert_eq!(ring.after(4, 5), Some(vec![5]));
    assert_eq!(ring.after(5, 5), Some(vec![]), "up to date");
    assert_eq!(ring.after(1, 5), None, "2 has fallen out");
    assert_eq!(ring.after(9, 5), None, "ahead of the server: another run");
    assert_eq!(Ring::<u64>::new(3).after(0, 2), None);
}

pub(crate) fn line(frame: &Frame) -> Vec<u8> {
    let mut line = serde_json::to_vec(frame).unwrap_or_default();
    line.push(b'\n');
    line
}

#[test]
fn lines_split_anywhere_are_read_whole() {
    let mut publisher = Publisher::new(Epoch(3), t0());
    let frames = publisher.findings(vec![row("a", RuleKind::ImagePull, 1)]);
    let bytes: Vec<u8> = frames.iter().flat_map(line).chain(*b"\n").collect();
    let mut reader = LineReader::new(Limits::default());
    let mut read = Vec::new();
    for chunk in bytes.chunks(7) {
        read.extend(reader.feed(chunk).unwrap());
    }
    assert_eq!(read, frames);
}

#[test]
fn a_line_over_the_bound_is_refused_before_it_is_held_whole() {
    let limits = Limits {
        max_line: 1000,
        max_rows: 10,
    };
    let mut reader = LineReader::new(limits);
    assert_eq!(reader.feed(&[b'x'; 600]).map(|f| f.len()), Ok(0));
    assert_eq!(
        reader.feed(&[b'x'; 600]),
        Err(DecodeError::LineTooLong { max: 1000 }),
        "no newline yet: refused once past the bound"
    );
    assert_eq!(
        reader.feed(b"\n"),
        Err(DecodeError::LineTooLong { max: 1000 }),
        "the stream is done"
    );
    let mut publisher = Publisher::new(Epoch(3), t0());
    let many: Vec<FindingRow> = (0..11)
        .map(|i| row(&i.to_string(), RuleKind::Pending, 1))
        .collect();
    publisher.findings(many);
    let big = line(&Frame::Snapshot(publisher.snapshot()));
    let roomy = Limits {
        max_line: 1 << 20,
        max_rows: 10,
    };
    assert_eq!(
        LineReader::new(roomy).feed(&big),
        Err(DecodeError::TooManyRows { rows: 11, max: 10 })
    );
}

#[test]
fn hostile_text_travels_as_escaped_data_and_a_bad_line_is_not_echoed() {
    let hostile = "x\u{1b}[2J\u{1b}]52;c;SGVsbG8=\u{7}\nimagePull  ns  fake-row";
    let mut evil = row("a", RuleKind::ImagePull, 1);
    evil.name = hostile.into();
    evil.cause.detail = hostile.into();
    let frame = Frame::Upsert { seq: 1, row: evil };
    let bytes = line(&frame);
    assert!(
        !bytes[..bytes.len() - 1]
            .iter()
            .any(|b| b.is_ascii_control()),
        "no control byte on the wire but the line's end"
    );
    let decoded = LineReader::new(Limits::default()).feed(&bytes).unwrap();
    assert_eq!(decoded, [frame], "the same text, as data");
    let refused = decode_line(b"{\"type\":\"\x1b[2Jboom\"}", &Limits::default());
    match refused {
        Err(DecodeError::Malformed(why)) => assert!(!why.contains('\u{1b}'), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_held_row_reads_back_as_the_kind_it_was() {
    let mut malformed = row("a", RuleKind::CrashLoop, 1);
    malformed.held = Some(Held::Malformed);
    let mut unproven = row("b", RuleKind::CrashLoop, 1);
    unproven.held = Some(Held::Unproven(
        "a Deployment only ever owns ReplicaSets".into(),
    ));
    for row in [malformed, unproven] {
        let json = serde_json::to_string(&row).unwrap_or_default();
        assert_eq!(serde_json::from_str::<FindingRow>(&json).ok(), Some(row));
    }
}

#[test]
fn the_time_in_state_alone_is_no_change() {
    let a = row("a", RuleKind::ImagePull, 1);
    assert!(a.same_state(&row("a", RuleKind::ImagePull, 99)));
    assert!(!a.same_state(&row("a", RuleKind::Pending, 1)));
}

#[test]
fn an_epoch_survives_a_json_reader_that_keeps_numbers_as_doubles() {
    let epoch = Epoch::fresh();
    assert!(epoch.0 < 1 << 53, "{}", epoch.0);
    assert_eq!((epoch.0 as f64) as u64, epoch.0);
}

#[test]
fn only_frames_that_move_rows_move_where_the_rows_changed() {
    let mut view = FleetView::new(ClusterName::default(), 10);
    let epoch = Epoch(7);
    let mut publisher = Publisher::new(epoch, t0());
    view.apply(Frame::Snapshot(publisher.snapshot())).unwrap();
    let taken = view.rows_at();
    let next = |view: &FleetView| view.resume().unwrap().seq + 1;
    let worker = Frame::Worker {
        seq: next(&view),
        worker: WorkerView::default(),
    };
    view.apply(worker).unwrap();
    let counts = Frame::Counts {
        seq: next(&view),
        counts: Counts::new(),
    };
    view.apply(counts).unwrap();
    assert_eq!(
        view.rows_at(),
        taken,
        "a worker or counts frame moves no row"
    );
    assert_ne!(view.resume(), taken);
    for frame in publisher.findings(vec![row("a", RuleKind::Evicted, 1)]) {
        let seq = next(&view);
        let frame = match frame {
            Frame::Upsert { row, .. } => Frame::Upsert { seq, row },
            Frame::Counts { counts, .. } => Frame::Counts { seq, counts },
            other => other,
        };
        view.apply(frame).unwrap();
    }
    assert_ne!(view.rows_at(), taken, "an upsert does");
}

#[test]
fn the_watch_path_goes_through_the_service_proxy_and_resumes_by_number() {
    let at = WorkerAddress::default();
    assert_eq!(
        at.watch_path(None),
        "/api/v1/namespaces/ops-pod-cleaner/services/ops-pod-cleaner:9091/proxy/v1/watch"
    );
    let resume = Resume {
        epoch: Epoch(7),
        seq: 42,
    };
    assert!(
        at.watch_path(Some(resume))
            .ends_with("/proxy/v1/watch?since=42&epoch=7")
    );
    assert_eq!(
        at.to_string(),
        "service ops-pod-cleaner/ops-pod-cleaner:9091"
    );
}

#[test]
fn a_uid_stays_one_segment_of_the_path_whatever_it_holds() {
    let at = WorkerAddress::default();
    let uid = "0000578a-578a-478f-84ec-0000000a99b6";
    assert!(
        at.finding_path(uid)
            .ends_with(&format!("/proxy/v1/findings/{uid}"))
    );
    assert_eq!(
        uid_segment("../x?y=1#z /é"),
        "..%2Fx%3Fy%3D1%23z%20%2F%C3%A9"
    );
}

#[test]
fn a_name_that_would_not_stay_one_path_segment_is_refused() {
    assert!(WorkerAddress::new("tools", "opc-worker", 8080).is_ok());
    for (ns, service) in [
        ("tools", "a/b"),
        ("tools", "x?y"),
        ("", "opc"),
        ("Tools", "opc"),
        ("tools", "-opc"),
        ("tools", "opc-"),
        ("tools", &"a".repeat(64)),
    ] {
        assert!(
            WorkerAddress::new(ns, service, 9090).is_err(),
            "{ns:?} {service:?}"
        );
    }
}

fn no_worker() -> FeedError {
    FeedError::NoWorker {
        namespace: "ops-pod-cleaner".into(),
        service: "ops-pod-cleaner".into(),
    }
}

fn forbidden() -> FeedError {
    FeedError::Forbidden {
        verb: "get",
        resource: "services/proxy",
        namespace: "ops-pod-cleaner".into(),
        name: "ops-pod-cleaner:9090".into(),
    }
}

fn not_ready() -> FeedError {
    FeedError::NotReady {
        namespace: "ops-pod-cleaner".into(),
        service: "ops-pod-cleaner".into(),
    }
}

fn hiccups() -> Vec<FeedError> {
    vec![
        FeedError::Unreachable {
            message: "error trying to reach service: dial tcp: refused".into(),
        },
        FeedError::Silent {
            after: Duration::from_secs(15),
        },
        FeedError::Transport("connection reset".into()),
        FeedError::Ended,
    ]
}

#[test]
fn auto_falls_back_to_a_watch_only_where_there_is_no_worker_and_says_why() {
    for error in [no_worker(), not_ready(), forbidden()] {
        assert_eq!(
            decide(Source::Auto, &Err(error.clone())),
            Some(WatchWhy::NoWorker(error))
        );
    }
    assert_eq!(decide(Source::Auto, &Ok(())), None);
    for error in hiccups() {
        assert_eq!(decide(Source::Auto, &Err(error.clone())), None, "{error}");
    }
}

#[test]
fn auto_watches_a_cluster_whose_worker_feed_is_over_the_bound() {
    let over = [
        FeedError::OverBound {
            message: "the findings are 70000000 bytes".into(),
        },
        FeedError::Protocol(opc_core::fleet::DecodeError::LineTooLong { max: 64 << 20 }),
        FeedError::TooManyRows { max: 20_000 },
    ];
    for error in over {
        assert_eq!(
            decide(Source::Auto, &Err(error.clone())),
            Some(WatchWhy::OverBound(error.clone()))
        );
        assert_eq!(decide(Source::Worker, &Err(error)), None);
    }
}

#[test]
fn auto_reconsiders_a_feed_that_outgrew_its_bound_and_nothing_else() {
    let over = FeedError::TooManyRows { max: 20_000 };
    let since = std::time::Instant::now();
    let lost = |error: FeedError| FeedStatus::Stale {
        since,
        why: StaleWhy::Lost(error),
    };
    for status in [lost(over.clone()), FeedStatus::Failing(over.clone())] {
        assert_eq!(
            reconsider(Source::Auto, &status),
            Some(WatchWhy::OverBound(over.clone()))
        );
        assert_eq!(reconsider(Source::Worker, &status), None);
    }
    let stays = [
        FeedStatus::Live,
        FeedStatus::Connecting,
        lost(hiccups()[0].clone()),
        FeedStatus::Failing(no_worker()),
        FeedStatus::Stale {
            since,
            why: StaleWhy::WorkerStale,
        },
    ];
    for status in stays {
        assert_eq!(reconsider(Source::Auto, &status), None, "{status:?}");
    }
}

#[test]
fn worker_stays_on_the_worker_and_watch_never_asks() {
    for outcome in [
        Err(no_worker()),
        Err(forbidden()),
        Err(hiccups()[0].clone()),
    ] {
        assert_eq!(decide(Source::Worker, &outcome), None);
    }
    for outcome in [Ok(()), Err(no_worker())] {
        assert_eq!(decide(Source::Watch, &outcome), Some(WatchWhy::Chosen));
    }
    // Whether the worker is asked at all, through the one place that decides: `watch` never
    // reads it, whatever it would answer; `auto` and `worker` read a worker that answers.
    assert_eq!(
        decide(Source::Watch, &Err(forbidden())),
        Some(WatchWhy::Chosen)
    );
    assert!(decide(Source::Auto, &Ok(())).is_none() && decide(Source::Worker, &Ok(())).is_none());
}

#[test]
fn sources_read_back_as_written_and_auto_is_the_default() {
    for name in Source::NAMES {
        let read = name.parse::<Source>().map(|s| s.to_string());
        assert_eq!(read, Ok(name.to_string()));
    }
    assert_eq!(" auto ".parse(), Ok(Source::Auto));
    assert_eq!("Auto".parse::<Source>(), Err(BadSource));
    assert_eq!(Source::default(), Source::Auto);
}

fn status(code: u16, reason: &str, message: &str) -> kube::Error {
    kube::Error::Api(Box::new(Status::failure(message, reason).with_code(code)))
}

#[test]
fn the_proxys_503s_and_404s_are_told_apart() {
    let at = WorkerAddress::default();
    let of = |code, reason, message| FeedError::of(&status(code, reason, message), &at);
    let named = |kind: &str| {
        let mut s = Status::failure("x not found", "NotFound").with_code(404);
        s.details = Some(kube::core::response::StatusDetails {
            name: "ops-pod-cleaner".into(),
            group: String::new(),
            kind: kind.into(),
            uid: String::new(),
            causes: Vec::new(),
            retry_after_seconds: 0,
        });
        FeedError::of(&kube::Error::Api(Box::new(s)), &at)
    };
    assert!(matches!(named("services"), FeedError::NoWorker { .. }));
    assert!(matches!(named("endpoints"), FeedError::NoWorker { .. }));
    // A 404 of the worker's own: it answers, but not this path.
    assert_eq!(
        of(404, "Failed to parse error data", "404 page not found"),
        FeedError::NoFeed { code: 404 }
    );
    assert!(matches!(
        of(
            503,
            "ServiceUnavailable",
            "no endpoints available for service \"x\""
        ),
        FeedError::NotReady { .. }
    ));
    assert!(matches!(
        of(
            503,
            "ServiceUnavailable",
            "error trying to reach service: dial tcp"
        ),
        FeedError::Unreachable { .. }
    ));
    assert!(matches!(
        of(503, "Failed to parse error data", "the worker is starting"),
        FeedError::Refused { code: 503, .. }
    ));
}

#[test]
fn a_servers_text_is_shown_inert_and_cut() {
    let error = FeedError::Refused {
        code: 500,
        message: format!("\u{1b}[2Jgone{}", "y".repeat(1000)),
    };
    let said = error.to_string();
    assert!(!said.contains('\u{1b}'), "{said}");
    assert!(said.len() < 400, "{}", said.len());
}

fn health_after(status: &FeedStatus, now: Instant) -> opc_core::cluster::Health {
    let cache = Cache::new();
    cache.set_source_health(&status.source_health(now));
    cache.health()
}

#[test]
fn a_new_proof_alone_wakes_no_reader_but_a_change_of_state_does() {
    let cache = Cache::new();
    let mut readers = cache.subscribe();
    let now = Instant::now();
    cache.set_source_health(&FeedStatus::Live.source_health(now));
    assert!(readers.has_changed().unwrap(), "the first sync is news");
    readers.mark_unchanged();
    let later = now + Duration::from_secs(5);
    cache.set_source_health(&FeedStatus::Live.source_health(later));
    assert!(!readers.has_changed().unwrap(), "a heartbeat is not");
    let stale = FeedStatus::Stale {
        since: later,
        why: StaleWhy::WorkerStale,
    };
    cache.set_source_health(&stale.source_health(later));
    assert!(readers.has_changed().unwrap(), "going stale is");
}

#[test]
fn a_fed_cache_is_as_current_as_its_feed_says() {
    let now = Instant::now();
    let connecting = health_after(&FeedStatus::Connecting, now);
    assert!(
        !connecting.synced(),
        "never synced before the first snapshot"
    );
    let live = health_after(&FeedStatus::Live, now);
    assert!(live.synced());
    assert_eq!(live.stale_for(now), None);
    // Proved at the last frame: a feed that falls silent ages like a quiet watch.
    assert!(live.stale_for(now + Duration::from_secs(21)).is_some());
    let since = now.checked_sub(Duration::from_secs(40)).unwrap_or(now);
    for why in [
        StaleWhy::WorkerStale,
        StaleWhy::Lost(FeedError::Silent {
            after: Duration::from_secs(15),
        }),
    ] {
        let stale = health_after(&FeedStatus::Stale { since, why }, now);
        assert!(stale.synced());
        assert!(stale.stale_for(now).is_some(), "stale as a watch would be");
        assert!(stale.last_error().is_some(), "and says why");
    }
    let unsynced = FeedStatus::Stale {
        since,
        why: StaleWhy::WorkerNotSynced,
    };
    assert!(!health_after(&unsynced, now).synced());
    let failing = health_after(&FeedStatus::Failing(FeedError::Ended), now);
    assert!(!failing.synced());
    assert!(failing.last_error().is_some());
}

/// How a snapshot's line starts as the worker writes it: the tag first.
const SNAPSHOT_LINE: &[u8] = br#"{"type":"snapshot","#;

#[test]
fn a_snapshot_reads_the_same_whichever_way_its_fields_come() {
    let snapshot = Frame::Snapshot(Publisher::new(Epoch(3), Utc::now()).snapshot());
    let line = serde_json::to_vec(&snapshot).unwrap();
    assert!(line.starts_with(SNAPSHOT_LINE), "the tag first");
    assert_eq!(decode_line(&line, &Limits::default()), Ok(snapshot.clone()));
    // Another writer may put the tag elsewhere: read the slower way, the same.
    let mut fields: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&line).unwrap();
    let tag = fields.remove("type").unwrap();
    fields.insert("type".into(), tag);
    let moved = serde_json::to_vec(&fields).unwrap();
    assert!(!moved.starts_with(SNAPSHOT_LINE));
    assert_eq!(decode_line(&moved, &Limits::default()), Ok(snapshot));
    let wrong = br#"{"type":"snapshot","epoch":1}"#;
    assert!(matches!(
        decode_line(wrong, &Limits::default()),
        Err(DecodeError::Malformed(_))
    ));
}
