//! The writes to one pod: delete (with a grace period or none), evict, remove finalizers.
//! Each carries the pod's uid as a precondition; a 409 reads the pod again and decides.

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, Preconditions};
use serde_json::json;

use super::action::{Origin, PodRef};
use super::executor::Executor;
use super::failure::Failure;
use super::outcome::{Change, Outcome, Skip};
use super::refusal::Refusal;
use super::retry::{Needs, Stop};
use crate::pod::{Interner, PodRecord, decode_pod};
use crate::rules::classify;

impl Executor {
    pub(super) async fn delete(&self, p: &PodRef, grace: Option<u32>, origin: Origin) -> Outcome {
        let change = Change::Deleted {
            pod: p.clone(),
            grace,
            held_by: Vec::new(),
        };
        if self.dry_run {
            return Outcome::DryRun(change);
        }
        let api: Api<Pod> = Api::namespaced(self.calls.client.clone(), &p.namespace);
        let params = DeleteParams {
            grace_period_seconds: grace,
            preconditions: Some(Preconditions {
                uid: Some(p.uid.clone()),
                resource_version: None,
            }),
            ..Default::default()
        };
        let needs = Needs {
            verb: "delete",
            resource: "pods",
        };
        for attempt in 0..2 {
            match self
                .calls
                .retry
                .run(needs, &p.namespace, || api.delete(&p.name, &params))
                .await
            {
                Ok(_) => return Outcome::Done(change),
                Err(Stop::Conflict(message)) if attempt == 0 => {
                    if let Err(outcome) = self.replan(p, &message, origin).await {
                        return outcome;
                    }
                }
                Err(stop) => return stop.into(),
            }
        }
        Outcome::Skipped(Skip::PodKeptChanging(p.clone()))
    }

    /// Grace 0. A terminating pod held by finalizers is not deleted again by the worker:
    /// deleting cannot release finalizers, so it says so instead of retrying forever.
    pub(super) async fn force_delete(
        &self,
        p: &PodRef,
        pod: &PodRecord,
        origin: Origin,
    ) -> Outcome {
        let finalizers: Vec<String> = pod.finalizers.iter().map(|f| f.to_string()).collect();
        if finalizers.is_empty() {
            return self.delete(p, Some(0), origin).await;
        }
        if matches!(origin, Origin::Auto(_)) && pod.deletion.is_some() {
            return Outcome::Refused(Refusal::HeldByFinalizers {
                pod: p.clone(),
                finalizers,
            });
        }
        match self.delete(p, Some(0), origin).await {
            Outcome::Done(Change::Deleted { pod, grace, .. }) => Outcome::Done(Change::Deleted {
                pod,
                grace,
                held_by: finalizers,
            }),
            other => other,
        }
    }

    pub(super) async fn evict(&self, p: &PodRef, origin: Origin) -> Outcome {
        if self.dry_run {
            return Outcome::DryRun(Change::Evicted(p.clone()));
        }
        // Built by hand: kube's `Api::evict` writes `delete_options`, which the API server
        // ignores, and the UID precondition with it.
        let body = json!({
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": p.name, "namespace": p.namespace},
            "deleteOptions": {"preconditions": {"uid": p.uid}},
        });
        let path = format!("{}/eviction", p.path());
        let needs = Needs {
            verb: "create",
            resource: "pods/eviction",
        };
        let body = Some(("application/json", body));
        let evicted = self
            .calls
            .send_json(http::Method::POST, path, body, needs, &p.namespace)
            .await;
        match evicted {
            Ok(_) => Outcome::Done(Change::Evicted(p.clone())),
            Err(Stop::Conflict(conflict)) => match self.replan(p, &conflict, origin).await {
                Err(outcome) => outcome,
                Ok(()) => Outcome::Skipped(Skip::ChangedDuringEviction {
                    pod: p.clone(),
                    conflict,
                }),
            },
            Err(stop) => stop.into(),
        }
    }

    pub(super) async fn remove_finalizers(&self, p: &PodRef) -> Outcome {
        if self.dry_run {
            return Outcome::DryRun(Change::FinalizersRemoved(p.clone()));
        }
        // The `test` operation makes the UID a precondition of the patch.
        let body = json!([
            {"op": "test", "path": "/metadata/uid", "value": p.uid},
            {"op": "add", "path": "/metadata/finalizers", "value": []},
        ]);
        let needs = Needs {
            verb: "patch",
            resource: "pods",
        };
        let patch = Some(("application/json-patch+json", body));
        let patched = self
            .calls
            .send_json(http::Method::PATCH, p.path(), patch, needs, &p.namespace)
            .await;
        match patched {
            Ok(_) => Outcome::Done(Change::FinalizersRemoved(p.clone())),
            Err(stop) => stop.into(),
        }
    }

    /// After a 409: read the pod again and decide whether the same action still applies (for
    /// the worker, it must still match the rule that planned it).
    async fn replan(&self, p: &PodRef, conflict: &str, origin: Origin) -> Result<(), Outcome> {
        let text = self.calls.get_pod(p).await.map_err(Outcome::from)?;
        let fresh = decode_pod(text.as_bytes(), &mut Interner::default()).map_err(|e| {
            Outcome::Failed(Failure::Reread {
                pod: p.clone(),
                why: e.to_string(),
            })
        })?;
        if *fresh.uid != *p.uid {
            return Err(Outcome::Skipped(Skip::Replaced {
                pod: p.clone(),
                uid: fresh.uid.to_string(),
                conflict: conflict.to_string(),
            }));
        }
        let still_matches = match origin {
            Origin::Manual => true,
            Origin::Auto(rule) => {
                let now = self.cache.clock().now();
                classify(&fresh, &self.rules, now).is_some_and(|f| f.rule == rule)
            }
        };
        if !still_matches {
            return Err(Outcome::Skipped(Skip::Changed(p.clone())));
        }
        Ok(())
    }
}
