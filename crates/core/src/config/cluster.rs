//! How long the tool waits on the API server, so no call waits forever. The environment variables
//! `OPS_POD_CLEANER_WATCH_SILENCE`, `..._CONNECT_TIMEOUT` and `..._REQUEST_TIMEOUT` override
//! these for one run.

use std::time::Duration;

use super::read::Field;
use crate::Result;
use crate::cluster::WireFormat;

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
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            watch_silence: Duration::from_secs(20),
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            wire_format: WireFormat::default(),
        }
    }
}

/// Reads the `cluster:` section over the defaults.
pub(crate) fn read(field: &Field) -> Result<ClusterConfig> {
    let m = field.map(&[
        "watchSilence",
        "connectTimeout",
        "requestTimeout",
        "wireFormat",
    ])?;
    let mut c = ClusterConfig::default();
    m.set("watchSilence", &mut c.watch_silence, Field::duration)?;
    m.set("connectTimeout", &mut c.connect_timeout, Field::duration)?;
    m.set("requestTimeout", &mut c.request_timeout, Field::duration)?;
    m.set("wireFormat", &mut c.wire_format, wire_format)?;
    Ok(c)
}

fn wire_format(field: &Field) -> Result<WireFormat> {
    let text = field.string()?;
    text.parse()
        .map_err(|()| field.error(format!("expected protobuf or json, found {text:?}")))
}
