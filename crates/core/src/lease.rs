//! Leader election through a `coordination.k8s.io/v1` Lease, so two replicas never both act.
//!
//! As client-go does it: every write carries the resourceVersion it read, so of two replicas
//! racing for an expired lease exactly one wins. A holder counts as gone only when its
//! record (holder and `renewTime`) has stayed unchanged for the lease duration on *this*
//! replica's monotonic clock; `renewTime` is never compared with the local wall clock, which
//! may be skewed. A leader that cannot renew within the renew deadline (shorter than the
//! lease) stops acting before any other replica can see the lease expire.

use std::time::{Duration, Instant};

use chrono::{DateTime, SecondsFormat, Utc};
use k8s_openapi::api::coordination::v1::Lease;
use kube::Client;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use crate::actions::PastAction;
use crate::clock::Clock;
use crate::cluster::{jitter, plain};
use crate::worker::{Standby, WorkerCommand, WorkerHandle};

#[derive(Debug, Clone)]
pub struct LeaseSettings {
    pub namespace: String,
    pub name: String,
    /// This replica's name in `holderIdentity`.
    pub identity: String,
    /// How long others wait, after the record last changed, before taking over.
    pub duration: Duration,
    /// A leader that has not renewed for this long stops acting; shorter than `duration`.
    pub renew_deadline: Duration,
    /// Between attempts, to renew or to acquire.
    pub retry_period: Duration,
}

impl LeaseSettings {
    /// Namespace from `$POD_NAMESPACE` (the downward API), else the product's namespace, as for the
    /// parked ConfigMap; client-go's defaults: 15 s lease, 10 s renew deadline, 2 s retry period.
    pub fn from_env() -> LeaseSettings {
        LeaseSettings {
            namespace: crate::actions::parked_namespace(),
            name: "ops-pod-cleaner".into(),
            identity: identity(),
            duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }
}

/// `$HOSTNAME` and a mark of this start, so a restarted process is never taken for the one
/// before it: in a StatefulSet the hostname stays and the pid is 1 every time, and a
/// restarted leader that renewed as if it never died would skip restoring the recent actions.
fn identity() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "ops-pod-cleaner".to_string());
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("{host}-{}-{:x}", std::process::id(), started.as_millis())
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

/// Pure: what this replica should do about the lease, given how long its record (holder and
/// renewTime) has stayed unchanged as this replica saw it.
pub fn decide(current: Option<&Held>, me: &str, unchanged_for: Duration) -> Step {
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
    if unchanged_for >= held.duration {
        Step::TakeOver
    } else {
        Step::Follow {
            holder: holder.to_string(),
        }
    }
}

/// The last record this replica read and when it first saw it, on the monotonic clock.
#[derive(Debug, Default)]
pub struct Observed {
    record: Option<Held>,
    since: Option<Instant>,
}

impl Observed {
    /// Note what was read at `now`; returns how long it has stayed unchanged.
    pub fn see(&mut self, record: Option<&Held>, now: Instant) -> Duration {
        if self.since.is_none() || self.record.as_ref() != record {
            self.record = record.cloned();
            self.since = Some(now);
        }
        now.saturating_duration_since(self.since.unwrap_or(now))
    }
}

/// Read the fields the decision needs from a stored Lease.
pub(crate) fn held(lease: &Lease) -> Held {
    let spec = lease.spec.as_ref();
    Held {
        holder: spec.and_then(|s| s.holder_identity.clone()),
        // As written on the wire: the API's own time type stays out of the core.
        renewed: spec
            .and_then(|s| serde_json::to_value(&s.renew_time).ok())
            .and_then(|t| t.as_str()?.parse().ok()),
        duration: Duration::from_secs(
            spec.and_then(|s| u64::try_from(s.lease_duration_seconds?).ok())
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

/// Why a round of the election could not be played. The API server's words are kept as it
/// said them: its error is neither `Clone` nor comparable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LeaseError {
    #[error("cannot read the lease: {0}")]
    Read(String),
    #[error("the lease vanished between read and write")]
    Vanished,
    #[error("cannot write the lease: {0}")]
    Write(String),
    /// The lease's namespace does not exist (a first run before the manifests made it).
    #[error(
        "namespace \"{0}\" does not exist, so the lease cannot be created there: create it \
         (`kubectl create namespace {0}`), or set $POD_NAMESPACE to a namespace that exists"
    )]
    NoNamespace(String),
    /// 403: this identity lacks a permission on leases.
    #[error("permission denied: {0}")]
    Forbidden(String),
    #[error("cannot encode the lease: {0}")]
    Encode(String),
    /// The round did not finish within its deadline (a hung call, a partition).
    #[error("no answer within {0:?}")]
    NoAnswer(std::time::Duration),
}

/// The leader's recent automatic actions, written on the Lease at each renewal so that a
/// successor keeps their rate limits and cooldowns (JSON list of `PastAction`).
pub(crate) const RECENT_ANNOTATION: &str = "ops-pod-cleaner.io/recent-actions";
/// Enough for ten minutes at a generous rate limit, well within the 256 KiB annotation cap.
const RECENT_KEPT: usize = 600;

pub struct Elector {
    api: Api<Lease>,
    settings: LeaseSettings,
    observed: Observed,
    /// What the leader last wrote, for the next renewal.
    recent: Vec<PastAction>,
    /// Taken over from another holder: its recent actions, for the worker.
    inherited: Option<Vec<PastAction>>,
    /// Expiry and the renew deadline run on its monotonic time; renewTime is its wall time.
    clock: Clock,
}

impl Elector {
    pub fn new(client: Client, settings: LeaseSettings, clock: Clock) -> Elector {
        Elector {
            api: Api::namespaced(client, &settings.namespace),
            clock,
            settings,
            observed: Observed::default(),
            recent: Vec::new(),
            inherited: None,
        }
    }

    /// The recent actions to write on the Lease at the next renewal.
    pub fn set_recent(&mut self, mut recent: Vec<PastAction>) {
        let extra = recent.len().saturating_sub(RECENT_KEPT);
        recent.drain(..extra);
        self.recent = recent;
    }

    /// What the previous holder had sent recently, once, after this replica took over.
    pub fn take_inherited(&mut self) -> Option<Vec<PastAction>> {
        self.inherited.take()
    }

    /// Since when the lease's record (holder and renewTime) has been what it is now, on this
    /// process's monotonic clock: a record that changed after a first look has a live holder.
    pub fn record_unchanged_since(&self) -> Option<Instant> {
        self.observed.since
    }

    pub fn settings(&self) -> &LeaseSettings {
        &self.settings
    }

    /// One round: read, decide, write guarded by the resourceVersion read. `stamp` is only
    /// written (as renewTime), never compared; expiry is judged on the monotonic clock.
    pub async fn round(&mut self, stamp: DateTime<Utc>) -> Result<Role, LeaseError> {
        let current = self
            .api
            .get_opt(&self.settings.name)
            .await
            .map_err(|e| LeaseError::from_kube(e, LeaseError::Read))?;
        let record = current.as_ref().map(held);
        let unchanged_for = self.observed.see(record.as_ref(), self.clock.instant());
        let step = decide(record.as_ref(), &self.settings.identity, unchanged_for);
        let written = match (&step, current) {
            (Step::Follow { holder }, _) => return Ok(Role::Follower(holder.clone())),
            (Step::Create, _) => {
                let lease = self.lease(None, stamp, 0)?;
                match self.api.create(&PostParams::default(), &lease).await {
                    // The only 404 a create can get: its namespace does not exist.
                    Err(kube::Error::Api(s)) if s.code == 404 => {
                        return Err(LeaseError::NoNamespace(self.settings.namespace.clone()));
                    }
                    created => created,
                }
            }
            (_, None) => return Err(LeaseError::Vanished),
            (Step::Renew | Step::TakeOver, Some(old)) => {
                if step == Step::TakeOver {
                    self.inherited = Some(recent_of(&old));
                }
                let lease = self.lease(Some(&old), stamp, u8::from(step == Step::TakeOver))?;
                self.api
                    .replace(&self.settings.name, &PostParams::default(), &lease)
                    .await
            }
        };
        match written {
            Ok(lease) => {
                self.observed.see(Some(&held(&lease)), self.clock.instant());
                Ok(Role::Leader)
            }
            Err(kube::Error::Api(s)) if s.code == 409 => {
                Ok(Role::Follower("another replica (it won the race)".into()))
            }
            Err(e) => Err(LeaseError::from_kube(e, LeaseError::Write)),
        }
    }

    /// Let go on shutdown so another replica takes over without waiting for expiry; gives up
    /// after the renew deadline (the lease then expires by itself).
    pub async fn release(&self) {
        let limit = self.settings.renew_deadline;
        if tokio::time::timeout(limit, self.let_go()).await.is_err() {
            tracing::warn!("could not release the lease within {limit:?}; it expires by itself");
        }
    }

    async fn let_go(&self) {
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
            Err(e) => tracing::warn!(
                "could not release the lease ({}); it expires by itself",
                plain(&e)
            ),
        }
    }

    fn lease(
        &self,
        old: Option<&Lease>,
        now: DateTime<Utc>,
        transition: u8,
    ) -> Result<Lease, LeaseError> {
        let stamp = now.to_rfc3339_opts(SecondsFormat::Micros, true);
        let spec = old.and_then(|l| l.spec.as_ref());
        let acquired = match (
            transition,
            spec.map(|s| serde_json::to_value(&s.acquire_time)),
        ) {
            (0, Some(Ok(Value::String(t)))) => t,
            _ => stamp.clone(),
        };
        let transitions = spec.and_then(|s| s.lease_transitions).map_or(0, i64::from);
        let recent =
            serde_json::to_string(&self.recent).map_err(|e| LeaseError::Encode(e.to_string()))?;
        let value = json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": self.settings.name,
                "namespace": self.settings.namespace,
                "resourceVersion": old.and_then(|l| l.metadata.resource_version.clone()),
                "annotations": {RECENT_ANNOTATION: recent},
            },
            "spec": {
                "holderIdentity": self.settings.identity,
                "leaseDurationSeconds": self.settings.duration.as_secs(),
                "acquireTime": acquired,
                "renewTime": stamp,
                "leaseTransitions": transitions + i64::from(transition),
            },
        });
        serde_json::from_value(value).map_err(|e| LeaseError::Encode(e.to_string()))
    }
}

impl LeaseError {
    /// 403 as `Forbidden`, anything else as `other`, in the server's words.
    fn from_kube(error: kube::Error, other: fn(String) -> LeaseError) -> LeaseError {
        match error {
            kube::Error::Api(s) if s.code == 403 => LeaseError::Forbidden(s.message),
            error => other(plain(&error)),
        }
    }
}

/// The recent actions the holder of `lease` wrote; unreadable means none.
fn recent_of(lease: &Lease) -> Vec<PastAction> {
    lease
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(RECENT_ANNOTATION))
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_default()
}

/// How the election steers a worker.
pub struct Wiring {
    pub worker: mpsc::Sender<WorkerCommand>,
    /// What the worker sent recently, written on the Lease at each renewal.
    pub recent: watch::Receiver<Vec<PastAction>>,
    pub leader: watch::Sender<bool>,
    /// Until when this replica may act: the end of its renew deadline.
    pub acting_until: watch::Sender<Option<Instant>>,
}

/// Keep electing until `stop`; tell the worker to stand by whenever this replica does not
/// lead. A leader whose renewal has not gone through within the renew deadline steps down at
/// once: a hung API call cannot keep it acting. Returns the elector so the caller can stop the
/// worker first and release the lease after.
pub async fn run(
    mut elector: Elector,
    wiring: Wiring,
    mut stop: watch::Receiver<bool>,
    leading_since: Option<Instant>,
) -> Elector {
    let (settings, clock) = (elector.settings.clone(), elector.clock);
    // While leading: acting is allowed until this instant unless a renewal moves it on. A
    // caller that has just won a round (`--once`) starts as the leader.
    let mut leading_until: Option<Instant> =
        leading_since.map(|since| since + settings.renew_deadline);
    let mut role: Option<Role> = leading_since.map(|_| Role::Leader);
    wiring.acting_until.send_replace(leading_until);
    loop {
        elector.set_recent(wiring.recent.borrow().clone());
        let started = clock.instant();
        // Never wait on the API past the moment this replica must stop acting.
        let limit = leading_until.map_or(settings.renew_deadline, |until| {
            until.saturating_duration_since(started)
        });
        let round = tokio::select! {
            round = tokio::time::timeout(limit, elector.round(clock.now())) => {
                round.unwrap_or(Err(LeaseError::NoAnswer(limit)))
            }
            _ = stop.changed() => break,
        };
        let next = after_round(
            round,
            started,
            &mut leading_until,
            &settings,
            clock.instant(),
        );
        wiring.acting_until.send_replace(leading_until);
        if let Some(history) = elector.take_inherited().filter(|h| !h.is_empty()) {
            let _ = wiring.worker.send(WorkerCommand::Restore(history)).await;
        }
        if role.as_ref() != Some(&next) {
            announce(&next, &settings, &wiring.worker, &wiring.leader).await;
            role = Some(next);
        }
        // Followers retry with jitter so replicas do not poll in step; a leader renews on time.
        let pause = match leading_until {
            Some(until) => settings
                .retry_period
                .min(until.saturating_duration_since(clock.instant())),
            None => settings.retry_period + jitter(settings.retry_period) / 2,
        };
        tokio::select! {
            _ = clock.sleep(pause) => {}
            _ = stop.changed() => break,
        }
    }
    if role == Some(Role::Leader) {
        // Stop acting now; the caller waits for the action in flight, then releases.
        wiring.leader.send_replace(false);
        wiring.acting_until.send_replace(None);
        let _ = wiring
            .worker
            .send(WorkerCommand::SetStandby(Some(Standby::ShuttingDown)))
            .await;
    }
    elector
}

/// The role a round leaves this replica in, and until when it may act (`leading_until`). A
/// round that failed keeps a leader leading until its renew deadline, and no longer.
fn after_round(
    round: Result<Role, LeaseError>,
    started: Instant,
    leading_until: &mut Option<Instant>,
    settings: &LeaseSettings,
    now: Instant,
) -> Role {
    match round {
        Ok(Role::Leader) => {
            // Counted from when the round began: the write landed no earlier than that.
            *leading_until = Some(started + settings.renew_deadline);
            Role::Leader
        }
        Ok(follower) => {
            *leading_until = None;
            follower
        }
        Err(why) => {
            tracing::warn!("lease {}/{}: {why}", settings.namespace, settings.name);
            match *leading_until {
                Some(until) if now < until => Role::Leader,
                Some(_) => {
                    tracing::warn!(
                        "could not renew the lease within {:?}: stepping down",
                        settings.renew_deadline
                    );
                    *leading_until = None;
                    Role::Follower("unknown (the lease could not be renewed)".into())
                }
                None => Role::Follower("unknown (the lease cannot be read)".into()),
            }
        }
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
            tracing::info!(
                target: crate::actions::ACTION_LOG,
                "leading: this process ({}) holds the Lease and acts",
                settings.identity
            );
            None
        }
        Role::Follower(holder) => {
            tracing::info!(
                target: crate::actions::ACTION_LOG,
                "standing by: {holder} holds the Lease {}/{} and acts",
                settings.namespace,
                settings.name
            );
            Some(Standby::RunBy {
                holder: holder.to_string(),
                lease: format!("{}/{}", settings.namespace, settings.name),
            })
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

/// While the master switch is on, the screen's worker competes for the cluster's Lease like
/// a replica of the in-cluster worker: it acts only while it holds it, stands by (saying who
/// acts) while another live holder does, and passes its recent actions on through it. Off,
/// it lets the Lease go. The Lease's deadlines run on `clock`.
pub async fn while_master_on(
    client: Client,
    clock: Clock,
    worker: WorkerHandle,
    acting_until: watch::Sender<Option<Instant>>,
    mut closed: watch::Receiver<()>,
) {
    let mut status = worker.status.clone();
    loop {
        tokio::select! {
            on = status.wait_for(|s| s.master_auto) => if on.is_err() { return },
            _ = closed.changed() => return,
        }
        let (stop, stopped) = watch::channel(false);
        let wiring = Wiring {
            worker: worker.commands.clone(),
            recent: worker.recent.clone(),
            leader: watch::channel(false).0,
            acting_until: acting_until.clone(),
        };
        let elector = Elector::new(client.clone(), LeaseSettings::from_env(), clock);
        let election = tokio::spawn(run(elector, wiring, stopped, None));
        let over = tokio::select! {
            off = status.wait_for(|s| !s.master_auto) => off.is_err(),
            _ = closed.changed() => true,
        };
        let _ = stop.send(true);
        if let Ok(elector) = election.await {
            elector.release().await;
        }
        acting_until.send_replace(None);
        if over {
            return;
        }
        let standby = Some(Standby::WaitingForLease);
        let _ = worker
            .commands
            .send(WorkerCommand::SetStandby(standby))
            .await;
    }
}
