//! Kubernetes Events on the objects we act on, where the identity may create them.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use chrono::{DateTime, Utc};
use kube::Client;
use kube::core::Request;
use kube::core::params::PostParams;
use serde_json::json;

use super::audit::AuditRecord;

/// The object an Event is about.
pub(crate) struct Involved<'a> {
    pub api_version: &'a str,
    pub kind: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
    pub uid: Option<&'a str>,
}

#[derive(Clone)]
pub(crate) struct EventRecorder {
    client: Client,
    /// Turned off after the first 403, so a missing permission costs one log line.
    allowed: Arc<AtomicBool>,
}

impl EventRecorder {
    pub fn new(client: Client, enabled: bool) -> EventRecorder {
        EventRecorder {
            client,
            allowed: Arc::new(AtomicBool::new(enabled)),
        }
    }

    pub async fn emit(
        &self,
        about: Involved<'_>,
        reason: &str,
        message: &str,
        warning: bool,
        at: DateTime<Utc>,
    ) {
        if !self.allowed.load(Ordering::Relaxed) {
            return;
        }
        let now = AuditRecord::stamp(at);
        let body = json!({
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"generateName": format!("{}.", about.name), "namespace": about.namespace},
            "involvedObject": {
                "apiVersion": about.api_version, "kind": about.kind,
                "namespace": about.namespace, "name": about.name, "uid": about.uid,
            },
            "reason": reason,
            "message": message,
            "type": if warning { "Warning" } else { "Normal" },
            "source": {"component": "ops-pod-cleaner"},
            "reportingComponent": "ops-pod-cleaner",
            "reportingInstance": hostname(),
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        });
        let path = format!("/api/v1/namespaces/{}/events", about.namespace);
        let request = match Request::new(path)
            .create(&PostParams::default(), body.to_string().into_bytes())
        {
            Ok(r) => r,
            Err(e) => return tracing::warn!("cannot build an Event: {e}"),
        };
        match self.client.request::<serde_json::Value>(request).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 403 => {
                self.allowed.store(false, Ordering::Relaxed);
                tracing::warn!(
                    "may not create Events ({}); actions are still audited to the log",
                    s.message
                );
            }
            Err(e) => tracing::warn!(
                "could not record an Event on {} {}: {}",
                about.kind,
                about.name,
                crate::cluster::plain(&e)
            ),
        }
    }
}

fn hostname() -> String {
    std::env::var("HOSTNAME").unwrap_or_else(|_| "ops-pod-cleaner".to_string())
}
