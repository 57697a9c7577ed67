//! Where a scale-to-zero remembers the replicas it took away, so undo can give them back.
//!
//! One ConfigMap in the product's own namespace, keyed by workload UID. Recording it there,
//! not in an annotation on the workload, means the deployed identity needs no write access to
//! workload objects (patch on a Deployment can rewrite its pod template: any image, any service
//! account). Every write carries the resourceVersion it read, so two writers never lose each
//! other's entries; a 409 re-reads and tries again.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Client;
use kube::api::{Api, PostParams};
use serde::{Deserialize, Serialize};

use super::action::Origin;
use super::failure::Failure;
use super::retry::{Needs, RetryPolicy, Stop};
use super::workload::ScalableWorkload;
use crate::cluster::ClusterName;
use crate::pod::WorkloadId;
use crate::rules::RuleKind;

/// The ConfigMap's name; the deployed Role grants get/update on this name only.
pub const PARKED_CONFIGMAP: &str = "ops-pod-cleaner-parked";

/// The namespace the manifests deploy to, used when `$POD_NAMESPACE` is not set (a person's
/// TUI), so the TUI and the in-cluster worker share one record of what they parked.
pub const DEFAULT_NAMESPACE: &str = "ops-pod-cleaner";

/// How often a write is retried after losing a race (409) before giving up.
const WRITE_TRIES: usize = 5;

/// The product's namespace: `$POD_NAMESPACE` (the downward API, as for the Lease), else
/// [`DEFAULT_NAMESPACE`].
pub fn parked_namespace() -> String {
    std::env::var("POD_NAMESPACE")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| DEFAULT_NAMESPACE.to_string())
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParkedRecord {
    /// `Deployment`, `StatefulSet`, `ReplicaSet`, `ReplicationController` or `Rollout`.
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub(crate) uid: String,
    /// The replicas before the scale to zero: what undo restores.
    pub replicas: i32,
    /// RFC 3339, UTC.
    pub(crate) at: String,
    /// The kubeconfig context (or `in-cluster`) that parked it.
    pub(crate) cluster: ClusterName,
    /// Who parked it: `user@host`, or the pod's name in the cluster.
    pub(crate) actor: String,
    pub(crate) origin: Origin,
    /// What the rules found on the pod that triggered it, e.g. `imagePull: ImagePullBackOff`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
    /// The pod that triggered it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<String>,
    /// The rule that matched the pod (records written by older versions have only `reason`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) rule: Option<RuleKind>,
    /// The pod's own words for it, e.g. the image pull error (not in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) message: Option<String>,
}

impl ParkedRecord {
    /// The workload this record is about, for undo from a list of parked workloads.
    pub fn workload(&self) -> Option<ScalableWorkload> {
        ScalableWorkload::of(&WorkloadId::new(&self.namespace, &self.kind, &self.name))
    }
}

#[derive(Debug)]
pub(crate) enum StoreError {
    /// This identity cannot use the ConfigMap (403, or its namespace does not exist): the
    /// caller falls back to the annotation on the workload. Says why, for the outcome.
    Unavailable(String),
    /// Anything else (5xx after retries, a timeout, a malformed entry): stop.
    Failed(Stop),
}

/// The typed ConfigMap store; cheap to build, one per action.
pub(crate) struct ParkedStore<'a> {
    api: Api<ConfigMap>,
    namespace: String,
    retry: &'a RetryPolicy,
}

impl<'a> ParkedStore<'a> {
    pub fn new(client: &Client, namespace: String, retry: &'a RetryPolicy) -> ParkedStore<'a> {
        ParkedStore {
            api: Api::namespaced(client.clone(), &namespace),
            namespace,
            retry,
        }
    }

    /// `namespace/name` of the ConfigMap, for messages.
    pub fn location(&self) -> String {
        format!("ConfigMap {}/{PARKED_CONFIGMAP}", self.namespace)
    }

    pub async fn get(&self, uid: &str) -> Result<Option<ParkedRecord>, StoreError> {
        let Some(map) = self.read().await? else {
            return Ok(None);
        };
        let entry = map.data.as_ref().and_then(|d| d.get(uid));
        entry.map(|text| self.decode(uid, text)).transpose()
    }

    /// Every record; one that does not decode is skipped with a log line.
    pub async fn list(&self) -> Result<Vec<ParkedRecord>, StoreError> {
        let Some(map) = self.read().await? else {
            return Ok(Vec::new());
        };
        Ok(map
            .data
            .unwrap_or_default()
            .iter()
            .filter_map(|(uid, text)| match self.decode(uid, text) {
                Ok(record) => Some(record),
                Err(_) => {
                    tracing::warn!("{}: entry {uid} is not a parked record", self.location());
                    None
                }
            })
            .collect())
    }

    pub async fn put(&self, record: &ParkedRecord) -> Result<(), StoreError> {
        let text = serde_json::to_string(record)
            .map_err(|e| StoreError::Failed(Stop::Failed(Failure::Encode(e.to_string()))))?;
        self.write(|data| {
            data.insert(record.uid.clone(), text.clone());
            true
        })
        .await
    }

    /// Forget the record for `uid`; nothing to do when there is none.
    pub async fn remove(&self, uid: &str) -> Result<(), StoreError> {
        self.write(|data| data.remove(uid).is_some()).await
    }

    /// Read, change, write with the resourceVersion read; again on a lost race. `change`
    /// returns false when there is nothing to write. A missing ConfigMap is created (the
    /// manifests ship it, so the deployed identity needs no `create`; a person may lack it,
    /// which makes the store unavailable to them).
    async fn write(
        &self,
        change: impl Fn(&mut BTreeMap<String, String>) -> bool,
    ) -> Result<(), StoreError> {
        let params = PostParams::default();
        for _ in 0..WRITE_TRIES {
            let mut read = self.read().await?;
            let mut data = (read.as_mut().and_then(|map| map.data.take())).unwrap_or_default();
            if !change(&mut data) {
                return Ok(());
            }
            let written = match read {
                Some(mut map) => {
                    map.data = Some(data);
                    let name = PARKED_CONFIGMAP;
                    self.call("update", || self.api.replace(name, &params, &map))
                        .await
                }
                None => {
                    let map = ConfigMap {
                        metadata: kube::api::ObjectMeta {
                            name: Some(PARKED_CONFIGMAP.to_string()),
                            namespace: Some(self.namespace.clone()),
                            ..Default::default()
                        },
                        data: Some(data),
                        ..Default::default()
                    };
                    match self.call("create", || self.api.create(&params, &map)).await {
                        Err(StoreError::Failed(Stop::Gone)) => {
                            return Err(StoreError::Unavailable(format!(
                                "namespace {} does not exist",
                                self.namespace
                            )));
                        }
                        Err(StoreError::Unavailable(why)) => {
                            return Err(StoreError::Unavailable(format!(
                                "{why}, and it does not exist (it ships in assets/deploy/base/parked.yaml)"
                            )));
                        }
                        other => other,
                    }
                }
            };
            match written {
                Ok(_) => return Ok(()),
                // Someone else wrote (or created, or deleted) it since the read: read again.
                Err(StoreError::Failed(Stop::Conflict(_) | Stop::Gone)) => continue,
                Err(other) => return Err(other),
            }
        }
        Err(StoreError::Failed(Stop::Failed(
            Failure::StoreKeptChanging {
                location: self.location(),
                tries: WRITE_TRIES,
            },
        )))
    }

    async fn read(&self) -> Result<Option<ConfigMap>, StoreError> {
        match self.call("get", || self.api.get(PARKED_CONFIGMAP)).await {
            Ok(map) => Ok(Some(map)),
            Err(StoreError::Failed(Stop::Gone)) => Ok(None),
            Err(other) => Err(other),
        }
    }

    /// One call with the shared retry of 429/5xx; a 403 makes the store unavailable.
    async fn call<T, F, Fut>(&self, verb: &'static str, call: F) -> Result<T, StoreError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = kube::Result<T>>,
    {
        self.retry
            .run(Needs::new(verb, "configmaps"), &self.namespace, call)
            .await
            .map_err(|stop| match stop {
                Stop::Forbidden(_) => StoreError::Unavailable(format!(
                    "this identity may not {verb} {}",
                    self.location()
                )),
                other => StoreError::Failed(other),
            })
    }

    fn decode(&self, uid: &str, text: &str) -> Result<ParkedRecord, StoreError> {
        serde_json::from_str(text).map_err(|e| {
            StoreError::Failed(Stop::Failed(Failure::BadRecord {
                location: self.location(),
                uid: uid.to_string(),
                why: e.to_string(),
            }))
        })
    }
}
