//! A cluster's name: the kubeconfig context it was opened by, `in-cluster`, or a demo cluster.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// A cluster as every key and every line of the tool names it. Cheap to clone; made from and
/// read as text only by [`ClusterName::new`] and [`ClusterName::as_str`].
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClusterName(Arc<str>);

/// In JSON (the audit log, parked records) as the plain name.
impl Serialize for ClusterName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for ClusterName {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(|name| ClusterName(name.into()))
    }
}

impl ClusterName {
    /// The cluster a process runs in, reached with its service account, not a kubeconfig.
    pub const IN_CLUSTER: &'static str = "in-cluster";

    pub fn new(name: &str) -> ClusterName {
        ClusterName(name.into())
    }

    /// The kubeconfig context it was opened by, as `kubectl --context` takes it; none for
    /// the cluster a process runs in.
    pub fn context(&self) -> Option<&str> {
        Some(self.as_str()).filter(|name| *name != ClusterName::IN_CLUSTER)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ClusterName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for ClusterName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}
