//! Scale to zero: the Executor's workload action, through the scale subresource (undo is in
//! `undo.rs`).
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
use super::owner::{self, Owner, WorkloadRef};
use super::owners::pod_labels;
use super::parked::{ParkedRecord, StoreError};
use super::proof::{Proven, Unproven};
use super::retry::{Needs, Stop};
use super::{OptOut, Origin, Outcome, REPLICAS_BEFORE_ANNOTATION, Refusal};
use crate::pod::{IGNORE_ANNOTATION, PodRecord, is_truthy};
use crate::rules::Finding;

/// A scale-to-zero that passed its checks: the workload and its replicas when it was read.
#[derive(Debug, Clone)]
pub(crate) struct ScalePlan {
    pub workload: WorkloadRef,
    pub current: i32,
    /// The Scale's resourceVersion when `current` (and availability) were read: the write
    /// carries it, so a workload changed since (fixed, rescaled) is a 409, and re-planned.
    pub version: String,
    /// The workload's UID: the key of its parked record.
    pub uid: String,
    pub origin: Origin,
    /// The pod that triggered it, and what the rules found on it when it was re-checked.
    pub pod: String,
    pub finding: Option<Finding>,
}

impl Executor {
    /// Resolve the workload and read it fresh. The worker never scales a workload that still
    /// has available replicas (a bad rollout: the old ReplicaSet still serves), unless the rule
    /// opts in with `scaleWhileAvailable`.
    pub(super) async fn plan_scale(
        &self,
        pod: &PodRecord,
        finding: Option<&Finding>,
        chain: &[Owner],
        origin: Origin,
    ) -> Result<ScalePlan, Outcome> {
        let unscalable = |why| Outcome::Refused(Refusal::Unscalable(why));
        // What the pod alone rules out costs no read.
        owner::scalable_owner(pod, chain).map_err(unscalable)?;
        let labels = pod_labels(&self.client, &self.settings.retry, pod)
            .await
            .map_err(stopped)?;
        let Proven { workload, uid } = owner::resolve(pod, &labels, chain).map_err(unscalable)?;
        let (current, version) = self.check_workload(&workload, &uid, origin).await?;
        Ok(ScalePlan {
            uid,
            workload,
            current,
            version,
            origin,
            pod: pod.name.to_string(),
            finding: finding.cloned(),
        })
    }

    /// Read the workload and its Scale, in that order, and check them as one step: it is still
    /// the object the owner chain proved (`uid`), the opt-out and, for the worker, that no
    /// replica is available (unless the rule opts in), then the replicas to record. Returns the
    /// replicas and the Scale's version.
    async fn check_workload(
        &self,
        workload: &WorkloadRef,
        uid: &str,
        origin: Origin,
    ) -> Result<(i32, String), Outcome> {
        let api = workload.api(&self.client);
        let object = self.get_workload(&api, workload).await.map_err(stopped)?;
        let found = object.metadata.uid.as_deref().unwrap_or_default();
        if found != uid {
            return Err(Outcome::Refused(Refusal::Unscalable(
                Unproven::UidMismatch {
                    kind: workload.kind.name().to_string(),
                    name: workload.name.clone(),
                    named: uid.to_string(),
                    found: found.to_string(),
                }
                .into(),
            )));
        }
        let annotations = object.metadata.annotations.clone().unwrap_or_default();
        if let Origin::Auto(rule) = origin {
            if annotations
                .get(IGNORE_ANNOTATION)
                .is_some_and(|v| is_truthy(v))
            {
                return Err(Outcome::Refused(Refusal::OptedOut(OptOut::Owner {
                    kind: workload.kind.name().to_string(),
                    namespace: workload.namespace.clone(),
                    name: workload.name.clone(),
                })));
            }
            let available = available_replicas(&object);
            let opted_in = self
                .chain
                .iter()
                .any(|r| r.kind == rule && r.scale_while_available);
            if available > 0 && !opted_in {
                return Err(Outcome::Refused(Refusal::BadRollout {
                    workload: workload.clone(),
                    available,
                }));
            }
        }
        let (current, version) = self.read_scale(&api, workload).await.map_err(stopped)?;
        if current == 0 {
            return Err(Outcome::Skipped(format!(
                "{workload} is already at 0 replicas"
            )));
        }
        Ok((current, version))
    }

    pub(super) async fn scale_to_zero(&self, plan: &ScalePlan) -> Outcome {
        if self.settings.dry_run {
            let (w, current) = (&plan.workload, plan.current);
            return Outcome::DryRun(format!("would scale {w} from {current} to 0"));
        }
        let mut plan = plan.clone();
        for _ in 0..SCALE_ATTEMPTS {
            match self.park_and_scale(&plan).await {
                Err(Stop::Conflict(_)) => {
                    // The workload changed between the read and the write: check it again as it
                    // is now (it may serve again, or have other replicas to record).
                    match self
                        .check_workload(&plan.workload, &plan.uid, plan.origin)
                        .await
                    {
                        Ok((current, version)) => {
                            plan.current = current;
                            plan.version = version;
                        }
                        Err(outcome) => {
                            let _ = self.parked_store().remove(&plan.uid).await;
                            return outcome;
                        }
                    }
                }
                Ok(done) => return done,
                Err(stop) => return stopped(stop),
            }
        }
        Outcome::Skipped(format!(
            "{} kept changing while being scaled; it will be planned again",
            plan.workload
        ))
    }

    /// Record the replicas, then scale to zero at the version they were read at.
    async fn park_and_scale(&self, plan: &ScalePlan) -> Result<Outcome, Stop> {
        let w = &plan.workload;
        let current = plan.current;
        let api = w.api(&self.client);
        // Remember first, so undo works even if the scale call is the one that fails; and never
        // scale what could not be remembered.
        let store = self.parked_store();
        let fallback = match store.put(&self.parked_record(plan)).await {
            Ok(()) => None,
            Err(StoreError::Failed(stop)) => return Err(stop),
            Err(StoreError::Unavailable(why)) => {
                let remember = json!({"metadata": {"annotations": {REPLICAS_BEFORE_ANNOTATION: current.to_string()}}});
                match self
                    .patch(&api, w, "patch", w.kind.plural(), &remember)
                    .await
                {
                    Ok(()) => Some(why),
                    Err(Stop::Forbidden(denied)) => {
                        return Ok(Outcome::Refused(Refusal::Unrecorded {
                            workload: w.clone(),
                            replicas: current,
                            store: why,
                            denied: Box::new(denied),
                        }));
                    }
                    Err(stop) => return Err(stop),
                }
            }
        };
        // With a fallback the annotation write changed the workload's version: its check is
        // the one just made, so the scale goes without one.
        let version = fallback.is_none().then_some(plan.version.as_str());
        match self.set_replicas_at(&api, w, 0, version).await {
            Ok(()) => {
                let done = format!("scaled {w} from {current} to 0 (undo restores {current})");
                Ok(Outcome::Done(match fallback {
                    None => done,
                    Some(why) => format!(
                        "{done}; recorded in its {REPLICAS_BEFORE_ANNOTATION} annotation ({why})"
                    ),
                }))
            }
            Err(Stop::Conflict(message)) => Err(Stop::Conflict(message)),
            Err(stop) => {
                // Refused or gone: nothing was parked, so the record would only mislead.
                if fallback.is_none() && matches!(stop, Stop::Forbidden(_) | Stop::Gone) {
                    let _ = store.remove(&plan.uid).await;
                }
                Err(stop)
            }
        }
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
            reason: plan
                .finding
                .as_ref()
                .map(|f| format!("{}: {}", f.rule, f.reason)),
            pod: Some(plan.pod.clone()),
            rule: plan.finding.as_ref().map(|f| f.rule),
            message: plan.finding.as_ref().and_then(|f| f.message.clone()),
        }
    }

    /// `spec.replicas` as the scale subresource reports it.
    pub(super) async fn current_replicas(
        &self,
        api: &Api<DynamicObject>,
        w: &WorkloadRef,
    ) -> Result<i32, Stop> {
        self.read_scale(api, w).await.map(|(replicas, _)| replicas)
    }

    /// `spec.replicas` and the Scale's resourceVersion.
    async fn read_scale(
        &self,
        api: &Api<DynamicObject>,
        w: &WorkloadRef,
    ) -> Result<(i32, String), Stop> {
        let scale = self
            .settings
            .retry
            .run(scale_needs(w, "get"), &w.namespace, || {
                api.get_scale(&w.name)
            })
            .await?;
        let version = scale.metadata.resource_version.clone().unwrap_or_default();
        Ok((scale.spec.and_then(|s| s.replicas).unwrap_or(0), version))
    }

    pub(super) async fn get_workload(
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

    pub(super) async fn patch(
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
    pub(super) async fn set_replicas(
        &self,
        api: &Api<kube::api::DynamicObject>,
        w: &WorkloadRef,
        replicas: i32,
    ) -> Result<(), Stop> {
        self.set_replicas_at(api, w, replicas, None).await
    }

    /// Write replicas through the scale subresource; with `version`, only if the Scale is
    /// still at it (a 409 otherwise).
    async fn set_replicas_at(
        &self,
        api: &Api<kube::api::DynamicObject>,
        w: &WorkloadRef,
        replicas: i32,
        version: Option<&str>,
    ) -> Result<(), Stop> {
        let params = PatchParams::default();
        let body = match version.filter(|v| !v.is_empty()) {
            Some(version) => {
                json!({"metadata": {"resourceVersion": version}, "spec": {"replicas": replicas}})
            }
            None => json!({"spec": {"replicas": replicas}}),
        };
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

/// A scale that meets a changed workload is checked and tried again this many times in all.
const SCALE_ATTEMPTS: usize = 3;

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
    object
        .data
        .pointer("/status/availableReplicas")
        .and_then(|n| n.as_i64())
        .and_then(|n| i32::try_from(n).ok())
        .unwrap_or(0)
}
