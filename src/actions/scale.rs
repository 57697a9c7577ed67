//! Scale to zero and undo: the Executor's workload actions, through the scale subresource.
//!
//! The replicas taken away are recorded before the scale, in the parked ConfigMap of the
//! product's namespace (`parked.rs`), so the deployed identity never needs write access to a
//! workload object. Where that ConfigMap is not available to the identity (a person's own
//! credentials in the TUI), the `ops-pod-cleaner.io/replicas-before` annotation on the workload
//! is the fallback, as earlier versions always did; undo reads both, the ConfigMap first.

use chrono::Utc;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::json;

use super::audit::AuditRecord;
use super::execute::{Executor, stopped};
use super::owner::{self, Owner, Resolution, WorkloadKind, WorkloadRef};
use super::parked::{ParkedRecord, ParkedStore, StoreError, parked_namespace};
use super::retry::{Needs, Stop};
use super::{Origin, Outcome, REPLICAS_BEFORE_ANNOTATION};
use crate::pod::{IGNORE_ANNOTATION, PodRecord, is_truthy};
use crate::rules::classify;

/// A scale-to-zero that passed its checks: the workload and its replicas when it was read.
#[derive(Debug, Clone)]
pub(crate) struct ScalePlan {
    pub workload: WorkloadRef,
    pub current: i32,
    /// The workload's UID: the key of its parked record.
    pub uid: String,
    pub origin: Origin,
    /// The pod that triggered it, and what the rules found on it.
    pub pod: String,
    pub reason: Option<String>,
}

/// Where undo found the replicas to restore.
enum Remembered {
    Parked(ParkedRecord),
    /// The annotation; `store` says why the ConfigMap was not used, if it was not available.
    Annotation {
        replicas: i32,
        store: Option<String>,
    },
}

impl Executor {
    /// Resolve the workload and read it fresh. The worker never scales a workload that still
    /// has available replicas (a bad rollout: the old ReplicaSet still serves), unless the rule
    /// opts in with `scaleWhileAvailable`.
    pub(super) async fn plan_scale(
        &self,
        pod: &PodRecord,
        chain: &[Owner],
        origin: Origin,
    ) -> Result<ScalePlan, Outcome> {
        let workload = match owner::resolve(pod, chain) {
            Resolution::Scalable(w) => w,
            Resolution::Unscalable(why) => return Err(Outcome::Refused(why)),
        };
        let api = workload.api(&self.client);
        let object = self.get_workload(&api, &workload).await.map_err(stopped)?;
        let annotations = object.metadata.annotations.clone().unwrap_or_default();
        if let Origin::Auto(rule) = origin {
            if annotations
                .get(IGNORE_ANNOTATION)
                .is_some_and(|v| is_truthy(v))
            {
                return Err(Outcome::Refused(format!(
                    "{workload} carries {IGNORE_ANNOTATION}: left alone"
                )));
            }
            let available = available_replicas(&object);
            let opted_in = self
                .chain
                .iter()
                .any(|r| r.kind == rule && r.scale_while_available);
            if available > 0 && !opted_in {
                return Err(Outcome::Refused(bad_rollout(&workload, available)));
            }
        }
        let current = self
            .current_replicas(&api, &workload)
            .await
            .map_err(stopped)?;
        if current == 0 {
            return Err(Outcome::Skipped(format!(
                "{workload} is already at 0 replicas"
            )));
        }
        Ok(ScalePlan {
            uid: object.metadata.uid.clone().unwrap_or_default(),
            workload,
            current,
            origin,
            pod: pod.name.to_string(),
            reason: classify(pod, &self.chain, Utc::now())
                .map(|f| format!("{}: {}", f.rule, f.reason)),
        })
    }

    pub(super) async fn scale_to_zero(&self, plan: &ScalePlan) -> Outcome {
        let w = &plan.workload;
        let current = plan.current;
        if self.settings.dry_run {
            return Outcome::DryRun(format!("would scale {w} from {current} to 0"));
        }
        let api = w.api(&self.client);
        // Remember first, so undo works even if the scale call is the one that fails; and never
        // scale what could not be remembered.
        let store = self.parked_store();
        let fallback = match store.put(&self.parked_record(plan)).await {
            Ok(()) => None,
            Err(StoreError::Failed(stop)) => return stopped(stop),
            Err(StoreError::Unavailable(why)) => {
                let remember = json!({"metadata": {"annotations": {REPLICAS_BEFORE_ANNOTATION: current.to_string()}}});
                match self
                    .patch(&api, w, "patch", w.kind.plural(), &remember)
                    .await
                {
                    Ok(()) => Some(why),
                    Err(Stop::Forbidden(denied)) => {
                        return Outcome::Refused(format!(
                            "nowhere to record the {current} replicas of {w} for undo, so it was \
                             not scaled: {why}, and {denied}"
                        ));
                    }
                    Err(stop) => return stopped(stop),
                }
            }
        };
        match self.set_replicas(&api, w, 0).await {
            Ok(()) => {
                let done = format!("scaled {w} from {current} to 0 (undo restores {current})");
                Outcome::Done(match fallback {
                    None => done,
                    Some(why) => format!(
                        "{done}; recorded in its {REPLICAS_BEFORE_ANNOTATION} annotation ({why})"
                    ),
                })
            }
            Err(stop) => {
                // Refused or gone: nothing was parked, so the record would only mislead.
                if fallback.is_none() && matches!(stop, Stop::Forbidden(_) | Stop::Gone) {
                    let _ = store.remove(&plan.uid).await;
                }
                stopped(stop)
            }
        }
    }

    pub(super) async fn undo_scale(&self, w: &WorkloadRef) -> Outcome {
        let api = w.api(&self.client);
        let object = match self.get_workload(&api, w).await {
            Ok(object) => object,
            Err(stop) => return stopped(stop),
        };
        let uid = object.metadata.uid.clone().unwrap_or_default();
        let store = self.parked_store();
        let annotation = || {
            object
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(REPLICAS_BEFORE_ANNOTATION))
                .and_then(|v| v.parse::<i32>().ok())
        };
        let remembered = match store.get(&uid).await {
            Ok(Some(record)) => Remembered::Parked(record),
            Ok(None) => match annotation() {
                Some(replicas) => Remembered::Annotation {
                    replicas,
                    store: None,
                },
                None => {
                    return Outcome::Refused(format!(
                        "{w} has no record in {} and no {REPLICAS_BEFORE_ANNOTATION} annotation: \
                         ops-pod-cleaner did not scale it down",
                        store.location()
                    ));
                }
            },
            Err(StoreError::Unavailable(why)) => match annotation() {
                Some(replicas) => Remembered::Annotation {
                    replicas,
                    store: Some(why),
                },
                None => {
                    return Outcome::Refused(format!(
                        "{w} has no {REPLICAS_BEFORE_ANNOTATION} annotation, and {} cannot be \
                         used here ({why}): if ops-pod-cleaner in the cluster parked it, the count \
                         is recorded there; restore it with `kubectl scale --replicas=N {} -n {}`",
                        store.location(),
                        kubectl_name(w),
                        w.namespace
                    ));
                }
            },
            Err(StoreError::Failed(stop)) => return stopped(stop),
        };
        let replicas = match &remembered {
            Remembered::Parked(record) => record.replicas,
            Remembered::Annotation { replicas, .. } => *replicas,
        };
        // Someone restored it already: a second restore could undo their later decision.
        let current = match self.current_replicas(&api, w).await {
            Ok(current) => current,
            Err(stop) => return stopped(stop),
        };
        if current != 0 {
            let mut why = format!(
                "{w} is not at 0 replicas any more: already restored to {current}; left as it is"
            );
            if let Remembered::Parked(record) = &remembered
                && !self.settings.dry_run
                && store.remove(&record.uid).await.is_ok()
            {
                why.push_str(&format!(
                    " and its record (parked from {replicas} at {}) removed",
                    record.at
                ));
            }
            return Outcome::Refused(why);
        }
        if self.settings.dry_run {
            return Outcome::DryRun(format!("would restore {w} to {replicas} replicas"));
        }
        if let Err(stop) = self.set_replicas(&api, w, replicas).await {
            return stopped(stop);
        }
        let done = format!("restored {w} to {replicas} replicas");
        match remembered {
            Remembered::Parked(record) => match store.remove(&record.uid).await {
                Ok(()) => Outcome::Done(done),
                Err(e) => Outcome::Done(format!(
                    "{done}, but its record stays in {} ({}); a second undo refuses it while it runs",
                    store.location(),
                    store_error(e)
                )),
            },
            // The annotation was written with this identity's own credentials (the ConfigMap is
            // not available to it), so it may remove it too.
            Remembered::Annotation { store: Some(_), .. } => {
                let forget =
                    json!({"metadata": {"annotations": {REPLICAS_BEFORE_ANNOTATION: null}}});
                match self.patch(&api, w, "patch", w.kind.plural(), &forget).await {
                    Ok(()) => Outcome::Done(done),
                    Err(stop) => Outcome::Done(format!(
                        "{done}, but could not remove the annotation: {}",
                        stopped(stop).detail()
                    )),
                }
            }
            // An annotation an earlier version left: the deployed identity may not change the
            // workload, so it stays, and undo refuses it while the workload runs.
            Remembered::Annotation { store: None, .. } => Outcome::Done(format!(
                "{done}; the {REPLICAS_BEFORE_ANNOTATION} annotation an earlier version left stays \
                 (remove it with `kubectl annotate {} {}- -n {}`)",
                kubectl_name(w),
                REPLICAS_BEFORE_ANNOTATION,
                w.namespace
            )),
        }
    }

    /// The workloads parked in this cluster's ConfigMap, for a list with undo. Workloads whose
    /// record is only an annotation (a person without access to the ConfigMap) are not listed.
    pub async fn parked_workloads(&self) -> Result<Vec<ParkedRecord>, String> {
        self.parked_store().list().await.map_err(store_error)
    }

    fn parked_store(&self) -> ParkedStore<'_> {
        ParkedStore::new(&self.client, parked_namespace(), &self.settings.retry)
    }

    fn parked_record(&self, plan: &ScalePlan) -> ParkedRecord {
        let w = &plan.workload;
        ParkedRecord {
            kind: w.kind.name().to_string(),
            namespace: w.namespace.clone(),
            name: w.name.clone(),
            uid: plan.uid.clone(),
            replicas: plan.current,
            at: AuditRecord::stamp(Utc::now()),
            cluster: self.settings.cluster.clone(),
            actor: self.actor.clone(),
            origin: plan.origin,
            reason: plan.reason.clone(),
            pod: Some(plan.pod.clone()),
        }
    }

    /// `spec.replicas` as the scale subresource reports it.
    async fn current_replicas(
        &self,
        api: &Api<DynamicObject>,
        w: &WorkloadRef,
    ) -> Result<i32, Stop> {
        let scale = self
            .settings
            .retry
            .run(scale_needs(w, "get"), &w.namespace, || {
                api.get_scale(&w.name)
            })
            .await?;
        Ok(scale.spec.and_then(|s| s.replicas).unwrap_or(0))
    }

    async fn get_workload(
        &self,
        api: &Api<DynamicObject>,
        w: &WorkloadRef,
    ) -> Result<DynamicObject, Stop> {
        let needs = needs("get", w.kind.plural());
        self.settings
            .retry
            .run(needs, &w.namespace, || api.get(&w.name))
            .await
    }

    async fn patch(
        &self,
        api: &Api<kube::api::DynamicObject>,
        w: &WorkloadRef,
        verb: &'static str,
        resource: &'static str,
        body: &serde_json::Value,
    ) -> Result<(), Stop> {
        let params = PatchParams::default();
        let patch = Patch::Merge(body);
        self.settings
            .retry
            .run(needs(verb, resource), &w.namespace, || {
                api.patch(&w.name, &params, &patch)
            })
            .await
            .map(|_| ())
    }

    /// Write replicas through the scale subresource.
    async fn set_replicas(
        &self,
        api: &Api<kube::api::DynamicObject>,
        w: &WorkloadRef,
        replicas: i32,
    ) -> Result<(), Stop> {
        let params = PatchParams::default();
        let body = json!({"spec": {"replicas": replicas}});
        let patch = Patch::Merge(&body);
        self.settings
            .retry
            .run(scale_needs(w, "patch"), &w.namespace, || {
                api.patch_scale(&w.name, &params, &patch)
            })
            .await
            .map(|_| ())
    }
}

fn store_error(e: StoreError) -> String {
    match e {
        StoreError::Unavailable(why) => why,
        StoreError::Failed(stop) => stopped(stop).detail().to_string(),
    }
}

/// `deployment/web`, as kubectl names it.
fn kubectl_name(w: &WorkloadRef) -> String {
    match w.kind {
        WorkloadKind::Rollout => format!("rollouts.argoproj.io/{}", w.name),
        kind => format!("{}/{}", kind.name().to_lowercase(), w.name),
    }
}

fn needs(verb: &'static str, resource: &'static str) -> Needs {
    Needs { verb, resource }
}

fn scale_needs(w: &WorkloadRef, verb: &'static str) -> Needs {
    let resource = match w.kind.plural() {
        "deployments" => "deployments/scale",
        "rollouts" => "rollouts/scale",
        "statefulsets" => "statefulsets/scale",
        "replicasets" => "replicasets/scale",
        _ => "replicationcontrollers/scale",
    };
    Needs { verb, resource }
}

/// `status.availableReplicas`: Deployments, StatefulSets, ReplicaSets, RCs and Argo Rollouts
/// all report it.
pub(crate) fn available_replicas(object: &DynamicObject) -> i32 {
    object.data["status"]["availableReplicas"]
        .as_i64()
        .and_then(|n| i32::try_from(n).ok())
        .unwrap_or(0)
}

/// Why the worker leaves a workload with serving replicas alone, and what to do instead.
fn bad_rollout(w: &WorkloadRef, available: i32) -> String {
    let replicas = if available == 1 {
        "replica"
    } else {
        "replicas"
    };
    let advice = match w.kind {
        WorkloadKind::Deployment | WorkloadKind::StatefulSet => format!(
            "consider `kubectl rollout undo {}/{} -n {}`",
            w.kind.name().to_lowercase(),
            w.name,
            w.namespace
        ),
        WorkloadKind::Rollout => format!(
            "consider `kubectl argo rollouts undo {} -n {}`",
            w.name, w.namespace
        ),
        _ => "fix the failing pods' image or spec".to_string(),
    };
    format!(
        "bad rollout: {available} {replicas} still available in {w}; scaling to 0 would stop them \
         (rule option scaleWhileAvailable), {advice}"
    )
}
