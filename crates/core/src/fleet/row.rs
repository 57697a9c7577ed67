//! One abnormal pod as `scan --output json` prints it and a worker serves it: one type, so
//! the two never drift apart.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::Held;
use crate::actions::Suspect;
use crate::cluster::{Abnormal, ClusterName};
use crate::pod::PodRecord;
use crate::rules::{ActionKind, Cause, Finding, RuleKind, cause};

/// A pod, as a removal names it: a new pod of the same name is another.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PodKey {
    pub namespace: String,
    pub name: String,
    pub uid: String,
}

/// The pod's controller, as a row names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub kind: String,
    pub name: String,
}

/// One abnormal pod. Every text in it is what a tenant wrote (names, messages, causes): it is
/// carried as data, and whoever shows it makes it inert first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FindingRow {
    pub cluster: ClusterName,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub category: RuleKind,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub container: Option<String>,
    pub since: DateTime<Utc>,
    /// Time in state when the row was made; a reader that keeps a row counts from `since`.
    pub for_seconds: i64,
    pub restarts: u32,
    pub node: Option<String>,
    pub owner: Option<Owner>,
    pub action: ActionKind,
    /// Why `action` would be refused, told from the pod alone (a forged owner, a malformed pod).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub held: Option<Held>,
    pub cause: Cause,
}

impl FindingRow {
    pub fn new(
        cluster: &ClusterName,
        pod: &PodRecord,
        finding: &Finding,
        cause: Cause,
        now: DateTime<Utc>,
    ) -> FindingRow {
        FindingRow {
            cluster: cluster.clone(),
            namespace: pod.namespace.to_string(),
            name: pod.name.to_string(),
            uid: pod.uid.to_string(),
            category: finding.rule,
            for_seconds: finding.time_in_state(now).num_seconds().max(0),
            reason: finding.reason.to_string(),
            message: finding.message.as_deref().map(String::from),
            container: finding.container.as_deref().map(String::from),
            since: finding.since,
            restarts: pod.total_restarts(),
            node: pod.node.as_deref().map(String::from),
            owner: pod.owner.as_ref().map(|o| Owner {
                kind: o.kind.to_string(),
                name: o.name.to_string(),
            }),
            held: Suspect::of(pod, finding.action).map(Held::from),
            // What would run: a pod without a controller has no workload to scale.
            action: match finding.action {
                ActionKind::ScaleToZero if pod.owner.is_none() => ActionKind::None,
                action => action,
            },
            cause,
        }
    }

    /// The row of a finding the cache keeps, its cause read from what the cache read it from.
    pub fn of(found: &Abnormal, now: DateTime<Utc>) -> FindingRow {
        let (pod, finding) = (&*found.pod, &*found.finding);
        let cause = cause(pod, finding, found.events(), found.node(), now);
        FindingRow::new(&found.cluster, pod, finding, cause, now)
    }

    pub fn key(&self) -> PodKey {
        PodKey {
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            uid: self.uid.clone(),
        }
    }

    /// Equal but for the time in state, which moves every second without anything happening.
    /// Every field is named, so a field added later is compared too.
    pub fn same_state(&self, other: &FindingRow) -> bool {
        let FindingRow {
            cluster,
            namespace,
            name,
            uid,
            category,
            reason,
            message,
            container,
            since,
            for_seconds: _,
            restarts,
            node,
            owner,
            action,
            held,
            cause,
        } = self;
        *cluster == other.cluster
            && *namespace == other.namespace
            && *name == other.name
            && *uid == other.uid
            && *category == other.category
            && *reason == other.reason
            && *message == other.message
            && *container == other.container
            && *since == other.since
            && *restarts == other.restarts
            && *node == other.node
            && *owner == other.owner
            && *action == other.action
            && *held == other.held
            && *cause == other.cause
    }
}
