//! Why a pod is abnormal and what to do next: the kubelet's, the runtime's and the scheduler's
//! words in its status or latest Warning Events, and its node's Ready condition, matched to a
//! stable class. Pure, like `classify`: the node's state is an input. Where nothing says why,
//! the class says so (`pullUnknown`) rather than guess.

mod explain;
mod words;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use strum::{IntoStaticStr, VariantArray};

use super::{Finding, RuleKind};
use crate::node::{NodeState, Readiness};
use crate::pod::{
    ContainerRecord, ContainerState, Disruption, EventKind, PodEvent, PodRecord, Termination,
};
pub(crate) use explain::format_bytes;
pub(crate) use words::verdict;
use words::{config_class, disruption_class, eviction_class, pull_class, scheduling_class};

/// A pod's cause: a class scripts can match, a detail for people, the fields it rests on,
/// and the next step (a key of this product or a `kubectl` line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cause {
    pub class: CauseClass,
    pub detail: String,
    pub evidence: Vec<Evidence>,
    pub next: String,
}

/// One field a cause rests on: where it was read, and what it said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    pub source: String,
    pub text: String,
}

/// The stable vocabulary of causes: scripts and alerts match these names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, IntoStaticStr, VariantArray)]
#[strum(serialize_all = "camelCase")]
pub enum CauseClass {
    ImageNotFound,
    RegistryAuth,
    RegistryRateLimit,
    RegistryUnreachable,
    #[strum(serialize = "registryTLS")]
    RegistryTls,
    InvalidImageName,
    ImageNeverPull,
    PullUnknown,
    OomKilled,
    ExitCode,
    ExitZero,
    ProbeFailed,
    CrashUnknown,
    MissingSecret,
    MissingConfigMap,
    MissingKey,
    ConfigUnknown,
    InsufficientResources,
    UntoleratedTaint,
    NodeAffinity,
    UnboundVolume,
    UnschedulableNodes,
    TooManyPods,
    NotScheduled,
    PendingUnknown,
    NodeMemoryPressure,
    NodeDiskPressure,
    NodePidPressure,
    ContainerLimit,
    EvictedUnknown,
    Finalizers,
    NodeUnreachable,
    NodeNotReady,
    NodeGone,
    PastGrace,
    DeadlineExceeded,
    FailedUnknown,
    VolumeMount,
    VolumeAttach,
    PodSandbox,
    ReadinessProbe,
    InitRunning,
    StartingUnknown,
    RejectedResources,
    RejectedNodeAffinity,
    RejectedNodeName,
    RejectedNodePorts,
    #[strum(serialize = "rejectedOS")]
    RejectedOs,
    RejectedTaint,
    RejectedFeature,
    RejectedUnexpected,
    Preempted,
    #[strum(serialize = "evictedByAPI")]
    EvictedByApi,
    NoExecuteTaint,
    NodeShutdown,
    PodUnknown,
    ExecPermission,
    ExecNotFound,
}

impl CauseClass {
    pub const ALL: &[CauseClass] = CauseClass::VARIANTS;

    pub fn name(self) -> &'static str {
        self.into()
    }
}

by_name!(CauseClass, "cause class");

/// The class of `finding` on `pod`, allocating nothing: what the index keeps for every
/// finding as pods and their Events change, and what a table row shows. `events` are the
/// pod's latest Warning Events that a cause reads (see [`EventKind`]); `node`, the state of
/// the node it is bound to, when known.
pub fn cause_class(
    pod: &PodRecord,
    finding: &Finding,
    events: &[PodEvent],
    node: Option<&NodeState>,
) -> CauseClass {
    match finding.rule {
        RuleKind::ImagePull => pull_cause(pod, events).0,
        // The runtime could not start the container at all: its words say why.
        RuleKind::CrashLoop | RuleKind::ConfigError
            if let Some((class, _)) = runtime_cause(pod) =>
        {
            class
        }
        RuleKind::CrashLoop => match last_run(pod) {
            Some((_, t)) if t.reason.as_deref() == Some("OOMKilled") => CauseClass::OomKilled,
            _ if probe_kill(pod, events).is_some() => CauseClass::ProbeFailed,
            Some((_, t)) if t.exit_code == 0 => CauseClass::ExitZero,
            Some(_) => CauseClass::ExitCode,
            None => CauseClass::CrashUnknown,
        },
        RuleKind::ConfigError => config_cause(pod, events).0,
        RuleKind::Starting => starting_cause(pod, finding, events).0,
        RuleKind::Evicted => eviction_class(pod.message.as_deref().unwrap_or("")),
        RuleKind::Terminating if !pod.finalizers.is_empty() => CauseClass::Finalizers,
        RuleKind::Terminating | RuleKind::Unknown
            if pod.disruption == Some(Disruption::NodeGone) =>
        {
            CauseClass::NodeGone
        }
        RuleKind::Terminating if pod.reason.as_deref() == Some("NodeLost") => {
            CauseClass::NodeUnreachable
        }
        // The node's own word first: a NoExecute taint is most often its unreachable taint.
        RuleKind::Terminating => node_class(node).unwrap_or(match pod.disruption {
            Some(Disruption::NoExecuteTaint) => CauseClass::NoExecuteTaint,
            _ => CauseClass::PastGrace,
        }),
        RuleKind::Failed if pod.reason.as_deref() == Some("DeadlineExceeded") => {
            CauseClass::DeadlineExceeded
        }
        RuleKind::Failed
            if let Some(class) = pod
                .reason
                .as_deref()
                .and_then(|r| words::failed_class(r, pod.message.as_deref().unwrap_or(""))) =>
        {
            class
        }
        // Killed for a disruption, its containers' exit codes say only that they were killed.
        RuleKind::Failed if let Some(class) = disrupted(pod) => class,
        // An OOM kill is one whatever the restart policy: the kernel killed it at its limit.
        RuleKind::Failed
            if failed_run(pod).is_some_and(|(_, t)| t.reason.as_deref() == Some("OOMKilled")) =>
        {
            CauseClass::OomKilled
        }
        RuleKind::Failed if failed_run(pod).is_some() => CauseClass::ExitCode,
        RuleKind::Failed => CauseClass::FailedUnknown,
        RuleKind::Pending => scheduling_cause(pod, events).0,
        // A node cause only from that node's own conditions: a lost pod on a node that
        // reports (or whose state is not read) says only what its own status says.
        RuleKind::Unknown if pod.reason.as_deref() == Some("NodeLost") => {
            node_class(node).unwrap_or(CauseClass::NodeUnreachable)
        }
        RuleKind::Unknown => node_class(node).unwrap_or(CauseClass::PodUnknown),
    }
}

/// The cause of `finding` on `pod`, in words: its class, a detail, the fields and Events it rests
/// on and the next step. Made where it is shown (the details pane, `scan`), one pod at a time.
pub fn cause(
    pod: &PodRecord,
    finding: &Finding,
    events: &[PodEvent],
    node: Option<&NodeState>,
    now: DateTime<Utc>,
) -> Cause {
    let class = cause_class(pod, finding, events, node);
    let mut cause = match finding.rule {
        RuleKind::CrashLoop | RuleKind::ConfigError
            if let Some((class, program)) = runtime_cause(pod) =>
        {
            explain::runtime(pod, class, program)
        }
        RuleKind::ImagePull => explain::image_pull(pod, class, pull_cause(pod, events).1),
        RuleKind::CrashLoop => explain::crash(pod, class, probe_kill(pod, events)),
        RuleKind::ConfigError => explain::config(pod, class, config_cause(pod, events).1),
        RuleKind::Starting => explain::starting(
            pod,
            finding,
            class,
            starting_cause(pod, finding, events).1,
            now,
        ),
        RuleKind::Evicted => explain::eviction(pod, class),
        RuleKind::Terminating => explain::terminating(pod, class, node, now),
        RuleKind::Failed => explain::failed(pod, class),
        RuleKind::Pending => explain::pending(pod, class, scheduling_cause(pod, events).1),
        RuleKind::Unknown if class == CauseClass::NodeGone => explain::node_gone(pod),
        RuleKind::Unknown => explain::unknown(pod, class),
    };
    // Never a step the pod's state contradicts: one already going is not deleted again.
    if pod.deletion.is_some() && finding.rule != RuleKind::Terminating {
        cause.next = "the pod is already being deleted: wait, or F if finalizers hold it".into();
    }
    cause
}

/// The class of a Failed pod's `DisruptionTarget` condition, where its status gives none.
fn disrupted(pod: &PodRecord) -> Option<CauseClass> {
    disruption_class(pod.disruption?, pod.message.as_deref().unwrap_or(""))
}

/// What a node's own Ready condition says holds its pods: a kubelet that stopped reporting
/// cannot finish a deletion, and one that reports not ready may not.
fn node_class(node: Option<&NodeState>) -> Option<CauseClass> {
    match node?.readiness {
        Readiness::NotReporting => Some(CauseClass::NodeUnreachable),
        Readiness::NotReady => Some(CauseClass::NodeNotReady),
        Readiness::Ready | Readiness::Unreported => None,
    }
}

fn make(class: CauseClass, detail: impl Into<String>, next: impl Into<String>) -> Cause {
    Cause {
        class,
        detail: detail.into(),
        evidence: Vec::new(),
        next: next.into(),
    }
}

impl Cause {
    /// Adds what `source` said; a field that said nothing is no evidence.
    fn citing(mut self, source: impl Into<String>, text: &str) -> Cause {
        if !text.trim().is_empty() {
            self.evidence.push(Evidence {
                source: source.into(),
                text: text.to_string(),
            });
        }
        self
    }

    fn citing_disruption(self, pod: &PodRecord) -> Cause {
        let Some(disruption) = pod.disruption else {
            return self;
        };
        let said = format!("True, reason {}", disruption.reason());
        self.citing("status.conditions[DisruptionTarget]", &said)
    }

    /// Adds an Event, named as `kubectl describe` shows it.
    fn citing_event(self, event: Option<&PodEvent>) -> Cause {
        let Some(e) = event else {
            return self;
        };
        let when = e
            .last
            .map(|t| format!(", last {}", t.format("%Y-%m-%d %H:%M:%SZ")))
            .unwrap_or_default();
        let source = format!("Event {} (×{}{when})", e.kind.reason(), e.count);
        self.citing(source, &e.message)
    }
}

fn event(events: &[PodEvent], kind: EventKind) -> Option<&PodEvent> {
    events
        .iter()
        .filter(|e| e.kind == kind)
        .max_by_key(|e| e.last)
}

/// A pull's class, from the waiting container's message or else the kubelet's `Failed`
/// Event (the Event it rests on, if it does).
fn pull_cause<'a>(pod: &PodRecord, events: &'a [PodEvent]) -> (CauseClass, Option<&'a PodEvent>) {
    if let Some(class) = waiting(pod).and_then(|(_, reason, message)| pull_class(reason, message)) {
        return (class, None);
    }
    match event(events, EventKind::PullFailed) {
        Some(e) => (
            pull_class("", &e.message).unwrap_or(CauseClass::PullUnknown),
            Some(e),
        ),
        None => (CauseClass::PullUnknown, None),
    }
}

/// What could not be found to build a container, from its waiting message or else a volume's
/// `FailedMount` Event.
fn config_cause<'a>(pod: &PodRecord, events: &'a [PodEvent]) -> (CauseClass, Option<&'a PodEvent>) {
    if let Some(class) = waiting(pod).and_then(|(_, _, message)| config_class(message)) {
        return (class, None);
    }
    match event(events, EventKind::FailedMount) {
        Some(e) => (
            config_class(&e.message).unwrap_or(CauseClass::ConfigUnknown),
            Some(e),
        ),
        None => (CauseClass::ConfigUnknown, None),
    }
}

/// Why a scheduled pod is not up, from the Events its kubelet (or the attach controller)
/// wrote for it: the sandbox, a volume to attach or mount, a readiness probe; else an init
/// container still at work; else unknown, never a guess.
fn starting_cause<'a>(
    pod: &PodRecord,
    finding: &Finding,
    events: &'a [PodEvent],
) -> (CauseClass, Option<&'a PodEvent>) {
    let ready_probe = (pod.phase == crate::pod::Phase::Running)
        .then(|| event(events, EventKind::ReadinessFailed))
        .flatten();
    if let Some(e) = ready_probe {
        return (CauseClass::ReadinessProbe, Some(e));
    }
    if let Some(e) = event(events, EventKind::SandboxFailed) {
        return (CauseClass::PodSandbox, Some(e));
    }
    if let Some(e) = event(events, EventKind::FailedAttach) {
        return (CauseClass::VolumeAttach, Some(e));
    }
    if let Some(e) = event(events, EventKind::FailedMount) {
        return (
            config_class(&e.message).unwrap_or(CauseClass::VolumeMount),
            Some(e),
        );
    }
    if finding.reason.starts_with("Init:") {
        return (CauseClass::InitRunning, None);
    }
    (CauseClass::StartingUnknown, None)
}

/// The scheduler's verdict, from the `PodScheduled` condition or else its `FailedScheduling`
/// Event. No verdict at all is `notScheduled`.
fn scheduling_cause<'a>(
    pod: &PodRecord,
    events: &'a [PodEvent],
) -> (CauseClass, Option<&'a PodEvent>) {
    let said = pod.unscheduled.as_ref().and_then(|u| u.message.as_deref());
    if let Some(class) = said.and_then(scheduling_class) {
        return (class, None);
    }
    match event(events, EventKind::FailedScheduling) {
        Some(e) => (
            scheduling_class(&e.message).unwrap_or(CauseClass::PendingUnknown),
            Some(e),
        ),
        None if said.is_some_and(|m| !m.trim().is_empty()) => (CauseClass::PendingUnknown, None),
        None => (CauseClass::NotScheduled, None),
    }
}

/// A liveness or startup probe failure that may have killed the last run: one seen no earlier
/// than a few minutes before that run ended.
fn probe_kill<'a>(pod: &PodRecord, events: &'a [PodEvent]) -> Option<&'a PodEvent> {
    let probe = event(events, EventKind::ProbeFailed)?;
    let ended = last_run(pod).and_then(|(_, t)| t.finished);
    match (probe.last, ended) {
        (Some(seen), Some(ended)) if seen < ended - chrono::Duration::minutes(5) => None,
        _ => Some(probe),
    }
}

/// Why the runtime could not start a container, from the waiting message it gave the kubelet
/// (`RunContainerError`, `CreateContainerError`: runc's `exec: "/app": permission denied`),
/// and the program it could not run.
fn runtime_cause(pod: &PodRecord) -> Option<(CauseClass, Option<&str>)> {
    let (_, reason, message) = waiting(pod)?;
    if !matches!(reason, "RunContainerError" | "CreateContainerError") {
        return None;
    }
    words::exec_failure(message)
}

/// The first container waiting, init containers first, with its reason and message.
fn waiting(pod: &PodRecord) -> Option<(&ContainerRecord, &str, &str)> {
    pod.containers.iter().find_map(|c| match &c.state {
        ContainerState::Waiting { reason, message } => {
            Some((c, &**reason, message.as_deref().unwrap_or("")))
        }
        _ => None,
    })
}

/// The first container with a run that ended, and how it ended.
fn last_run(pod: &PodRecord) -> Option<(&ContainerRecord, &Termination)> {
    pod.containers
        .iter()
        .find_map(|c| c.last_termination.as_ref().map(|t| (c, t)))
}

/// The first container of a failed pod that exited with an error.
fn failed_run(pod: &PodRecord) -> Option<(&ContainerRecord, &Termination)> {
    pod.containers.iter().find_map(|c| match &c.state {
        ContainerState::Terminated(t) if t.exit_code != 0 => Some((c, t)),
        _ => None,
    })
}
