//! A row a worker served, turned into what a screen lists: the same [`Abnormal`] a watched
//! cluster's cache hands over, built from what the row knows, with the worker's own cause and
//! hold kept. Nothing here is acted on: an action reads the pod live first.

use std::sync::Arc;

use crate::cluster::{Abnormal, Told};
use crate::pod::{ContainerRecord, ContainerState, OwnerRef, Phase, PodRecord, home_api_version};
use crate::rules::{Finding, RuleKind};

use super::{FindingRow, Held};

/// How a stuck deletion's row names the finalizers that hold it.
const FINALIZERS: &str = "finalizers: ";

impl FindingRow {
    /// The pod as a screen lists it, with the worker's cause and hold.
    pub fn abnormal(&self) -> Abnormal {
        Abnormal {
            cluster: self.cluster.clone(),
            pod: Arc::new(self.record()),
            finding: Arc::new(self.finding()),
            cause: self.cause.class,
            events: None,
            node: None,
            told: Some(Arc::new(Told {
                cause: self.cause.clone(),
                held: self.held.clone(),
            })),
        }
    }

    /// What the chain found, as the worker found it.
    pub fn finding(&self) -> Finding {
        Finding {
            rule: self.category,
            reason: self.reason.clone(),
            message: self.message.clone(),
            container: self.container.clone(),
            since: self.since,
            action: self.action,
        }
    }

    /// The slim record of what the row knows. What it does not know stays empty: the phase
    /// is the one the category implies, the restarts are one container's count, an owner's
    /// `apiVersion` is its kind's usual one and its uid unknown.
    pub fn record(&self) -> PodRecord {
        let terminating = self.category == RuleKind::Terminating;
        let finalizers = match (terminating, self.message.as_deref()) {
            (true, Some(message)) => message
                .strip_prefix(FINALIZERS)
                .map(|list| list.split(", ").map(Into::into).collect())
                .unwrap_or_default(),
            _ => Box::default(),
        };
        let containers = match (&self.container, self.restarts) {
            (None, 0) => Box::default(),
            (name, restarts) => Box::new([ContainerRecord {
                name: name.as_deref().unwrap_or("-").into(),
                init: false,
                restarts,
                state: ContainerState::None,
                last_termination: None,
                memory_limit: None,
            }]) as Box<[_]>,
        };
        PodRecord {
            namespace: Arc::from(self.namespace.as_str()),
            name: self.name.as_str().into(),
            uid: self.uid.as_str().into(),
            node: self.node.as_deref().map(Arc::from),
            phase: phase_of(self.category),
            reason: (self.category == RuleKind::Evicted).then(|| "Evicted".into()),
            message: None,
            created: None,
            started: None,
            // A stuck deletion is in its state since its deletionTimestamp.
            deletion: terminating.then_some(self.since),
            finalizers,
            owner: self.owner.as_ref().map(|o| OwnerRef {
                api_version: Arc::from(home_api_version(&o.kind)),
                kind: Arc::from(o.kind.as_str()),
                name: o.name.as_str().into(),
                uid: "".into(),
            }),
            ignored: false,
            malformed: self.held == Some(Held::Malformed),
            unscheduled: None,
            ready_changed: None,
            containers,
            claims_volume: false,
            node_gone: false,
            reason_seen: None,
        }
    }
}

/// The phase a category implies; `Unknown` where it implies none.
fn phase_of(category: RuleKind) -> Phase {
    match category {
        RuleKind::Evicted | RuleKind::Failed => Phase::Failed,
        RuleKind::Pending | RuleKind::ImagePull | RuleKind::ConfigError => Phase::Pending,
        RuleKind::CrashLoop => Phase::Running,
        RuleKind::Terminating | RuleKind::Unknown => Phase::Unknown,
    }
}
