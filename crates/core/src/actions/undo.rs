//! Undo of a scale-to-zero: give back the replicas recorded before it, and only while the
//! workload is still at zero (someone who scaled it up since decided later than we did).
//! The count is read from the parked ConfigMap first, then from the workload's annotation.

use std::fmt;

use serde::Serialize;
use serde_json::json;

use super::calls::Calls;
use super::outcome::{Change, LeftBehind, Outcome};
use super::parked::{ParkedRecord, StoreError};
use super::refusal::Refusal;
use super::workload::{REPLICAS_BEFORE_ANNOTATION, ScalableWorkload, replicas_before};

/// Where the replicas to restore are recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum RecordedIn {
    /// The ConfigMap `ops-pod-cleaner-parked` in the product's namespace.
    ConfigMap,
    /// The workload's `ops-pod-cleaner.io/replicas-before` annotation.
    Annotation,
}

/// What undo will do, checked against the cluster: the workload is at zero and its count is
/// recorded. For a confirmation dialog; running it checks again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoPlan {
    pub workload: ScalableWorkload,
    /// The replicas undo sets.
    pub restores: i32,
    pub recorded_in: RecordedIn,
    /// The ConfigMap's record: when, by whom and why it was parked.
    pub record: Option<ParkedRecord>,
}

impl fmt::Display for UndoPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = match self.recorded_in {
            RecordedIn::ConfigMap => "the parked ConfigMap",
            RecordedIn::Annotation => "its replicas-before annotation",
        };
        write!(
            f,
            "restore {} from 0 to {} replicas (recorded in {place})",
            self.workload, self.restores
        )
    }
}

/// Where undo found the replicas to restore.
enum Remembered {
    /// Boxed: a record is far larger than the annotation's count.
    Parked(Box<ParkedRecord>),
    /// The annotation; `store` says why the ConfigMap was not used, if it was not available.
    Annotation {
        replicas: i32,
        store: Option<String>,
    },
}

impl Remembered {
    fn replicas(&self) -> i32 {
        match self {
            Remembered::Parked(record) => record.replicas,
            Remembered::Annotation { replicas, .. } => *replicas,
        }
    }
}

/// What undo of `w` would restore, or why it would not: its checks without its write
/// (and without removing the record of a workload scaled up since, which undo itself does).
pub(super) async fn check(calls: &Calls, w: &ScalableWorkload) -> Result<UndoPlan, Outcome> {
    let (remembered, current) = read_undo(calls, w).await?;
    if current != 0 {
        return Err(Outcome::Refused(Refusal::NotAtZero {
            workload: w.clone(),
            current,
            removed: None,
        }));
    }
    let restores = remembered.replicas();
    let (recorded_in, record) = match remembered {
        Remembered::Parked(record) => (RecordedIn::ConfigMap, Some(*record)),
        Remembered::Annotation { .. } => (RecordedIn::Annotation, None),
    };
    Ok(UndoPlan {
        workload: w.clone(),
        restores,
        recorded_in,
        record,
    })
}

/// Undo of one scale to zero.
pub(super) async fn run(calls: &Calls, dry_run: bool, w: &ScalableWorkload) -> Outcome {
    let (remembered, current) = match read_undo(calls, w).await {
        Ok(read) => read,
        Err(outcome) => return outcome,
    };
    let store = calls.parked_store();
    let replicas = remembered.replicas();
    // Someone restored it already: a second restore could undo their later decision.
    if current != 0 {
        let mut removed = None;
        if let Remembered::Parked(record) = &remembered
            && !dry_run
            && store.remove(&record.uid).await.is_ok()
        {
            removed = Some((replicas, record.at.clone()));
        }
        return Outcome::Refused(Refusal::NotAtZero {
            workload: w.clone(),
            current,
            removed,
        });
    }
    let restored = |left| Change::Restored {
        workload: w.clone(),
        replicas,
        left,
    };
    if dry_run {
        return Outcome::DryRun(restored(None));
    }
    if let Err(stop) = calls.set_replicas(w, replicas, None).await {
        return stop.into();
    }
    let left = match remembered {
        Remembered::Parked(record) => match store.remove(&record.uid).await {
            Ok(()) => None,
            Err(e) => Some(LeftBehind::Record {
                location: store.location(),
                why: store_error(e),
            }),
        },
        // The annotation was written with this identity's own credentials (the ConfigMap is
        // not available to it), so it may remove it too.
        Remembered::Annotation { store: Some(_), .. } => {
            let forget = json!({"metadata": {"annotations": {REPLICAS_BEFORE_ANNOTATION: null}}});
            match calls.patch_workload(w, &forget).await {
                Ok(()) => None,
                Err(stop) => Some(LeftBehind::Annotation(Box::new(stop.into()))),
            }
        }
        // An annotation an earlier version left: the deployed identity may not change the
        // workload, so it stays, and undo refuses it while the workload runs.
        Remembered::Annotation { store: None, .. } => Some(LeftBehind::OldAnnotation),
    };
    Outcome::Done(restored(left.map(Box::new)))
}

/// What undo reads before it acts: the count recorded for the workload, and its replicas
/// now.
async fn read_undo(calls: &Calls, w: &ScalableWorkload) -> Result<(Remembered, i32), Outcome> {
    let object = calls.get_workload(w).await.map_err(Outcome::from)?;
    let uid = object.metadata.uid.clone().unwrap_or_default();
    let store = calls.parked_store();
    let annotation = || replicas_before(&object.metadata);
    let remembered = match store.get(&uid).await {
        Ok(Some(record)) => Remembered::Parked(Box::new(record)),
        Ok(None) => match annotation() {
            Some(replicas) => Remembered::Annotation {
                replicas,
                store: None,
            },
            None => {
                return Err(Outcome::Refused(Refusal::NotParked {
                    workload: w.clone(),
                    location: store.location(),
                    unavailable: None,
                }));
            }
        },
        Err(StoreError::Unavailable(why)) => match annotation() {
            Some(replicas) => Remembered::Annotation {
                replicas,
                store: Some(why),
            },
            None => {
                return Err(Outcome::Refused(Refusal::NotParked {
                    workload: w.clone(),
                    location: store.location(),
                    unavailable: Some(why),
                }));
            }
        },
        Err(StoreError::Failed(stop)) => return Err(stop.into()),
    };
    let (current, _) = calls.read_scale(w).await.map_err(Outcome::from)?;
    Ok((remembered, current))
}

pub(super) fn store_error(e: StoreError) -> String {
    match e {
        StoreError::Unavailable(why) => why,
        StoreError::Failed(stop) => Outcome::from(stop).detail(),
    }
}
