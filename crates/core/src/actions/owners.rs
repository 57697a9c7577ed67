//! A pod's controller chain (ReplicaSet → Deployment, Job → CronJob, …), read through a
//! short-lived cache: the opt-out guard asks for every planned pod, and many pods share one
//! owner, so a pass costs one read per owner, never one per pod.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DynamicObject};
use kube::core::{GroupVersionKind, Selector};
use kube::discovery::ApiResource;

use super::calls::Calls;
use super::retry::{Needs, Stop};
use super::selector::{Labels, ROLLOUT_TEMPLATE_HASH, TEMPLATE_HASH, selector};
use crate::pod::{IGNORE_ANNOTATION, MESSAGE_CAP, NAME_CAP, OwnerRef, PodRecord, cut, is_truthy};

/// How long an owner's metadata is trusted: long enough for a pass over many pods of one
/// workload, short enough that adding the opt-out annotation takes effect within a minute.
const TTL: Duration = Duration::from_secs(30);

/// Owner kinds followed up the chain, as (API group, kind, resource); any other kind ends it.
/// Each needs `get` in the ClusterRole.
pub const FOLLOWED_OWNERS: [(&str, &str, &str); 8] = [
    ("apps", "ReplicaSet", "replicasets"),
    ("apps", "Deployment", "deployments"),
    ("apps", "StatefulSet", "statefulsets"),
    ("apps", "DaemonSet", "daemonsets"),
    ("batch", "Job", "jobs"),
    ("batch", "CronJob", "cronjobs"),
    ("argoproj.io", "Rollout", "rollouts"),
    ("", "ReplicationController", "replicationcontrollers"),
];

/// One controller owner up a pod's chain, as read from the API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Owner {
    pub(crate) kind: String,
    pub(crate) namespace: String,
    pub(crate) name: String,
    pub(crate) uid: String,
    /// Carries `ops-pod-cleaner.io/ignore`.
    pub(crate) ignored: bool,
    /// `spec.selector`: which pods it claims.
    pub(crate) selector: Option<Selector>,
    /// Its own `pod-template-hash` label (a ReplicaSet made by a Deployment), or
    /// `rollouts-pod-template-hash` (one made by a Rollout).
    pub(crate) template_hash: Option<String>,
    /// What it says its pods are now: the evidence a scale to zero rests on.
    pub(crate) current: Current,
    /// Its own `controller: true` owner.
    pub(crate) next: Option<OwnerRef>,
}

/// What a workload names as its own pods now, read from the workload itself: a tenant can copy
/// a pod's owner references and labels, not the workload's template or revisions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Current {
    /// The containers of `spec.template`, init containers included.
    pub(crate) containers: Vec<Pulled>,
    /// The template's `imagePullSecrets`.
    pub(crate) pull_secrets: Vec<String>,
    /// The revisions it names current or updating.
    pub(crate) revisions: Vec<String>,
}

/// The revision a Deployment and its newest ReplicaSet carry alike.
pub(crate) const DEPLOYMENT_REVISION: &str = "deployment.kubernetes.io/revision";

impl Current {
    fn of(kind: &str, object: &DynamicObject) -> Current {
        let data = &object.data;
        let text = |v: &serde_json::Value, key: &str| v.get(key)?.as_str().map(String::from);
        let containers = ["containers", "initContainers"]
            .iter()
            .filter_map(|list| data.pointer(&format!("/spec/template/spec/{list}")))
            .filter_map(serde_json::Value::as_array)
            .flatten()
            .map(|c| Pulled {
                container: text(c, "name").unwrap_or_default(),
                image: text(c, "image").unwrap_or_default(),
                policy: text(c, "imagePullPolicy"),
            })
            .collect();
        let pull_secrets = data
            .pointer("/spec/template/spec/imagePullSecrets")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|s| text(s, "name"))
            .collect();
        let status = |field: &str| data.pointer(&format!("/status/{field}"))?.as_str();
        let revisions = match kind {
            "StatefulSet" => vec![status("currentRevision"), status("updateRevision")],
            "Rollout" => vec![status("currentPodHash"), status("stableRS")],
            _ => vec![
                object
                    .metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(DEPLOYMENT_REVISION))
                    .map(String::as_str),
            ],
        };
        let mut revisions: Vec<String> = revisions
            .into_iter()
            .flatten()
            .filter(|r| !r.is_empty())
            .map(String::from)
            .collect();
        revisions.dedup();
        Current {
            containers,
            pull_secrets,
            revisions,
        }
    }
}

/// Where the opt-out annotation sits.
#[derive(Debug, Clone, PartialEq, Eq, strum::Display)]
pub enum OptOut {
    #[strum(to_string = "pod {namespace}/{name} carries {IGNORE_ANNOTATION}")]
    Pod { namespace: String, name: String },
    #[strum(to_string = "{kind} {namespace}/{name} carries {IGNORE_ANNOTATION}")]
    Owner {
        kind: String,
        namespace: String,
        name: String,
    },
}

impl OptOut {
    /// The pod's own annotation first, then the topmost owner that carries one.
    pub(crate) fn find(pod: &PodRecord, chain: &[Owner]) -> Option<OptOut> {
        if pod.ignored {
            return Some(OptOut::Pod {
                namespace: pod.namespace.to_string(),
                name: pod.name.to_string(),
            });
        }
        // The topmost owner that carries it: the Deployment controller copies a Deployment's
        // annotations onto its ReplicaSets, and the Deployment is where a person put it.
        chain
            .iter()
            .rev()
            .find(|o| o.ignored)
            .map(|o| OptOut::Owner {
                kind: o.kind.clone(),
                namespace: o.namespace.clone(),
                name: o.name.clone(),
            })
    }
}

/// Real chains are at most two deep (CronJob → Job, Deployment → ReplicaSet); the bound
/// stops a cycle.
pub(crate) const FULL_CHAIN: usize = 5;

type Key = (String, String, String, String);

/// Owner metadata by (namespace, apiVersion, kind, name), each entry kept for [`TTL`].
#[derive(Default)]
pub(crate) struct Owners {
    /// `None`: the owner is gone (404), which ends the chain.
    entries: Mutex<HashMap<Key, (Instant, Option<Owner>)>>,
}

impl Owners {
    /// The controller chain above `pod`, nearest first, at most `depth` owners (the opt-out
    /// needs all of them, scale resolution only a ReplicaSet's manager). An owner that cannot
    /// be read is an error: its opt-out cannot be ruled out.
    pub async fn chain(
        &self,
        calls: &Calls,
        pod: &PodRecord,
        depth: usize,
    ) -> Result<Vec<Owner>, Stop> {
        let mut chain = Vec::new();
        let mut next = pod.owner.clone();
        while let Some(link) = next.take().filter(|_| chain.len() < depth) {
            let Some((resource, plural)) = followed(&link.api_version, &link.kind) else {
                break;
            };
            // A name no object can have is not asked for: it would only fill the cache.
            if link.name.len() > NAME_CAP {
                break;
            }
            let Some(owner) = self
                .get(calls, &pod.namespace, resource, plural, &link.name)
                .await?
            else {
                break;
            };
            next = owner.next.clone();
            chain.push(owner);
        }
        Ok(chain)
    }

    async fn get(
        &self,
        calls: &Calls,
        namespace: &str,
        resource: ApiResource,
        plural: &'static str,
        name: &str,
    ) -> Result<Option<Owner>, Stop> {
        let key = (
            namespace.to_string(),
            resource.api_version.clone(),
            resource.kind.clone(),
            name.to_string(),
        );
        if let Some((at, owner)) = self.lock().get(&key)
            && at.elapsed() < TTL
        {
            return Ok(owner.clone());
        }
        let api: Api<DynamicObject> =
            Api::namespaced_with(calls.client.clone(), namespace, &resource);
        let owner = match calls
            .retry
            .run(Needs::new("get", plural), namespace, || api.get(name))
            .await
        {
            Ok(object) => Some(owner_of(&resource, namespace, object)),
            Err(Stop::Gone) => None,
            Err(stop) => return Err(stop),
        };
        let mut entries = self.lock();
        entries.retain(|_, (at, _)| at.elapsed() < TTL);
        entries.insert(key, (Instant::now(), owner.clone()));
        Ok(owner)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, (Instant, Option<Owner>)>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The resource of an owner kind that is followed, and its plural (for RBAC).
fn followed(api_version: &str, kind: &str) -> Option<(ApiResource, &'static str)> {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let (_, _, plural) = FOLLOWED_OWNERS
        .iter()
        .find(|(g, k, _)| *g == group && *k == kind)?;
    let gvk = GroupVersionKind::gvk(group, version, kind);
    Some((ApiResource::from_gvk_with_plural(&gvk, plural), plural))
}

fn owner_of(resource: &ApiResource, namespace: &str, object: DynamicObject) -> Owner {
    let meta = &object.metadata;
    let ignored = meta
        .annotations
        .as_ref()
        .and_then(|a| a.get(IGNORE_ANNOTATION))
        .is_some_and(|v| is_truthy(v));
    let next = meta
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))
        .map(|o| OwnerRef {
            api_version: o.api_version.as_str().into(),
            kind: o.kind.as_str().into(),
            name: o.name.as_str().into(),
            uid: o.uid.as_str().into(),
        });
    let current = Current::of(&resource.kind, &object);
    let meta = object.metadata;
    let template_hash = meta
        .labels
        .as_ref()
        .and_then(|l| {
            l.get(TEMPLATE_HASH)
                .or_else(|| l.get(ROLLOUT_TEMPLATE_HASH))
        })
        .cloned();
    Owner {
        kind: resource.kind.clone(),
        namespace: namespace.to_string(),
        name: meta.name.unwrap_or_default(),
        uid: meta.uid.unwrap_or_default(),
        ignored,
        selector: selector(object.data.pointer("/spec/selector")),
        template_hash,
        current,
        next,
    }
}

/// The pod as the API server has it now, for its owners' selectors and templates. A pod of
/// that name with another uid is a new pod: the one planned is gone.
pub(crate) async fn live_pod(calls: &Calls, pod: &PodRecord) -> Result<LivePod, Stop> {
    let api: Api<Pod> = Api::namespaced(calls.client.clone(), &pod.namespace);
    let needs = Needs {
        verb: "get",
        resource: "pods",
    };
    let read = calls
        .retry
        .run(needs, &pod.namespace, || api.get(&pod.name))
        .await?;
    if read.metadata.uid.as_deref() != Some(&*pod.uid) {
        return Err(Stop::Gone);
    }
    Ok(LivePod::of(&read))
}

/// What a scale to zero reads of the pod itself, as it is now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LivePod {
    pub(crate) labels: Labels,
    /// The containers that are failing, each as its spec pulls it.
    pub(crate) failing: Vec<Pulled>,
    pub(crate) pull_secrets: Vec<String>,
}

/// A container as it pulls its image: what a pull failure depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pulled {
    pub(crate) container: String,
    pub(crate) image: String,
    /// `imagePullPolicy` (`Never` fails on a node without the image).
    pub(crate) policy: Option<String>,
}

impl Pulled {
    /// The policy as the API server defaults it: a custom resource's template (a Rollout's)
    /// is not defaulted, the pods made from it are.
    pub(crate) fn pull_policy(&self) -> &str {
        let name = self.image.rsplit('/').next().unwrap_or_default();
        let pinned = self.image.contains('@') || name.contains(':') && !name.ends_with(":latest");
        match self.policy.as_deref() {
            Some(policy) => policy,
            None if pinned => "IfNotPresent",
            None => "Always",
        }
    }
}

impl LivePod {
    /// A container fails when it waits for any reason but its normal start, or last ended
    /// with an error.
    pub(crate) fn of(pod: &Pod) -> LivePod {
        let (spec, status) = (pod.spec.as_ref(), pod.status.as_ref());
        let statuses = status
            .and_then(|s| s.init_container_statuses.as_ref())
            .into_iter()
            .chain(status.and_then(|s| s.container_statuses.as_ref()))
            .flatten();
        let failing_names: Vec<&str> = statuses
            .filter(|c| {
                let state = c.state.as_ref();
                let waiting = state
                    .and_then(|s| s.waiting.as_ref())
                    .and_then(|w| w.reason.as_deref())
                    .is_some_and(|r| !crate::rules::ON_THE_WAY.contains(&r));
                let failed = state
                    .and_then(|s| s.terminated.as_ref())
                    .is_some_and(|t| t.exit_code != 0);
                waiting || failed
            })
            .map(|c| c.name.as_str())
            .collect();
        let failing = spec
            .and_then(|s| s.init_containers.as_ref())
            .into_iter()
            .flatten()
            .chain(spec.map(|s| &s.containers).into_iter().flatten())
            .filter(|c| failing_names.contains(&c.name.as_str()))
            .map(|c| Pulled {
                // The API server checks a name's length, not an image's: a refusal quotes it.
                image: cut(c.image.as_deref().unwrap_or_default(), MESSAGE_CAP).to_string(),
                container: c.name.clone(),
                policy: c.image_pull_policy.clone(),
            })
            .collect();
        let pull_secrets = (spec.and_then(|s| s.image_pull_secrets.as_ref()))
            .into_iter()
            .flatten()
            .map(|s| s.name.clone())
            .collect();
        LivePod {
            labels: pod.metadata.labels.clone().unwrap_or_default(),
            failing,
            pull_secrets,
        }
    }
}
