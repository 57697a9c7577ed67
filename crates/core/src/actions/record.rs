//! What the executor writes about each action: the audit intent before the request, the
//! outcome after it, the log line and the Kubernetes Event; and, on start, the intents an
//! earlier run left without an outcome, checked against the cluster.

use crate::place::Place;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;

use super::audit::{Audit, AuditLog, AuditRecord, Stage};
use super::calls::Calls;
use super::executor::{Executor, Prepared};
use super::history::{PastAction, Written};
use super::outcome::Outcome;
use super::refusal::Refusal;
use super::workload::{ScalableWorkload, spec_replicas};
use crate::cluster::plain;
use crate::pod::WorkloadId;

impl Executor {
    /// The automatic actions the audit log says were sent within `within`, for the guards.
    pub(crate) fn recent_actions(&self, within: Duration) -> Vec<PastAction> {
        let now = self.cache.clock().now();
        match &self.audit {
            Audit::Log(log) => log.recent(&self.cluster, within, self.dry_run, now),
            _ => Vec::new(),
        }
    }

    /// Why nothing may act, when the audit log cannot be written.
    pub fn audit_problem(&self) -> Option<String> {
        if let Audit::Unavailable { path, why } = &self.audit {
            return Some(format!(
                "the audit log {} cannot be opened ({why})",
                path.display()
            ));
        }
        self.audit_broken
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Acting without an audit log on purpose (`--no-audit`).
    pub fn unaudited(&self) -> bool {
        matches!(self.audit, Audit::Off)
    }

    /// Write the intent, fsynced, before anything is sent. `Err` is the refusal to act.
    pub(super) async fn intend(&self, prepared: &Prepared) -> Result<Option<AuditRecord>, Outcome> {
        if let Some(problem) = self.audit_problem() {
            return Err(Outcome::Refused(Refusal::AuditBroken(problem)));
        }
        let Audit::Log(log) = &self.audit else {
            return Ok(None);
        };
        let record = self.intent(log, prepared);
        match log.write_off_thread(record.clone()).await {
            Ok(()) => Ok(Some(record)),
            Err(e) => Err(Outcome::Refused(Refusal::AuditUnwritten(
                self.broken(log, &e),
            ))),
        }
    }

    fn broken(&self, log: &AuditLog, e: &crate::Error) -> String {
        let path = log.path().display();
        let problem = format!("the audit log {path} cannot be written ({e})");
        tracing::error!("{problem}; no action runs until it can");
        *self.audit_broken.lock().unwrap_or_else(|e| e.into_inner()) = Some(problem.clone());
        problem
    }

    pub(super) async fn conclude(
        &self,
        intent: Option<AuditRecord>,
        prepared: &Prepared,
        outcome: &Outcome,
    ) {
        tracing::info!(
            action = prepared.action.verb().name(),
            outcome = outcome.label(),
            "{}",
            outcome.detail()
        );
        if let (Some(intent), Audit::Log(log)) = (intent, &self.audit) {
            let record = AuditRecord {
                time: AuditRecord::stamp(self.cache.clock().now()),
                stage: Stage::Outcome,
                reason: None,
                outcome: Some(outcome.label()),
                detail: Some(outcome.detail()),
                ..intent
            };
            if let Err(e) = log.write_off_thread(record).await {
                self.broken(log, &e);
            }
        }
        if *outcome != Outcome::AlreadyGone {
            self.emit_event(prepared, outcome).await;
        }
    }

    fn intent(&self, log: &AuditLog, prepared: &Prepared) -> AuditRecord {
        let (pod, finding) = (prepared.pod.as_ref(), prepared.finding.as_ref());
        let now = self.cache.clock().now();
        let (namespace, name, uid) = match (prepared.action.pod(), prepared.workload()) {
            (Some(p), _) => (p.namespace.clone(), p.name.clone(), Some(p.uid.clone())),
            (None, Some(w)) => (w.namespace().to_string(), w.name().to_string(), None),
            (None, None) => (String::new(), String::new(), None),
        };
        let reason = finding.map(|f| format!("{}: {}", f.rule, f.reason));
        AuditRecord {
            time: AuditRecord::stamp(now),
            id: log.next_id(now),
            stage: Stage::Intent,
            cluster: self.cluster.clone(),
            origin: prepared.origin,
            actor: self.actor.clone(),
            action: prepared.action.verb(),
            namespace,
            name,
            uid,
            workload: prepared.workload().map(|w| w.to_string()),
            owner: pod.map(|p| WorkloadId::of(p).label()),
            pod_phase: pod.map(|p| p.phase.name()),
            shares: pod.zip(finding).and_then(|(pod, f)| {
                let message = f.message.as_deref();
                Place::at(f.rule, &pod.namespace, pod.node.as_deref(), message).shared
            }),
            reason,
            dry_run: self.dry_run,
            outcome: None,
            detail: None,
        }
    }

    /// Intents an earlier run of this cluster left without an outcome: each is checked against
    /// the cluster, closed with an `unknown` outcome, and returned as a line to show.
    pub async fn resolve_interrupted(&self) -> Vec<String> {
        let Audit::Log(log) = &self.audit else {
            return Vec::new();
        };
        let mut lines = Vec::new();
        for gap in log.interrupted() {
            if gap.cluster != self.cluster {
                continue;
            }
            let now = check(&self.calls, &gap).await;
            let line = format!(
                "an action was interrupted before its outcome was recorded: {} {}/{} at {} \
                 (audit id {}){}; it may or may not have happened: {now}",
                gap.action,
                gap.namespace,
                gap.name,
                AuditRecord::stamp(gap.time),
                gap.id,
                if gap.dry_run { ", dry run" } else { "" },
            );
            tracing::warn!("{line}");
            let record = AuditRecord {
                time: AuditRecord::stamp(self.cache.clock().now()),
                id: gap.id.clone(),
                stage: Stage::Outcome,
                cluster: gap.cluster.clone(),
                origin: gap.origin,
                actor: self.actor.clone(),
                action: gap.action,
                namespace: gap.namespace.clone(),
                name: gap.name.clone(),
                uid: gap.uid.clone(),
                workload: gap.workload.clone(),
                owner: None,
                pod_phase: None,
                shares: None,
                reason: None,
                dry_run: gap.dry_run,
                outcome: Some("unknown"),
                detail: Some(format!("interrupted; checked on restart: {now}")),
            };
            if let Err(e) = log.write(&record) {
                tracing::error!("audit log {}: {e}", log.path().display());
            }
            lines.push(line);
        }
        lines
    }
}

/// What the cluster says now about an interrupted action's target.
async fn check(calls: &Calls, gap: &Written) -> String {
    let client = &calls.client;
    match (&gap.uid, &gap.workload) {
        (Some(uid), None) => {
            let pods: Api<Pod> = Api::namespaced(client.clone(), &gap.namespace);
            match pods.get_opt(&gap.name).await {
                Ok(None) => "the pod is gone".to_string(),
                Ok(Some(p)) if p.metadata.uid.as_deref() != Some(uid) => {
                    "the pod was replaced by a new one of the same name".to_string()
                }
                Ok(Some(p)) if p.metadata.deletion_timestamp.is_some() => {
                    "the pod is terminating".to_string()
                }
                Ok(Some(_)) => "the pod is still there".to_string(),
                Err(e) => format!("the pod could not be read ({})", plain(&e)),
            }
        }
        (_, Some(workload)) => match audited_workload(workload) {
            Some(w) => match w.api(client).get(w.name()).await {
                Ok(o) => format!("{w} is at {} replicas", spec_replicas(&o).unwrap_or(0)),
                Err(e) => format!("{w} could not be read ({})", plain(&e)),
            },
            None => format!("check {workload} by hand"),
        },
        (None, None) => "nothing to check".to_string(),
    }
}

/// A scaled workload as the audit log writes it: `Deployment shop/web`.
fn audited_workload(text: &str) -> Option<ScalableWorkload> {
    let (kind, rest) = text.split_once(' ')?;
    let (namespace, name) = rest.split_once('/')?;
    ScalableWorkload::of(&WorkloadId::new(namespace, kind, name))
}
