//! Scale to zero: the Executor's workload action, through the scale subresource (undo is in
//! `undo.rs`). The replicas taken away are recorded before the scale, in the parked ConfigMap
//! (`parked.rs`), or, where the identity cannot use it (a person's own credentials in the TUI),
//! in the workload's `ops-pod-cleaner.io/replicas-before` annotation.

use kube::api::DynamicObject;
use serde_json::json;

use super::action::Origin;
use super::audit::AuditRecord;
use super::executor::{Executor, Prepared, ScalePlan};
use super::outcome::{Change, Outcome, Skip};
use super::owner;
use super::owners::{LivePod, OptOut, Owner};
use super::parked::{ParkedRecord, StoreError};
use super::proof::{Proven, Unproven};
use super::refusal::Refusal;
use super::retry::Stop;
use super::workload::{REPLICAS_BEFORE_ANNOTATION, ScalableWorkload};
use crate::pod::{IGNORE_ANNOTATION, PodRecord, is_truthy};

impl Executor {
    /// Resolve the workload and read it fresh. The worker never scales a workload that still
    /// has available replicas (a bad rollout: the old ReplicaSet still serves), unless the rule
    /// opts in with `scaleWhileAvailable`.
    pub(super) async fn plan_scale(
        &self,
        pod: &PodRecord,
        chain: &[Owner],
        origin: Origin,
        live: Option<LivePod>,
    ) -> Result<ScalePlan, Outcome> {
        let resolved = owner::resolve(&self.calls, pod, chain, live).await;
        let Proven { workload, uid } = resolved
            .map_err(Outcome::from)?
            .map_err(|why| Outcome::Refused(Refusal::Unscalable(why)))?;
        let (current, version) = self.check_workload(&workload, &uid, origin).await?;
        Ok(ScalePlan {
            uid,
            workload,
            current,
            version,
        })
    }

    /// Read the workload, then its Scale, and check them as one step; returns the replicas to
    /// record and the Scale's version.
    async fn check_workload(
        &self,
        workload: &ScalableWorkload,
        uid: &str,
        origin: Origin,
    ) -> Result<(i32, String), Outcome> {
        let object = self
            .calls
            .get_workload(workload)
            .await
            .map_err(Outcome::from)?;
        let found = object.metadata.uid.as_deref().unwrap_or_default();
        if found != uid {
            return Err(Outcome::Refused(Refusal::Unscalable(
                Unproven::UidMismatch {
                    kind: workload.kind().name().to_string(),
                    name: workload.name().to_string(),
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
                    kind: workload.kind().name().to_string(),
                    namespace: workload.namespace().to_string(),
                    name: workload.name().to_string(),
                })));
            }
            let available = available_replicas(&object);
            let opted_in = self
                .rules
                .iter()
                .any(|r| r.kind == rule && r.scale_while_available);
            if available > 0 && !opted_in {
                return Err(Outcome::Refused(Refusal::BadRollout {
                    workload: workload.clone(),
                    available,
                }));
            }
        }
        let (current, version) = self
            .calls
            .read_scale(workload)
            .await
            .map_err(Outcome::from)?;
        if current == 0 {
            return Err(Outcome::Skipped(Skip::AtZero(workload.clone())));
        }
        Ok((current, version))
    }

    /// Scale `prepared`'s workload as `plan` read it; a workload changed since is checked again.
    pub(super) async fn scale_to_zero(&self, plan: &ScalePlan, prepared: &Prepared) -> Outcome {
        if self.dry_run {
            return Outcome::DryRun(Change::Scaled {
                workload: plan.workload.clone(),
                from: plan.current,
                annotation: None,
            });
        }
        let mut plan = plan.clone();
        for _ in 0..SCALE_ATTEMPTS {
            match self.park_and_scale(&plan, prepared).await {
                Err(Stop::Conflict(_)) => {
                    // The workload changed between the read and the write: check it again as it
                    // is now (it may serve again, or have other replicas to record).
                    match self
                        .check_workload(&plan.workload, &plan.uid, prepared.origin)
                        .await
                    {
                        Ok((current, version)) => {
                            plan.current = current;
                            plan.version = version;
                        }
                        Err(outcome) => {
                            let _ = self.calls.parked_store().remove(&plan.uid).await;
                            return outcome;
                        }
                    }
                }
                Ok(done) => return done,
                Err(stop) => return stop.into(),
            }
        }
        Outcome::Skipped(Skip::WorkloadKeptChanging(plan.workload))
    }

    /// Record the replicas, then scale to zero at the version they were read at.
    async fn park_and_scale(&self, plan: &ScalePlan, prepared: &Prepared) -> Result<Outcome, Stop> {
        let w = &plan.workload;
        let current = plan.current;
        // Remember first, so undo works even if the scale call is the one that fails; and never
        // scale what could not be remembered.
        let store = self.calls.parked_store();
        let fallback = match store.put(&self.parked_record(plan, prepared)).await {
            Ok(()) => None,
            Err(StoreError::Failed(stop)) => return Err(stop),
            Err(StoreError::Unavailable(why)) => {
                let remember = json!({"metadata": {"annotations": {REPLICAS_BEFORE_ANNOTATION: current.to_string()}}});
                match self.calls.patch_workload(w, &remember).await {
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
        match self.calls.set_replicas(w, 0, version).await {
            Ok(()) => Ok(Outcome::Done(Change::Scaled {
                workload: w.clone(),
                from: current,
                annotation: fallback,
            })),
            Err(stop) => {
                // Refused or gone: nothing was parked, so the record would only mislead.
                if fallback.is_none() && matches!(stop, Stop::Forbidden(_) | Stop::Gone) {
                    let _ = store.remove(&plan.uid).await;
                }
                Err(stop)
            }
        }
    }

    fn parked_record(&self, plan: &ScalePlan, prepared: &Prepared) -> ParkedRecord {
        let (w, finding) = (&plan.workload, prepared.finding.as_ref());
        ParkedRecord {
            kind: w.kind().name().to_string(),
            namespace: w.namespace().to_string(),
            name: w.name().to_string(),
            uid: plan.uid.clone(),
            replicas: plan.current,
            at: AuditRecord::stamp(self.cache.clock().now()),
            cluster: self.cluster.clone(),
            actor: self.actor.clone(),
            origin: prepared.origin,
            reason: finding.map(|f| format!("{}: {}", f.rule, f.reason)),
            pod: prepared.pod.as_ref().map(|p| p.name.to_string()),
            rule: finding.map(|f| f.rule),
            message: finding.and_then(|f| f.message.as_deref().map(String::from)),
        }
    }
}

/// A scale that meets a changed workload is checked and tried again this many times in all.
const SCALE_ATTEMPTS: usize = 3;

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
