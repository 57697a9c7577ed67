//! What the screen reads of one cluster, apart from what it changes: a pod with its owner
//! chain and Events, where an opt-out sits and what scale to zero would change, the parked
//! workloads, and what undo would restore.

use k8s_openapi::api::core::v1::{Event, Pod};
use kube::api::{Api, DynamicObject, ListParams, LogParams};

use super::action::PodRef;
use super::executor::Executor;
use super::outcome::Outcome;
use super::owner::{self, Resolution};
use super::owners::{FULL_CHAIN, LivePod, OptOut};
use super::parked::ParkedRecord;
use super::parked_rows::{ParkedList, list_parked};
use super::read_error::ReadError;
use super::refusal::Refusal;
use super::scale::available_replicas;
use super::undo::UndoPlan;
use super::workload::{ScalableWorkload, spec_replicas};
use crate::cluster::Scope;
use crate::fleet::{WorkerAnswer, ask_worker};
use crate::rules::{Finding, classify};

/// The most a log read returns: enough to see why a run ended, never a flood.
pub const LOG_LINES: i64 = 200;
pub const LOG_BYTES: i64 = 64 * 1024;
/// How long the details pane waits for a worker's word on a pod.
const WORKER_ANSWERS: std::time::Duration = std::time::Duration::from_secs(10);

/// What a confirmation shows before a manual action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inspection {
    /// What the rules find on the pod as read just now: `None`, it is not abnormal (a yes
    /// would be refused).
    pub live: Option<Finding>,
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
    /// For a cluster read through its worker: what the worker says of the pod now.
    pub worker: Option<WorkerAnswer>,
}

/// The one read path of a cluster, for the screen: it shares the write path's client and
/// owner cache, and writes nothing.
pub struct ClusterApi<'a>(&'a Executor);

impl Executor {
    /// What may be read through this cluster; the writes are [`Executor::run`]'s alone.
    pub fn reads(&self) -> ClusterApi<'_> {
        ClusterApi(self)
    }
}

impl ClusterApi<'_> {
    /// The pod as the API server has it now, its owner chain and its Events.
    pub async fn details(&self, pod: &PodRef) -> Result<PodReading, ReadError> {
        let Executor { calls, cache, .. } = self.0;
        let client = &calls.client;
        let full = match &self.0.worker {
            // No watch fills the cache: the one read of the pod puts it there too.
            Some(_) => super::live_read::read_into(calls, cache, pod)
                .await
                .map_err(|outcome| ReadError::of_outcome(pod, outcome))?,
            None => {
                let pods: Api<Pod> = Api::namespaced(client.clone(), &pod.namespace);
                pods.get(&pod.name)
                    .await
                    .map_err(|e| ReadError::kube(pod, e))?
            }
        };
        // The same pod, read once: another under its name proves nothing about this one.
        let live = (full.metadata.uid.as_deref() == Some(&*pod.uid)).then(|| LivePod::of(&full));
        let inspection = self.inspect_cached(pod, false, live).await;
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
        let worker = match &self.0.worker {
            Some(address) => Some(ask_worker(client, address, &pod.uid, WORKER_ANSWERS).await),
            None => None,
        };
        Ok(PodReading {
            pod: full,
            inspection,
            events,
            worker,
        })
    }

    /// The pod as read just now, judged again, its owner chain (cached) and, with
    /// `workload`, the workload itself: what a dialog shows before a person acts.
    pub async fn inspect(&self, pod: &PodRef, workload: bool) -> Result<Inspection, ReadError> {
        let read = super::live_read::read_into(&self.0.calls, &self.0.cache, pod)
            .await
            .map_err(|outcome| ReadError::of_outcome(pod, outcome))?;
        self.inspect_cached(pod, workload, Some(LivePod::of(&read)))
            .await
    }

    /// [`ClusterApi::inspect`] of the pod as the cache holds it; `live` is the pod as read
    /// just now, when it was (else a scale's proof reads it).
    async fn inspect_cached(
        &self,
        pod: &PodRef,
        workload: bool,
        live: Option<LivePod>,
    ) -> Result<Inspection, ReadError> {
        let Executor {
            calls,
            cache,
            owners,
            ..
        } = self.0;
        let record = (cache.get(&pod.uid)).ok_or_else(|| ReadError::NotCached(pod.clone()))?;
        let chain = owners
            .chain(calls, &record, FULL_CHAIN)
            .await
            .map_err(|stop| ReadError::of_outcome(format!("the owners of {pod}"), stop.into()))?;
        let resolved = owner::resolve(calls, &record, &chain, live).await;
        let resolution = match resolved.map_err(|stop| ReadError::of_outcome(pod, stop.into()))? {
            Ok(proven) => Resolution::Scalable(proven.workload),
            Err(why) => Resolution::Unscalable(why),
        };
        let object: Option<DynamicObject> = match (&resolution, workload) {
            (Resolution::Scalable(w), true) => w.api(&calls.client).get(w.name()).await.ok(),
            _ => None,
        };
        let replicas =
            (object.as_ref().and_then(spec_replicas)).and_then(|r| i32::try_from(r).ok());
        let live = classify(&record, &cache.chain(), cache.clock().now());
        Ok(Inspection {
            live,
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
        let pods: Api<Pod> = Api::namespaced(self.0.calls.client.clone(), &pod.namespace);
        let params = LogParams {
            container: container.map(String::from),
            previous,
            tail_lines: Some(LOG_LINES),
            limit_bytes: Some(LOG_BYTES),
            ..LogParams::default()
        };
        let run = if previous { "previous " } else { "" };
        let what = format!("the {run}logs of {pod}");
        pods.logs(&pod.name, &params)
            .await
            .map_err(|error| match error {
                // The API server proxies logs from the kubelet: a 500 is the way there failing,
                // and a 404 naming another object is the node gone (a real server's words).
                kube::Error::Api(status)
                    if status.code == 500
                        || (status.code == 404
                            && status.details.as_ref().is_some_and(|d| d.name != pod.name)) =>
                {
                    ReadError::NodeUnreachable {
                        what,
                        node: (self.0.cache.get(&pod.uid))
                            .and_then(|record| record.node.as_deref().map(String::from)),
                        why: status.message,
                    }
                }
                error => ReadError::kube(what, error),
            })
    }

    /// The records in this cluster's parked ConfigMap, as stored.
    pub async fn parked_records(&self) -> Result<Vec<ParkedRecord>, ReadError> {
        let store = self.0.calls.parked_store();
        store
            .list()
            .await
            .map_err(|e| ReadError::from_store(store.location(), e))
    }

    /// This cluster's parked workloads in `scopes`, oldest first.
    pub async fn parked_rows(&self, scopes: &[Scope]) -> Result<ParkedList, ReadError> {
        let Executor { calls, cache, .. } = self.0;
        let now = cache.clock().now();
        list_parked(&calls.client, &self.0.cluster, scopes, &calls.retry, now).await
    }

    /// What undo of `w` would restore, or why it would not: its checks without its write.
    pub async fn check_undo(&self, w: &ScalableWorkload) -> Result<UndoPlan, Outcome> {
        if self.0.readonly {
            return Err(Outcome::Refused(Refusal::Readonly));
        }
        super::undo::check(&self.0.calls, w).await
    }
}
