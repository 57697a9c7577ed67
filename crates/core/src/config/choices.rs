//! Values the config chooses between that the layers above act on: the format pods are asked
//! for, and where a screen reads a cluster's findings from. Here, at the bottom, so the config
//! needs nothing above it.

use std::str::FromStr;

/// What to ask the API server for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase")]
pub enum WireFormat {
    /// Protobuf where the kind has it, JSON where the server answers that.
    #[default]
    Protobuf,
    Json,
}

impl WireFormat {
    pub fn name(self) -> &'static str {
        self.into()
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, strum::Display)]
#[strum(serialize_all = "lowercase")]
pub enum Source {
    /// The worker when it answers, else a direct watch: the default, so a cluster that runs
    /// its worker costs the screen its abnormal pods only.
    #[default]
    Auto,
    /// The worker only: shown failing while it does not answer.
    Worker,
    /// A direct watch, as before workers served their findings.
    Watch,
}

impl Source {
    pub const NAMES: [&'static str; 3] = ["auto", "worker", "watch"];
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a source: expected one of auto, worker, watch")]
pub struct BadSource;

impl FromStr for Source {
    type Err = BadSource;
    fn from_str(text: &str) -> Result<Source, BadSource> {
        match text.trim() {
            "auto" => Ok(Source::Auto),
            "worker" => Ok(Source::Worker),
            "watch" => Ok(Source::Watch),
            _ => Err(BadSource),
        }
    }
}
