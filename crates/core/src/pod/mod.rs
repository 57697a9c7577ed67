//! The compact pod record the cache keeps: only what the rules, the table and the report read.
//!
//! Everything else (env, volumes, probes, managedFields, labels...) is skipped while decoding: that
//! keeps 150,000 pods within the memory budget. The details pane fetches the full object on demand.

mod event;
mod intern;
mod proto;
mod proto_frame;
mod protowire;
mod resources;
mod wire;
mod wire_event;
mod workload;

use std::sync::Arc;

use chrono::{DateTime, Utc};

pub use event::{EventKind, EventTarget, PodEvent, pod_event};
pub use intern::Interner;
pub use proto::decode_pod_proto;
pub use proto_frame::{
    FRAME_CAP, INITIAL_EVENTS_END, MAGIC, PROTOBUF, PageMeta, list_meta, next_frame, pod_body,
    pod_list, status_body, watch_event,
};
pub use protowire::ProtoError;
pub use resources::Requests;
pub use wire::{MESSAGE_CAP, NAME_CAP, WirePod, decode_pod};
pub(crate) use wire::{capped_status, cut, is_truthy, nullable};
pub(crate) use wire_event::field_text;
pub use wire_event::{Capped, WireEvent};
pub use workload::WorkloadId;

/// The annotation that keeps ops-pod-cleaner's hands off a pod or its workload.
pub const IGNORE_ANNOTATION: &str = "ops-pod-cleaner.io/ignore";

#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumString, strum::IntoStaticStr)]
pub enum Phase {
    Pending,
    Running,
    Succeeded,
    Failed,
    Unknown,
}

impl Phase {
    pub(crate) fn name(self) -> &'static str {
        self.into()
    }

    /// Succeeded or Failed: nothing runs any more.
    pub(crate) fn finished(self) -> bool {
        matches!(self, Phase::Succeeded | Phase::Failed)
    }
}

/// The owner reference marked `controller: true`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerRef {
    pub api_version: Arc<str>,
    pub kind: Arc<str>,
    pub name: Box<str>,
    pub uid: Box<str>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContainerState {
    Waiting {
        reason: Box<str>,
        message: Option<Box<str>>,
    },
    Running {
        since: Option<DateTime<Utc>>,
    },
    Terminated(Termination),
    /// No state reported yet.
    None,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Termination {
    pub(crate) reason: Option<Box<str>>,
    pub(crate) exit_code: i32,
    pub(crate) finished: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerRecord {
    pub name: Box<str>,
    pub init: bool,
    pub restarts: u32,
    pub state: ContainerState,
    pub last_termination: Option<Termination>,
    /// `resources.limits.memory` in bytes: what an OOMKilled container ran into.
    pub memory_limit: Option<u64>,
}

impl ContainerRecord {
    pub(crate) fn waiting_reason(&self) -> Option<&str> {
        match &self.state {
            ContainerState::Waiting { reason, .. } => Some(reason),
            _ => None,
        }
    }

    /// How it last ended: as it is now, if terminated, else its last termination.
    pub(crate) fn last_end(&self) -> Option<&Termination> {
        match &self.state {
            ContainerState::Terminated(t) => Some(t),
            _ => self.last_termination.as_ref(),
        }
    }
}

/// `PodScheduled=False`, with when it became so and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unscheduled {
    pub(crate) since: Option<DateTime<Utc>>,
    pub(crate) reason: Option<Box<str>>,
    /// The scheduler's verdict: `0/6 nodes are available: 2 Insufficient cpu, …`.
    pub(crate) message: Option<Box<str>>,
    /// What it asked for, that no node could give.
    pub(crate) requests: Requests,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodRecord {
    pub namespace: Arc<str>,
    pub name: Box<str>,
    pub uid: Box<str>,
    pub node: Option<Arc<str>>,
    pub phase: Phase,
    /// `status.reason`: Evicted, NodeLost, ...
    pub reason: Option<Box<str>>,
    pub message: Option<Box<str>>,
    pub created: Option<DateTime<Utc>>,
    pub started: Option<DateTime<Utc>>,
    pub deletion: Option<DateTime<Utc>>,
    pub finalizers: Box<[Box<str>]>,
    pub owner: Option<OwnerRef>,
    /// Carries the `ops-pod-cleaner.io/ignore` annotation.
    pub ignored: bool,
    /// A field was longer than Kubernetes allows for it (an owner reference's name) or the pod
    /// has more containers than are kept: it is shown, never acted on.
    pub malformed: bool,
    /// Boxed: few pods wait for a node, and every pod carries the field.
    pub unscheduled: Option<Box<Unscheduled>>,
    /// `lastTransitionTime` of `ContainersReady`, else of `Ready`.
    pub ready_changed: Option<DateTime<Utc>>,
    /// The `Ready` condition says `False` (a pod without one says nothing either way).
    pub not_ready: bool,
    pub containers: Box<[ContainerRecord]>,
    /// Mounts a PersistentVolumeClaim (or a generic ephemeral volume): a volume that may be
    /// ReadWriteOnce, which two copies of the pod must never write at once.
    pub claims_volume: bool,
    /// Who marked it for disruption, as its `DisruptionTarget` condition says (1.26+).
    pub disruption: Option<Disruption>,
    /// When this process saw the current container waiting reason appear, if it saw it happen.
    pub reason_seen: Option<DateTime<Utc>>,
}

/// Who disrupted a pod, by the reason of its `DisruptionTarget` condition (k8s.io/api/core/v1,
/// Kubernetes 1.26+), each with the reason the API writes for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumString, strum::IntoStaticStr)]
pub enum Disruption {
    /// `PreemptionByScheduler`: to make room for a pod of higher priority. 1.25's alpha named
    /// it `PreemptionByKubeScheduler`.
    #[strum(
        to_string = "PreemptionByScheduler",
        serialize = "PreemptionByKubeScheduler"
    )]
    Preempted,
    /// `DeletionByTaintManager`: its node has a NoExecute taint it does not tolerate.
    #[strum(to_string = "DeletionByTaintManager")]
    NoExecuteTaint,
    /// `EvictionByEvictionAPI`: a drain, the descheduler or another client evicted it.
    #[strum(to_string = "EvictionByEvictionAPI")]
    EvictionApi,
    /// `TerminationByKubelet`: node pressure or a node shutdown; the status says which.
    #[strum(to_string = "TerminationByKubelet")]
    Kubelet,
    /// `DeletionByPodGC`: its node no longer exists.
    #[strum(to_string = "DeletionByPodGC")]
    NodeGone,
}

impl Disruption {
    pub fn reason(self) -> &'static str {
        self.into()
    }
}

impl PodRecord {
    /// A pod of which two copies must never run at once: a StatefulSet's (its replacement has
    /// the same name and identity) or one holding a claim that may be ReadWriteOnce.
    pub fn must_run_once(&self) -> bool {
        self.claims_volume
            || self
                .owner
                .as_ref()
                .is_some_and(|o| &*o.kind == "StatefulSet")
    }

    /// Its phase and each container's state, in a few words: `Running; app running`.
    pub fn state_line(&self) -> String {
        let mut line = self.phase.name().to_string();
        if self.deletion.is_some() {
            line.push_str(", being deleted");
        }
        for (i, c) in self.containers.iter().enumerate() {
            let state = match &c.state {
                ContainerState::Waiting { reason, .. } => format!("waiting {reason}"),
                ContainerState::Running { .. } => "running".to_string(),
                ContainerState::Terminated(t) => match &t.reason {
                    Some(reason) => format!("terminated {reason}"),
                    None => format!("terminated with exit code {}", t.exit_code),
                },
                ContainerState::None => "not started".to_string(),
            };
            line.push_str(if i == 0 { "; " } else { ", " });
            line.push_str(&format!("{} {state}", c.name));
        }
        line
    }

    pub fn total_restarts(&self) -> u32 {
        self.containers.iter().map(|c| c.restarts).sum()
    }

    /// The first container waiting with one of `reasons`, init containers first.
    pub(crate) fn waiting_in<'a>(&'a self, reasons: &[String]) -> Option<&'a ContainerRecord> {
        self.containers.iter().find(|c| {
            c.waiting_reason()
                .is_some_and(|r| reasons.iter().any(|x| x == r))
        })
    }

    fn is_waiting(&self) -> bool {
        self.containers.iter().any(|c| c.waiting_reason().is_some())
    }

    /// Carry over or set `reason_seen` from the pod's previous version. Only the step from
    /// "nothing waiting" to "waiting" counts as seen: image pulls alternate between ErrImagePull
    /// and ImagePullBackOff, which is one state for the on-call engineer.
    pub fn observe_transition(&mut self, previous: Option<&PodRecord>, now: DateTime<Utc>) {
        self.reason_seen = match previous {
            _ if !self.is_waiting() => None,
            // First sight (startup or a new pod): we did not see it happen.
            None => None,
            Some(prev) if prev.is_waiting() => prev.reason_seen,
            Some(_) => Some(now),
        };
    }
}
