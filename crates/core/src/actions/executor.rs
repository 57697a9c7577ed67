//! The one write path of a cluster: every action, from the screen, the worker or `--once`,
//! goes prepare (checks that write nothing) → intend (the audit record, on disk) → send →
//! conclude (the outcome record, the log line, the Event). The worker admits a prepared
//! action through its guards between prepare and send.

use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

use kube::Client;

use super::action::{Action, Origin, PodRef};
use super::audit::{Audit, actor};
use super::calls::Calls;
use super::failure::Failure;
use super::outcome::{Outcome, Skip};
use super::owner::{self, SCALE_CHAIN};
use super::owners::{FULL_CHAIN, LivePod, OptOut, Owners};
use super::refusal::{Refusal, Unreadable};
use super::retry::{RetryPolicy, Stop};
use super::workload::ScalableWorkload;
use crate::cluster::{Cache, ClusterName};
use crate::fleet::WorkerAddress;
use crate::pod::PodRecord;
use crate::policy::Policy;
use crate::rules::{Finding, RuleSpec, classify};

/// One cluster's write path; its parts (pod_writes, scale, undo, record, reads) are in their files.
pub struct Executor {
    pub(super) calls: Calls,
    /// The clock is the cache's, which its findings were classified at.
    pub(super) cache: Cache,
    /// The rule chain: a rule's `scaleWhileAvailable`, and what a pod read again must match.
    pub(super) rules: Vec<RuleSpec>,
    /// Decide and record, but change nothing.
    pub(super) dry_run: bool,
    /// `--readonly`: nothing runs, whoever asks.
    pub(super) readonly: bool,
    pub(super) owners: Owners,
    /// The in-cluster worker the cluster is read through, if it is: see [`Executor::fed_by`].
    pub(super) worker: Option<WorkerAddress>,
    pub(super) cluster: ClusterName,
    pub(super) audit: Audit,
    /// Set when a write to the audit log failed: nothing acts until a restart fixes it.
    pub(super) audit_broken: Mutex<Option<String>>,
    /// Who runs the tool, for the audit log and the parked record.
    pub(super) actor: String,
    /// Kubernetes Events are written: the policy says so, and no 403 said otherwise.
    pub(super) events: AtomicBool,
}

/// An action that passed every check that needs no write, with what those checks read.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    pub(crate) action: Action,
    pub(crate) origin: Origin,
    pub(super) pod: Option<PodRecord>,
    /// What the rules found on the pod when it was re-checked: the intent's reason.
    pub(super) finding: Option<Finding>,
    pub(super) scale: Option<ScalePlan>,
}

impl Prepared {
    /// The workload a scale or an undo acts on.
    pub(super) fn workload(&self) -> Option<&ScalableWorkload> {
        match &self.action {
            Action::UndoScale(w) => Some(w),
            _ => self.scale.as_ref().map(|s| &s.workload),
        }
    }
}

/// A scale-to-zero that passed its checks: the workload and its replicas when it was read.
#[derive(Debug, Clone)]
pub(crate) struct ScalePlan {
    pub workload: ScalableWorkload,
    pub current: i32,
    /// The Scale's resourceVersion when `current` (and availability) were read: the write
    /// carries it, so a workload changed since (fixed, rescaled) is a 409, and re-planned.
    pub version: String,
    /// The workload's UID: the key of its parked record.
    pub uid: String,
}

impl Executor {
    /// The only way to build an executor: dry-run and Events come from the policy.
    pub fn new(
        client: Client,
        cache: Cache,
        policy: &Policy,
        cluster: ClusterName,
        audit: Audit,
    ) -> Executor {
        let retry = RetryPolicy {
            cluster: Some(cluster.clone()),
            ..RetryPolicy::default()
        };
        Executor {
            calls: Calls::new(client, retry),
            cache,
            rules: policy.chain().to_vec(),
            dry_run: policy.dry_run(),
            readonly: policy.readonly(),
            owners: Owners::default(),
            worker: None,
            cluster,
            audit,
            audit_broken: Mutex::new(None),
            actor: actor(),
            events: AtomicBool::new(policy.events()),
        }
    }

    /// For a cluster read through its worker at `worker`, whose cache no watch fills: every pod
    /// action reads its pod live into the cache first (see `live_read`), and a pod's details
    /// ask the worker for its cause's words.
    pub fn fed_by(self, worker: WorkerAddress) -> Executor {
        Executor {
            worker: Some(worker),
            ..self
        }
    }

    /// How 429 and 5xx answers are retried (tests shorten the waits), still to the same cluster.
    pub fn with_retry(self, retry: RetryPolicy) -> Executor {
        let cluster = self.calls.retry.cluster.clone();
        let retry = RetryPolicy { cluster, ..retry };
        let calls = Calls::new(self.calls.client, retry);
        Executor { calls, ..self }
    }

    /// Check, then send and record. An action refused by its checks sent nothing and is
    /// only logged.
    pub async fn run(&self, action: &Action, origin: Origin) -> Outcome {
        match self.prepare(action, origin).await {
            Ok(prepared) => self.send_within(prepared, None).await,
            Err(outcome) => {
                tracing::info!(
                    action = action.verb().name(),
                    outcome = outcome.label(),
                    "{}",
                    outcome.line(action)
                );
                outcome
            }
        }
    }

    /// Every check that writes nothing; `Err` is the outcome, with nothing sent.
    pub(crate) async fn prepare(
        &self,
        action: &Action,
        origin: Origin,
    ) -> Result<Prepared, Outcome> {
        if self.readonly {
            return Err(Outcome::Refused(Refusal::Readonly));
        }
        if origin != Origin::Manual && action.manual_only() {
            return Err(Outcome::Refused(Refusal::ManualOnly(action.verb())));
        }
        // The pod as read just now, when it was: a scale's proof reads the same answer.
        let mut live = None;
        let (pod, finding) = match action.pod() {
            Some(target) => {
                // A person acts on a row, which may lag the pod or (from a worker) be only a
                // claim: the pod is read live and judged again. No watch fills a fed
                // cluster's cache: the worker acts on the pod as read too.
                if self.worker.is_some() || origin == Origin::Manual {
                    let read = super::live_read::read_into(&self.calls, &self.cache, target);
                    live = Some(LivePod::of(&read.await?));
                }
                let (pod, finding) = self.recheck(target, origin)?;
                if pod.malformed {
                    return Err(Outcome::Refused(Refusal::Malformed(target.clone())));
                }
                (Some(pod), finding)
            }
            None => (None, None),
        };
        // The worker checks every owner for an opt-out (a person was asked in the dialog);
        // a manual scale needs the owners that prove where it lands.
        let depth = match (&pod, action, origin) {
            (Some(_), _, Origin::Auto(_)) => FULL_CHAIN,
            (Some(pod), Action::ScaleToZero(_), Origin::Manual)
                if owner::scalable_owner(pod, &[]).is_ok() =>
            {
                SCALE_CHAIN
            }
            _ => 0,
        };
        let chain = match &pod {
            Some(pod) if depth > 0 => self
                .owners
                .chain(&self.calls, pod, depth)
                .await
                .map_err(|stop| owner_unreadable(stop, pod))?,
            _ => Vec::new(),
        };
        if let (Some(pod), Origin::Auto(_)) = (&pod, origin)
            && let Some(opt_out) = OptOut::find(pod, &chain)
        {
            return Err(Outcome::Refused(Refusal::OptedOut(opt_out)));
        }
        if let (Some(pod), Action::ForceDelete(p), Origin::Auto(_)) = (&pod, action, origin) {
            super::node::confirm_node_gone(&self.calls.client, p, pod)
                .await
                .map_err(|copy| Outcome::Refused(Refusal::SecondCopy(copy)))?;
        }
        let scale = match (&pod, action) {
            (Some(pod), Action::ScaleToZero(_)) => {
                Some(self.plan_scale(pod, &chain, origin, live).await?)
            }
            _ => None,
        };
        Ok(Prepared {
            action: action.clone(),
            origin,
            pod,
            finding,
            scale,
        })
    }

    /// Write the intent, send, write the outcome. Nothing is sent whose intent is not on disk.
    /// The intent and the request end at `until` (a leader must stop before its lease can pass
    /// to another replica); a request cut off is recorded as a failure that may have landed.
    pub(crate) async fn send_within(
        &self,
        prepared: Prepared,
        until: Option<std::time::Instant>,
    ) -> Outcome {
        let intent = match before(until, self.intend(&prepared)).await {
            None => return Outcome::Failed(Failure::IntentLate),
            Some(Err(refused)) => return refused,
            Some(Ok(intent)) => intent,
        };
        let outcome = before(until, self.request(&prepared)).await;
        let outcome = outcome.unwrap_or(Outcome::Failed(Failure::LeaseEnded));
        self.conclude(intent, &prepared, &outcome).await;
        outcome
    }

    async fn request(&self, prepared: &Prepared) -> Outcome {
        let origin = prepared.origin;
        match (&prepared.action, &prepared.pod, &prepared.scale) {
            (Action::Delete(p), _, _) => self.delete(p, None, origin).await,
            (Action::ForceDelete(p), Some(pod), _) => self.force_delete(p, pod, origin).await,
            (Action::Evict(p), _, _) => self.evict(p, origin).await,
            (Action::RemoveFinalizers(p), _, _) => self.remove_finalizers(p).await,
            (Action::ScaleToZero(_), _, Some(plan)) => self.scale_to_zero(plan, prepared).await,
            (Action::UndoScale(w), _, _) => super::undo::run(&self.calls, self.dry_run, w).await,
            _ => Outcome::Failed(Failure::NoPod),
        }
    }

    /// The pod must still be in the cache with the same UID, and, for the worker, still match.
    /// Its finding now is kept: the audit intent says why from it.
    fn recheck(
        &self,
        target: &PodRef,
        origin: Origin,
    ) -> Result<(PodRecord, Option<Finding>), Outcome> {
        let pod = self.cache.get(&target.uid).ok_or(Outcome::AlreadyGone)?;
        let finding = classify(&pod, &self.rules, self.cache.clock().now());
        match (origin, &finding) {
            (Origin::Auto(rule), found) if found.as_ref().is_none_or(|f| f.rule != rule) => {
                Err(Outcome::Skipped(Skip::NoLongerMatches(rule)))
            }
            (Origin::Manual, None) => Err(Outcome::Refused(Refusal::NotAbnormal {
                pod: target.clone(),
                now: pod.state_line(),
            })),
            _ => Ok((pod, finding)),
        }
    }
}

/// What `future` gives, unless `deadline` passes first (then `None`).
pub(crate) async fn before<T>(
    deadline: Option<std::time::Instant>,
    future: impl Future<Output = T>,
) -> Option<T> {
    match deadline {
        Some(at) => tokio::time::timeout_at(at.into(), future).await.ok(),
        None => Some(future.await),
    }
}

/// An owner whose opt-out cannot be read could carry one: hold, and say what is missing.
fn owner_unreadable(stop: Stop, pod: &PodRecord) -> Outcome {
    let cause = match stop {
        Stop::Gone => return Outcome::AlreadyGone,
        Stop::Forbidden(denied) => Unreadable::Forbidden(denied),
        Stop::Failed(failure) => Unreadable::Failed(failure),
        Stop::Conflict(message) => Unreadable::Failed(Failure::Api {
            code: 409,
            message,
            tries: None,
        }),
    };
    Outcome::Refused(Refusal::OwnersUnreadable {
        pod: format!("{}/{}", pod.namespace, pod.name),
        owner: pod.owner.as_ref().map(|o| format!("{} {}", o.kind, o.name)),
        cause: Box::new(cause),
    })
}
