//! The server's side, pure: what changed since the last publication, as frames with sequence
//! numbers, and the recent frames a client resumes from.

use std::collections::{HashMap, VecDeque};

use chrono::{DateTime, Utc};

use super::{Counts, Epoch, FindingRow, Frame, Snapshot, ViewHealth, WorkerView};

/// The last published state and its sequence number. One per process: every client reads the
/// same frames, so the diff is made once, not once per client.
#[derive(Debug)]
pub struct Publisher {
    epoch: Epoch,
    seq: u64,
    findings: Vec<FindingRow>,
    counts: Counts,
    worker: WorkerView,
    view: ViewHealth,
    at: DateTime<Utc>,
}

impl Publisher {
    pub fn new(epoch: Epoch, at: DateTime<Utc>) -> Publisher {
        Publisher {
            epoch,
            seq: 0,
            findings: Vec::new(),
            counts: Counts::new(),
            worker: WorkerView::default(),
            view: ViewHealth::default(),
            at,
        }
    }

    pub fn epoch(&self) -> Epoch {
        self.epoch
    }

    /// The row of the pod whose uid [`uid_segment`](super::uid_segment) encodes as `segment`.
    pub fn finding(&self, segment: &str) -> Option<&FindingRow> {
        (self.findings.iter()).find(|row| super::is_uid_segment(&row.uid, segment))
    }

    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The frames that bring a client from the last findings to `findings` (in the screen's
    /// default order): removals, then new or changed findings, then the counts where they
    /// moved, each at the next sequence number. O(abnormal pods): findings are matched by uid.
    pub fn findings(&mut self, findings: Vec<FindingRow>) -> Vec<Frame> {
        let mut frames = Vec::new();
        let before: HashMap<&str, &FindingRow> =
            self.findings.iter().map(|r| (r.uid.as_str(), r)).collect();
        let now: HashMap<&str, &FindingRow> =
            findings.iter().map(|r| (r.uid.as_str(), r)).collect();
        let mut seq = self.seq;
        let mut next = || {
            seq += 1;
            seq
        };
        for gone in self
            .findings
            .iter()
            .filter(|r| !now.contains_key(r.uid.as_str()))
        {
            frames.push(Frame::Remove {
                seq: next(),
                pod: gone.key(),
            });
        }
        for row in &findings {
            if before
                .get(row.uid.as_str())
                .is_some_and(|old| old.same_state(row))
            {
                continue;
            }
            frames.push(Frame::Upsert {
                seq: next(),
                row: row.clone(),
            });
        }
        let counts = counts_of(&findings);
        if counts != self.counts {
            frames.push(Frame::Counts {
                seq: next(),
                counts: counts.clone(),
            });
        }
        self.seq = seq;
        self.findings = findings;
        self.counts = counts;
        frames
    }

    /// The worker's and the view's part: a worker frame where its status moved, a heartbeat
    /// where the view's freshness did. Cheap: what a quiet tick checks.
    pub fn status(
        &mut self,
        worker: WorkerView,
        view: ViewHealth,
        at: DateTime<Utc>,
    ) -> Vec<Frame> {
        let mut frames = Vec::new();
        if worker != self.worker {
            self.seq += 1;
            frames.push(Frame::Worker {
                seq: self.seq,
                worker: worker.clone(),
            });
        }
        let view_moved = !view.same_state(&self.view);
        self.worker = worker;
        self.view = view;
        self.at = at;
        if view_moved {
            frames.push(self.heartbeat(at));
        }
        frames
    }

    pub fn heartbeat(&self, at: DateTime<Utc>) -> Frame {
        Frame::Heartbeat {
            epoch: self.epoch,
            seq: self.seq,
            at,
            view: self.view.clone(),
        }
    }

    /// The whole last published state.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            epoch: self.epoch,
            seq: self.seq,
            at: self.at,
            findings: self.findings.clone(),
            counts: self.counts.clone(),
            worker: self.worker.clone(),
            view: self.view.clone(),
        }
    }
}

fn counts_of(findings: &[FindingRow]) -> Counts {
    let mut counts = Counts::new();
    for row in findings {
        *counts.entry(row.category).or_default() += 1;
    }
    counts
}

/// The last frames published (each as `T`, e.g. its encoded line), by sequence number, so a
/// client that reconnects gets exactly what it missed. Bounded: an older resume gets a snapshot.
#[derive(Debug)]
pub struct Ring<T> {
    frames: VecDeque<(u64, T)>,
    cap: usize,
}

impl<T: Clone> Ring<T> {
    pub fn new(cap: usize) -> Ring<T> {
        Ring {
            frames: VecDeque::with_capacity(cap.min(1024)),
            cap: cap.max(1),
        }
    }

    pub fn push(&mut self, seq: u64, frame: T) {
        if self.frames.len() == self.cap {
            self.frames.pop_front();
        }
        self.frames.push_back((seq, frame));
    }

    /// Every frame after `since` up to `current`, if the ring still holds them all; none
    /// where the client must start again from a snapshot.
    pub fn after(&self, since: u64, current: u64) -> Option<Vec<T>> {
        if since == current {
            return Some(Vec::new());
        }
        let oldest = self.frames.front()?.0;
        if since > current || oldest > since + 1 {
            return None;
        }
        Some(
            self.frames
                .iter()
                .filter(|(seq, _)| *seq > since)
                .map(|(_, f)| f.clone())
                .collect(),
        )
    }
}
