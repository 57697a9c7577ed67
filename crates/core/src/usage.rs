//! What a command line asks for that this run cannot do. Each says what to do instead; all
//! exit 2, the user's to fix.

use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Usage {
    #[error("no cluster to show")]
    NoCluster,

    /// `headless` (one replica set per cluster) or `--demo` with a one-cluster command was
    /// given several clusters.
    #[error("{command} works on one cluster, and {named} were named: {pick}")]
    OneCluster {
        command: &'static str,
        named: usize,
        pick: OnePick,
    },

    #[error("no demo context {name:?}: --demo offers {}", offered.join(" and "))]
    UnknownDemo {
        name: String,
        offered: Vec<&'static str>,
    },

    #[error(
        "--demo needs the simulated clusters, which this build leaves out: build with the \
         `demo` feature (on by default)"
    )]
    NoDemoInBuild,

    #[error(
        "check-config reads only the config file; {flag} names a cluster, which it does not reach"
    )]
    ClusterFlagWithCheckConfig { flag: &'static str },

    #[error("check-config was given two config files ({0} and --config {1}); name one")]
    TwoConfigFiles(String, String),

    #[error(
        "--send needs at least one sink under report.sinks in the config (see crates/core/config/default.yaml in the source)"
    )]
    SendWithoutSinks,

    #[error(
        "the audit log {} cannot be opened ({why}); set audit.path in the config to a \
         writable file, or pass --no-audit to act without one",
        path.display()
    )]
    AuditLogUnavailable { path: PathBuf, why: String },

    /// An environment variable that overrides a duration of the config.
    #[error("${key}={text:?} is not a duration like 10s or 2m ({why})")]
    BadDuration {
        key: &'static str,
        text: String,
        why: String,
    },

    #[error("${key} must be longer than 0")]
    ZeroDuration { key: &'static str },

    /// An environment variable that overrides the config's wire format.
    #[error("${key}={text:?} is not a wire format: expected protobuf or json")]
    BadWireFormat { key: &'static str, text: String },
}

/// How to name just one cluster, in the words of where the clusters came from: the end of
/// [`Usage::OneCluster`]'s message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OnePick {
    #[error("with --demo pass --context {}", .0.join(" or --context "))]
    Demo(Vec<&'static str>),
    #[error("pass at most one --context, and run one replica set per cluster")]
    Kubeconfig,
}
