//! Runs confirmed actions against the API: re-check, act with preconditions, record.

use chrono::Utc;
use k8s_openapi::api::core::v1::Pod;
use std::sync::Mutex;
use std::time::Duration;

use kube::Client;
use kube::api::{Api, DeleteParams, Preconditions};
use serde_json::json;

use super::audit::actor;
use super::events::EventRecorder;
use super::history::PastAction;
use super::owner::{self, SCALE_CHAIN};
use super::owners::{FULL_CHAIN, OptOut, Owners};
use super::record::{Audit, Subject};
use super::retry::{Needs, RetryPolicy, Stop};
use super::scale::ScalePlan;
use super::{Action, Origin, Outcome, PodRef, Refusal};
use crate::cluster::Cache;
use crate::pod::{Interner, PodRecord, decode_pod};
use crate::policy::Policy;
use crate::rules::{Finding, RuleSpec, classify};

/// What the executor was built with; only a [`Policy`] sets it.
#[derive(Debug, Clone)]
pub(super) struct ExecutorSettings {
    /// The cluster's name, for the audit log.
    pub cluster: String,
    /// Decide and record, but change nothing.
    pub dry_run: bool,
    /// `--readonly`: nothing runs, whoever asks.
    pub readonly: bool,
    pub retry: RetryPolicy,
}

pub struct Executor {
    pub(super) client: Client,
    pub(super) cache: Cache,
    pub(super) chain: Vec<RuleSpec>,
    pub(super) audit: Audit,
    /// Set when a write to the audit log failed: nothing acts until a restart fixes it.
    pub(super) audit_broken: Mutex<Option<String>>,
    /// Who runs the tool, for the audit log.
    pub(super) actor: String,
    pub(super) events: EventRecorder,
    pub(super) settings: ExecutorSettings,
    pub(super) owners: Owners,
}

/// An action that passed every check that needs no write, with what those checks read.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    pub(crate) action: Action,
    pub(crate) origin: Origin,
    pod: Option<PodRecord>,
    /// What the rules found on the pod when it was re-checked: the intent's reason.
    finding: Option<Finding>,
    pub(super) scale: Option<ScalePlan>,
}

impl Executor {
    /// The only way to build an executor: dry-run and Events come from the policy.
    pub fn new(
        client: Client,
        cache: Cache,
        policy: &Policy,
        cluster: &str,
        audit: Audit,
    ) -> Executor {
        let events = EventRecorder::new(client.clone(), policy.events());
        Executor {
            client,
            cache,
            chain: policy.chain().to_vec(),
            audit,
            audit_broken: Mutex::new(None),
            actor: actor(),
            events,
            settings: ExecutorSettings {
                cluster: cluster.to_string(),
                dry_run: policy.dry_run(),
                readonly: policy.readonly(),
                retry: RetryPolicy::default(),
            },
            owners: Owners::default(),
        }
    }

    /// How 429 and 5xx answers are retried (tests shorten the waits).
    pub fn with_retry(mut self, retry: RetryPolicy) -> Executor {
        self.settings.retry = retry;
        self
    }

    pub(crate) fn cluster(&self) -> &str {
        &self.settings.cluster
    }

    /// The automatic actions the audit log says were sent within `within`, for the guards.
    pub(crate) fn recent_actions(&self, within: Duration) -> Vec<PastAction> {
        match &self.audit {
            Audit::Log(log) => log.recent(
                &self.settings.cluster,
                within,
                self.settings.dry_run,
                Utc::now(),
            ),
            _ => Vec::new(),
        }
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
        if self.settings.readonly {
            return Err(Outcome::Refused(Refusal::Readonly));
        }
        if origin != Origin::Manual && action.manual_only() {
            return Err(Outcome::Refused(Refusal::ManualOnly(action.verb())));
        }
        let (pod, finding) = match action.pod() {
            Some(target) => {
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
                .chain(&self.client, &self.settings.retry, pod, depth)
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
            super::node::confirm_node_gone(&self.client, p, pod).await?;
        }
        let scale = match (&pod, action) {
            (Some(pod), Action::ScaleToZero(_)) => Some(
                self.plan_scale(pod, finding.as_ref(), &chain, origin)
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

    /// `send`, with the request cut off after `limit` (a leader must stop before its lease
    /// can pass to another replica); the cut is recorded as a failure that may have landed.
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
        let deadline = until.map(tokio::time::Instant::from_std);
        let intending = self.intend(&subject);
        let intended = match deadline {
            None => intending.await,
            Some(at) => match tokio::time::timeout_at(at, intending).await {
                Ok(intended) => intended,
                Err(_) => {
                    return Outcome::Failed(
                        "the audit log did not take the intent before the lease had to be \
                         renewed; nothing was sent"
                            .into(),
                    );
                }
            },
        };
        let intent = match intended {
            Ok(intent) => intent,
            Err(refused) => return refused,
        };
        let request = async {
            match (&action, &pod, &scale) {
                (Action::Delete(p), _, _) => self.delete(p, None, origin).await,
                (Action::ForceDelete(p), Some(pod), _) => self.force_delete(p, pod, origin).await,
                (Action::Evict(p), _, _) => self.evict(p, origin).await,
                (Action::ScaleToZero(_), _, Some(plan)) => self.scale_to_zero(plan).await,
                (Action::UndoScale(w), _, _) => self.undo_scale(w).await,
                (Action::RemoveFinalizers(p), _, _) => self.remove_finalizers(p).await,
                _ => Outcome::Failed("no pod to act on".into()),
            }
        };
        let outcome = match deadline {
            Some(at) => tokio::time::timeout_at(at, request)
                .await
                .unwrap_or_else(|_| {
                    Outcome::Failed(
                        "stopped at the lease's end: the lease had to be renewed first; the \
                     request may or may not have reached the server"
                            .into(),
                    )
                }),
            None => request.await,
        };
        self.conclude(intent, &subject, &outcome).await;
        outcome
    }

    /// The pod must still be in the cache with the same UID, and, for the worker, still match.
    /// Its finding now is kept: the audit intent says why from it.
    fn recheck(
        &self,
        target: &PodRef,
        origin: Origin,
    ) -> Result<(PodRecord, Option<Finding>), Outcome> {
        let pod = self.cache.get(&target.uid).ok_or(Outcome::AlreadyGone)?;
        let finding = classify(&pod, &self.chain, Utc::now());
        if let Origin::Auto(rule) = origin
            && finding.as_ref().is_none_or(|f| f.rule != rule)
        {
            return Err(Outcome::Skipped(format!(
                "the pod no longer matches rule {rule}"
            )));
        }
        Ok((pod, finding))
    }

    fn still_matches(&self, pod: &PodRecord, origin: Origin) -> bool {
        match origin {
            Origin::Manual => true,
            Origin::Auto(rule) => {
                classify(pod, &self.chain, Utc::now()).is_some_and(|f| f.rule == rule)
            }
        }
    }

    async fn delete(&self, p: &PodRef, grace: Option<u32>, origin: Origin) -> Outcome {
        if self.settings.dry_run {
            return Outcome::DryRun(format!("would delete {p}{}", grace_note(grace)));
        }
        let api: Api<Pod> = Api::namespaced(self.client.clone(), &p.namespace);
        let params = DeleteParams {
            grace_period_seconds: grace,
            preconditions: Some(uid_precondition(p)),
            ..Default::default()
        };
        let needs = Needs {
            verb: "delete",
            resource: "pods",
        };
        for attempt in 0..2 {
            match self
                .settings
                .retry
                .run(needs, &p.namespace, || api.delete(&p.name, &params))
                .await
            {
                Ok(_) => return Outcome::Done(format!("deleted {p}{}", grace_note(grace))),
                Err(Stop::Conflict(message)) if attempt == 0 => {
                    if let Err(outcome) = self.replan(p, origin, &message).await {
                        return outcome;
                    }
                }
                Err(stop) => return stopped(stop),
            }
        }
        Outcome::Skipped(format!(
            "{p} kept changing while being deleted; it will be planned again"
        ))
    }

    /// After a 409: read the pod again and decide whether the same action still applies.
    async fn replan(&self, p: &PodRef, origin: Origin, conflict: &str) -> Result<(), Outcome> {
        let path = format!("/api/v1/namespaces/{}/pods/{}", p.namespace, p.name);
        let needs = Needs {
            verb: "get",
            resource: "pods",
        };
        let text = self
            .send_json(http::Method::GET, path, None, needs, &p.namespace)
            .await
            .map_err(stopped)?;
        let fresh = decode_pod(text.as_bytes(), &mut Interner::default())
            .map_err(|e| Outcome::Failed(format!("re-reading {p} after a conflict: {e}")))?;
        if *fresh.uid != *p.uid {
            return Err(Outcome::Skipped(format!(
                "a new pod with the same name (uid {}) replaced {p}; it was left alone ({conflict})",
                fresh.uid
            )));
        }
        if !self.still_matches(&fresh, origin) {
            return Err(Outcome::Skipped(format!(
                "{p} changed and no longer matches its rule"
            )));
        }
        Ok(())
    }

    async fn force_delete(&self, p: &PodRef, pod: &PodRecord, origin: Origin) -> Outcome {
        let held = (!pod.finalizers.is_empty()).then(|| pod.finalizers.join(", "));
        match (held, origin) {
            // Deleting again cannot release finalizers; say so instead of retrying forever.
            (Some(_), Origin::Auto(_)) if pod.deletion.is_some() => {
                Outcome::Refused(Refusal::HeldByFinalizers {
                    pod: p.clone(),
                    finalizers: pod.finalizers.iter().map(|f| f.to_string()).collect(),
                })
            }
            (Some(finalizers), _) => match self.delete(p, Some(0), origin).await {
                Outcome::Done(done) => Outcome::Done(format!(
                    "{done}; finalizers ({finalizers}) still hold it until they are removed"
                )),
                other => other,
            },
            (None, _) => self.delete(p, Some(0), origin).await,
        }
    }

    async fn evict(&self, p: &PodRef, origin: Origin) -> Outcome {
        if self.settings.dry_run {
            return Outcome::DryRun(format!("would evict {p}"));
        }
        // Built by hand: kube's `Api::evict` writes `delete_options`, which the API server
        // ignores, and the UID precondition with it.
        let body = json!({
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": p.name, "namespace": p.namespace},
            "deleteOptions": {"preconditions": {"uid": p.uid}},
        });
        let path = format!(
            "/api/v1/namespaces/{}/pods/{}/eviction",
            p.namespace, p.name
        );
        let needs = Needs {
            verb: "create",
            resource: "pods/eviction",
        };
        let evicted = self
            .send_json(
                http::Method::POST,
                path,
                Some(("application/json", body)),
                needs,
                &p.namespace,
            )
            .await;
        match evicted {
            Ok(_) => Outcome::Done(format!("evicted {p}")),
            Err(Stop::Conflict(message)) => match self.replan(p, origin, &message).await {
                Err(outcome) => outcome,
                Ok(()) => Outcome::Skipped(format!(
                    "{p} changed during eviction ({message}); it will be planned again"
                )),
            },
            Err(stop) => stopped(stop),
        }
    }

    async fn remove_finalizers(&self, p: &PodRef) -> Outcome {
        if self.settings.dry_run {
            return Outcome::DryRun(format!("would remove the finalizers of {p}"));
        }
        // The `test` operation makes the UID a precondition of the patch.
        let body = json!([
            {"op": "test", "path": "/metadata/uid", "value": p.uid},
            {"op": "add", "path": "/metadata/finalizers", "value": []},
        ]);
        let path = format!("/api/v1/namespaces/{}/pods/{}", p.namespace, p.name);
        let needs = Needs {
            verb: "patch",
            resource: "pods",
        };
        let patch = Some(("application/json-patch+json", body));
        let patched = self
            .send_json(http::Method::PATCH, path, patch, needs, &p.namespace)
            .await;
        match patched {
            Ok(_) => Outcome::Done(format!("removed the finalizers of {p}")),
            Err(stop) => stopped(stop),
        }
    }

    /// A request built by hand (for bodies kube's typed calls get wrong or cannot express),
    /// with the shared retry and status handling; returns the answer's text.
    async fn send_json(
        &self,
        method: http::Method,
        path: String,
        body: Option<(&str, serde_json::Value)>,
        needs: Needs,
        namespace: &str,
    ) -> Result<String, Stop> {
        let mut request = http::Request::builder().method(method).uri(path);
        let bytes = match body {
            Some((content_type, json)) => {
                request = request.header(http::header::CONTENT_TYPE, content_type);
                json.to_string().into_bytes()
            }
            None => Vec::new(),
        };
        let request = request
            .body(bytes)
            .map_err(|e| Stop::Failed(format!("cannot build the request: {e}")))?;
        self.settings
            .retry
            .run(needs, namespace, || {
                self.client.request_text(clone_request(&request))
            })
            .await
    }
}

fn uid_precondition(p: &PodRef) -> Preconditions {
    Preconditions {
        uid: Some(p.uid.clone()),
        resource_version: None,
    }
}

fn grace_note(grace: Option<u32>) -> String {
    grace
        .map(|g| format!(" with grace {g}s"))
        .unwrap_or_default()
}

fn clone_request(request: &http::Request<Vec<u8>>) -> http::Request<Vec<u8>> {
    let mut copy = http::Request::new(request.body().clone());
    *copy.method_mut() = request.method().clone();
    *copy.uri_mut() = request.uri().clone();
    *copy.headers_mut() = request.headers().clone();
    copy
}

/// An owner whose opt-out cannot be read could carry one: hold, and say what is missing.
fn owner_unreadable(stop: Stop, pod: &PodRecord) -> Outcome {
    match stopped(stop) {
        Outcome::AlreadyGone => Outcome::AlreadyGone,
        other => Outcome::Refused(Refusal::OwnersUnreadable {
            pod: format!("{}/{}", pod.namespace, pod.name),
            owner: pod.owner.as_ref().map(|o| format!("{} {}", o.kind, o.name)),
            cause: Box::new(other),
        }),
    }
}

pub(super) fn stopped(stop: Stop) -> Outcome {
    match stop {
        Stop::Gone => Outcome::AlreadyGone,
        Stop::Conflict(message) => Outcome::Skipped(format!("conflict: {message}")),
        Stop::Forbidden(denied) => Outcome::Refused(Refusal::Forbidden(denied)),
        Stop::Failed(message) => Outcome::Failed(message),
    }
}
