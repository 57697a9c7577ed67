//! How the tool talks to each API server: how long it waits (so no call waits forever), the
//! format pods come in, and whether findings come from the cluster's worker or a watch. The
//! environment variables `OPS_POD_CLEANER_WATCH_SILENCE`, `..._CONNECT_TIMEOUT`,
//! `..._REQUEST_TIMEOUT` and `..._WIRE_FORMAT` override these for one run.

use std::collections::BTreeMap;
use std::time::Duration;

use super::Result;
use super::choices::{Source, WireFormat};
use super::read::Field;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterConfig {
    /// A view not proved in sync with the server for this long is stale; a watch quiet for
    /// half of it is re-made to prove it.
    pub watch_silence: Duration,
    /// To open a connection (TCP and TLS).
    pub connect_timeout: Duration,
    /// For a whole request other than a watch.
    pub request_timeout: Duration,
    /// What pods are asked for in: `protobuf` (JSON where the server answers that), or
    /// `json` for a cluster where protobuf misbehaves.
    pub wire_format: WireFormat,
    /// Where a context's findings come from unless `source_by_context` names it.
    pub source: Source,
    /// Per kubeconfig context, overriding `source`.
    pub source_by_context: BTreeMap<String, Source>,
}

impl ClusterConfig {
    pub fn source_for(&self, context: &str) -> Source {
        self.source_by_context
            .get(context)
            .copied()
            .unwrap_or(self.source)
    }
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            watch_silence: Duration::from_secs(20),
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            wire_format: WireFormat::default(),
            source: Source::Auto,
            source_by_context: BTreeMap::new(),
        }
    }
}

pub(crate) fn read(field: &Field) -> Result<ClusterConfig> {
    let m = field.map(&[
        "watchSilence",
        "connectTimeout",
        "requestTimeout",
        "wireFormat",
        "source",
        "sourceByContext",
    ])?;
    let mut c = ClusterConfig::default();
    m.set("watchSilence", &mut c.watch_silence, Field::duration)?;
    m.set("connectTimeout", &mut c.connect_timeout, Field::duration)?;
    m.set("requestTimeout", &mut c.request_timeout, Field::duration)?;
    m.set("wireFormat", &mut c.wire_format, wire_format)?;
    m.set("source", &mut c.source, source)?;
    m.set("sourceByContext", &mut c.source_by_context, |field| {
        (field.entries()?.iter())
            .map(|(context, field)| Ok((context.clone(), source(field)?)))
            .collect()
    })?;
    Ok(c)
}

fn wire_format(field: &Field) -> Result<WireFormat> {
    let text = field.string()?;
    text.trim()
        .parse()
        .map_err(|_| field.error(format!("expected protobuf or json, found {text:?}")))
}

fn source(field: &Field) -> Result<Source> {
    let text = field.string()?;
    text.parse().map_err(|_| {
        field.error(format!(
            "expected one of {}, found {text:?}",
            Source::NAMES.join(", ")
        ))
    })
}
