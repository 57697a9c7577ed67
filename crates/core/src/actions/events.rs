//! Kubernetes Events on the objects we act on, where the identity may create them.

use std::sync::atomic::Ordering;

use kube::core::Request;
use kube::core::params::PostParams;
use serde_json::json;

use super::action::Action;
use super::audit::AuditRecord;
use super::executor::{Executor, Prepared};
use super::outcome::Outcome;

impl Executor {
    /// An Event on the pod or workload `prepared` acted on, saying what became of it. The
    /// first 403 turns Events off, so a missing permission costs one log line.
    pub(super) async fn emit_event(&self, prepared: &Prepared, outcome: &Outcome) {
        let (api_version, kind, namespace, name, uid) =
            match (prepared.workload(), prepared.action.pod()) {
                (Some(w), _) => (
                    w.kind().api_resource().api_version,
                    w.kind().name(),
                    w.namespace(),
                    w.name(),
                    None,
                ),
                (None, Some(p)) => ("v1".into(), "Pod", &*p.namespace, &*p.name, Some(&p.uid)),
                (None, None) => return,
            };
        if !self.events.load(Ordering::Relaxed) {
            return;
        }
        let now = AuditRecord::stamp(self.cache.clock().now());
        let body = json!({
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"generateName": format!("{name}."), "namespace": namespace},
            "involvedObject": {
                "apiVersion": api_version, "kind": kind,
                "namespace": namespace, "name": name, "uid": uid,
            },
            "reason": reason(&prepared.action),
            "message": format!("ops-pod-cleaner {}: {}", outcome.label(), outcome.detail()),
            "type": if outcome.succeeded() { "Normal" } else { "Warning" },
            "source": {"component": "ops-pod-cleaner"},
            "reportingComponent": "ops-pod-cleaner",
            "reportingInstance": hostname(),
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        });
        let path = format!("/api/v1/namespaces/{namespace}/events");
        let request = match Request::new(path)
            .create(&PostParams::default(), body.to_string().into_bytes())
        {
            Ok(r) => r,
            Err(e) => return tracing::warn!("cannot build an Event: {e}"),
        };
        match self
            .calls
            .client
            .request::<serde_json::Value>(request)
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 403 => {
                self.events.store(false, Ordering::Relaxed);
                tracing::warn!(
                    "may not create Events ({}); actions are still audited to the log",
                    s.message
                );
            }
            Err(e) => tracing::warn!(
                "could not record an Event on {kind} {name}: {}",
                crate::cluster::plain(&e)
            ),
        }
    }
}

fn reason(action: &Action) -> &'static str {
    match action {
        Action::Delete(_) => "PodDeleted",
        Action::ForceDelete(_) => "PodForceDeleted",
        Action::Evict(_) => "PodEvicted",
        Action::ScaleToZero(_) => "ScaledToZero",
        Action::UndoScale(_) => "ScaleRestored",
        Action::RemoveFinalizers(_) => "FinalizersRemoved",
    }
}

fn hostname() -> String {
    std::env::var("HOSTNAME").unwrap_or_else(|_| "ops-pod-cleaner".to_string())
}
