//! The words the kubelet, the runtimes (containerd, CRI-O) and the scheduler write, matched to
//! a class. Pure and allocation-free: these run on every watch event that changes a finding.

use super::CauseClass;
use crate::pod::Disruption;

/// Whether `text` holds any of `needles`, ASCII case aside, without allocating.
pub(super) fn contains_any(text: &str, needles: &[&str]) -> bool {
    needles.iter().any(|needle| {
        text.as_bytes()
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
    })
}

/// A pull failure by the kubelet's reason and the runtime's words (containerd's
/// `failed to resolve reference …`, CRI-O's `reading manifest …`, `pinging container
/// registry …`); None when they do not say why (`Back-off pulling image "x"`).
pub(super) fn pull_class(reason: &str, message: &str) -> Option<CauseClass> {
    let class = match reason {
        "InvalidImageName" => CauseClass::InvalidImageName,
        "ErrImageNeverPull" => CauseClass::ImageNeverPull,
        _ if contains_any(
            message,
            &[
                "not found",
                "manifest unknown",
                "does not exist",
                "name unknown",
            ],
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
                "no route to host",
            ],
        ) =>
        {
            CauseClass::RegistryUnreachable
        }
        _ => return None,
    };
    Some(class)
}

/// An eviction by the kubelet's words (pkg/kubelet/eviction/helpers.go).
pub(super) fn eviction_class(message: &str) -> CauseClass {
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
    } else if let Some(condition) = message.strip_prefix("The node had condition: ") {
        // pkg/kubelet/eviction/helpers.go: `The node had condition: [DiskPressure]. `
        match condition.trim_start_matches('[') {
            c if c.starts_with("MemoryPressure") => CauseClass::NodeMemoryPressure,
            c if c.starts_with("DiskPressure") => CauseClass::NodeDiskPressure,
            c if c.starts_with("PIDPressure") => CauseClass::NodePidPressure,
            _ => CauseClass::EvictedUnknown,
        }
    } else {
        CauseClass::EvictedUnknown
    }
}

/// What the kubelet could not find to build a container: its waiting message
/// (`secret "db" not found`, `couldn't find key url in ConfigMap shop/app`) or a volume's
/// `FailedMount` (`MountVolume.SetUp failed for volume "cfg" : configmap "app" not found`).
pub(super) fn config_class(message: &str) -> Option<CauseClass> {
    let message = message
        .split_once(" : ")
        .map_or(message, |(_, said)| said)
        .trim_start();
    if message.starts_with("secret \"") {
        Some(CauseClass::MissingSecret)
    } else if message.starts_with("configmap \"") || message.starts_with("configmaps \"") {
        Some(CauseClass::MissingConfigMap)
    } else if message.starts_with("couldn't find key") {
        Some(CauseClass::MissingKey)
    } else {
        None
    }
}

/// The reasons of a scheduler verdict (`0/6 nodes are available: 2 Insufficient cpu, 4
/// node(s) had untolerated taint {dedicated: gpu}. preemption: …`), each with the number of
/// nodes it excludes. A reason without a count (`pod has unbound immediate
/// PersistentVolumeClaims`) excludes every node.
pub(crate) fn verdict(message: &str) -> impl Iterator<Item = (u32, &str)> {
    let (nodes, reasons) = match message.split_once(" nodes are available: ") {
        Some((head, rest)) => {
            let nodes = head.rsplit('/').next().and_then(|n| n.parse().ok());
            (nodes.unwrap_or(0), rest)
        }
        None => (0, ""),
    };
    let reasons = reasons
        .split(" preemption:")
        .next()
        .unwrap_or("")
        .trim_end()
        .trim_end_matches('.');
    split_reasons(reasons).map(move |reason| match reason.split_once(' ') {
        Some((count, said)) if count.bytes().all(|b| b.is_ascii_digit()) => {
            (count.parse().unwrap_or(0), said)
        }
        _ => (nodes, reason),
    })
}

/// The reasons of a verdict, split where a count follows `, `: a reason may hold a comma
/// itself (before v1.25: `3 node(s) had taint {…}, that the pod didn't tolerate`).
fn split_reasons(reasons: &str) -> impl Iterator<Item = &str> {
    let mut rest = reasons;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut from = 0;
        let end = loop {
            match rest[from..].find(", ") {
                Some(i) if rest[from + i + 2..].starts_with(|c: char| c.is_ascii_digit()) => {
                    break from + i;
                }
                Some(i) => from += i + 2,
                None => break rest.len(),
            }
        };
        let reason = &rest[..end];
        rest = rest.get(end + 2..).unwrap_or("");
        Some(reason)
    })
}

/// The class of a scheduler verdict: the reason that excludes the most nodes, the first of
/// equals. None when the message is not a verdict.
pub(super) fn scheduling_class(message: &str) -> Option<CauseClass> {
    if message.starts_with("no nodes available to schedule pods") {
        return Some(CauseClass::UnschedulableNodes);
    }
    let mut best: Option<(u32, CauseClass)> = None;
    for (count, reason) in verdict(message) {
        if best.is_none_or(|(most, _)| count > most) {
            best = Some((count, scheduling_reason(reason)));
        }
    }
    best.map(|(_, class)| class)
}

/// One reason of a verdict (pkg/scheduler/framework/plugins/*: noderesources, tainttoleration,
/// nodeaffinity, volumebinding, nodeunschedulable), old and new wordings.
fn scheduling_reason(reason: &str) -> CauseClass {
    if reason.starts_with("Insufficient ") {
        CauseClass::InsufficientResources
    } else if reason.starts_with("Too many pods") {
        CauseClass::TooManyPods
    } else if reason.contains("untolerated taint") || reason.contains("didn't tolerate") {
        CauseClass::UntoleratedTaint
    } else if reason.contains("didn't match Pod's node affinity")
        || reason.contains("didn't match node selector")
        || reason.contains("didn't match node affinity")
    {
        CauseClass::NodeAffinity
    } else if contains_any(
        reason,
        &[
            "unbound immediate PersistentVolumeClaims",
            "didn't find available persistent volumes",
            "volume node affinity conflict",
            "persistentvolumeclaim",
        ],
    ) {
        CauseClass::UnboundVolume
    } else if reason.contains("were unschedulable") {
        CauseClass::UnschedulableNodes
    } else {
        CauseClass::PendingUnknown
    }
}

/// Why the kubelet failed a pod itself, from the reason it wrote (v1.24's texts): it rejected it at
/// admission (pkg/kubelet/lifecycle/predicate.go: `OutOf<resource>`, a predicate's name,
/// `UnexpectedAdmissionError`, …), preempted it for a critical pod (pkg/kubelet/preemption), or
/// terminated it as its node shut down (pkg/kubelet/nodeshutdown).
pub(super) fn failed_class(reason: &str, message: &str) -> Option<CauseClass> {
    Some(match reason {
        r if r.starts_with("OutOf") => CauseClass::RejectedResources,
        "NodeAffinity" => CauseClass::RejectedNodeAffinity,
        // A NoExecute taint of the node the pod does not tolerate (predicate.go, 1.24+).
        "TaintToleration" => CauseClass::RejectedTaint,
        // Admit handlers for what the node cannot give it: an AppArmor profile, a sysctl,
        // sidecars (1.28+), a supplemental-groups policy (1.31+), pod-level resources
        // (1.32+), node-declared features (1.33+).
        "AppArmor"
        | "SysctlForbidden"
        | "InitContainerRestartPolicyForbidden"
        | "SupplementalGroupsPolicyNotSupported"
        | "PodLevelResourcesNotSupported"
        | "PodFeatureUnsupported" => CauseClass::RejectedFeature,
        "NodeName" => CauseClass::RejectedNodeName,
        "NodePorts" => CauseClass::RejectedNodePorts,
        "PodOSSelectorNodeLabelDoesNotMatch" | "PodOSNotSupported" => CauseClass::RejectedOs,
        "UnexpectedAdmissionError"
        | "UnexpectedPredicateFailureType"
        | "UnknownReason"
        | "InvalidNodeInfo"
        | "TopologyAffinityError" => CauseClass::RejectedUnexpected,
        "Preempting" => CauseClass::Preempted,
        // 1.22+: killed as the node shut down, or not admitted while it does; 1.21: `Shutdown`.
        "Terminated" if message.contains("node shutdown") => CauseClass::NodeShutdown,
        "NodeShutdown" | "Shutdown" => CauseClass::NodeShutdown,
        _ => return None,
    })
}

/// The class of a disruption, where the pod's status gives none; the kubelet's own says which
/// (node pressure or node shutdown) in the message it writes on both.
pub(super) fn disruption_class(disruption: Disruption, message: &str) -> Option<CauseClass> {
    Some(match disruption {
        Disruption::Preempted => CauseClass::Preempted,
        Disruption::NoExecuteTaint => CauseClass::NoExecuteTaint,
        Disruption::EvictionApi => CauseClass::EvictedByApi,
        Disruption::NodeGone => CauseClass::NodeGone,
        // The kubelet's own reasons, as it would write them on the status.
        Disruption::Kubelet => match failed_class("Terminated", message) {
            Some(shutdown) => shutdown,
            None => match eviction_class(message) {
                CauseClass::EvictedUnknown => return None,
                class => class,
            },
        },
    })
}

/// What runc (through containerd or CRI-O) said when it could not start the container's
/// process: `exec: "/app": permission denied`, `exec: "app": executable file not found in
/// $PATH`, `…: no such file or directory`; with the program it quoted, when it did.
pub(super) fn exec_failure(message: &str) -> Option<(CauseClass, Option<&str>)> {
    let exec = message.split("exec: ").nth(1)?;
    let class = if exec.contains("permission denied") {
        CauseClass::ExecPermission
    } else if exec.contains("executable file not found")
        || exec.contains("no such file or directory")
    {
        CauseClass::ExecNotFound
    } else {
        return None;
    };
    Some((class, exec.split('"').nth(1)))
}
