//! Why a pod is abnormal and what to do next, from the pod's own status: the kubelet's,
//! the runtime's and the scheduler's words, matched to a stable class. Pure, like `classify`.
//! Where the status says too little (an image pull back-off hides its reason in an Event),
//! the class says so (`pullUnknown`) rather than guess.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::{Finding, RuleKind};
use crate::pod::{ContainerRecord, ContainerState, PodRecord, Termination};

/// A pod's cause: a class scripts can match, a detail for people, the fields it rests on,
/// and the next step (a key of this product or a `kubectl` line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cause {
    pub class: CauseClass,
    pub detail: String,
    pub evidence: Vec<Evidence>,
    pub next: String,
}

/// One field a cause rests on: where it was read, and what it said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    pub source: String,
    pub text: String,
}

macro_rules! classes {
    ($($variant:ident => $name:literal,)*) => {
        /// The stable vocabulary of causes (SPEC §3b): scripts and alerts match these names.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum CauseClass { $($variant,)* }

        impl CauseClass {
            pub const ALL: &[CauseClass] = &[$(CauseClass::$variant,)*];

            pub fn name(self) -> &'static str {
                match self { $(CauseClass::$variant => $name,)* }
            }
        }
    };
}

classes! {
    ImageNotFound => "imageNotFound",
    RegistryAuth => "registryAuth",
    RegistryRateLimit => "registryRateLimit",
    RegistryUnreachable => "registryUnreachable",
    RegistryTls => "registryTLS",
    InvalidImageName => "invalidImageName",
    ImageNeverPull => "imageNeverPull",
    PullUnknown => "pullUnknown",
    OomKilled => "oomKilled",
    ExitCode => "exitCode",
    ExitZero => "exitZero",
    ProbeFailed => "probeFailed",
    CrashUnknown => "crashUnknown",
    MissingSecret => "missingSecret",
    MissingConfigMap => "missingConfigMap",
    MissingKey => "missingKey",
    ConfigUnknown => "configUnknown",
    InsufficientResources => "insufficientResources",
    UntoleratedTaint => "untoleratedTaint",
    NodeAffinity => "nodeAffinity",
    UnboundVolume => "unboundVolume",
    UnschedulableNodes => "unschedulableNodes",
    TooManyPods => "tooManyPods",
    NotScheduled => "notScheduled",
    PendingUnknown => "pendingUnknown",
    NodeMemoryPressure => "nodeMemoryPressure",
    NodeDiskPressure => "nodeDiskPressure",
    NodePidPressure => "nodePidPressure",
    ContainerLimit => "containerLimit",
    EvictedUnknown => "evictedUnknown",
    Finalizers => "finalizers",
    NodeUnreachable => "nodeUnreachable",
    NodeGone => "nodeGone",
    PastGrace => "pastGrace",
    DeadlineExceeded => "deadlineExceeded",
    FailedUnknown => "failedUnknown",
}

impl Serialize for CauseClass {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl std::fmt::Display for CauseClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The class of `finding` on `pod`, allocating nothing: what the index keeps for every
/// finding as pods change, and what a table row shows.
pub fn cause_class(pod: &PodRecord, finding: &Finding) -> CauseClass {
    match finding.rule {
        RuleKind::ImagePull => match waiting(pod) {
            Some((_, reason, message)) => pull_class(reason, message),
            None => CauseClass::PullUnknown,
        },
        RuleKind::CrashLoop => match last_run(pod) {
            Some((_, t)) if t.reason.as_deref() == Some("OOMKilled") => CauseClass::OomKilled,
            Some((_, t)) if t.exit_code == 0 => CauseClass::ExitZero,
            Some(_) => CauseClass::ExitCode,
            None => CauseClass::CrashUnknown,
        },
        RuleKind::ConfigError => match waiting(pod) {
            Some((_, _, message)) if message.starts_with("secret \"") => CauseClass::MissingSecret,
            Some((_, _, message)) if message.starts_with("configmap \"") => {
                CauseClass::MissingConfigMap
            }
            Some((_, _, message)) if message.starts_with("couldn't find key") => {
                CauseClass::MissingKey
            }
            _ => CauseClass::ConfigUnknown,
        },
        RuleKind::Evicted => eviction_class(pod.message.as_deref().unwrap_or("")),
        RuleKind::Terminating if !pod.finalizers.is_empty() => CauseClass::Finalizers,
        RuleKind::Terminating if pod.reason.as_deref() == Some("NodeLost") => {
            CauseClass::NodeUnreachable
        }
        RuleKind::Terminating => CauseClass::PastGrace,
        RuleKind::Failed if pod.reason.as_deref() == Some("DeadlineExceeded") => {
            CauseClass::DeadlineExceeded
        }
        RuleKind::Failed if failed_run(pod).is_some() => CauseClass::ExitCode,
        RuleKind::Failed => CauseClass::FailedUnknown,
        RuleKind::Pending if pod.unscheduled.is_some() => CauseClass::PendingUnknown,
        RuleKind::Pending => CauseClass::NotScheduled,
        RuleKind::Unknown => CauseClass::NodeUnreachable,
    }
}

/// The cause of `finding` on `pod`, in words: its class, a detail, the fields it rests on and
/// the next step. Made where it is shown (the details pane, `scan`), one pod at a time.
pub fn cause(pod: &PodRecord, finding: &Finding, now: DateTime<Utc>) -> Cause {
    let class = cause_class(pod, finding);
    let mut cause = match finding.rule {
        RuleKind::ImagePull => image_pull(pod, class),
        RuleKind::CrashLoop => crash(pod, class),
        RuleKind::ConfigError => config(pod, class),
        RuleKind::Evicted => eviction(pod, class),
        RuleKind::Terminating => terminating(pod, class, now),
        RuleKind::Failed => failed(pod, class),
        RuleKind::Pending => pending(pod, class),
        RuleKind::Unknown => unknown(pod),
    };
    // Never a step the pod's state contradicts: one already going is not deleted again.
    if pod.deletion.is_some() && finding.rule != RuleKind::Terminating {
        cause.next = "the pod is already being deleted: wait, or F if finalizers hold it".into();
    }
    cause
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
    fn from(mut self, source: impl Into<String>, text: &str) -> Cause {
        if !text.trim().is_empty() {
            self.evidence.push(Evidence {
                source: source.into(),
                text: text.to_string(),
            });
        }
        self
    }
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

fn waiting_source(c: &ContainerRecord) -> String {
    let list = if c.init {
        "initContainerStatuses"
    } else {
        "containerStatuses"
    };
    format!("status.{list}[{}].state.waiting", c.name)
}

/// Whether `text` holds any of `needles`, ASCII case aside, without allocating.
fn contains_any(text: &str, needles: &[&str]) -> bool {
    needles.iter().any(|needle| {
        text.as_bytes()
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
    })
}

/// A pull failure by the kubelet's reason and containerd's words.
fn pull_class(reason: &str, message: &str) -> CauseClass {
    match reason {
        "InvalidImageName" => CauseClass::InvalidImageName,
        "ErrImageNeverPull" => CauseClass::ImageNeverPull,
        _ if contains_any(
            message,
            &["not found", "manifest unknown", "does not exist"],
        ) =>
        {
            CauseClass::ImageNotFound
        }
        _ if contains_any(message, &["toomanyrequests", "rate limit", "429"]) => {
            CauseClass::RegistryRateLimit
        }
        _ if contains_any(
            message,
            &[
                "unauthorized",
                "authentication required",
                "denied",
                "401",
                "403",
            ],
        ) =>
        {
            CauseClass::RegistryAuth
        }
        _ if contains_any(message, &["x509", "certificate", "tls:"]) => CauseClass::RegistryTls,
        _ if contains_any(
            message,
            &[
                "no such host",
                "i/o timeout",
                "connection refused",
                "dial tcp",
                "network is unreachable",
            ],
        ) =>
        {
            CauseClass::RegistryUnreachable
        }
        // `Back-off pulling image "x"`: the reason is in the kubelet's Failed Event.
        _ => CauseClass::PullUnknown,
    }
}

/// An eviction by the kubelet's words (pkg/kubelet/eviction/helpers.go).
fn eviction_class(message: &str) -> CauseClass {
    if message.contains("exceeded its local ephemeral storage limit")
        || message.contains("exceeds the total limit of containers")
        || message.contains("Usage of EmptyDir volume")
    {
        CauseClass::ContainerLimit
    } else if message.starts_with("The node was low on resource: memory") {
        CauseClass::NodeMemoryPressure
    } else if message.starts_with("The node was low on resource: ephemeral-storage")
        || message.starts_with("The node was low on resource: nodefs")
        || message.starts_with("The node was low on resource: imagefs")
        || message.contains("inodes")
    {
        CauseClass::NodeDiskPressure
    } else if message.starts_with("The node was low on resource: pids") {
        CauseClass::NodePidPressure
    } else {
        CauseClass::EvictedUnknown
    }
}

fn image_pull(pod: &PodRecord, class: CauseClass) -> Cause {
    let scale = scale_hint(pod);
    let Some((c, reason, message)) = waiting(pod) else {
        return make(class, "no container is waiting", scale);
    };
    let detail = match class {
        CauseClass::InvalidImageName => "the image reference does not parse",
        CauseClass::ImageNeverPull => "imagePullPolicy Never, and the node does not have the image",
        CauseClass::ImageNotFound => "the registry has no such image or tag",
        CauseClass::RegistryRateLimit => "the registry refuses more pulls for now",
        CauseClass::RegistryAuth => "the registry refused the credentials",
        CauseClass::RegistryTls => "the registry's certificate is not trusted",
        CauseClass::RegistryUnreachable => "the node cannot reach the registry",
        _ => "the status does not say why the pull failed; the pod's Events do",
    };
    let next = match class {
        CauseClass::PullUnknown => format!(
            "kubectl describe pod {} -n {} (the Failed Event says why); {scale}",
            pod.name, pod.namespace
        ),
        _ => format!("fix the image or the registry; {scale}"),
    };
    make(class, detail, next).from(waiting_source(c), &format!("{reason}: {message}"))
}

/// What z can do for this pod's workload.
fn scale_hint(pod: &PodRecord) -> String {
    match &pod.owner {
        Some(_) => "z scales the workload to 0 meanwhile".into(),
        None => "d deletes the pod (a bare pod: nothing to scale)".into(),
    }
}

fn crash(pod: &PodRecord, class: CauseClass) -> Cause {
    let Some((c, t)) = last_run(pod) else {
        return make(class, "no previous run is recorded", logs_hint(pod));
    };
    let (detail, next) = match class {
        CauseClass::OomKilled => (
            format!(
                "container {} ran out of memory (killed, exit {})",
                c.name, t.exit_code
            ),
            "raise its memory limit, or find the leak; l shows the previous run's logs".into(),
        ),
        CauseClass::ExitZero => (
            format!(
                "container {} keeps finishing (exit 0) where it should keep running",
                c.name
            ),
            "check its command: a server that returns; l shows the previous run's logs".into(),
        ),
        _ => (
            format!(
                "container {} exited with {}",
                c.name,
                exit_name(t.exit_code)
            ),
            logs_hint(pod),
        ),
    };
    let said = format!(
        "{} exit code {}",
        t.reason.as_deref().unwrap_or("-"),
        t.exit_code
    );
    make(class, detail, next).from(
        format!("status.containerStatuses[{}].lastState.terminated", c.name),
        &said,
    )
}

fn logs_hint(pod: &PodRecord) -> String {
    format!("kubectl logs {} -n {} --previous", pod.name, pod.namespace)
}

/// `137 (SIGKILL)`: above 128 an exit code is a signal.
fn exit_name(code: i32) -> String {
    let signal = match code - 128 {
        1 => "SIGHUP",
        2 => "SIGINT",
        6 => "SIGABRT",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => return code.to_string(),
    };
    format!("{code} ({signal})")
}

fn config(pod: &PodRecord, class: CauseClass) -> Cause {
    let Some((c, reason, message)) = waiting(pod) else {
        return make(class, "no container is waiting", "");
    };
    // `secret "db-creds" not found`: the name is between the quotes.
    let named = |kind: &str| {
        message
            .split('"')
            .nth(1)
            .map_or(kind.to_string(), |name| format!("{kind} {name}"))
    };
    let ns = &pod.namespace;
    let (detail, next) = match class {
        CauseClass::MissingSecret | CauseClass::MissingConfigMap => {
            let kind = if class == CauseClass::MissingSecret {
                "secret"
            } else {
                "configmap"
            };
            let what = named(kind);
            (
                format!("{what} does not exist in {ns}"),
                format!("create it: kubectl create {what} -n {ns} …"),
            )
        }
        CauseClass::MissingKey => (
            message.to_string(),
            "add the key, or fix the reference in the workload".to_string(),
        ),
        _ => (
            "the container's configuration cannot be built".to_string(),
            format!("kubectl describe pod {} -n {ns}", pod.name),
        ),
    };
    make(class, detail, next).from(waiting_source(c), &format!("{reason}: {message}"))
}

fn eviction(pod: &PodRecord, class: CauseClass) -> Cause {
    let node = pod.node.as_deref().unwrap_or("its node");
    let detail = match class {
        CauseClass::ContainerLimit => "a container or emptyDir went over its own limit".into(),
        CauseClass::EvictedUnknown => "evicted; the status does not say why".into(),
        _ => format!("{node} ran short and the kubelet evicted pods"),
    };
    make(
        class,
        detail,
        "d deletes this finished pod (its workload has replaced it)",
    )
    .from("status.message", pod.message.as_deref().unwrap_or(""))
}

fn terminating(pod: &PodRecord, class: CauseClass, now: DateTime<Utc>) -> Cause {
    let since = pod
        .deletion
        .map(|d| crate::rules::format_age(now - d))
        .unwrap_or_else(|| "-".into());
    match class {
        CauseClass::Finalizers => {
            let names = pod.finalizers.join(", ");
            make(
                class,
                format!("held by finalizers {names} (deleting for {since})"),
                "F removes the finalizers once what they guard is handled",
            )
            .from("metadata.finalizers", &names)
        }
        CauseClass::NodeUnreachable => unknown(pod),
        _ => make(
            class,
            format!("deleting for {since}, past its grace period"),
            match pod.must_run_once() {
                true => "check its node first (kubectl get node); D once it is gone",
                false => "D force-deletes it",
            },
        ),
    }
}

fn unknown(pod: &PodRecord) -> Cause {
    let node = pod.node.as_deref().unwrap_or("-");
    make(
        CauseClass::NodeUnreachable,
        format!("node {node} stopped reporting"),
        format!("kubectl get node {node}; D once the node is confirmed gone"),
    )
    .from("status.reason", pod.reason.as_deref().unwrap_or("-"))
}

fn failed(pod: &PodRecord, class: CauseClass) -> Cause {
    match (class, failed_run(pod)) {
        (CauseClass::DeadlineExceeded, _) => make(
            class,
            "ran past activeDeadlineSeconds",
            "d deletes it; raise the deadline if the work needs longer",
        )
        .from("status.reason", "DeadlineExceeded"),
        (_, Some((c, t))) => make(
            class,
            format!(
                "container {} exited with {}",
                c.name,
                exit_name(t.exit_code)
            ),
            format!(
                "kubectl logs {} -n {} -c {}",
                pod.name, pod.namespace, c.name
            ),
        )
        .from(
            format!("status.containerStatuses[{}].state.terminated", c.name),
            &format!("exit code {}", t.exit_code),
        ),
        (_, None) => make(class, "failed; the status does not say why", "d deletes it"),
    }
}

fn pending(pod: &PodRecord, class: CauseClass) -> Cause {
    match class {
        CauseClass::PendingUnknown => make(
            class,
            "the scheduler found no node; its reasons are in the FailedScheduling Event",
            format!("kubectl describe pod {} -n {}", pod.name, pod.namespace),
        )
        .from("status.conditions[PodScheduled]", "False"),
        _ => make(
            class,
            "not scheduled yet: no verdict from the scheduler",
            "wait; kubectl get events -n … --field-selector reason=FailedScheduling",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_has_a_distinct_camel_case_name() {
        let names: std::collections::BTreeSet<&str> =
            CauseClass::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), CauseClass::ALL.len());
        assert!(
            names
                .iter()
                .all(|n| n.chars().next().is_some_and(char::is_lowercase))
        );
        assert_eq!(
            serde_json::to_string(&CauseClass::RegistryTls).unwrap_or_default(),
            "\"registryTLS\""
        );
    }

    #[test]
    fn exit_codes_above_128_name_their_signal() {
        assert_eq!(exit_name(137), "137 (SIGKILL)");
        assert_eq!(exit_name(143), "143 (SIGTERM)");
        assert_eq!(exit_name(2), "2");
    }
}
