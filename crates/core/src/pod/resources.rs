//! What a pod's container specs say that a cause reads: each memory limit (what an OOMKilled
//! container ran into) and the requests a scheduler weighed. Everything else in a spec (env,
//! probes, mounts) is skipped, and names are borrowed unless kept: this runs on every watch event.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::{Deserializer, SeqAccess, Visitor};

/// The containers that set a memory limit, by name, and the requests of all of them.
#[derive(Debug, Clone, Default)]
pub(super) struct ContainerSpecs {
    pub limits: Vec<(String, u64)>,
    pub requests: Requests,
}

/// What a pod's containers request together.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Requests {
    pub millicores: u64,
    pub bytes: u64,
}

impl ContainerSpecs {
    pub fn limit(&self, name: &str) -> Option<u64> {
        self.limits.iter().find(|(n, _)| n == name).map(|&(_, b)| b)
    }

    /// One container's spec: its memory limit, and its `[cpu, memory]` requests, as the API
    /// wrote them (JSON and protobuf decode alike).
    pub fn add(&mut self, name: &str, memory_limit: Option<&str>, requests: [Option<&str>; 2]) {
        if let Some(bytes) = memory_limit.and_then(bytes_of) {
            self.limits.push((name.to_owned(), bytes));
        }
        let [cpu, memory] = requests;
        self.requests.millicores += cpu.and_then(millicores_of).unwrap_or(0);
        self.requests.bytes += memory.and_then(bytes_of).unwrap_or(0);
    }
}

impl<'de> Deserialize<'de> for ContainerSpecs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Scan;
        impl<'de> Visitor<'de> for Scan {
            type Value = ContainerSpecs;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of containers")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ContainerSpecs, A::Error> {
                let mut specs = ContainerSpecs::default();
                while let Some(c) = seq.next_element::<WireSpecContainer<'de>>()? {
                    let (limits, requests) = (&c.resources.limits, &c.resources.requests);
                    specs.add(
                        &c.name,
                        limits.memory.as_deref(),
                        [requests.cpu.as_deref(), requests.memory.as_deref()],
                    );
                }
                Ok(specs)
            }
        }
        d.deserialize_seq(Scan)
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct WireSpecContainer<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow)]
    resources: WireResources<'a>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct WireResources<'a> {
    #[serde(borrow)]
    limits: Quantities<'a>,
    #[serde(borrow)]
    requests: Quantities<'a>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct Quantities<'a> {
    #[serde(borrow)]
    cpu: Option<Cow<'a, str>>,
    #[serde(borrow)]
    memory: Option<Cow<'a, str>>,
}

/// A memory quantity (`256Mi`, `1G`, `512000000`) in bytes; None for what is not one.
pub(crate) fn bytes_of(quantity: &str) -> Option<u64> {
    let quantity = quantity.trim();
    let digits = quantity
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(quantity.len());
    let (number, suffix) = quantity.split_at(digits);
    let scale: f64 = match suffix {
        "" => 1.0,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        _ => return None,
    };
    let value = number.parse::<f64>().ok()? * scale;
    (value.is_finite() && value >= 1.0).then_some(value as u64)
}

/// A CPU quantity (`500m`, `2`, `0.5`) in millicores; None for what is not one.
pub(crate) fn millicores_of(quantity: &str) -> Option<u64> {
    let quantity = quantity.trim();
    let value = match quantity.strip_suffix('m') {
        Some(milli) => milli.parse::<f64>().ok()?,
        None => quantity.parse::<f64>().ok()? * 1000.0,
    };
    (value.is_finite() && value >= 0.0).then_some(value as u64)
}
