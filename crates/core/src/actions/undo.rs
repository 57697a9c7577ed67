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

/// What undo of `w` would restore, or why it would not: its checks without its write
/// (and without removing the record of a workload scaled up since, which undo itself does).
pub(super) async fn check(calls: &Calls, w: &ScalableWorkload) -> Result<UndoPlan, Outcome> {
    let (plan, _, current) = read_undo(calls, w).await?;
    if current != 0 {
        return Err(Outcome::Refused(Refusal::NotAtZero {
            workload: w.clone(),
            current,
            removed: None,
        }));
    }
    Ok(plan)
}

pub(super) async fn run(calls: &Calls, dry_run: bool, w: &ScalableWorkload) -> Outcome {
    let (plan, unavailable, current) = match read_undo(calls, w).await {
        Ok(read) => read,
        Err(outcome) => return outcome,
    };
    let store = calls.parked_store();
    let replicas = plan.restores;
    // Someone restored it already: a second restore could undo their later decision.
    if current != 0 {
        let mut removed = None;
        if let Some(record) = &plan.record
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
    let left = match (&plan.record, unavailable) {
        (Some(record), _) => match store.remove(&record.uid).await {
            Ok(()) => None,
            Err(e) => Some(LeftBehind::Record {
                location: store.location(),
                why: store_error(e),
            }),
        },
        // The annotation was written with this identity's own credentials (the ConfigMap is
        // not available to it), so it may remove it too.
        (None, Some(_)) => {
            let forget = json!({"metadata": {"annotations": {REPLICAS_BEFORE_ANNOTATION: null}}});
            match calls.patch_workload(w, &forget).await {
                Ok(()) => None,
                Err(stop) => Some(LeftBehind::Annotation(Box::new(stop.into()))),
            }
        }
        // An annotation an earlier version left: the deployed identity may not change the
        // workload, so it stays, and undo refuses it while the workload runs.
        (None, None) => Some(LeftBehind::OldAnnotation),
    };
    Outcome::Done(restored(left.map(Box::new)))
}

/// What undo reads before it acts: the plan, why the ConfigMap was not available (if it was
/// not), and the workload's replicas now.
async fn read_undo(
    calls: &Calls,
    w: &ScalableWorkload,
) -> Result<(UndoPlan, Option<String>, i32), Outcome> {
    let object = calls.get_workload(w).await.map_err(Outcome::from)?;
    let uid = object.metadata.uid.clone().unwrap_or_default();
    let store = calls.parked_store();
    let (record, unavailable) = match store.get(&uid).await {
        Ok(record) => (record, None),
        Err(StoreError::Unavailable(why)) => (None, Some(why)),
        Err(StoreError::Failed(stop)) => return Err(stop.into()),
    };
    let (restores, recorded_in) = match (&record, replicas_before(&object.metadata)) {
        (Some(record), _) => (record.replicas, RecordedIn::ConfigMap),
        (None, Some(replicas)) => (replicas, RecordedIn::Annotation),
        (None, None) => {
            return Err(Outcome::Refused(Refusal::NotParked {
                workload: w.clone(),
                location: store.location(),
                unavailable,
            }));
        }
    };
    let (current, _) = calls.read_scale(w).await.map_err(Outcome::from)?;
    let plan = UndoPlan {
        workload: w.clone(),
        restores,
        recorded_in,
        record,
    };
    Ok((plan, unavailable, current))
}

pub(super) fn store_error(e: StoreError) -> String {
    match e {
        StoreError::Unavailable(why) => why,
        StoreError::Failed(stop) => Outcome::from(stop).detail(),
    }
}
