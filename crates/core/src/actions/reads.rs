//! What the screen reads of one cluster, apart from what it changes: a pod with its owner
//! chain and Events, where an opt-out sits and what scale to zero would change, the parked
//! workloads, and what undo would restore.

use k8s_openapi::api::core::v1::{Event, Pod};
use kube::api::{Api, DynamicObject, ListParams, LogParams};

use super::execute::{Executor, stopped};
use super::owner::{self, Resolution};
use super::owners::{FULL_CHAIN, OptOut, pod_labels};
use super::parked_rows::{ParkedList, list_parked};
use super::refusal::Denied;
use super::retry::Stop;
use super::scale::available_replicas;
use super::undo::UndoPlan;
use super::{Outcome, PodRef, WorkloadRef};
use crate::cluster::Scope;

/// The most a log read returns: enough to see why a run ended, never a flood.
pub const LOG_LINES: i64 = 200;
pub const LOG_BYTES: i64 = 64 * 1024;

/// Why a read failed, as a value; its words are made where it is shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The pod left the cache (deleted since the screen showed it).
    #[error("{0} is gone from the cache")]
    NotCached(PodRef),
    /// 404.
    #[error("{0} is gone")]
    Gone(String),
    /// 403, with the permission the read needed.
    #[error("{0}")]
    Forbidden(Denied),
    /// Anything else, retries included: what was read, and what went wrong.
    #[error("cannot read {what}: {why}")]
    Failed { what: String, why: String },
}

impl ReadError {
    pub(super) fn stopped(what: impl ToString, stop: Stop) -> ReadError {
        match stop {
            Stop::Gone => ReadError::Gone(what.to_string()),
            Stop::Forbidden(denied) => ReadError::Forbidden(denied),
            stop => ReadError::Failed {
                what: what.to_string(),
                why: stopped(stop).detail().to_string(),
            },
        }
    }

    fn kube(what: impl ToString, error: kube::Error) -> ReadError {
        match error {
            kube::Error::Api(status) if status.code == 404 => ReadError::Gone(what.to_string()),
            error => ReadError::Failed {
                what: what.to_string(),
                why: crate::cluster::plain(&error),
            },
        }
    }
}

/// What a confirmation shows before a manual action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inspection {
    pub opt_out: Option<OptOut>,
    pub resolution: Resolution,
    /// `spec.replicas` of the workload, when asked for and readable.
    pub replicas: Option<i32>,
    /// `status.availableReplicas`: how many would stop serving.
    pub available: Option<i32>,
}

/// A pod as read for its details pane.
#[derive(Debug, Clone)]
pub struct PodReading {
    pub pod: Pod,
    /// Its owner chain checked for an opt-out and a workload to scale.
    pub inspection: Result<Inspection, ReadError>,
    /// The Events about it, this pod's (not an earlier pod's of the same name).
    pub events: Result<Vec<Event>, ReadError>,
}

/// The reads of one cluster, through its executor (which caches owner chains).
pub struct ClusterApi<'a> {
    executor: &'a Executor,
}

impl Executor {
    /// What may be read through this executor; the writes are [`Executor::run`]'s alone.
    pub fn reads(&self) -> ClusterApi<'_> {
        ClusterApi { executor: self }
    }
}

impl ClusterApi<'_> {
    /// The pod as the API server has it now, its owner chain and its Events.
    pub async fn details(&self, pod: &PodRef) -> Result<PodReading, ReadError> {
        let client = &self.executor.client;
        let pods: Api<Pod> = Api::namespaced(client.clone(), &pod.namespace);
        let full = pods
            .get(&pod.name)
            .await
            .map_err(|e| ReadError::kube(pod, e))?;
        let inspection = self.inspect(pod, false).await;
        let events: Api<Event> = Api::namespaced(client.clone(), &pod.namespace);
        let params = ListParams::default().fields(&format!("involvedObject.name={}", pod.name));
        let events = match events.list(&params).await {
            Ok(list) => Ok(list
                .items
                .into_iter()
                .filter(|e| {
                    let uid = e.involved_object.uid.as_deref();
                    uid.is_none_or(|u| u == pod.uid)
                })
                .collect()),
            Err(e) => Err(ReadError::kube(format!("the Events of {pod}"), e)),
        };
        Ok(PodReading {
            pod: full,
            inspection,
            events,
        })
    }

    /// The pod's owner chain (cached) and, with `workload`, the workload itself.
    pub async fn inspect(&self, pod: &PodRef, workload: bool) -> Result<Inspection, ReadError> {
        let executor = self.executor;
        let record = executor
            .cache
            .get(&pod.uid)
            .ok_or_else(|| ReadError::NotCached(pod.clone()))?;
        let chain = executor
            .owners
            .chain(
                &executor.client,
                &executor.settings.retry,
                &record,
                FULL_CHAIN,
            )
            .await
            .map_err(|stop| ReadError::stopped(format!("the owners of {pod}"), stop))?;
        let resolution = match owner::scalable_owner(&record, &chain) {
            Err(why) => Resolution::Unscalable(why),
            Ok(_) => {
                let labels = pod_labels(&executor.client, &executor.settings.retry, &record)
                    .await
                    .map_err(|stop| ReadError::stopped(pod, stop))?;
                match owner::resolve(&record, &labels, &chain) {
                    Ok(proven) => Resolution::Scalable(proven.workload),
                    Err(why) => Resolution::Unscalable(why),
                }
            }
        };
        let object: Option<DynamicObject> = match (&resolution, workload) {
            (Resolution::Scalable(w), true) => w.api(&executor.client).get(&w.name).await.ok(),
            _ => None,
        };
        let replicas = object
            .as_ref()
            .and_then(|o| o.data.pointer("/spec/replicas")?.as_i64())
            .and_then(|r| i32::try_from(r).ok());
        Ok(Inspection {
            opt_out: OptOut::find(&record, &chain),
            resolution,
            replicas,
            available: object.as_ref().map(available_replicas),
        })
    }

    /// The last lines a container wrote (`previous`: in its run before this one), at most
    /// [`LOG_LINES`] lines and [`LOG_BYTES`] bytes; the client's deadline bounds the wait.
    pub async fn logs(
        &self,
        pod: &PodRef,
        container: Option<&str>,
        previous: bool,
    ) -> Result<String, ReadError> {
        let pods: Api<Pod> = Api::namespaced(self.executor.client.clone(), &pod.namespace);
        let params = LogParams {
            container: container.map(String::from),
            previous,
            tail_lines: Some(LOG_LINES),
            limit_bytes: Some(LOG_BYTES),
            ..LogParams::default()
        };
        let run = if previous { "previous " } else { "" };
        pods.logs(&pod.name, &params)
            .await
            .map_err(|e| ReadError::kube(format!("the {run}logs of {pod}"), e))
    }

    /// This cluster's parked workloads in `scopes`, oldest first.
    pub async fn parked_rows(&self, scopes: &[Scope]) -> Result<ParkedList, ReadError> {
        let executor = self.executor;
        list_parked(
            &executor.client,
            executor.cluster(),
            scopes,
            &executor.settings.retry,
            chrono::Utc::now(),
        )
        .await
    }

    /// What undo of `w` would restore, or why it would not: its checks without its write.
    pub async fn check_undo(&self, w: &WorkloadRef) -> Result<UndoPlan, Outcome> {
        self.executor.check_undo(w).await
    }
}
