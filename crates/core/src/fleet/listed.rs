//! A row a worker served, turned into what a screen lists: the same [`Abnormal`] a watched
//! cluster's cache hands over, built from what the row knows, with the worker's own cause and
//! hold kept. Nothing here is acted on: an action reads the pod live first.

use std::sync::Arc;

use crate::cluster::{Abnormal, ClusterName, Told};
use crate::pod::{ContainerRecord, ContainerState, OwnerRef, Phase, PodRecord, home_api_version};
use crate::rules::{Finding, RuleKind};

use super::repeated::Repeated;
use super::{FindingRow, Held};

/// How a stuck deletion's row names the finalizers that hold it.
const FINALIZERS: &str = "finalizers: ";

impl FindingRow {
    /// The pod as a screen lists it, with the worker's cause class and hold.
    pub fn abnormal(&self) -> Abnormal {
        self.clone()
            .into_listed(&self.cluster, &mut Repeated::default())
    }

    /// The pod as a screen of `cluster` lists it: the row's own texts moved, not copied, and
    /// the ones rows repeat shared through `repeated`. The cause keeps its class: its words,
    /// the bulk of a row, are asked of the worker when the details pane shows them. The
    /// cluster is the screen's name for it (a worker in its pod calls its own `in-cluster`):
    /// actions and marks are routed by it.
    pub(crate) fn into_listed(self, cluster: &ClusterName, repeated: &mut Repeated) -> Abnormal {
        let FindingRow {
            cluster: _,
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
        let terminating = category == RuleKind::Terminating;
        let finalizers = match (terminating, message.as_deref()) {
            (true, Some(message)) => message
                .strip_prefix(FINALIZERS)
                .map(|list| list.split(", ").map(Into::into).collect())
                .unwrap_or_default(),
            _ => Box::default(),
        };
        // What the row does not know stays empty: the phase is the one the category implies,
        // the restarts are one container's count (none without restarts: the finding names
        // the container), an owner's `apiVersion` is its kind's usual one and its uid unknown.
        let containers = match (&container, restarts) {
            (_, 0) => Box::default(),
            (name, restarts) => Box::new([ContainerRecord {
                name: name.as_deref().unwrap_or("-").into(),
                init: false,
                restarts,
                state: ContainerState::None,
                last_termination: None,
                memory_limit: None,
            }]) as Box<[_]>,
        };
        let pod = PodRecord {
            namespace: repeated.text(&namespace),
            name: name.into_boxed_str(),
            uid: uid.into_boxed_str(),
            node: node.as_deref().map(|node| repeated.text(node)),
            phase: phase_of(category),
            reason: (category == RuleKind::Evicted).then(|| "Evicted".into()),
            message: None,
            created: None,
            started: None,
            // A stuck deletion is in its state since its deletionTimestamp.
            deletion: terminating.then_some(since),
            finalizers,
            owner: owner.map(|o| OwnerRef {
                api_version: repeated.text(home_api_version(&o.kind)),
                kind: repeated.text(&o.kind),
                name: o.name.into_boxed_str(),
                uid: "".into(),
            }),
            ignored: false,
            malformed: held == Some(Held::Malformed),
            unscheduled: None,
            ready_changed: None,
            containers,
            claims_volume: false,
            node_gone: false,
            reason_seen: None,
        };
        // Reasons, messages and container names repeat across a workload's pods, and an image's.
        let finding = Finding {
            rule: category,
            reason: repeated.text(&reason),
            message: message.as_deref().map(|m| repeated.text(m)),
            container: container.as_deref().map(|c| repeated.text(c)),
            since,
            action,
        };
        Abnormal {
            cluster: cluster.clone(),
            pod: Arc::new(pod),
            finding: Arc::new(finding),
            cause: cause.class,
            events: None,
            node: None,
            told: Some(match held {
                None => repeated.unheld(),
                held => Arc::new(Told { held }),
            }),
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
