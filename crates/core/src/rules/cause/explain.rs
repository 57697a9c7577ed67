//! A cause in words: the detail, the evidence with its source and the next step, for each
//! category. Built one pod at a time, where a cause is shown.

use chrono::{DateTime, Utc};

use super::{Cause, CauseClass, failed_run, last_run, make, waiting};
use crate::inert;
use crate::node::NodeState;
use crate::pod::{ContainerRecord, PodEvent, PodRecord};

/// `names` as words a shell reads back as they are, or `None` when one is not safe to
/// suggest: names come from the API, and a next step is a line the engineer may paste.
fn shell_words<const N: usize>(names: [&str; N]) -> Option<[String; N]> {
    let mut words = names.map(|_| String::new());
    for (word, name) in words.iter_mut().zip(names) {
        *word = inert::shell(name)?.into_owned();
    }
    Some(words)
}

/// Said instead of a command when a name in it is not safe to paste.
const NO_COMMAND: &str = "(no command suggested: a name holds characters not safe to paste)";

fn describe(pod: &PodRecord) -> String {
    match shell_words([&pod.name, &pod.namespace]) {
        Some([name, ns]) => format!("kubectl describe pod {name} -n {ns}"),
        None => format!("describe the pod {NO_COMMAND}"),
    }
}

fn waiting_source(c: &ContainerRecord) -> String {
    let list = if c.init {
        "initContainerStatuses"
    } else {
        "containerStatuses"
    };
    format!("status.{list}[{}].state.waiting", c.name)
}

pub(super) fn image_pull(pod: &PodRecord, class: CauseClass, event: Option<&PodEvent>) -> Cause {
    let scale = scale_hint(pod);
    let Some((c, reason, message)) = waiting(pod) else {
        return make(class, "no container is waiting", scale).citing_event(event);
    };
    let detail = match class {
        CauseClass::InvalidImageName => "the image reference does not parse",
        CauseClass::ImageNeverPull => "imagePullPolicy Never, and the node does not have the image",
        CauseClass::ImageNotFound => "the registry has no such image or tag",
        CauseClass::RegistryRateLimit => "the registry refuses more pulls for now",
        CauseClass::RegistryAuth => "the registry refused the credentials",
        CauseClass::RegistryTls => "the registry's certificate is not trusted",
        CauseClass::RegistryUnreachable => "the node cannot reach the registry",
        _ if event.is_some() => "neither the status nor the kubelet's Event says why",
        _ => "the status does not say why the pull failed, and no Failed Event was seen",
    };
    let next = match class {
        CauseClass::PullUnknown => {
            format!("{} (the Failed Event says why); {scale}", describe(pod))
        }
        _ => format!("fix the image or the registry; {scale}"),
    };
    make(class, detail, next)
        .citing(waiting_source(c), &format!("{reason}: {message}"))
        .citing_event(event)
}

/// What z can do for this pod's workload.
fn scale_hint(pod: &PodRecord) -> String {
    match &pod.owner {
        Some(_) => "z scales the workload to 0 meanwhile".into(),
        None => "d deletes the pod (a bare pod: nothing to scale)".into(),
    }
}

/// The runtime could not start the container's process: what it could not run, and why.
pub(super) fn runtime(pod: &PodRecord, class: CauseClass, program: Option<&str>) -> Cause {
    let Some((c, reason, message)) = waiting(pod) else {
        return make(class, "no container is waiting", describe(pod));
    };
    let (program, name) = (program.unwrap_or("its command"), &c.name);
    let (detail, next) = match class {
        CauseClass::ExecPermission => (
            format!("container {name} cannot start: {program} is not executable for its user"),
            "make it executable in the image (chmod +x), or run it as a user that may",
        ),
        _ => (
            format!("container {name} cannot start: {program} is not in the image"),
            "fix the command or the image (the entrypoint's path, $PATH)",
        ),
    };
    make(class, detail, next).citing(waiting_source(c), &format!("{reason}: {message}"))
}

pub(super) fn crash(pod: &PodRecord, class: CauseClass, probe: Option<&PodEvent>) -> Cause {
    let Some((c, t)) = last_run(pod) else {
        return make(class, "no previous run is recorded", logs_hint(pod)).citing_event(probe);
    };
    let (name, exit) = (&c.name, exit_name(t.exit_code));
    let (detail, next) = match class {
        CauseClass::OomKilled => (
            oom_killed(c, t.exit_code),
            "raise its memory limit, or find the leak; l shows the previous run's logs".into(),
        ),
        CauseClass::ProbeFailed => (
            format!("container {name} failed its liveness probe and was restarted (exit {exit})"),
            "check the probe against what the container serves, and its timing; l shows the \
             previous run's logs"
                .into(),
        ),
        CauseClass::ExitZero => (
            format!("container {name} keeps finishing (exit 0) where it should keep running"),
            "check its command: a server that returns; l shows the previous run's logs".into(),
        ),
        _ => (
            format!("container {name} exited with {exit}"),
            logs_hint(pod),
        ),
    };
    let said = format!(
        "{} exit code {}",
        t.reason.as_deref().unwrap_or("-"),
        t.exit_code
    );
    let cause = make(class, detail, next).citing(
        format!("status.containerStatuses[{}].lastState.terminated", c.name),
        &said,
    );
    match class {
        CauseClass::ProbeFailed => cause.citing_event(probe),
        _ => cause,
    }
}

fn logs_hint(pod: &PodRecord) -> String {
    match shell_words([&pod.name, &pod.namespace]) {
        Some([name, ns]) => format!("kubectl logs {name} -n {ns} --previous"),
        None => format!("read the previous run's logs {NO_COMMAND}"),
    }
}

/// `256Mi`, `1.5Gi`: binary units, as limits are usually written.
pub(crate) fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["", "Ki", "Mi", "Gi", "Ti"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    let text = format!("{value:.1}");
    let unit = UNITS.get(unit).copied().unwrap_or_default();
    format!("{}{unit}", text.trim_end_matches(".0"))
}

/// `137 (SIGKILL)`: above 128 an exit code is a signal.
pub(super) fn exit_name(code: i32) -> String {
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

pub(super) fn config(pod: &PodRecord, class: CauseClass, mount: Option<&PodEvent>) -> Cause {
    let Some((c, reason, message)) = waiting(pod) else {
        return make(class, "no container is waiting", "").citing_event(mount);
    };
    // A volume's FailedMount says what is missing where the waiting message does not.
    let message = match mount {
        Some(e) => e
            .message
            .split_once(" : ")
            .map_or(&*e.message, |(_, said)| said),
        None => message,
    };
    // `secret "db-creds" not found`: the name is between the quotes.
    let name = message.split('"').nth(1);
    let ns = &pod.namespace;
    let (detail, next) = match class {
        CauseClass::MissingSecret | CauseClass::MissingConfigMap => {
            let kind = if class == CauseClass::MissingSecret {
                "secret"
            } else {
                "configmap"
            };
            let what = name.map_or(kind.to_string(), |name| format!("{kind} {name}"));
            let create = match name {
                Some(name) => shell_words([name, ns]).map(|[name, ns]| (format!(" {name}"), ns)),
                None => shell_words([ns]).map(|[ns]| (String::new(), ns)),
            };
            let next = match create {
                Some((name, ns)) => format!("create it: kubectl create {kind}{name} -n {ns} …"),
                None => format!("create the {kind} {NO_COMMAND}"),
            };
            (format!("{what} does not exist in {ns}"), next)
        }
        CauseClass::MissingKey => (
            message.to_string(),
            "add the key, or fix the reference in the workload".to_string(),
        ),
        _ => (
            "the container's configuration cannot be built".to_string(),
            describe(pod),
        ),
    };
    let waited = match c.state {
        crate::pod::ContainerState::Waiting {
            message: Some(ref said),
            ..
        } => format!("{reason}: {said}"),
        _ => reason.to_string(),
    };
    make(class, detail, next)
        .citing(waiting_source(c), &waited)
        .citing_event(mount)
}

/// A pod scheduled but not up: what holds it, the Event that says so, and where to look.
pub(super) fn starting(
    pod: &PodRecord,
    finding: &crate::rules::Finding,
    class: CauseClass,
    said: Option<&PodEvent>,
    now: DateTime<Utc>,
) -> Cause {
    let node = pod.node.as_deref().unwrap_or("its node");
    let held = crate::rules::format_age(finding.time_in_state(now));
    let state = match finding.reason.as_ref() {
        "NotReady" => format!("running but not Ready for {held}"),
        reason => format!("{reason} for {held}"),
    };
    let container = finding.container.as_deref().unwrap_or("its container");
    let describe = describe(pod);
    let (detail, next) = match class {
        CauseClass::ReadinessProbe => (
            format!("{state}: its readiness probe fails, so it takes no traffic"),
            format!("l shows its logs; {describe}"),
        ),
        CauseClass::PodSandbox => (
            format!(
                "{state}: the runtime on {node} could not make the pod's sandbox (its network or the runtime itself)"
            ),
            format!(
                "check the network plugin's pods on {node} (kubectl get pods -n kube-system -o wide); {describe}"
            ),
        ),
        CauseClass::VolumeAttach => (
            format!("{state}: a volume could not be attached to {node}"),
            format!(
                "check the volume's driver and its VolumeAttachment (kubectl get volumeattachments); {describe}"
            ),
        ),
        CauseClass::MissingSecret | CauseClass::MissingConfigMap | CauseClass::MissingKey => (
            format!("{state}: a volume names what does not exist"),
            "create what the Event names, or fix the volume in the workload".to_string(),
        ),
        CauseClass::VolumeMount => (format!("{state}: a volume could not be mounted"), describe),
        CauseClass::InitRunning => (
            format!("{state}: init container {container} has not finished"),
            format!("l on {container} shows what it waits for"),
        ),
        _ => (
            format!(
                "{state}, and no Warning Event says why (a slow image pull says so only in Normal Events)"
            ),
            describe,
        ),
    };
    make(class, detail, next).citing_event(said)
}

pub(super) fn eviction(pod: &PodRecord, class: CauseClass) -> Cause {
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
    .citing("status.message", pod.message.as_deref().unwrap_or(""))
}

pub(super) fn terminating(
    pod: &PodRecord,
    class: CauseClass,
    node: Option<&NodeState>,
    now: DateTime<Utc>,
) -> Cause {
    let since = age(pod.deletion, now);
    match class {
        CauseClass::Finalizers => {
            let names = pod.finalizers.join(", ");
            make(
                class,
                format!("held by finalizers {names} (deleting for {since})"),
                "F removes the finalizers once what they guard is handled",
            )
            .citing("metadata.finalizers", &names)
        }
        CauseClass::NodeUnreachable | CauseClass::NodeNotReady => match node {
            Some(node) => held_by_node(pod, class, node, now),
            None => unknown(pod, class),
        },
        CauseClass::NodeGone => node_gone(pod),
        CauseClass::NoExecuteTaint => {
            no_execute_taint(pod, confirm_node_gone(pod)).citing_disruption(pod)
        }
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

fn age(at: Option<DateTime<Utc>>, now: DateTime<Utc>) -> String {
    at.map_or_else(|| "-".into(), |at| crate::rules::format_age(now - at))
}

/// A deletion no kubelet finishes, in the node's own words: it stopped reporting (nothing can
/// say whether the pod still runs there) or reports not ready.
fn held_by_node(pod: &PodRecord, class: CauseClass, node: &NodeState, now: DateTime<Utc>) -> Cause {
    let name = &*node.name;
    let command = match shell_words([name]) {
        Some([name]) => format!("kubectl get node {name}"),
        None => format!("check the node {NO_COMMAND}"),
    };
    let since = age(node.as_of(), now);
    let (detail, status) = match class {
        CauseClass::NodeUnreachable => (
            format!(
                "node {name} stopped reporting {since} ago; no kubelet can finish the deletion"
            ),
            "Unknown",
        ),
        _ => (
            format!("node {name} not ready for {since}; its kubelet has not finished the deletion"),
            "False",
        ),
    };
    let next = match class == CauseClass::NodeUnreachable || pod.must_run_once() {
        true => format!("{command}; D once the node is confirmed gone"),
        false => format!("{command}; D force-deletes it"),
    };
    let stamp = |at: Option<DateTime<Utc>>| {
        at.map(|t| t.format("%Y-%m-%d %H:%M:%SZ").to_string())
            .unwrap_or_else(|| "-".into())
    };
    let said = format!(
        "{status} since {}, last heartbeat {}",
        stamp(node.since),
        stamp(node.heartbeat)
    );
    make(class, detail, next).citing(format!("node {name} status.conditions[Ready]"), &said)
}

/// The pod GC's word that the node was deleted: no copy can still run there.
pub(super) fn node_gone(pod: &PodRecord) -> Cause {
    let node = pod.node.as_deref().unwrap_or("-");
    make(
        CauseClass::NodeGone,
        format!("node {node} no longer exists; the pod GC is deleting its pods"),
        "D force-deletes it: nothing of it runs any more",
    )
    .citing_disruption(pod)
}

pub(super) fn unknown(pod: &PodRecord, class: CauseClass) -> Cause {
    let node = pod.node.as_deref().unwrap_or("-");
    let detail = match class {
        CauseClass::NodeUnreachable if pod.reason.as_deref() == Some("NodeLost") => {
            format!("node {node} stopped reporting (the node controller marked the pod NodeLost)")
        }
        CauseClass::NodeUnreachable => format!("node {node} stopped reporting"),
        CauseClass::NodeNotReady => format!("node {node} reports not Ready"),
        _ => {
            // Its node is not known to be down: the kubelet there lost track of the pod.
            let detail =
                format!("the pod's phase is Unknown, while node {node} is not known to be down");
            return make(class, detail, describe(pod)).citing("status.phase", "Unknown");
        }
    };
    make(class, detail, confirm_node_gone(pod))
        .citing("status.reason", pod.reason.as_deref().unwrap_or("-"))
}

/// Check the pod's node, then force-delete: what a pod on a lost node needs.
fn confirm_node_gone(pod: &PodRecord) -> String {
    match pod.node.as_deref().map(|node| shell_words([node])) {
        Some(Some([node])) => format!("kubectl get node {node}; D once the node is confirmed gone"),
        Some(None) => format!("check the node {NO_COMMAND}; D once it is confirmed gone"),
        None => "D once its node is confirmed gone".to_string(),
    }
}

pub(super) fn failed(pod: &PodRecord, class: CauseClass) -> Cause {
    let (reason, message) = (pod.reason.as_deref(), pod.message.as_deref().unwrap_or(""));
    let by_kubelet = reason.and_then(|r| super::words::failed_class(r, message));
    if let Some(why) = by_kubelet.and_then(|_| kubelet_failed(class, reason)) {
        let node = pod.node.as_deref().unwrap_or("its node");
        return make(class, format!("the kubelet on {node} {why}"), REPLACED)
            .citing("status.reason", pod.reason.as_deref().unwrap_or(""))
            .citing("status.message", message)
            .citing_disruption(pod);
    }
    match (class, failed_run(pod)) {
        (CauseClass::DeadlineExceeded, _) => make(
            class,
            "ran past activeDeadlineSeconds",
            "d deletes it; raise the deadline if the work needs longer",
        )
        .citing("status.reason", "DeadlineExceeded"),
        _ if by_kubelet.is_none() && super::disrupted(pod) == Some(class) => disrupted(pod, class),
        (_, Some((c, t))) => make(
            class,
            match class {
                CauseClass::OomKilled => oom_killed(c, t.exit_code),
                _ => format!(
                    "container {} exited with {}",
                    c.name,
                    exit_name(t.exit_code)
                ),
            },
            match shell_words([&pod.name, &pod.namespace, &c.name]) {
                Some([name, ns, c]) => format!("kubectl logs {name} -n {ns} -c {c}"),
                None => format!("read its logs {NO_COMMAND}"),
            },
        )
        .citing(
            format!("status.containerStatuses[{}].state.terminated", c.name),
            &format!("exit code {}", t.exit_code),
        ),
        (_, None) => make(class, "failed; the status does not say why", "d deletes it"),
    }
}

/// The next step for a Failed pod that something else ended.
const REPLACED: &str = "d deletes it (its workload, if any, has made another)";

/// A Failed pod whose `DisruptionTarget` condition says who ended it.
fn disrupted(pod: &PodRecord, class: CauseClass) -> Cause {
    let node = pod.node.as_deref().unwrap_or("its node");
    let cause = match class {
        CauseClass::NodeGone => return node_gone(pod),
        CauseClass::Preempted => make(
            class,
            "the scheduler preempted it to make room for a pod of higher priority",
            REPLACED,
        ),
        CauseClass::EvictedByApi => make(
            class,
            "evicted through the Eviction API (a drain, the descheduler or another client)",
            REPLACED,
        ),
        CauseClass::NoExecuteTaint => no_execute_taint(pod, REPLACED.to_string()),
        CauseClass::NodeShutdown => make(
            class,
            format!("the kubelet on {node} terminated it as the node shut down"),
            REPLACED,
        ),
        _ => eviction(pod, class),
    };
    cause.citing_disruption(pod)
}

/// The taint manager deleted the pod: its node has a NoExecute taint it does not tolerate.
fn no_execute_taint(pod: &PodRecord, next: String) -> Cause {
    let node = pod.node.as_deref().unwrap_or("its node");
    let detail = format!(
        "the taint manager deleted it: {node} has a NoExecute taint it does not tolerate \
         (node.kubernetes.io/unreachable or not-ready when the node stops reporting)"
    );
    make(CauseClass::NoExecuteTaint, detail, next)
}

/// What the kubelet did to a pod it failed itself, by the class of its reason.
fn kubelet_failed(class: CauseClass, reason: Option<&str>) -> Option<&'static str> {
    Some(match class {
        CauseClass::RejectedResources => {
            "rejected it at admission: not enough of a resource left there (the scheduler \
             counted otherwise; kubectl describe node shows what is allocated)"
        }
        CauseClass::RejectedNodeAffinity => {
            "rejected it at admission: the node no longer matches its node affinity"
        }
        CauseClass::RejectedNodeName => "rejected it at admission: it names another node",
        CauseClass::RejectedNodePorts => {
            "rejected it at admission: a host port it asks for is taken"
        }
        CauseClass::RejectedOs => "rejected it at admission: it asks for another operating system",
        CauseClass::RejectedTaint => {
            "rejected it at admission: the node has a NoExecute taint it does not tolerate"
        }
        CauseClass::RejectedFeature => {
            "rejected it at admission: the node cannot give it a feature it asks for (an \
             AppArmor profile, a sysctl, sidecars, a supplemental-groups policy, pod-level \
             resources)"
        }
        CauseClass::RejectedUnexpected => {
            "could not admit it (a device plugin or the node's own state)"
        }
        CauseClass::Preempted => "preempted it to admit a critical pod",
        CauseClass::NodeShutdown if reason == Some("NodeShutdown") => {
            "rejected it as the node was shutting down"
        }
        CauseClass::NodeShutdown => "terminated it as the node shut down",
        _ => return None,
    })
}

/// How an OOM kill reads, whether the container then restarted or the pod failed: at its own
/// limit, or with none, the node's memory ran short.
fn oom_killed(c: &ContainerRecord, exit_code: i32) -> String {
    let name = &c.name;
    match c.memory_limit {
        Some(limit) => format!(
            "container {name} was OOM-killed at its memory limit of {} (exit {exit_code})",
            format_bytes(limit)
        ),
        None => format!(
            "container {name} was OOM-killed with no memory limit of its own: the node ran out \
             of memory (exit {exit_code})"
        ),
    }
}

/// `; it asks for cpu 2500m, memory 4Gi`: the requests the scheduler weighed, if any.
fn asks(pod: &PodRecord) -> String {
    let Some(requests) = pod.unscheduled.as_ref().map(|u| u.requests) else {
        return String::new();
    };
    let mut asked = Vec::new();
    if requests.millicores > 0 {
        asked.push(match requests.millicores % 1000 {
            0 => format!("cpu {}", requests.millicores / 1000),
            _ => format!("cpu {}m", requests.millicores),
        });
    }
    if requests.bytes > 0 {
        asked.push(format!("memory {}", format_bytes(requests.bytes)));
    }
    match asked.is_empty() {
        true => String::new(),
        false => format!("; it asks for {}", asked.join(", ")),
    }
}

/// The scheduler's verdict, reason by reason: `2 Insufficient cpu, 4 node(s) had untolerated
/// taint {dedicated: gpu}` of `0/6 nodes`.
pub(super) fn pending(pod: &PodRecord, class: CauseClass, event: Option<&PodEvent>) -> Cause {
    let said = pod.unscheduled.as_ref().and_then(|u| u.message.as_deref());
    let verdict = said.or(event.map(|e| &*e.message)).unwrap_or("");
    let reasons: Vec<String> = super::verdict(verdict)
        .map(|(count, reason)| format!("{count} {reason}"))
        .collect();
    let describe = describe(pod);
    let (detail, next) = match class {
        CauseClass::NotScheduled => (
            "not scheduled yet: no verdict from the scheduler".to_string(),
            format!("wait; {describe} shows its Events"),
        ),
        _ if reasons.is_empty() => (format!("the scheduler says: {verdict}"), describe),
        _ => (
            format!("no node fits: {}{}", reasons.join(", "), asks(pod)),
            match class {
                CauseClass::InsufficientResources => {
                    "lower its requests, or add nodes (kubectl describe nodes shows what is \
                     allocated)"
                        .to_string()
                }
                CauseClass::UntoleratedTaint => {
                    "add the toleration, or schedule where no taint applies".to_string()
                }
                CauseClass::NodeAffinity => {
                    "check its nodeSelector and affinity against the nodes' labels".to_string()
                }
                CauseClass::UnboundVolume => match shell_words([&pod.namespace]) {
                    Some([ns]) => format!("kubectl get pvc -n {ns}: a claim waits for a volume"),
                    None => format!("a claim waits for a volume {NO_COMMAND}"),
                },
                CauseClass::UnschedulableNodes => {
                    "nodes are cordoned: kubectl uncordon, or add nodes".to_string()
                }
                CauseClass::TooManyPods => "nodes are at their pod limit: add nodes".to_string(),
                _ => describe,
            },
        ),
    };
    make(class, detail, next)
        .citing(
            "status.conditions[PodScheduled].message",
            said.unwrap_or(""),
        )
        .citing_event(event)
}
