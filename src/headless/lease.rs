//! Leader election through a `coordination.k8s.io/v1` Lease, so two replicas never both act.
//!
//! Every write carries the resourceVersion it read: of two replicas racing for an expired
//! lease, the API server lets exactly one update through and answers the other with 409.

use std::time::{Duration, Instant};

use chrono::{DateTime, SecondsFormat, Utc};
use k8s_openapi::api::coordination::v1::Lease;
use kube::Client;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use crate::worker::WorkerCommand;

#[derive(Debug, Clone)]
pub struct LeaseSettings {
    pub namespace: String,
    pub name: String,
    /// This replica's name in `holderIdentity`.
    pub identity: String,
    pub duration: Duration,
    pub renew_every: Duration,
}

impl LeaseSettings {
    /// Namespace from `$POD_NAMESPACE` (the downward API), identity from `$HOSTNAME`.
    pub fn from_env() -> LeaseSettings {
        let env = |key: &str, default: &str| {
            std::env::var(key)
                .ok()
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| default.to_string())
        };
        LeaseSettings {
            namespace: env("POD_NAMESPACE", "default"),
            name: "ops-pod-cleaner".into(),
            identity: format!(
                "{}-{}",
                env("HOSTNAME", "ops-pod-cleaner"),
                std::process::id()
            ),
            duration: Duration::from_secs(15),
            renew_every: Duration::from_secs(5),
        }
    }
}

/// What the lease says now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub holder: Option<String>,
    pub renewed: Option<DateTime<Utc>>,
    pub duration: Duration,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Create,
    Renew,
    /// The holder stopped renewing (or let go): take it over.
    TakeOver,
    Follow {
        holder: String,
    },
}

/// Pure: what this replica should do about the lease at `now`.
pub fn decide(current: Option<&Held>, me: &str, now: DateTime<Utc>) -> Step {
    let Some(held) = current else {
        return Step::Create;
    };
    let holder = match held.holder.as_deref() {
        Some(h) if !h.is_empty() => h,
        _ => return Step::TakeOver,
    };
    if holder == me {
        return Step::Renew;
    }
    let expired = held.renewed.is_none_or(|renewed| {
        let duration = chrono::Duration::from_std(held.duration).unwrap_or_default();
        renewed + duration < now
    });
    if expired {
        Step::TakeOver
    } else {
        Step::Follow {
            holder: holder.to_string(),
        }
    }
}

/// Read the fields the decision needs from a stored Lease.
pub fn held(lease: &Lease) -> Held {
    let spec = serde_json::to_value(&lease.spec).unwrap_or(Value::Null);
    let renewed = spec
        .get("renewTime")
        .and_then(Value::as_str)
        .and_then(|t| t.parse().ok());
    Held {
        holder: spec
            .get("holderIdentity")
            .and_then(Value::as_str)
            .map(String::from),
        renewed,
        duration: Duration::from_secs(
            spec.get("leaseDurationSeconds")
                .and_then(Value::as_u64)
                .unwrap_or(15),
        ),
    }
}

/// Whether this replica leads, or who does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    Leader,
    Follower(String),
}

pub struct Elector {
    api: Api<Lease>,
    settings: LeaseSettings,
}

impl Elector {
    pub fn new(client: Client, settings: LeaseSettings) -> Elector {
        Elector {
            api: Api::namespaced(client, &settings.namespace),
            settings,
        }
    }

    /// One round: read, decide, write guarded by the resourceVersion read.
    pub async fn round(&self, now: DateTime<Utc>) -> Result<Role, String> {
        let current = self
            .api
            .get_opt(&self.settings.name)
            .await
            .map_err(|e| e.to_string())?;
        let step = decide(
            current.as_ref().map(held).as_ref(),
            &self.settings.identity,
            now,
        );
        let written = match (&step, current) {
            (Step::Follow { holder }, _) => return Ok(Role::Follower(holder.clone())),
            (Step::Create, _) => {
                let lease = self.lease(None, now, 0)?;
                self.api.create(&PostParams::default(), &lease).await
            }
            (_, None) => return Err("the lease vanished between read and write".into()),
            (Step::Renew | Step::TakeOver, Some(old)) => {
                let lease = self.lease(Some(&old), now, u8::from(step == Step::TakeOver))?;
                self.api
                    .replace(&self.settings.name, &PostParams::default(), &lease)
                    .await
            }
        };
        match written {
            Ok(_) => Ok(Role::Leader),
            Err(kube::Error::Api(s)) if s.code == 409 => {
                Ok(Role::Follower("another replica (it won the race)".into()))
            }
            Err(e) => Err(e.to_string()),
        }
    }

    /// Let go on shutdown so another replica takes over without waiting for expiry.
    pub async fn release(&self) {
        let Ok(Some(mut lease)) = self.api.get_opt(&self.settings.name).await else {
            return;
        };
        if held(&lease).holder.as_deref() != Some(&self.settings.identity) {
            return;
        }
        if let Some(spec) = lease.spec.as_mut() {
            spec.holder_identity = None;
        }
        match self
            .api
            .replace(&self.settings.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => tracing::info!("released the lease"),
            Err(e) => tracing::warn!("could not release the lease ({e}); it expires by itself"),
        }
    }

    fn lease(
        &self,
        old: Option<&Lease>,
        now: DateTime<Utc>,
        transition: u8,
    ) -> Result<Lease, String> {
        let stamp = now.to_rfc3339_opts(SecondsFormat::Micros, true);
        let spec = old
            .and_then(|l| serde_json::to_value(&l.spec).ok())
            .unwrap_or(Value::Null);
        let acquired = match (transition, spec.get("acquireTime")) {
            (0, Some(Value::String(t))) => t.clone(),
            _ => stamp.clone(),
        };
        let transitions = spec
            .get("leaseTransitions")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let value = json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": self.settings.name,
                "namespace": self.settings.namespace,
                "resourceVersion": old.and_then(|l| l.metadata.resource_version.clone()),
            },
            "spec": {
                "holderIdentity": self.settings.identity,
                "leaseDurationSeconds": self.settings.duration.as_secs(),
                "acquireTime": acquired,
                "renewTime": stamp,
                "leaseTransitions": transitions + i64::from(transition),
            },
        });
        serde_json::from_value(value).map_err(|e| e.to_string())
    }
}

/// Keep electing until `stop`; tell the worker to stand by whenever this replica does not lead.
/// A leader that cannot renew steps down before its lease can expire elsewhere.
pub async fn run(
    elector: Elector,
    worker: mpsc::Sender<WorkerCommand>,
    leader: watch::Sender<bool>,
    mut stop: watch::Receiver<bool>,
) {
    let settings = elector.settings.clone();
    let mut last_renewed: Option<Instant> = None;
    let mut role: Option<Role> = None;
    loop {
        let next = match elector.round(Utc::now()).await {
            Ok(Role::Leader) => {
                last_renewed = Some(Instant::now());
                Role::Leader
            }
            Ok(follower) => follower,
            Err(e) => {
                tracing::warn!("lease {}/{}: {e}", settings.namespace, settings.name);
                let deadline = settings.duration.saturating_sub(settings.renew_every);
                match (&role, last_renewed) {
                    (Some(Role::Leader), Some(at)) if at.elapsed() < deadline => Role::Leader,
                    _ => Role::Follower("unknown (the lease cannot be read)".into()),
                }
            }
        };
        if role.as_ref() != Some(&next) {
            announce(&next, &settings, &worker, &leader).await;
            role = Some(next);
        }
        tokio::select! {
            _ = tokio::time::sleep(settings.renew_every) => {}
            _ = stop.changed() => break,
        }
    }
    if role == Some(Role::Leader) {
        let _ = worker
            .send(WorkerCommand::SetStandby(Some("shutting down".into())))
            .await;
        elector.release().await;
    }
}

async fn announce(
    role: &Role,
    settings: &LeaseSettings,
    worker: &mpsc::Sender<WorkerCommand>,
    leader: &watch::Sender<bool>,
) {
    let standby = match role {
        Role::Leader => {
            tracing::info!("leading: this replica ({}) acts", settings.identity);
            None
        }
        Role::Follower(holder) => {
            tracing::info!(
                "standing by: {holder} holds lease {}/{}",
                settings.namespace,
                settings.name
            );
            Some(format!("standby: {holder} holds the lease and acts"))
        }
    };
    let leads = standby.is_none();
    leader.send_replace(leads);
    let _ = worker.send(WorkerCommand::SetStandby(standby)).await;
    if leads {
        // Act on what piled up while standing by, not at the next tick.
        let _ = worker.send(WorkerCommand::RunNow).await;
    }
}
