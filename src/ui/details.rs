//! One pod in full, fetched from the API when the details pane opens (the cache is slim).

use k8s_openapi::api::core::v1::{ContainerStatus, Pod, PodStatus};

use opc_core::actions::{PodReading, Resolution};
use opc_core::fleet::WorkerAnswer;

/// Sections of text, ready to show.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodDetails {
    /// Every line as the pane shows it: a section's title (`true`), then its lines.
    pub(crate) lines: Vec<(bool, String)>,
    /// For a cluster read through its worker: what the worker says of the pod, cause first.
    pub(crate) worker: Option<WorkerAnswer>,
}

impl PodDetails {
    /// Pure: the pod as read, its owner chain as checked, and its Events if listable.
    pub fn from_reading(reading: &PodReading) -> PodDetails {
        let pod = &reading.pod;
        let status = pod.status.clone().unwrap_or_default();
        let mut containers = Vec::new();
        for (init, list) in [
            (true, &status.init_container_statuses),
            (false, &status.container_statuses),
        ] {
            for c in list.iter().flatten() {
                containers.extend(container_lines(c, init));
            }
        }
        let finalizers = pod.metadata.finalizers.clone().unwrap_or_default();
        let mut details = PodDetails {
            lines: Vec::new(),
            worker: reading.worker.clone(),
        };
        details.section("Status", summary_lines(pod, &status));
        details.section("Conditions", condition_lines(&status));
        details.section("Containers", containers);
        details.section("Finalizers", finalizers);
        details.section("Owner chain", owner_chain(reading));
        details.section("Events (newest first)", event_lines(reading));
        details
    }

    /// A container's last lines, as the pane shows them.
    pub fn from_logs(container: Option<&str>, previous: bool, text: &str) -> PodDetails {
        let run = if previous { "previous" } else { "current" };
        let title = format!(
            "Logs of {} (its {run} run; the last {} lines at most)",
            container.unwrap_or("the container"),
            opc_core::actions::LOG_LINES
        );
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        if lines.is_empty() {
            lines.push("no output".into());
        }
        let mut details = PodDetails::default();
        details.section(&title, lines);
        details
    }

    /// A section under `title`, its lines indented; "none" when it has none.
    fn section(&mut self, title: &str, lines: Vec<String>) {
        self.lines.push((true, title.to_string()));
        if lines.is_empty() {
            self.lines.push((false, "  none".to_string()));
        }
        (self.lines).extend(lines.iter().map(|l| (false, format!("  {l}"))));
    }
}

fn summary_lines(pod: &Pod, status: &PodStatus) -> Vec<String> {
    let meta = &pod.metadata;
    let phase = status.phase.as_deref().unwrap_or("?");
    let reason = (status.reason.as_deref()).map_or(String::new(), |r| format!(" ({r})"));
    let node = (pod.spec.as_ref())
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or("-");
    let mut summary = vec![format!("phase {phase}{reason}  node {node}")];
    if let Some(message) = &status.message {
        summary.push(format!("message: {message}"));
    }
    if let Some(deleted) = &meta.deletion_timestamp {
        summary.push(format!(
            "deletionTimestamp {} (grace {} s)",
            deleted.0,
            meta.deletion_grace_period_seconds.unwrap_or(0)
        ));
    }
    summary
}

fn condition_lines(status: &PodStatus) -> Vec<String> {
    status
        .conditions
        .iter()
        .flatten()
        .map(|c| {
            let mut line = format!("{:<16} {}", c.type_, c.status);
            if let Some(reason) = &c.reason {
                line.push_str(&format!("  {reason}"));
            }
            if let Some(message) = &c.message {
                line.push_str(&format!(": {message}"));
            }
            line
        })
        .collect()
}

/// The ten newest Events, or why they could not be listed.
fn event_lines(reading: &PodReading) -> Vec<String> {
    match reading.events.clone() {
        Ok(list) if list.is_empty() => vec!["no events".to_string()],
        Ok(mut list) => {
            list.sort_by_key(|e| e.last_timestamp.as_ref().map(|t| t.0));
            list.iter()
                .rev()
                .take(10)
                .map(|e| {
                    format!(
                        "{} {} x{}: {}",
                        e.type_.as_deref().unwrap_or("-"),
                        e.reason.as_deref().unwrap_or("-"),
                        e.count.unwrap_or(1),
                        e.message.as_deref().unwrap_or("")
                    )
                })
                .collect()
        }
        Err(why) => vec![format!("events not available: {why}")],
    }
}

fn container_lines(c: &ContainerStatus, init: bool) -> Vec<String> {
    let kind = if init { "init " } else { "" };
    let mut lines = vec![format!(
        "{kind}{}  restarts {}  ready {}  image {}",
        c.name, c.restart_count, c.ready, c.image
    )];
    if let Some(state) = &c.state {
        if let Some(w) = &state.waiting {
            let (why, said) = (reason(&w.reason), message(&w.message));
            lines.push(format!("    waiting: {why}{said}"));
        }
        if let Some(r) = &state.running {
            let since = (r.started_at.as_ref()).map_or("?".to_string(), |t| t.0.to_string());
            lines.push(format!("    running since {since}"));
        }
        if let Some(t) = &state.terminated {
            let (why, said) = (reason(&t.reason), message(&t.message));
            lines.push(format!(
                "    terminated: {why} exit code {}{said}",
                t.exit_code
            ));
        }
    }
    if let Some(t) = c.last_state.as_ref().and_then(|s| s.terminated.as_ref()) {
        let why = reason(&t.reason);
        let at = (t.finished_at.as_ref()).map_or(String::new(), |f| format!(" at {}", f.0));
        lines.push(format!(
            "    last terminated: {why} exit code {}{at}",
            t.exit_code
        ));
    }
    lines
}

fn reason(reason: &Option<String>) -> &str {
    reason.as_deref().unwrap_or("?")
}

fn message(message: &Option<String>) -> String {
    (message.as_deref()).map_or(String::new(), |m| format!(": {m}"))
}

/// The pod's owners, then what the checked chain says of opt-outs and scale to zero.
fn owner_chain(reading: &PodReading) -> Vec<String> {
    let mut chain: Vec<String> = reading
        .pod
        .metadata
        .owner_references
        .iter()
        .flatten()
        .map(|o| {
            let controller = if o.controller == Some(true) {
                " (controller)"
            } else {
                ""
            };
            format!("{} {}{controller}", o.kind, o.name)
        })
        .collect();
    match &reading.inspection {
        Ok(checked) => {
            if let Some(opt_out) = &checked.opt_out {
                chain.push(format!("opted out: {opt_out}"));
            }
            match &checked.resolution {
                Resolution::Scalable(w) => chain.push(format!("scale to zero would change {w}")),
                Resolution::Unscalable(why) => chain.push(format!("cannot scale: {why}")),
            }
        }
        Err(e) => chain.push(format!("owner lookup failed: {e}")),
    }
    chain
}
