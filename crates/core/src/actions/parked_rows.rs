//! The parked workloads of one cluster, as rows for `scan --parked` and the screen.
//!
//! Read from the parked ConfigMap, and from the `replicas-before` annotation that a person
//! without access to the ConfigMap (or an earlier version) left on the workload. A workload
//! someone scaled up since is listed with its replicas now: its record is stale, and undo
//! refuses it (removing the record). An annotation on a workload that runs again is only what
//! an earlier version left behind, so such workloads are not listed.

use chrono::{DateTime, Utc};
use futures::{StreamExt, stream};
use kube::Client;
use kube::api::{Api, DynamicObject, ListParams};
use serde::Serialize;

use super::action::{Action, Origin};
use super::calls::Calls;
use super::outcome::Outcome;
use super::parked::{ParkedRecord, StoreError};
use super::read_error::ReadError;
use super::retry::{Needs, RetryPolicy, Stop};
use super::undo::RecordedIn;
use super::workload::{
    REPLICAS_BEFORE_ANNOTATION, ScalableWorkload, WorkloadKind, replicas_before, spec_replicas,
};
use crate::cluster::{ClusterName, Scope};
use crate::rules::RuleKind;

/// Workloads read at once while listing.
const READS_AT_ONCE: usize = 8;
const PAGE: u32 = 500;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ParkedRow {
    /// The context it was listed from.
    pub cluster: ClusterName,
    #[serde(flatten)]
    pub workload: ScalableWorkload,
    pub uid: String,
    /// What undo restores.
    pub replicas_before: i32,
    /// When it was parked; not recorded in an annotation.
    pub parked_at: Option<DateTime<Utc>>,
    /// How long it has been parked, when it was listed.
    pub parked_for_seconds: Option<i64>,
    pub origin: Option<Origin>,
    /// Who parked it: `user@host`, or the worker's pod.
    pub actor: Option<String>,
    pub trigger: Option<Trigger>,
    pub recorded_in: RecordedIn,
    pub now: ParkedState,
}

impl ParkedRow {
    /// Undo, to run on this row's cluster's executor (confirm with the executor's `check_undo`).
    pub fn undo(&self) -> Action {
        Action::UndoScale(self.workload.clone())
    }

    pub fn parked_for(&self, now: DateTime<Utc>) -> Option<chrono::Duration> {
        self.parked_at.map(|at| now - at)
    }
}

/// The pod that triggered a scale to zero, and what the rules found on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Trigger {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pod: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<RuleKind>,
    /// As recorded, e.g. `imagePull: ImagePullBackOff`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The pod's own words, e.g. the image pull error (absent from records written by older versions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Where a parked workload stands now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "state")]
pub enum ParkedState {
    /// Still at zero: undo restores it.
    Parked,
    /// Someone scaled it up since; the record is stale.
    ScaledUp { replicas: i32 },
    /// Deleted, or replaced by a new workload of the same name.
    Gone,
    /// It could not be read.
    Unknown { why: String },
}

/// The rows, and the places that could not be read (so the list may be short).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParkedList {
    pub rows: Vec<ParkedRow>,
    pub unread: Vec<Unread>,
}

/// A place parked workloads are recorded that could not be read here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unread {
    /// `ConfigMap ops-pod-cleaner/ops-pod-cleaner-parked`, or `deployments` for annotations.
    pub place: String,
    pub why: String,
}

/// A workload with a recorded count, before it is read.
struct Candidate {
    workload: ScalableWorkload,
    uid: String,
    replicas_before: i32,
    recorded_in: RecordedIn,
    record: Option<ParkedRecord>,
}

/// The parked workloads in `scopes` of the cluster behind `client`, named `cluster` in the
/// rows, oldest first (those without a time last). An error only when the ConfigMap exists
/// and cannot be read; annotations that cannot be listed are named in `unread`.
pub async fn list_parked(
    client: &Client,
    cluster: &ClusterName,
    scopes: &[Scope],
    retry: &RetryPolicy,
    now: DateTime<Utc>,
) -> Result<ParkedList, ReadError> {
    let calls = Calls::new(client.clone(), retry.clone());
    let mut unread = Vec::new();
    let store = calls.parked_store();
    let records = match store.list().await {
        Ok(records) => records,
        Err(StoreError::Unavailable(why)) => {
            unread.push(Unread {
                place: store.location(),
                why,
            });
            Vec::new()
        }
        Err(e) => return Err(ReadError::from_store(store.location(), e)),
    };
    let covered = |ns: &str| scopes.iter().any(|s| s.covers(ns));
    let mut candidates: Vec<Candidate> = records
        .into_iter()
        .filter(|r| covered(&r.namespace))
        .filter_map(from_record)
        .collect();
    for &kind in WorkloadKind::ALL {
        for scope in scopes {
            match annotated(&calls, kind, scope).await {
                Ok(found) => {
                    // A workload with a record in the ConfigMap too: the ConfigMap says more.
                    let new: Vec<Candidate> = found
                        .into_iter()
                        .filter(|a| !candidates.iter().any(|c| c.uid == a.uid))
                        .collect();
                    candidates.extend(new);
                }
                Err(why) => unread.push(Unread {
                    place: format!("{} ({REPLICAS_BEFORE_ANNOTATION})", kind.plural()),
                    why: why.to_string(),
                }),
            }
        }
    }
    let mut rows: Vec<ParkedRow> = stream::iter(candidates)
        .map(|c| row(&calls, cluster, c, now))
        .buffered(READS_AT_ONCE)
        .filter_map(|row| async move { row })
        .collect()
        .await;
    rows.sort_by(|a, b| oldest_first(a).cmp(&oldest_first(b)));
    Ok(ParkedList { rows, unread })
}

fn oldest_first(row: &ParkedRow) -> (bool, Option<DateTime<Utc>>, &str, &str) {
    let at = row.parked_at;
    (
        at.is_none(),
        at,
        row.workload.namespace(),
        row.workload.name(),
    )
}

fn from_record(record: ParkedRecord) -> Option<Candidate> {
    let Some(workload) = record.workload() else {
        tracing::warn!(
            "a parked record names kind {:?}, which ops-pod-cleaner does not scale; skipped",
            record.kind
        );
        return None;
    };
    Some(Candidate {
        workload,
        uid: record.uid.clone(),
        replicas_before: record.replicas,
        recorded_in: RecordedIn::ConfigMap,
        record: Some(record),
    })
}

/// Workloads of `kind` in `scope` carrying the annotation; their metadata only, page by page.
/// A kind the server does not serve (no Argo Rollouts) has none.
async fn annotated(
    calls: &Calls,
    kind: WorkloadKind,
    scope: &Scope,
) -> Result<Vec<Candidate>, ReadError> {
    let (client, resource) = (calls.client.clone(), kind.api_resource());
    let (api, namespace): (Api<DynamicObject>, &str) = match scope {
        Scope::All => (Api::all_with(client, &resource), ""),
        Scope::Namespace(ns) => (Api::namespaced_with(client, ns, &resource), ns),
    };
    let needs = Needs::new("list", kind.plural());
    let mut found = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut params = ListParams::default().limit(PAGE);
        if let Some(t) = &token {
            params = params.continue_token(t);
        }
        let page = match calls
            .retry
            .run(needs, namespace, || api.list_metadata(&params))
            .await
        {
            Ok(page) => page,
            Err(Stop::Gone) => return Ok(found),
            Err(stop) => return Err(ReadError::of_outcome(kind.plural(), stop.into())),
        };
        for item in page.items {
            let meta = item.metadata;
            // A ReplicaSet a Deployment (or Rollout) manages carries a copy of that workload's
            // annotations, made by its controller: the workload is the one parked.
            let managed = meta.owner_references.iter().flatten().any(|o| {
                o.controller == Some(true) && matches!(o.kind.as_str(), "Deployment" | "Rollout")
            });
            if managed {
                continue;
            }
            let before = replicas_before(&meta);
            let (Some(replicas_before), Some(name), Some(ns)) = (before, meta.name, meta.namespace)
            else {
                continue;
            };
            found.push(Candidate {
                workload: ScalableWorkload::new(kind, &ns, &name),
                uid: meta.uid.unwrap_or_default(),
                replicas_before,
                recorded_in: RecordedIn::Annotation,
                record: None,
            });
        }
        token = page.metadata.continue_.filter(|t| !t.is_empty());
        if token.is_none() {
            return Ok(found);
        }
    }
}

/// The row, with the workload read now; `None` for an annotation whose workload runs or is gone.
async fn row(
    calls: &Calls,
    cluster: &ClusterName,
    c: Candidate,
    now: DateTime<Utc>,
) -> Option<ParkedRow> {
    let state = state_now(calls, &c).await;
    if c.recorded_in == RecordedIn::Annotation && state != ParkedState::Parked {
        return None;
    }
    let record = c.record.as_ref();
    let parked_at = record
        .and_then(|r| DateTime::parse_from_rfc3339(&r.at).ok())
        .map(|at| at.with_timezone(&Utc));
    let trigger = record
        .map(|r| Trigger {
            pod: r.pod.clone(),
            rule: r.rule,
            reason: r.reason.clone(),
            message: r.message.clone(),
        })
        .filter(|t| t.pod.is_some() || t.reason.is_some());
    Some(ParkedRow {
        cluster: cluster.clone(),
        workload: c.workload,
        uid: c.uid,
        replicas_before: c.replicas_before,
        parked_for_seconds: parked_at.map(|at| (now - at).num_seconds().max(0)),
        parked_at,
        origin: record.map(|r| r.origin),
        actor: record.map(|r| r.actor.clone()),
        trigger,
        recorded_in: c.recorded_in,
        now: state,
    })
}

/// The workload's `spec.replicas` now, if it is still the one that was parked.
async fn state_now(calls: &Calls, c: &Candidate) -> ParkedState {
    match calls.get_workload(&c.workload).await {
        Ok(object) if object.metadata.uid.as_deref() != Some(c.uid.as_str()) => ParkedState::Gone,
        Ok(object) => match spec_replicas(&object) {
            Some(0) => ParkedState::Parked,
            // Unset means the default of one.
            replicas => ParkedState::ScaledUp {
                replicas: replicas.and_then(|n| i32::try_from(n).ok()).unwrap_or(1),
            },
        },
        Err(Stop::Gone) => ParkedState::Gone,
        Err(stop) => ParkedState::Unknown {
            why: Outcome::from(stop).detail(),
        },
    }
}
