use chrono::{DateTime, Utc};

use super::*;
use crate::cluster::ClusterName;
use crate::rules::{ActionKind, Cause, CauseClass, RuleKind};

fn t0() -> DateTime<Utc> {
    "2026-11-20T09:00:00Z".parse().unwrap_or_default()
}

/// A finding of `uid` in `category`, in state for `secs` seconds.
pub(super) fn row(uid: &str, category: RuleKind, secs: i64) -> FindingRow {
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

fn line(frame: &Frame) -> Vec<u8> {
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
