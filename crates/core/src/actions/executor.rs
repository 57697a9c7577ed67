//! The one write path of a cluster: every action, from the screen, the worker or `--once`,
//! goes prepare (checks that write nothing) → intend (the audit record, on disk) → send →
//! conclude (the outcome record, the log line, the Event). The worker admits a prepared
//! action through its guards between prepare and send.

use std::time::Duration;

use kube::Client;

use super::action::{Action, Origin, PodRef};
use super::calls::Calls;
use super::events::EventRecorder;
use super::failure::Failure;
use super::history::PastAction;
use super::outcome::{Outcome, Skip};
use super::owner::{self, SCALE_CHAIN};
use super::owners::{FULL_CHAIN, LivePod, OptOut, Owners};
use super::pod_writes::PodWrites;
use super::reads::ClusterApi;
use super::record::{Audit, Recorder, Subject};
use super::refusal::{Refusal, Unreadable};
use super::retry::{RetryPolicy, Stop};
use super::scale::{ScalePlan, Scaler};
use super::undo::Undo;
use crate::cluster::{Cache, ClusterName};
use crate::fleet::WorkerAddress;
use crate::pod::PodRecord;
use crate::policy::Policy;
use crate::rules::{Finding, RuleSpec, classify};

/// One cluster's write path.
pub struct Executor {
    calls: Calls,
    cache: Cache,
    rules: Vec<RuleSpec>,
    recorder: Recorder,
    /// Decide and record, but change nothing.
    dry_run: bool,
    /// `--readonly`: nothing runs, whoever asks.
    readonly: bool,
    owners: Owners,
    /// The cluster's in-cluster worker, when it is read through it: then no watch fills the
    /// cache, each pod acted on is read live into it first, and a cause's words are asked of
    /// the worker.
    worker: Option<WorkerAddress>,
}

/// An action that passed every check that needs no write, with what those checks read.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    pub(crate) action: Action,
    pub(crate) origin: Origin,
    pod: Option<PodRecord>,
    /// What the rules found on the pod when it was re-checked: the intent's reason.
    finding: Option<Finding>,
    scale: Option<ScalePlan>,
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
        let events = EventRecorder::new(client.clone(), policy.events());
        // One clock per cluster: the cache's, which its findings were classified at.
        let clock = cache.clock();
        let retry = RetryPolicy {
            cluster: Some(cluster.clone()),
            ..RetryPolicy::default()
        };
        Executor {
            calls: Calls::new(client, retry),
            cache,
            rules: policy.chain().to_vec(),
            recorder: Recorder::new(audit, events, cluster, policy.dry_run(), clock),
            dry_run: policy.dry_run(),
            readonly: policy.readonly(),
            owners: Owners::default(),
            worker: None,
        }
    }

    /// For a cluster read through its worker at `worker`, whose cache no watch fills: every
    /// pod action reads its pod live into the cache first, so the recheck, the owner chain,
    /// the opt-outs and the audit read it there as for a watched cluster; a pod gone is
    /// already gone. A pod's details ask the worker for its cause's words.
    pub fn fed_by(self, worker: WorkerAddress) -> Executor {
        Executor {
            worker: Some(worker),
            ..self
        }
    }

    /// How 429 and 5xx answers are retried (tests shorten the waits).
    pub fn with_retry(self, retry: RetryPolicy) -> Executor {
        Executor {
            calls: self.calls.clone().with_retry(retry),
            ..self
        }
    }

    pub(crate) fn cluster(&self) -> &ClusterName {
        self.recorder.cluster()
    }

    /// What may be read through this cluster; the writes are [`Executor::run`]'s alone.
    pub fn reads(&self) -> ClusterApi<'_> {
        ClusterApi {
            calls: &self.calls,
            cache: &self.cache,
            owners: &self.owners,
            cluster: self.cluster(),
            refused: self.readonly.then_some(Refusal::Readonly),
            dry_run: self.dry_run,
            worker: self.worker.as_ref(),
        }
    }

    /// The automatic actions the audit log says were sent within `within`, for the guards.
    pub(crate) fn recent_actions(&self, within: Duration) -> Vec<PastAction> {
        self.recorder.recent_actions(within)
    }

    /// Why nothing may act, when the audit log cannot be written.
    pub fn audit_problem(&self) -> Option<String> {
        self.recorder.audit_problem()
    }

    /// Acting without an audit log on purpose (`--no-audit`).
    pub fn unaudited(&self) -> bool {
        self.recorder.unaudited()
    }

    /// Intents an earlier run of this cluster left without an outcome: each is checked against
    /// the cluster, closed with an `unknown` outcome, and returned as a line to show.
    pub async fn resolve_interrupted(&self) -> Vec<String> {
        self.recorder.resolve_interrupted(&self.calls).await
    }

    /// Check, then send and record. An action refused by its checks sent nothing and is
    /// only logged.
    pub async fn run(&self, action: &Action, origin: Origin) -> Outcome {
        match self.prepare(action, origin).await {
            Ok(prepared) => self.send(prepared).await,
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

    /// Every check that writes nothing: the pod is still the one planned; for the worker, it
    /// still matches, nobody opted it out up its owner chain, and a scale-to-zero would not stop
    /// replicas that still serve. `Err` is the outcome, with nothing sent.
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
                .chain(self.calls.client(), self.calls.retry(), pod, depth)
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
            super::node::confirm_node_gone(self.calls.client(), p, pod)
                .await
                .map_err(|copy| Outcome::Refused(Refusal::SecondCopy(copy)))?;
        }
        let scale = match (&pod, action) {
            (Some(pod), Action::ScaleToZero(_)) => Some(
                self.scaler()
                    .plan_scale(pod, finding.as_ref(), &chain, origin, live)
                    .await?,
            ),
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
    pub(crate) async fn send(&self, prepared: Prepared) -> Outcome {
        self.send_within(prepared, None).await
    }

    /// `send`, with the request cut off at `until` (a leader must stop before its lease can
    /// pass to another replica); the cut is recorded as a failure that may have landed.
    pub(crate) async fn send_within(
        &self,
        prepared: Prepared,
        until: Option<std::time::Instant>,
    ) -> Outcome {
        let Prepared {
            action,
            origin,
            pod,
            finding,
            scale,
        } = prepared;
        let subject = Subject {
            action: &action,
            origin,
            workload: match &action {
                Action::UndoScale(w) => Some(w),
                _ => scale.as_ref().map(|s| &s.workload),
            },
            pod: pod.as_ref(),
            finding: finding.as_ref(),
        };
        // The intent's write and the request share the one deadline.
        let Some(intended) = before(until, self.recorder.intend(&subject)).await else {
            return Outcome::Failed(Failure::IntentLate);
        };
        let intent = match intended {
            Ok(intent) => intent,
            Err(refused) => return refused,
        };
        let request = self.request(&action, origin, pod.as_ref(), scale.as_ref());
        let outcome = before(until, request).await;
        let outcome = outcome.unwrap_or(Outcome::Failed(Failure::LeaseEnded));
        self.recorder.conclude(intent, &subject, &outcome).await;
        outcome
    }

    /// The request itself, by verb.
    async fn request(
        &self,
        action: &Action,
        origin: Origin,
        pod: Option<&PodRecord>,
        scale: Option<&ScalePlan>,
    ) -> Outcome {
        let pods = PodWrites {
            calls: &self.calls,
            dry_run: self.dry_run,
            rules: &self.rules,
            origin,
            clock: self.cache.clock(),
        };
        match (action, pod, scale) {
            (Action::Delete(p), _, _) => pods.delete(p, None).await,
            (Action::ForceDelete(p), Some(pod), _) => pods.force_delete(p, pod).await,
            (Action::Evict(p), _, _) => pods.evict(p).await,
            (Action::RemoveFinalizers(p), _, _) => pods.remove_finalizers(p).await,
            (Action::ScaleToZero(_), _, Some(plan)) => self.scaler().scale_to_zero(plan).await,
            (Action::UndoScale(w), _, _) => self.undo().run(w).await,
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

    fn scaler(&self) -> Scaler<'_> {
        Scaler {
            calls: &self.calls,
            dry_run: self.dry_run,
            rules: &self.rules,
            cluster: self.recorder.cluster(),
            actor: self.recorder.actor(),
            clock: self.cache.clock(),
        }
    }

    fn undo(&self) -> Undo<'_> {
        Undo {
            calls: &self.calls,
            dry_run: self.dry_run,
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
