//! A client's copy of one worker's findings, folded from the frames it reads. Pure: whoever
//! reads the stream (a socket, the API server's service proxy, a test) feeds it frames.

use std::borrow::Borrow;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::fed_row::{FedRow, Shapes};
use super::{Counts, Epoch, Frame, ViewHealth, WorkerView};
use crate::cluster::{ClusterName, Listed};

/// Why a frame could not be applied: the copy would no longer be the worker's state. The
/// client reconnects, resuming from [`FleetView::resume`], and the worker sends a snapshot
/// where it cannot send exactly what was missed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Gap {
    #[error("a change came before any snapshot")]
    NoSnapshot,
    #[error("frames were missed: expected {expected}, got {got}")]
    Missed { expected: u64, got: u64 },
    #[error("the worker restarted (epoch {got:?}, known {known:?})")]
    Epoch { known: Epoch, got: Epoch },
    #[error("more than {max} abnormal pods")]
    TooManyRows { max: usize },
}

/// Where a client is: what it would ask to resume from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resume {
    pub epoch: Epoch,
    pub seq: u64,
}

impl Resume {
    /// The query of `/v1/watch` that resumes here.
    pub fn query(&self) -> String {
        format!("since={}&epoch={}", self.seq, self.epoch.0)
    }
}

/// One worker's findings, counts and status as last read. Each row is kept once, compact, as
/// the screen lists it: the screen shares its rows from here.
#[derive(Debug, Clone)]
pub struct FleetView {
    /// The screen's name for the cluster, which its rows carry.
    cluster: ClusterName,
    at: Option<Resume>,
    /// Where the rows last changed (a snapshot, an upsert, a remove): a worker or counts frame
    /// moves `at` but not this, so a reader that converts rows does so only when they moved.
    rows_at: Option<Resume>,
    rows: HashSet<ByUid>,
    shapes: Shapes,
    counts: Counts,
    worker: WorkerView,
    view: ViewHealth,
    max_rows: usize,
}

impl FleetView {
    pub fn new(cluster: ClusterName, max_rows: usize) -> FleetView {
        FleetView {
            cluster,
            at: None,
            rows_at: None,
            rows: HashSet::new(),
            shapes: Shapes::default(),
            counts: Counts::new(),
            worker: WorkerView::default(),
            view: ViewHealth::default(),
            max_rows,
        }
    }

    /// Fold one frame in. On a gap nothing changes; the client reads a snapshot next.
    pub fn apply(&mut self, frame: Frame) -> Result<(), Gap> {
        if let Frame::Snapshot(snapshot) = frame {
            if snapshot.findings.len() > self.max_rows {
                return Err(Gap::TooManyRows { max: self.max_rows });
            }
            self.at = Some(Resume {
                epoch: snapshot.epoch,
                seq: snapshot.seq,
            });
            self.rows_at = self.at;
            // Every row is made before the served ones are let go (see `FindingRow::fed_row`).
            let mut shapes = Shapes::default();
            let mut rows = HashSet::with_capacity(snapshot.findings.len());
            for row in &snapshot.findings {
                rows.replace(ByUid(Arc::new(row.fed_row(&self.cluster, &mut shapes))));
            }
            (self.rows, self.shapes) = (rows, shapes);
            self.counts = snapshot.counts;
            self.worker = snapshot.worker;
            self.view = snapshot.view;
            return Ok(());
        }
        let at = self.at.ok_or(Gap::NoSnapshot)?;
        if let Frame::Heartbeat {
            epoch, seq, view, ..
        } = frame
        {
            if epoch != at.epoch {
                return Err(Gap::Epoch {
                    known: at.epoch,
                    got: epoch,
                });
            }
            if seq != at.seq {
                return Err(Gap::Missed {
                    expected: at.seq,
                    got: seq,
                });
            }
            self.view = view;
            return Ok(());
        }
        let expected = at.seq + 1;
        if frame.seq() != expected {
            return Err(Gap::Missed {
                expected,
                got: frame.seq(),
            });
        }
        let moves_rows = matches!(frame, Frame::Upsert { .. } | Frame::Remove { .. });
        self.change(frame)?;
        self.at = Some(Resume {
            seq: expected,
            ..at
        });
        if moves_rows {
            self.rows_at = self.at;
        }
        Ok(())
    }

    fn change(&mut self, frame: Frame) -> Result<(), Gap> {
        match frame {
            Frame::Upsert { row, .. } => {
                if !self.rows.contains(row.uid.as_str()) && self.rows.len() >= self.max_rows {
                    return Err(Gap::TooManyRows { max: self.max_rows });
                }
                let kept = row.fed_row(&self.cluster, &mut self.shapes);
                self.rows.replace(ByUid(Arc::new(kept)));
            }
            Frame::Remove { pod, .. } => {
                self.rows.remove(pod.uid.as_str());
            }
            Frame::Counts { counts, .. } => self.counts = counts,
            Frame::Worker { worker, .. } => self.worker = worker,
            // Handled by `apply`: neither is a change at the next sequence number.
            Frame::Snapshot(_) | Frame::Heartbeat { .. } => {}
        }
        self.shapes.forget_unused(self.rows.len());
        Ok(())
    }

    /// Where to resume from; none before the first snapshot.
    pub fn resume(&self) -> Option<Resume> {
        self.at
    }

    /// Where the rows last changed; none before the first snapshot.
    pub fn rows_at(&self) -> Option<Resume> {
        self.rows_at
    }

    /// The findings as the screen lists them, shared, in no particular order.
    pub fn findings(&self) -> impl Iterator<Item = Listed> + '_ {
        self.rows.iter().map(|row| Listed::Fed(Arc::clone(&row.0)))
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn counts(&self) -> &Counts {
        &self.counts
    }

    pub fn worker(&self) -> &WorkerView {
        &self.worker
    }

    /// How current the worker's own view was at its last word.
    pub fn view(&self) -> &ViewHealth {
        &self.view
    }
}

/// A row, found by its pod's uid.
#[derive(Debug, Clone)]
struct ByUid(Arc<FedRow>);

impl PartialEq for ByUid {
    fn eq(&self, other: &ByUid) -> bool {
        self.0.uid() == other.0.uid()
    }
}

impl Eq for ByUid {}

impl Hash for ByUid {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.uid().hash(state);
    }
}

impl Borrow<str> for ByUid {
    fn borrow(&self) -> &str {
        self.0.uid()
    }
}
