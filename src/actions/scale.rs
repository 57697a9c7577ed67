//! Scale to zero and undo: the Executor's workload actions, through the scale subresource.

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::json;

use super::execute::{Executor, stopped};
use super::owner::{self, Owner, Resolution, WorkloadKind, WorkloadRef};
use super::retry::{Needs, Stop};
use super::{Origin, Outcome, REPLICAS_BEFORE_ANNOTATION};
use crate::pod::{IGNORE_ANNOTATION, PodRecord, is_truthy};

/// A scale-to-zero that passed its checks: the workload and its replicas when it was read.
#[derive(Debug, Clone)]
pub(crate) struct ScalePlan {
    pub workload: WorkloadRef,
    pub current: i32,
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
        let scale = self
            .settings
            .retry
            .run(scale_needs(&workload, "get"), &workload.namespace, || {
                api.get_scale(&workload.name)
            })
            .await
            .map_err(stopped)?;
        let current = scale.spec.and_then(|s| s.replicas).unwrap_or(0);
        if current == 0 {
            return Err(Outcome::Skipped(format!(
                "{workload} is already at 0 replicas"
            )));
        }
        Ok(ScalePlan { workload, current })
    }

    pub(super) async fn scale_to_zero(&self, plan: &ScalePlan) -> Outcome {
        let ScalePlan {
            workload: w,
            current,
        } = plan;
        if self.settings.dry_run {
            return Outcome::DryRun(format!("would scale {w} from {current} to 0"));
        }
        let api = w.api(&self.client);
        // Remember first, so undo works even if the scale call is the one that fails.
        let remember =
            json!({"metadata": {"annotations": {REPLICAS_BEFORE_ANNOTATION: current.to_string()}}});
        if let Err(stop) = self
            .patch(&api, w, "patch", w.kind.plural(), &remember)
            .await
        {
            return stopped(stop);
        }
        match self.set_replicas(&api, w, 0).await {
            Ok(_) => Outcome::Done(format!(
                "scaled {w} from {current} to 0 (undo restores {current})"
            )),
            Err(stop) => stopped(stop),
        }
    }

    pub(super) async fn undo_scale(&self, w: &WorkloadRef) -> Outcome {
        let api = w.api(&self.client);
        let plural = w.kind.plural();
        let object = match self.get_workload(&api, w).await {
            Ok(object) => object,
            Err(stop) => return stopped(stop),
        };
        let remembered = object
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(REPLICAS_BEFORE_ANNOTATION));
        let Some(replicas) = remembered.and_then(|v| v.parse::<i32>().ok()) else {
            return Outcome::Refused(format!(
                "{w} has no {REPLICAS_BEFORE_ANNOTATION} annotation: ops-pod-cleaner did not scale it down"
            ));
        };
        if self.settings.dry_run {
            return Outcome::DryRun(format!("would restore {w} to {replicas} replicas"));
        }
        let restored = self.set_replicas(&api, w, replicas).await;
        if let Err(stop) = restored {
            return stopped(stop);
        }
        let forget = json!({"metadata": {"annotations": {REPLICAS_BEFORE_ANNOTATION: null}}});
        match self.patch(&api, w, "patch", plural, &forget).await {
            Ok(()) => Outcome::Done(format!("restored {w} to {replicas} replicas")),
            Err(stop) => Outcome::Done(format!(
                "restored {w} to {replicas} replicas, but could not remove the annotation: {}",
                stopped(stop).detail()
            )),
        }
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
