//! Scale to zero and undo: the Executor's workload actions, through the scale subresource.

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::json;

use super::execute::{Executor, stopped};
use super::owner::{self, Resolution, WorkloadRef};
use super::retry::{Needs, Stop};
use super::{Origin, Outcome, REPLICAS_BEFORE_ANNOTATION};
use crate::pod::{IGNORE_ANNOTATION, PodRecord, is_truthy};

impl Executor {
    pub(super) async fn scale_to_zero(
        &self,
        pod: &PodRecord,
        origin: Origin,
    ) -> (Outcome, Option<WorkloadRef>) {
        let workload = match owner::resolve(&self.client, pod, &self.settings.retry).await {
            Ok(Resolution::Scalable(w)) => w,
            Ok(Resolution::Unscalable(why)) => return (Outcome::Refused(why), None),
            Err(stop) => return (stopped(stop), None),
        };
        let outcome = self.scale_workload(&workload, origin).await;
        (outcome, Some(workload))
    }

    async fn scale_workload(&self, w: &WorkloadRef, origin: Origin) -> Outcome {
        let api = w.api(&self.client);
        let plural = w.kind.plural();
        let object = match self.get_workload(&api, w).await {
            Ok(object) => object,
            Err(stop) => return stopped(stop),
        };
        let annotations = object.metadata.annotations.unwrap_or_default();
        if matches!(origin, Origin::Auto(_))
            && annotations
                .get(IGNORE_ANNOTATION)
                .is_some_and(|v| is_truthy(v))
        {
            return Outcome::Skipped(format!("{w} carries {IGNORE_ANNOTATION}"));
        }
        let scale = match self
            .settings
            .retry
            .run(scale_needs(w, "get"), &w.namespace, || {
                api.get_scale(&w.name)
            })
            .await
        {
            Ok(scale) => scale,
            Err(stop) => return stopped(stop),
        };
        let current = scale.spec.and_then(|s| s.replicas).unwrap_or(0);
        if current == 0 {
            return Outcome::Skipped(format!("{w} is already at 0 replicas"));
        }
        if self.settings.dry_run {
            return Outcome::DryRun(format!("would scale {w} from {current} to 0"));
        }
        // Remember first, so undo works even if the scale call is the one that fails.
        let remember =
            json!({"metadata": {"annotations": {REPLICAS_BEFORE_ANNOTATION: current.to_string()}}});
        if let Err(stop) = self.patch(&api, w, "patch", plural, &remember).await {
            return stopped(stop);
        }
        let scaled = self.set_replicas(&api, w, 0).await;
        match scaled {
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
