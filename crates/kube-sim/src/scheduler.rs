//! The scheduler stand-in: a pod goes to the next node that is alive and can hold its
//! requests; where none can, it gets the verdict kube-scheduler writes (FitError in
//! pkg/scheduler/framework/types.go): each reason with the number of nodes it excludes, sorted
//! as text, then what preemption could do.

use std::collections::BTreeMap;

use serde_json::Value;

use super::cluster::State;
use super::meta;

/// What each simulated node can give a pod: a common 4-core, 16 GiB node.
const NODE_MILLICORES: u64 = 4_000;
const NODE_BYTES: u64 = 16 << 30;

/// The node the pod goes to, or the scheduler's verdict on why none can take it.
pub fn place(s: &mut State, pod: &Value) -> Result<String, String> {
    let (cpu, memory) = requests(pod);
    let too_big = cpu > NODE_MILLICORES || memory > NODE_BYTES;
    if !too_big && let Some(node) = s.pick_node() {
        return Ok(node);
    }
    let nodes = s.nodes.len();
    if nodes == 0 {
        return Err("no nodes available to schedule pods".into());
    }
    let (mut reasons, mut preemption) = (BTreeMap::new(), BTreeMap::new());
    for &alive in s.nodes.values() {
        let mut count = |reason| *reasons.entry(reason).or_insert(0) += 1;
        if !alive {
            count("node(s) had untolerated taint {node.kubernetes.io/unreachable: }");
            *preemption
                .entry("Preemption is not helpful for scheduling")
                .or_insert(0) += 1;
            continue;
        }
        if cpu > NODE_MILLICORES {
            count("Insufficient cpu");
        }
        if memory > NODE_BYTES {
            count("Insufficient memory");
        }
        *preemption
            .entry("No preemption victims found for incoming pod")
            .or_insert(0) += 1;
    }
    let listed = |counts: BTreeMap<&str, usize>| {
        let mut said: Vec<String> = counts.iter().map(|(r, n)| format!("{n} {r}")).collect();
        said.sort();
        said.join(", ")
    };
    Err(format!(
        "0/{nodes} nodes are available: {}. preemption: 0/{nodes} nodes are available: {}.",
        listed(reasons),
        listed(preemption)
    ))
}

/// The pod's containers' requests: millicores and bytes.
fn requests(pod: &Value) -> (u64, u64) {
    let containers = pod.pointer("/spec/containers").and_then(Value::as_array);
    containers
        .into_iter()
        .flatten()
        .fold((0, 0), |(cpu, mem), c| {
            let asked = |resource: &str| {
                meta::str_at(c, &format!("/resources/requests/{resource}")).to_string()
            };
            (
                cpu + millicores(&asked("cpu")),
                mem + bytes(&asked("memory")),
            )
        })
}

/// `500m`, `2`, `0.5` in millicores; 0 for what is not one.
fn millicores(quantity: &str) -> u64 {
    match quantity.strip_suffix('m') {
        Some(milli) => milli.parse().unwrap_or(0),
        None => quantity
            .parse::<f64>()
            .map_or(0, |cores| (cores * 1000.0) as u64),
    }
}

/// `256Mi`, `1G`, `1024` in bytes; 0 for what is not one.
fn bytes(quantity: &str) -> u64 {
    let split = quantity
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or(quantity.len());
    let (number, unit) = quantity.split_at(split);
    let scale: u64 = match unit {
        "" => 1,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        "Ti" => 1 << 40,
        "k" => 1_000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        "T" => 1_000_000_000_000,
        _ => return 0,
    };
    number.parse::<u64>().unwrap_or(0) * scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_read_as_the_api_writes_them() {
        assert_eq!(millicores("500m"), 500);
        assert_eq!(millicores("2"), 2000);
        assert_eq!(millicores("0.5"), 500);
        assert_eq!(bytes("256Mi"), 256 << 20);
        assert_eq!(bytes("1G"), 1_000_000_000);
    }
}
