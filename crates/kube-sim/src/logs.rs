//! `GET …/pods/{name}/log`: what a container wrote, as the kubelet serves it. Nothing runs
//! here, so a container's output is what was set with [`SimCluster::set_logs`]; the
//! parameters and the refusals are the API server's.

use serde_json::Value;

use super::cluster::{SimCluster, State};
use super::query::Query;
use super::resources::Res;
use super::status::ApiError;

/// Which run of which container.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct LogKey {
    pub namespace: String,
    pub pod: String,
    pub container: String,
    pub previous: bool,
}

impl SimCluster {
    /// What container `container` of pod `namespace/pod` wrote, in its current run or (with
    /// `previous`) the one before.
    pub fn set_logs(
        &self,
        namespace: &str,
        pod: &str,
        container: &str,
        previous: bool,
        text: &str,
    ) {
        let key = LogKey {
            namespace: namespace.into(),
            pod: pod.into(),
            container: container.into(),
            previous,
        };
        self.read(|s| {
            s.logs.insert(key, text.to_string());
        });
    }
}

/// The log text, cut as `tailLines` and `limitBytes` ask.
pub(crate) fn get(
    s: &State,
    namespace: &str,
    name: &str,
    query: &Query,
) -> Result<String, ApiError> {
    let pod = s
        .store
        .get(Res::Pod, namespace, name)
        .ok_or_else(|| ApiError::not_found("", "pods", name))?;
    let containers: Vec<&str> = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str())
        .collect();
    let container = match (query.get("container"), containers.as_slice()) {
        (Some(c), _) => c.to_string(),
        (None, [one]) => one.to_string(),
        (None, _) => {
            return Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {name}, choose one of: [{}]",
                containers.join(" ")
            )));
        }
    };
    // The API server asks the kubelet: on a lost node nobody answers, and a node deleted
    // since is "not found" under the pods' resource name, as a real server words it.
    let node = pod.pointer("/spec/nodeName").and_then(Value::as_str);
    if let Some(node) = node
        && s.nodes.contains_key(node)
        && s.store.get(Res::Node, "", node).is_none()
    {
        return Err(ApiError::not_found("", "pods", node));
    }
    if let Some(node) = node
        && s.nodes.get(node) == Some(&false)
    {
        return Err(ApiError::internal(format!(
            "Get \"https://{node}:10250/containerLogs/{namespace}/{name}/{container}\": \
             dial tcp {node}:10250: i/o timeout"
        )));
    }
    let previous = query.get("previous").is_some_and(|v| v == "true");
    let key = LogKey {
        namespace: namespace.into(),
        pod: name.into(),
        container: container.clone(),
        previous,
    };
    let ended = pod
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|c| c["name"] == container.as_str())
        .and_then(|c| c.pointer("/lastState/terminated"));
    let fallback;
    let text = match (s.logs.get(&key), previous, ended) {
        (Some(text), _, _) => text.as_str(),
        (None, true, None) => {
            return Err(ApiError::bad_request(format!(
                "previous terminated container \"{container}\" in pod \"{name}\" not found"
            )));
        }
        // Nothing runs here: a run that ended says what a program that ended so would.
        (None, true, Some(ended)) => {
            fallback = ended_run(&container, ended);
            fallback.as_str()
        }
        (None, false, _) => "",
    };
    let mut text = text;
    if let Some(lines) = query.get("tailLines").and_then(|n| n.parse::<usize>().ok()) {
        let starts: Vec<usize> = text.match_indices('\n').map(|(i, _)| i + 1).collect();
        let ends_with_newline = text.ends_with('\n');
        let count = starts.len() + usize::from(!ends_with_newline && !text.is_empty());
        if count > lines {
            let skip = count - lines;
            text = starts
                .get(skip - 1)
                .and_then(|&at| text.get(at..))
                .unwrap_or(text);
        }
    }
    let mut out = text.to_string();
    if let Some(limit) = query
        .get("limitBytes")
        .and_then(|n| n.parse::<usize>().ok())
    {
        while out.len() > limit {
            out.pop();
        }
    }
    Ok(out)
}

/// A plausible last run for a container that ended as `ended` says: a program that starts,
/// works, and stops (an OOM kill cuts it short, with no last word).
fn ended_run(container: &str, ended: &Value) -> String {
    let at = ended["finishedAt"]
        .as_str()
        .unwrap_or("2026-01-01T00:00:00Z");
    let mut lines = vec![
        format!("{at} INFO  {container} starting"),
        format!("{at} INFO  listening on :8080"),
        format!("{at} INFO  processing batch 1 of 12"),
        format!("{at} INFO  processing batch 2 of 12"),
    ];
    match (ended["reason"].as_str(), ended["exitCode"].as_i64()) {
        (Some("OOMKilled"), _) => {
            lines.push(format!("{at} INFO  loading 2.1 GiB index into memory"))
        }
        (_, Some(0)) => lines.push(format!("{at} INFO  done, exiting")),
        (_, code) => {
            lines.push(format!(
                "{at} ERROR cannot reach postgres.shop.svc:5432: connection refused"
            ));
            lines.push(format!("{at} FATAL giving up (exit {})", code.unwrap_or(1)));
        }
    }
    lines.join("\n") + "\n"
}
